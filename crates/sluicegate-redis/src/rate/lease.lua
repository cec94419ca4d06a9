-- Hybrid mode: lease up to `want` tokens (at least `need`, else none) in one GCRA step.
-- ARGV: [1] t (ns), [2] t x burst (ns), [4] want, [5] need. Returns {got, tat after the step
-- (ns after now), server s, server us}.
local t = tonumber(ARGV[1])
local avail = math.floor((ARGV[2] - tat) / t)
local got = 0
if avail >= tonumber(ARGV[5]) then
  got = math.min(tonumber(ARGV[4]), avail)
  tat = tat + t * got
  store(tat)
end
return {got, tat, time[1], time[2]}

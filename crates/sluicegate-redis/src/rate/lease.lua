-- Hybrid mode: lease up to `want` tokens (at least `need`, else none) in one GCRA step.
-- ARGV: [1] t (ns), [2] t x burst (ns), [3] want, [4] need. Sets ahead (as gcra.lua) and the
-- reply {got, tat after the step (ns after now), server s, server us}.
local t = tonumber(ARGV[1])
local avail = math.floor((ARGV[2] - tat) / t)
local got, ahead = 0, nil
if avail >= tonumber(ARGV[4]) then
  got = math.min(tonumber(ARGV[3]), avail)
  tat = tat + t * got
  ahead = tat
end
local reply = {got, tat, sec, usec}

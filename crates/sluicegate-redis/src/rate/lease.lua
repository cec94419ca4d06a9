-- Hybrid mode: lease up to `want` tokens (at least `need`, else none) in one GCRA step.
-- ARGV: t (ns), burst, want, need. Returns {got, tat after, now, server s, server us}.
local t, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local want, need = tonumber(ARGV[3]), tonumber(ARGV[4])
local from = math.max(tat, now)
local avail = math.floor((now + t * burst - from) / t)
local got = 0
if avail >= need then
  got = math.min(want, avail)
  tat = from + t * got
  store(tat)
end
return {got, tat, now, sec, usec}

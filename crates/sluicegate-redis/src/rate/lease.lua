-- Hybrid mode: give back `back` unspent tokens, then lease up to `want` tokens (at least
-- `need`, else none) in one GCRA step. ARGV: t (ns), burst, want, need, back.
-- Returns {got, tat after, now, server s, server us}.
local t, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local want, need, back = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if back > 0 then
  tat = math.max(tat - t * back, 0)
end
local from = math.max(tat, now)
local avail = math.floor((now + t * burst - from) / t)
local got = 0
if avail >= need then
  got = math.min(want, avail)
end
if got > 0 then
  tat = from + t * got
end
if got > 0 or back > 0 then
  store(tat)
end
return {got, tat, now, sec, usec}

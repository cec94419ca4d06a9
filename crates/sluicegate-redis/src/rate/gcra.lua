-- One GCRA step, the same integer arithmetic as sluicegate::rate::gcra::step.
-- ARGV: t (ns), burst, n. Returns {allowed, tat before, now, server s, server us}, tat and now
-- in ns after the second s.
local t, burst, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local nxt = math.max(tat, now) + t * n
local allowed = 0
if nxt <= now + t * burst then
  allowed = 1
  store(nxt)
end
return {allowed, tat, now, sec, usec}

-- One GCRA step on Redis, the same integer arithmetic as sluicegate::rate::gcra::step.
-- KEYS[1]: a hash {base = seconds, tat = ns after base}. ARGV: t (ns), burst, n.
-- Lua numbers are doubles: times are kept relative to `base` (rebased daily) so every value
-- stays an exact integer below 2^53.
-- Returns {allowed, tat before, now, server seconds, server microseconds}; tat and now are
-- ns after base.
local t, burst, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local time = redis.call('TIME')
local sec, usec = tonumber(time[1]), tonumber(time[2])
local state = redis.call('HMGET', KEYS[1], 'base', 'tat')
local base, tat = tonumber(state[1]) or sec, tonumber(state[2]) or 0
if sec < base or sec - base > 86400 then
  tat = math.max(tat - (sec - base) * 1000000000, 0)
  base = sec
end
local now = (sec - base) * 1000000000 + usec * 1000
local nxt = math.max(tat, now) + t * n
local allowed = 0
if nxt <= now + t * burst then
  allowed = 1
  redis.call('HSET', KEYS[1], 'base', string.format('%.0f', base), 'tat', string.format('%.0f', nxt))
  redis.call('PEXPIRE', KEYS[1], math.floor((nxt - now) / 1000000) + 1000)
end
return {allowed, tat, now, sec, usec}

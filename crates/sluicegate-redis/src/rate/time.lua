-- Shared opening of the GCRA scripts: Redis's clock and the state, relative to a time base.
-- KEYS[1]: a hash {base = seconds, tat = ns after base}. Lua numbers are doubles, so times
-- are kept relative to `base` (rebased daily) and every value stays an exact integer below
-- 2^53. Sets sec, usec, base, tat, now (tat and now in ns after base).
local time = redis.call('TIME')
local sec, usec = tonumber(time[1]), tonumber(time[2])
local state = redis.call('HMGET', KEYS[1], 'base', 'tat')
local base, tat = tonumber(state[1]) or sec, tonumber(state[2]) or 0
if sec < base or sec - base > 86400 then
  tat = math.max(tat - (sec - base) * 1000000000, 0)
  base = sec
end
local now = (sec - base) * 1000000000 + usec * 1000
local function store(new_tat)
  redis.call('HSET', KEYS[1], 'base', string.format('%.0f', base), 'tat', string.format('%.0f', new_tat))
  redis.call('PEXPIRE', KEYS[1], math.floor(math.max(new_tat - now, 0) / 1000000) + 1000)
end

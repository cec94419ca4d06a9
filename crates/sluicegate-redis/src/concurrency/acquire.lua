-- Take a lease if fewer than `max` live ones exist. KEYS[1]: a sorted set {lease id = expiry,
-- ms by Redis's clock}. ARGV: max, ttl (ms), id. Expired leases (crashed holders) go first.
-- Returns {1, holders} when taken, else {0, holders, ms until the earliest lease expires}.
local max, ttl, id = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local holders = redis.call('ZCARD', KEYS[1])
if holders < max then
  redis.call('ZADD', KEYS[1], now + ttl, id)
  -- Only ever lengthen the set's life: an instance with a longer lease time (a rolling
  -- change of it) may hold leases here that a shorter expiry would drop with the set.
  if redis.call('PTTL', KEYS[1]) < ttl * 2 then redis.call('PEXPIRE', KEYS[1], ttl * 2) end
  return {1, holders + 1, 0}
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = ttl
if first[2] then wait = math.max(tonumber(first[2]) - now, 1) end
return {0, holders, wait}

-- Push a live lease's expiry `ttl` ms past now. KEYS[1]: the leases. ARGV: ttl (ms), id.
-- Returns 1, or 0 when the lease is gone (it expired: its holder was too slow to renew).
local ttl, id = tonumber(ARGV[1]), ARGV[2]
if not redis.call('ZSCORE', KEYS[1], id) then return 0 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now + ttl, id)
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return 1

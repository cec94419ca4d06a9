-- Drop a lease and tell the waiters of every instance. KEYS[1]: the leases; KEYS[2]: the
-- channel. ARGV: id. Returns 1 if the lease was still there.
local gone = redis.call('ZREM', KEYS[1], ARGV[1])
if gone == 1 then redis.call('PUBLISH', KEYS[2], ARGV[1]) end
return gone

-- Drop a lease and tell the waiters of every instance. KEYS[1]: the leases; KEYS[2]: the
-- channel. ARGV: id. Returns 1 if the lease was still there. Publishes either way: a lease
-- already gone (Redis flushed or restarted) still means a permit came free, and the
-- waiters' timers may be set to an expiry Redis no longer knows of.
local gone = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('PUBLISH', KEYS[2], ARGV[1])
return gone

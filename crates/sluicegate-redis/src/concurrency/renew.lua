-- Push a held lease's expiry `ttl` ms past now. KEYS[1]: the leases. ARGV: ttl (ms), id.
-- Returns 1, or 0 when the lease was gone and is added back: its holder still holds the
-- permit (Redis was flushed or restarted, or the renewal came too late), so counting it
-- is the truth, and the limit's cap holds again from here on.
local ttl, id = tonumber(ARGV[1]), ARGV[2]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local added = redis.call('ZADD', KEYS[1], now + ttl, id)
-- Only ever lengthen the set's life: an instance with a longer lease time (a rolling
-- change of it) may hold leases here that a shorter expiry would drop with the set.
if redis.call('PTTL', KEYS[1]) < ttl * 2 then redis.call('PEXPIRE', KEYS[1], ttl * 2) end
return 1 - added

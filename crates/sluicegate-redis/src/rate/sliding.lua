-- One sliding-window decision on Redis, the same rule as sluicegate::rate::sliding::evaluate.
-- KEYS[1]: a hash {slice number = count}. ARGV: limit, slices, slice length (us), n.
-- Returns {allowed, ns into the current slice, server seconds, server microseconds,
-- count[0..=slices]} where count[slices] is the current slice.
local limit, slices, slice_us, n =
  tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local time = redis.call('TIME')
local sec, usec = tonumber(time[1]), tonumber(time[2])
local us = sec * 1000000 + usec
local idx = math.floor(us / slice_us)
-- Slice numbers go to Redis as numbers: it writes integral doubles out in full (%.17g).
local fields = {}
for j = 0, slices do
  fields[j + 1] = idx - slices + j
end
local raw = redis.call('HMGET', KEYS[1], unpack(fields))
local counts, in_window = {}, 0
for j = 0, slices do
  counts[j + 1] = tonumber(raw[j + 1]) or 0
  if j > 0 then in_window = in_window + counts[j + 1] end
end
local cap = limit + math.floor(limit / slices)
local allowed = 0
if limit > 0 and in_window + n <= limit and in_window + counts[1] + n <= cap then
  allowed = 1
  if n > 0 then
    redis.call('HINCRBY', KEYS[1], fields[slices + 1], n)
    -- Once per slice, at its first admission (the key may be new): the expiry, which
    -- then outlives the whole window, and the slices that aged out while the key stayed
    -- alive, dropped now and then.
    if counts[slices + 1] == 0 then
      redis.call('PEXPIRE', KEYS[1], math.ceil((slices + 1) * slice_us / 1000) + 1000)
      if redis.call('HLEN', KEYS[1]) > slices + 8 then
        for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
          if tonumber(f) < idx - slices then redis.call('HDEL', KEYS[1], f) end
        end
      end
    end
  end
end
local out = {allowed, (us - idx * slice_us) * 1000, sec, usec}
for j = 1, slices + 1 do out[4 + j] = counts[j] end
return out

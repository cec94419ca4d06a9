-- One sliding-window decision on Redis, the same rule as sluicegate::rate::sliding::evaluate.
-- KEYS[1]: a string of little-endian doubles (struct '<d'): the slice length (us), the number
-- of the newest slice written (floor(us since 1970 / slice length), exact below 2^53, so until
-- 2255), then the counts of the last slices + 1 slices up to it, oldest first.
-- ARGV: [1] its struct format ('<' and slices + 3 'd's), [2] slices, [3] slice length (us),
-- [4] limit - n, [5] edge cap - n, [6] n, [7] the key's expiry (ms: the window, a slice and a
-- second), [8] the byte offset of the newest count.
-- Returns, when it admits n > 0: {-1, server us since 1970, the window's count, the count of
-- the slice about to leave}, all the rule needs then. Else {age, server us, stored counts...}:
-- the window's count j (0 = the slice about to leave, slices = the current one) is stored
-- count j + age, 0 past the end; an absent ring, or one of another shape, has age slices + 1
-- and no counts.
local slices, slice_us = tonumber(ARGV[2]), tonumber(ARGV[3])
local time = redis.call('TIME')
local us = time[1] * 1000000 + time[2]
local idx = (us - us % slice_us) / slice_us
local r = redis.call('GET', KEYS[1])
local age = slices + 1
if r and #r == 8 * slices + 24 then
  r = { struct.unpack(ARGV[1], r) }
  if r[1] == slice_us then
    age = idx - r[2]
    -- Redis's clock stepped back: keep counting in the newest slice written.
    if age < 0 then age, idx = 0, r[2] end
  end
end
local window, oldest = 0, 0
if age <= slices then
  oldest = r[3 + age]
  for k = 4 + age, 3 + slices do window = window + r[k] end
end
local n = ARGV[6]
if n ~= '0' and window <= tonumber(ARGV[4]) and window + oldest <= tonumber(ARGV[5]) then
  if age == 0 then
    redis.call('SETRANGE', KEYS[1], ARGV[8], struct.pack('<d', r[3 + slices] + n))
  else
    -- The first admission of a slice: the ring moves on, and its expiry with it.
    local ring = { slice_us, idx }
    for j = 0, slices - 1 do ring[3 + j] = j + age <= slices and r[3 + j + age] or 0 end
    ring[3 + slices] = n
    redis.call('SET', KEYS[1], struct.pack(ARGV[1], unpack(ring)), 'PX', ARGV[7])
  end
  return { -1, us, window, oldest }
end
if age > slices then return { age, us } end
r[1], r[2], r[4 + slices] = age, us, nil
return r

-- One sliding-window decision on Redis, the same rule as sluicegate::rate::sliding::evaluate.
-- KEYS[1]: a string of little-endian doubles (struct '<d'): the slice length (us), the number
-- of the newest slice written (floor(us since 1970 / slice length), exact below 2^53, so until
-- 2255), the total of the counts, the newest slice's count, then the counts of the `slices`
-- slices before it, oldest first. An admission within the newest slice reads the first five
-- doubles (the oldest count is the fifth) and rewrites the third and the fourth.
-- ARGV[1]: six little-endian doubles: slices, slice length (us), limit - n, edge cap - n, n,
-- the key's expiry (ms: the window, a slice and a second).
-- Answers little-endian doubles. When it admits n > 0: -1, server us since 1970, the window's
-- count, the count of the slice about to leave: all the rule needs then. Else age, server us,
-- then the stored counts, oldest first: the window's count j (0 = the slice about to leave,
-- slices = the current one) is stored count j + age, 0 past the end; an absent ring, or one of
-- another shape, has age slices + 1 and no counts.
local slices, slice_us, room, edge, n, expiry = struct.unpack('<dddddd', ARGV[1])
local time = redis.call('TIME')
local us = time[1] * 1000000 + time[2]
local idx = (us - us % slice_us) / slice_us
local r = redis.call('GET', KEYS[1])
local age, total, newest, oldest = slices + 1, 0, 0, 0
if r and #r == 8 * slices + 32 then
  local len, at
  len, at, total, newest, oldest = struct.unpack('<ddddd', r)
  if len == slice_us then
    age = idx - at
    -- Redis's clock stepped back: keep counting in the newest slice written.
    if age < 0 then age, idx = 0, at end
  end
end
-- Within the newest slice the window is the total less the oldest count.
if age == 0 and n > 0 and total - oldest <= room and total <= edge then
  redis.call('SETRANGE', KEYS[1], '16', struct.pack('<dd', total + n, newest + n))
  return struct.pack('<dddd', -1, us, total - oldest, oldest)
end
-- The stored counts, oldest first: s[1 .. slices + 1].
local counts = '<' .. string.rep('d', slices)
local s = {}
if age <= slices then
  s = { struct.unpack(counts, r, 33) }
  s[slices + 1] = newest -- where unpack put the position after the counts
end
local window, leaving = 0, s[1 + age] or 0
for k = 2 + age, slices + 1 do window = window + s[k] end
if n > 0 and window <= room and window + leaving <= edge then
  -- The first admission of a slice: the ring moves on, and its expiry with it.
  local ring = { slice_us, idx, window + leaving + n, (s[1 + slices + age] or 0) + n }
  for j = 0, slices - 1 do ring[5 + j] = s[1 + j + age] or 0 end
  redis.call('SET', KEYS[1], struct.pack(counts .. 'dddd', unpack(ring)), 'PX', expiry)
  return struct.pack('<dddd', -1, us, window, leaving)
end
if age > slices then return struct.pack('<dd', age, us) end
return struct.pack(counts .. 'ddd', age, us, unpack(s))

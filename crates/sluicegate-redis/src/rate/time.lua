-- Opening of the GCRA scripts: Redis's clock and the state, relative to now.
-- KEYS[1]: a string of one little-endian double (struct '<d'), the theoretical arrival time
-- (tat) in ns on Redis's clock modulo M = 2^23 s (97 days), so below 2^53 and exact. A live
-- key's tat lies in [now - 3 s, now + H] (write.lua: a key outlives its state by at most about
-- 2 s), H = 2^52 ns the longest horizon (burst x t) the builder allows, a span shorter than M:
-- tat - now comes back exactly from the two residues.
-- Sets sec, usec (Redis's TIME), now (ns modulo M), old (the stored residue, or false) and
-- tat (ns after now, 0 when due or absent).
local time = redis.call('TIME')
local sec, usec = time[1] + 0, time[2] + 0
local now = sec % 8388608 * 1000000000 + usec * 1000
local old = redis.call('GET', KEYS[1])
local tat = 0
-- A string of another length is not this format's state (something else wrote it): it
-- counts as absent, and the next admission writes over it (unpacking it failed the script).
if old and #old ~= 8 then old = false end
if old then
  old = struct.unpack('<d', old)
  tat = old - now
  if tat > 4503599627370496 then
    tat = 0 -- behind now, across the wrap
  elseif tat <= -3885008372629504 then
    tat = tat + 8388608000000000 -- ahead of now, across the wrap
  elseif tat < 0 then
    tat = 0
  end
end

-- Shared opening of the GCRA scripts: Redis's clock and the state, relative to now.
-- KEYS[1]: a string, the theoretical arrival time (tat) in ns on Redis's clock modulo
-- M = 2^23 s (97 days), so below 2^53 and exact as one Lua double. A live key's tat lies in
-- [now - 1 s, now + H], H = 2^52 ns the longest horizon (burst x t) the builder allows, a span
-- shorter than M: tat - now comes back exactly from the two residues.
-- ARGV[3]: the key's expiry (ms), one horizon and a second.
-- Sets time (Redis's TIME), now (ns modulo M) and tat (ns after now, 0 when due or absent).
local time = redis.call('TIME')
local now = time[1] % 8388608 * 1000000000 + time[2] * 1000
local tat = redis.call('GET', KEYS[1])
if not tat then
  tat = 0
else
  tat = tat - now
  if tat > 4503599627370496 then
    tat = 0 -- behind now, across the wrap
  elseif tat <= -3885008372629504 then
    tat = tat + 8388608000000000 -- ahead of now, across the wrap
  elseif tat < 0 then
    tat = 0
  end
end
-- Writes now + ahead (0 <= ahead <= 2^53 ns) modulo M, every step exact below 2^53.
local function store(ahead)
  local v = now - 8388608000000000 + ahead
  if v < 0 then v = v + 8388608000000000 end
  redis.call('SET', KEYS[1], string.format('%d', v), 'PX', ARGV[3])
end

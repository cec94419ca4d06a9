-- Closing of the GCRA scripts: writes now + ahead (0 <= ahead <= 2^53 ns) modulo M, every
-- step exact below 2^53, and answers the reply.
-- The key's expiry follows the state: a write in another second (of the residue) than the
-- stored state, or to an absent key, sets it to ahead + 2 s (at least 1 s after the end of
-- the state's second, by when the bucket is full again); a write within the stored state's
-- second overwrites the 8 bytes in place and keeps the expiry, which covers that second
-- already. So a key never expires while its state still counts, outlives it by at most about
-- 2 s, and the expiry is set about once a second per limit, not at every admission.
if ahead then
  local v = now - 8388608000000000 + ahead
  if v < 0 then v = v + 8388608000000000 end
  if old and v - v % 1000000000 == old - old % 1000000000 then
    redis.call('SETRANGE', KEYS[1], '0', struct.pack('<d', v))
  else
    redis.call('SET', KEYS[1], struct.pack('<d', v), 'PX', (ahead - ahead % 1000000) / 1000000 + 2001)
  end
end
return reply

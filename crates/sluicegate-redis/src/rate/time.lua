-- Shared opening of the GCRA scripts: Redis's clock and the state.
-- KEYS[1]: a string, the theoretical arrival time in ns since 1970 on Redis's clock. Lua
-- numbers are doubles, exact below 2^53 only, so it is read as seconds and ns apart and kept
-- relative to the current second: every value the step uses stays an exact integer.
-- Sets sec, usec, tat, now (tat and now in ns after second `sec`, tat at least 0).
local time = redis.call('TIME')
local sec, usec = tonumber(time[1]), tonumber(time[2])
local now, tat = usec * 1000, 0
local state = redis.call('GET', KEYS[1])
if state then
  local s = tonumber(string.sub(state, 1, -10)) or 0
  tat = math.max((s - sec) * 1000000000 + (tonumber(string.sub(state, -9)) or 0), 0)
end
local function store(new_tat)
  local ns = math.fmod(new_tat, 1000000000)
  redis.call('SET', KEYS[1], string.format('%d%09d', sec + (new_tat - ns) / 1000000000, ns),
    'PX', math.floor((new_tat - now) / 1000000) + 1000)
end

-- One GCRA step, the same integer arithmetic as sluicegate::rate::gcra::step with now = 0.
-- ARGV[1]: two little-endian doubles (struct '<dd'): t x n and t x burst (ns).
-- Sets ahead (the state to write, in ns after now; nil: nothing to write) and the reply: three
-- little-endian doubles, the tat before the step (ns after now), server s and server us.
local tn, h = struct.unpack('<dd', ARGV[1])
local ahead = tat + tn
if ahead > h then ahead = nil end
local reply = struct.pack('<ddd', tat, sec, usec)

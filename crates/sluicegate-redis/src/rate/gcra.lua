-- One GCRA step, the same integer arithmetic as sluicegate::rate::gcra::step with now = 0.
-- ARGV: [1] t x n (ns), [2] t x burst (ns). Returns {tat before the step (ns after now),
-- server s, server us}.
local nxt = tat + ARGV[1]
if nxt <= tonumber(ARGV[2]) then store(nxt) end
return {tat, time[1], time[2]}

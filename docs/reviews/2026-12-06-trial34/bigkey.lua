-- wrk: a new 8000-byte x-api-key on every request (per-key memory)
counter = 0
pad = string.rep("k", 8000)
request = function()
  counter = counter + 1
  return wrk.format("GET", "/rated/x", { ["x-api-key"] = counter .. "-" .. math.random(1, 1e9) .. pad })
end

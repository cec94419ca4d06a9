-- wrk: a new x-api-key on every request
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/rated/x", { ["x-api-key"] = "k" .. counter .. "-" .. math.random(1, 1e9) })
end

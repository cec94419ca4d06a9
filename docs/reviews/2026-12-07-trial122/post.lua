wrk.method = os.getenv("M") or "POST"
wrk.body = "hello"
wrk.headers["Content-Type"] = "text/plain"
local codes = {}
response = function(status, headers, body) codes[status] = (codes[status] or 0) + 1 end
done = function(summary, latency, requests)
  local s = ""
  for k, v in pairs(codes) do s = s .. k .. ":" .. v .. " " end
  io.write("codes " .. s .. "\n")
end

-- wrk -s post.lua: each request with the method in $M (POST by default) and a 5-byte body
wrk.method = os.getenv("M") or "POST"
wrk.body = "hello"
wrk.headers["Content-Type"] = "text/plain"

import json, time, urllib.request, sys
admin, up, pool, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
prev = None; t0 = time.time()
for i in range(n):
    st = json.load(urllib.request.urlopen(f"http://{admin}/status"))["pools"][pool]
    u = json.load(urllib.request.urlopen(f"http://{up}/stats"))["paths"]
    slow = u.get("/slow", 0); e503 = u.get("/503", 0)
    if prev is not None:
        print(f"t={time.time()-t0:4.0f}s limit {st['limit']:3d} in_flight {st['in_flight']:3d} queued {st['queued']:3d}  honest/s {(slow-prev[0])/2:6.1f}  503s/s {(e503-prev[1])/2:7.1f}")
    prev = (slow, e503)
    time.sleep(2)

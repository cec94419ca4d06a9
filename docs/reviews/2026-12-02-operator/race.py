#!/usr/bin/env python3
"""Admin calls racing each other: N threads for D seconds, each picking a random call."""
import http.client, json, random, sys, threading, time
ADMIN = ("127.0.0.1", 19901)
D = float(sys.argv[1]) if len(sys.argv) > 1 else 20
MAXC = int(sys.argv[2]) if len(sys.argv) > 2 else 8
N = 6
counts = {}
lock = threading.Lock()
def call(method, path, body=None):
    c = http.client.HTTPConnection(*ADMIN, timeout=10)
    c.request(method, path, body=body, headers={"content-type": "application/json"})
    r = c.getresponse(); data = r.read(); c.close()
    return r.status, data
def worker(seed):
    rnd = random.Random(seed)
    end = time.time() + D
    while time.time() < end:
        k = rnd.randrange(8)
        if k == 0: s, _ = call("PUT", "/pools/api/limits", json.dumps({"max_concurrency": rnd.randint(0, MAXC)}))
        elif k == 1: s, _ = call("PUT", "/pools/api/limits", json.dumps({"max_queue": rnd.randint(0, 100)}))
        elif k == 2: s, _ = call("PUT", "/pools/api/limits", json.dumps({"queue_timeout": "%dms" % rnd.randint(50, 3000)}))
        elif k == 3: s, _ = call("POST", "/pools/api/close")
        elif k == 4: s, _ = call("POST", "/pools/api/open")
        elif k == 5: s, _ = call("POST", "/reload")
        elif k == 6: s, _ = call("PUT", "/pools/api/limits", json.dumps({"rate": rnd.choice([None, "500/s", "2000/s"])}))
        else: s, _ = call("GET", "/status")
        with lock:
            counts[(k, s)] = counts.get((k, s), 0) + 1
ts = [threading.Thread(target=worker, args=(i,)) for i in range(N)]
[t.start() for t in ts]; [t.join() for t in ts]
print("calls (kind, status): count", sorted(counts.items()))

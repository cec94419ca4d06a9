#!/usr/bin/env python3
"""race26.py ADMIN_PORT GATE_PID SECONDS: hammer the admin API (reload, PUT limits, close/open)
and SIGHUP at once; count answers by (call, status)."""
import http.client, json, os, random, signal, sys, threading, time, collections

port = int(sys.argv[1]); pid = int(sys.argv[2]); secs = float(sys.argv[3])
pools = sys.argv[4].split(",") if len(sys.argv) > 4 else ["main", "adapt"]
end = time.time() + secs
counts = collections.Counter()
bad = []
lock = threading.Lock()


def call(method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    t = time.time()
    try:
        c.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
        r = c.getresponse()
        data = r.read()
        return r.status, data, time.time() - t
    except Exception as e:
        return "exc:" + type(e).__name__, b"", time.time() - t
    finally:
        c.close()


def worker(seed):
    rnd = random.Random(seed)
    while time.time() < end:
        k = rnd.randrange(7)
        if os.environ.get("NOCLOSE") and k in (3, 4):
            continue
        p = rnd.choice(pools)
        if k == 0:
            st, d, dt = call("POST", "/reload")
            name = "reload"
        elif k == 1:
            body = {}
            ch = rnd.randrange(4)
            if ch == 0:
                body["max_concurrency"] = rnd.randrange(0, 7)
            elif ch == 1:
                body["max_queue"] = rnd.randrange(0, 60)
            elif ch == 2:
                body["queue_timeout"] = rnd.choice(["1s", "2s", "5s"])
            else:
                body["rate"] = rnd.choice(["100/s", None, "1000/s"])
            st, d, dt = call("PUT", f"/pools/{p}/limits", json.dumps(body))
            name = "put"
        elif k == 2:
            try:
                os.kill(pid, signal.SIGHUP)
            except ProcessLookupError:
                pass
            st, d, dt = "sent", b"", 0
            name = "sighup"
        elif k == 3:
            st, d, dt = call("POST", f"/pools/{p}/close")
            name = "close"
        elif k == 4:
            st, d, dt = call("POST", f"/pools/{p}/open")
            name = "open"
        elif k == 5:
            st, d, dt = call("GET", "/status")
            name = "status"
        else:
            st, d, dt = call("GET", "/metrics")
            name = "metrics"
        with lock:
            counts[(name, st)] += 1
            if dt > 2 or (isinstance(st, str) and st.startswith("exc")):
                bad.append((name, st, round(dt, 2), d[:200]))


ts = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
for t in ts:
    t.start()
for t in ts:
    t.join()
for k, v in sorted(counts.items(), key=str):
    print(k, v)
print("slow or failed:", len(bad))
for b in bad[:15]:
    print(b)

#!/usr/bin/env python3
"""A test upstream for review 28 (extends review 27's pyup.py).

pyup2.py --port P [--workers N (0 = no cap)] [--latency 50ms]
   service time, one of:
     --dist fixed                 latency as given
     --dist exp                   exponential, mean = latency
     --dist lognormal:S           log-normal, median = latency, sigma S
     --dist bimodal:P:SLOW        latency with prob 1-P, SLOW (e.g. 500ms) with prob P
   --contention K                 service = drawn time x (1 + K x in_service), in_service
                                  counted at the start, this request included (a DB-like
                                  contention; with --workers 0 nothing caps it)
   --slow-path /slow --slow-latency 500ms   requests whose path starts so take SLOW instead
   --change 10s:latency=250ms | 10s:workers=10 | 10s:contention=0.2   (from the first request)
   --close                        answer HTTP/1.1 with `Connection: close`, close after each
   --http10                       answer `HTTP/1.0 200 OK`, no Content-Length, body ends at close
   --shed N                       answer 503 at once while N are in service (its own connection cap)
   --big-path /big [--big-bytes 8388608]  requests whose path starts so get a large body
   --body-bytes N --body-ms T     the body: N bytes sent in 16 slices over T ms after the head
                                  (the request counts as in service until the body's end)
GET /__upstream/stats: max_in_flight (in service or queued, body streaming included),
completed, per-second max in flight (`per_s`), connections accepted.
"""
import argparse, asyncio, json, math, random, time


def dur(s):
    s = s.strip()
    if s.endswith("ms"): return float(s[:-2]) / 1000
    if s.endswith("s"): return float(s[:-1])
    raise ValueError(s)


class Pool:
    def __init__(s, workers):
        s.workers, s.busy, s.waiters = workers, 0, []

    async def acquire(s):
        if s.workers <= 0:
            s.busy += 1; return
        if s.busy < s.workers and not s.waiters:
            s.busy += 1; return
        f = asyncio.get_running_loop().create_future(); s.waiters.append(f)
        try:
            await f
        except asyncio.CancelledError:
            if f in s.waiters: s.waiters.remove(f)
            elif f.done() and not f.cancelled(): s.release()
            raise

    def release(s):
        s.busy -= 1; s.pump()

    def pump(s):
        while s.waiters and (s.workers <= 0 or s.busy < s.workers):
            f = s.waiters.pop(0)
            if not f.done(): s.busy += 1; f.set_result(None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--latency", default="50ms")
    ap.add_argument("--dist", default="fixed")
    ap.add_argument("--contention", type=float, default=0.0)
    ap.add_argument("--contention-exp", type=float, default=1.0, help="service x (1 + K x in_service^E): E = 2 makes throughput fall past 1/sqrt(K)")
    ap.add_argument("--slow-path", default=None); ap.add_argument("--slow-latency", default="500ms")
    ap.add_argument("--change", action="append", default=[])
    ap.add_argument("--close", action="store_true"); ap.add_argument("--http10", action="store_true")
    ap.add_argument("--body-bytes", type=int, default=3); ap.add_argument("--body-ms", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shed", type=int, default=0, help="answer 503 at once when this many are in service (a service's own connection cap)")
    ap.add_argument("--fail503", type=float, default=0.0, help="review30: answer this share of requests 503 at once (not a cap: at random)")
    ap.add_argument("--big-path", default=None); ap.add_argument("--big-bytes", type=int, default=8 << 20)
    a = ap.parse_args()
    st = {"latency": dur(a.latency), "contention": a.contention}
    pool = Pool(a.workers)
    t0 = [None]
    stats = {"max_in_flight": 0, "in_flight": 0, "in_service": 0, "completed": 0, "conns": 0,
             "per_s": {}, "max_service_ms": 0.0}
    rng = random.Random(a.seed)
    changes = []
    for c in a.change:
        at, kv = c.split(":", 1); k, v = kv.split("=")
        changes.append((dur(at), k, v))

    def draw(path):
        if a.slow_path and path.startswith(a.slow_path.encode()):
            return dur(a.slow_latency)
        base = st["latency"]
        d = a.dist
        if d == "fixed": return base
        if d == "exp": return rng.expovariate(1 / base)
        if d.startswith("lognormal"):
            sig = float(d.split(":")[1]); return base * math.exp(rng.gauss(0, sig))
        if d.startswith("bimodal"):
            _, p, slow = d.split(":"); return dur(slow) if rng.random() < float(p) else base
        raise SystemExit("bad --dist " + d)

    def note_inflight():
        stats["max_in_flight"] = max(stats["max_in_flight"], stats["in_flight"])
        if t0[0] is not None:
            sec = str(int(time.monotonic() - t0[0]))
            stats["per_s"][sec] = max(stats["per_s"].get(sec, 0), stats["in_flight"])

    async def schedule():
        while t0[0] is None: await asyncio.sleep(0.01)
        for at, k, v in sorted(changes):
            await asyncio.sleep(max(0, t0[0] + at - time.monotonic()))
            if k == "latency": st["latency"] = dur(v)
            elif k == "contention": st["contention"] = float(v)
            elif k == "workers": pool.workers = int(v); pool.pump()

    async def handle(reader, writer):
        stats["conns"] += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                line = head.split(b"\r\n", 1)[0]
                parts = line.split(b" ")
                path = parts[1] if len(parts) > 1 else b"/"
                if b"/__upstream/stats" in line:
                    s = dict(stats); s["workers"] = pool.workers
                    body = json.dumps(s).encode()
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                    await writer.drain(); continue
                if t0[0] is None: t0[0] = time.monotonic()
                if a.fail503 and rng.random() < a.fail503:
                    stats["fail503"] = stats.get("fail503", 0) + 1
                    writer.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\n\r\nfail\n")
                    await writer.drain(); continue
                if a.shed and stats["in_service"] >= a.shed:
                    stats["shed"] = stats.get("shed", 0) + 1
                    writer.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\nRetry-After: 1\r\n\r\nbusy\n")
                    await writer.drain(); continue
                stats["in_flight"] += 1; note_inflight()
                try:
                    await pool.acquire()
                    try:
                        stats["in_service"] += 1
                        d = draw(path) * (1 + st["contention"] * stats["in_service"] ** a.contention_exp)
                        stats["max_service_ms"] = max(stats["max_service_ms"], d * 1000)
                        await asyncio.sleep(d)
                        n = a.body_bytes
                        if a.big_path and path.startswith(a.big_path.encode()):
                            n = a.big_bytes
                        if a.http10:
                            writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n")
                        else:
                            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n" % (
                                n, b"Connection: close\r\n" if a.close else b""))
                        if a.body_ms > 0:
                            k = 16; step = a.body_ms / 1000 / k; sent = 0
                            for i in range(k):
                                m = n * (i + 1) // k - sent
                                writer.write(b"x" * m); sent += m
                                await writer.drain()
                                if i < k - 1: await asyncio.sleep(step)
                        elif n > 65536:
                            blk = b"x" * 65536; sent = 0
                            while sent < n:
                                m = min(65536, n - sent); writer.write(blk[:m]); sent += m
                                await writer.drain()
                        else:
                            writer.write(b"x" * (n - 1) + b"\n" if n > 0 else b"")
                            await writer.drain()
                    finally:
                        stats["in_service"] -= 1
                        pool.release()
                finally:
                    stats["in_flight"] -= 1
                stats["completed"] += 1
                if a.close or a.http10:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def run():
        srv = await asyncio.start_server(handle, "127.0.0.1", a.port, backlog=4096)
        asyncio.get_running_loop().create_task(schedule())
        async with srv: await srv.serve_forever()
    asyncio.run(run())


if __name__ == "__main__":
    main()

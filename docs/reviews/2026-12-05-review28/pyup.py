#!/usr/bin/env python3
"""A test upstream: N workers (a FIFO queue in front of them), a fixed service time, and
changes over time; optionally a share of requests that fail fast (503) without a worker.

pyup.py --port P --workers 50 --latency 50ms [--change 10s:latency=250ms --change 20s:latency=50ms]
        [--change 10s:workers=10] [--fail-frac 0.3 --fail-ms 1]
Times count from the first request. GET /__upstream/stats reports max_in_flight, counts.
"""
import argparse, asyncio, json, random, time

def dur(s):
    s = s.strip()
    if s.endswith("ms"): return float(s[:-2]) / 1000
    if s.endswith("s"): return float(s[:-1])
    raise ValueError(s)

class Pool:
    def __init__(s, workers, latency):
        s.workers, s.latency, s.busy, s.waiters = workers, latency, 0, []
        s.max_in_flight = s.in_flight = s.completed = s.failed = 0
    async def acquire(s):
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
        while s.waiters and s.busy < s.workers:
            f = s.waiters.pop(0)
            if not f.done(): s.busy += 1; f.set_result(None)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True); ap.add_argument("--workers", type=int, default=50)
    ap.add_argument("--latency", default="50ms"); ap.add_argument("--change", action="append", default=[])
    ap.add_argument("--fail-frac", type=float, default=0.0); ap.add_argument("--fail-ms", type=float, default=1.0)
    ap.add_argument("--tick-ms", type=float, default=0.0, help="end each service on the next tick, as a ms timer wheel does")
    ap.add_argument("--spread", type=float, default=0.0, help="service time x uniform(1-s, 1+s)")
    a = ap.parse_args()
    pool = Pool(a.workers, dur(a.latency)); t0 = [None]
    changes = []
    for c in a.change:
        at, kv = c.split(":", 1); k, v = kv.split("=")
        changes.append((dur(at), k, v))
    rng = random.Random(1)

    async def schedule():
        while t0[0] is None: await asyncio.sleep(0.01)
        for at, k, v in sorted(changes):
            await asyncio.sleep(max(0, t0[0] + at - time.monotonic()))
            if k == "latency": pool.latency = dur(v)
            elif k == "workers": pool.workers = int(v); pool.pump()

    async def handle(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                line = head.split(b"\r\n", 1)[0]
                if b"/__upstream/stats" in line:
                    body = json.dumps({"max_in_flight": pool.max_in_flight, "completed": pool.completed,
                                       "failed": pool.failed, "workers": pool.workers}).encode()
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                    await writer.drain(); continue
                if t0[0] is None: t0[0] = time.monotonic()
                if a.fail_frac and rng.random() < a.fail_frac:
                    await asyncio.sleep(a.fail_ms / 1000)
                    pool.failed += 1
                    writer.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\n\r\nfail\n")
                    await writer.drain(); continue
                pool.in_flight += 1; pool.max_in_flight = max(pool.max_in_flight, pool.in_flight)
                try:
                    await pool.acquire()
                    try:
                        d = pool.latency * (1 + a.spread * (2 * rng.random() - 1))
                        if a.tick_ms:
                            tk = a.tick_ms / 1000; now = time.monotonic()
                            d = (int((now + d) / tk) + 1) * tk - now
                        await asyncio.sleep(d)
                    finally:
                        pool.release()
                finally:
                    pool.in_flight -= 1
                pool.completed += 1
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def run():
        srv = await asyncio.start_server(handle, "127.0.0.1", a.port, backlog=4096)
        asyncio.get_running_loop().create_task(schedule())
        async with srv: await srv.serve_forever()
    try:
        import uvloop; uvloop.install()
    except ImportError:
        pass
    asyncio.run(run())

if __name__ == "__main__":
    main()

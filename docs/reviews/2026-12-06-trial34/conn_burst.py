#!/usr/bin/env python3
"""Open N connections at once, each sends one GET; print how many took >= 0.9 s (a SYN or
ACK dropped at a full accept queue costs a 1 s retransmit). conn_burst.py PORT N PATH"""
import asyncio, sys, time
port, n, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
async def one():
    t0 = time.perf_counter()
    try:
        r, w = await asyncio.open_connection("127.0.0.1", port)
        tc = time.perf_counter() - t0
        w.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        await r.read()
        w.close()
        return tc, time.perf_counter() - t0
    except Exception as e:
        return None, None
async def main():
    res = await asyncio.gather(*[one() for _ in range(n)])
    ok = [r for r in res if r[1] is not None]
    slow = [r for r in ok if r[1] >= 0.9]
    slowc = [r for r in ok if r[0] >= 0.9]
    tot = sorted(r[1] for r in ok)
    print(f"port {port}: {len(ok)}/{n} answered, {len(slow)} took >= 0.9 s ({len(slowc)} of them in connect), max {tot[-1]:.2f} s, p50 {tot[len(tot)//2]:.3f} s")
asyncio.run(main())

#!/usr/bin/env python3
"""A misbehaving upstream for trying the gate (raw asyncio, HTTP/1.1).

Paths:
  /delay?ms=N        200 after N ms (keep-alive, Content-Length)
  /echo              echoes the request body (reads Content-Length or chunked)
  /garbage           writes non-HTTP bytes and closes
  /reset             closes the socket with RST at once (SO_LINGER 0)
  /close             closes without answering
  /hang              never answers (keeps the socket)
  /slowbody?ms=N     head at once, body byte by byte every N ms (10 bytes)
  /halfbody          Content-Length 100, sends 10 bytes, then hangs
  /halfclose         Content-Length 100, sends 10 bytes, then closes
  /big?kb=N          N KiB body
  /headers           echoes the request head as the body
  /status?code=N     answers status N
  /chunked           chunked answer with trailers
  /ws                accepts a websocket-ish upgrade (101) and echoes bytes
  /hugehead          a 100 KiB response header
  /1xx               a 100 Continue, then 103, then 200
anything else: 200 "ok <path>"
Stats: /__stats (max concurrent seen)
"""
import asyncio, socket, struct, sys, time, urllib.parse

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 9000
# A second argument: close a keep-alive connection idle for that many seconds, unannounced
# (as gunicorn's `keepalive` or a server with a short idle timeout does).
IDLE_CLOSE = float(sys.argv[2]) if len(sys.argv) > 2 else 0
inflight = 0
peak = 0
total = 0

async def read_head(r):
    data = await r.readuntil(b"\r\n\r\n")
    lines = data.decode("latin1").split("\r\n")
    req = lines[0]
    hdrs = {}
    for l in lines[1:]:
        if ":" in l:
            k, v = l.split(":", 1)
            hdrs[k.strip().lower()] = v.strip()
    return req, hdrs, data

async def read_body(r, hdrs):
    if "chunked" in hdrs.get("transfer-encoding", "").lower():
        body = b""
        while True:
            line = await r.readuntil(b"\r\n")
            n = int(line.split(b";")[0], 16)
            if n == 0:
                while (await r.readuntil(b"\r\n")) != b"\r\n":
                    pass
                return body
            body += await r.readexactly(n)
            await r.readexactly(2)
    n = int(hdrs.get("content-length", "0") or 0)
    return await r.readexactly(n) if n else b""

def resp(code, body, extra=""):
    if isinstance(body, str):
        body = body.encode()
    return (f"HTTP/1.1 {code} X\r\nContent-Length: {len(body)}\r\n{extra}\r\n").encode() + body

async def handle(r, w):
    global inflight, peak, total
    try:
        while True:
            try:
                if IDLE_CLOSE:
                    req, hdrs, raw = await asyncio.wait_for(read_head(r), IDLE_CLOSE)
                else:
                    req, hdrs, raw = await read_head(r)
            except Exception:
                return
            method, target, _ = req.split(" ", 2)
            u = urllib.parse.urlsplit(target)
            q = dict(urllib.parse.parse_qsl(u.query))
            p = "/" + u.path.rsplit("/", 1)[-1]
            inflight += 1; total += 1
            peak = max(peak, inflight)
            try:
                if p != "/echo" and p != "/headers":
                    await read_body(r, hdrs)
                if p == "/delay":
                    await asyncio.sleep(int(q.get("ms", "100")) / 1000)
                    w.write(resp(200, "slept\n"))
                elif p == "/echo":
                    b = await read_body(r, hdrs)
                    w.write(resp(200, b))
                elif p == "/headers":
                    b = await read_body(r, hdrs)
                    w.write(resp(200, raw + b))
                elif p == "/garbage":
                    w.write(b"THIS IS NOT HTTP\r\n\r\nat all\n"); await w.drain(); w.close(); return
                elif p == "/reset":
                    s = w.get_extra_info("socket")
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    w.transport.abort(); return
                elif p == "/close":
                    w.close(); return
                elif p == "/hang":
                    await asyncio.sleep(3600); return
                elif p == "/slowbody":
                    ms = int(q.get("ms", "500"))
                    w.write(b"HTTP/1.1 200 X\r\nContent-Length: 10\r\n\r\n"); await w.drain()
                    for i in range(10):
                        await asyncio.sleep(ms / 1000); w.write(b"x"); await w.drain()
                elif p == "/halfbody":
                    w.write(b"HTTP/1.1 200 X\r\nContent-Length: 100\r\n\r\n0123456789"); await w.drain()
                    await asyncio.sleep(3600); return
                elif p == "/halfclose":
                    w.write(b"HTTP/1.1 200 X\r\nContent-Length: 100\r\n\r\n0123456789"); await w.drain()
                    w.close(); return
                elif p == "/big":
                    n = int(q.get("kb", "1024")) * 1024
                    w.write(f"HTTP/1.1 200 X\r\nContent-Length: {n}\r\n\r\n".encode())
                    chunk = b"x" * 65536
                    left = n
                    while left:
                        c = chunk[:min(left, 65536)]; w.write(c); left -= len(c); await w.drain()
                elif p == "/status":
                    c = int(q.get("code", "200"))
                    w.write(resp(c, f"status {c}\n"))
                elif p == "/chunked":
                    w.write(b"HTTP/1.1 200 X\r\nTransfer-Encoding: chunked\r\nTrailer: x-t\r\n\r\n5\r\nhello\r\n0\r\nx-t: 1\r\n\r\n")
                elif p == "/ws":
                    w.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"); await w.drain()
                    while True:
                        d = await r.read(4096)
                        if not d: break
                        w.write(d); await w.drain()
                    w.close(); return
                elif p == "/hugehead":
                    w.write(b"HTTP/1.1 200 X\r\nX-Big: " + b"a" * 100000 + b"\r\nContent-Length: 2\r\n\r\nok")
                elif p == "/1xx":
                    w.write(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + resp(200, "after 1xx\n"))
                elif p == "/__stats":
                    w.write(resp(200, f"peak {peak} inflight {inflight - 1} total {total}\n"))
                    peak = inflight
                else:
                    w.write(resp(200, f"ok {p}\n"))
                await w.drain()
            finally:
                inflight -= 1
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        try: w.close()
        except Exception: pass

async def main():
    srv = await asyncio.start_server(handle, "127.0.0.1", PORT, backlog=1024)
    print(f"up.py on {PORT}", flush=True)
    async with srv:
        await srv.serve_forever()

asyncio.run(main())

# Misbehaving upstream: behaviour chosen by the request path. Logs each request head it got.
import socket, threading, sys, time, os
port = int(sys.argv[1])
log = open(f"/tmp/t20/up-{port}.log", "a", buffering=1)
inflight = 0; peak = 0; lk = threading.Lock()
def readhead(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d: return None, b""
        buf += d
    h, _, rest = buf.partition(b"\r\n\r\n")
    return h, rest
def serve(c):
    global inflight, peak
    try:
        while True:
            h, rest = readhead(c)
            if h is None: return
            log.write(repr(h) + "\n")
            line = h.split(b"\r\n")[0].decode()
            path = line.split(" ")[1]
            with lk:
                inflight += 1; peak = max(peak, inflight)
            done = [False]
            def finish():
                global inflight
                if not done[0]:
                    done[0] = True
                    with lk: inflight -= 1
            try:
                r = handle(c, path, h, rest, finish)
            finally:
                finish()
            if r == "close": c.close(); return
    except Exception as e:
        log.write(f"ERR {e!r}\n")
def body_len(h):
    for l in h.split(b"\r\n")[1:]:
        k, _, v = l.partition(b":")
        if k.strip().lower() == b"content-length": return int(v)
    return 0
def ok(c, body=b"ok\n", extra=b""):
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n" % (len(body), extra) + body)
def handle(c, path, h, rest, finish=lambda: None):
    p = path.split("?")[0]
    if p == "/stats":
        ok(c, f"inflight={inflight} peak={peak}\n".encode()); return
    if p == "/echohead":
        ok(c, h + b"\n"); return
    if p == "/early":  # answer before reading the body, then close
        c.sendall(b"HTTP/1.1 413 Too Large\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbig\n"); return "close"
    if p == "/early-keep":  # answer before reading the body, keep-alive
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"); return "close"
    if p == "/204body":
        c.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nHELLO"); return
    if p == "/304body":
        c.sendall(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\nHELLO"); return
    if p == "/204te":
        c.sendall(b"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"); return
    if p == "/never":
        time.sleep(3600); return "close"
    if p == "/slowhead":  # head a byte every 0.5s
        for b in b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n":
            c.sendall(bytes([b])); time.sleep(0.5)
        return
    if p == "/midbody":  # close mid body
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf"); return "close"
    if p == "/reset":
        import struct
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); c.close(); return "close"
    if p == "/rst-after-head":
        import struct
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf"); time.sleep(0.1)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); c.close(); return "close"
    if p == "/hugehead":
        c.sendall(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a"*70000 + b"\r\nContent-Length: 3\r\n\r\nok\n"); return
    if p == "/manyhdr":
        c.sendall(b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(120)) + b"Content-Length: 3\r\n\r\nok\n"); return
    if p == "/setcookie":
        c.sendall(b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 3\r\n\r\nok\n"); return
    if p == "/http10":
        c.sendall(b"HTTP/1.0 200 OK\r\n\r\nhello from 1.0\n"); return "close"
    if p == "/http10cl":
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n"); return "close"
    if p == "/100":
        c.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        n = body_len(h) - len(rest)
        while n > 0: n -= len(c.recv(65536))
        ok(c); return
    if p == "/102":
        c.sendall(b"HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"); ok(c); return
    if p == "/obsfold":
        c.sendall(b"HTTP/1.1 200 OK\r\nX-A: one\r\n two\r\nContent-Length: 3\r\n\r\nok\n"); return
    if p == "/cl-te":
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"); return
    if p == "/dupcl":
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nok\n"); return "close"
    if p == "/hdrconn":  # upstream uses Connection to name a header
        c.sendall(b"HTTP/1.1 200 OK\r\nConnection: x-private\r\nX-Private: secret\r\nContent-Length: 3\r\n\r\nok\n"); return
    if p == "/readbody":
        n = body_len(h) - len(rest)
        while n > 0:
            d = c.recv(65536)
            if not d: return "close"
            n -= len(d)
        finish(); ok(c); return
    if p == "/slowread":  # read body slowly
        n = body_len(h) - len(rest)
        while n > 0:
            d = c.recv(1024); time.sleep(0.01)
            if not d: return "close"
            n -= len(d)
        ok(c); return
    if p.startswith("/sleep"):
        time.sleep(float(p[6:] or "1")); finish(); ok(c); return
    if p == "/nolen-keep":  # body with no length, close
        c.sendall(b"HTTP/1.1 200 OK\r\n\r\nuntil close\n"); return "close"
    if p == "/space-status":
        c.sendall(b"HTTP/1.1 200\r\nContent-Length: 3\r\n\r\nok\n"); return
    if p == "/lf-only":
        c.sendall(b"HTTP/1.1 200 OK\nContent-Length: 3\n\nok\n"); return
    if p == "/status999":
        c.sendall(b"HTTP/1.1 999 Weird\r\nContent-Length: 3\r\n\r\nok\n"); return
    if p == "/te-identity":
        c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nabc"); return "close"
    if p == "/header-nul":
        c.sendall(b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 3\r\n\r\nok\n"); return
    if p == "/crlf-in-val":
        c.sendall(b"HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 3\r\n\r\nok\n"); return
    if p == "/cl-overflow":
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\nabc"); return "close"
    if p == "/cl-neg":
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nabc"); return "close"
    if p == "/chunk-overflow":
        c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\nabc"); return "close"
    if p == "/keepalive0":
        c.sendall(b"HTTP/1.1 200 OK\r\nKeep-Alive: timeout=0\r\nContent-Length: 3\r\n\r\nok\n"); return
    if p == "/early-drain":
        c.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 5\r\n\r\nauth\n"); finish()
        n = body_len(h) - len(rest)
        while n > 0:
            d = c.recv(65536)
            if not d: return "close"
            n -= len(d)
        return
    if p == "/big":
        body = b"x" * 4000000
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)); finish(); c.sendall(body); return
    if p == "/429":
        c.sendall(b"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 5\r\n\r\nslow\n"); return
    if p == "/close-later":
        n = body_len(h) - len(rest)
        while n > 0:
            d = c.recv(65536)
            if not d: return "close"
            n -= len(d)
        finish(); ok(c); time.sleep(0.1); return "close"
    if p == "/early-hold":
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"); time.sleep(3600); return "close"
    if p == "/ws":
        c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nHELLO-FROM-UP")
        if rest: c.sendall(b"[early:" + rest + b"]")
        while True:
            d = c.recv(65536)
            if not d: return "close"
            c.sendall(d)
    if p == "/ws-body":
        c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        c.sendall(b"[rest:" + rest + b"]")
        while True:
            d = c.recv(65536)
            if not d: return "close"
            c.sendall(d)
    ok(c)
srv = socket.socket(socket.AF_INET6 if ":" in os.environ.get("BIND","127.0.0.1") else socket.AF_INET)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((os.environ.get("BIND","127.0.0.1"), port)); srv.listen(1024)
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()

#!/usr/bin/env python3
"""review26 upstream: raw sockets, behaviour chosen by path. Counts in-flight and peak.
usage: up26.py PORT"""
import socket, sys, threading, time, json, hashlib, base64

PORT = int(sys.argv[1])
lock = threading.Lock()
st = {"now": 0, "peak": 0, "total": 0, "paths": {}}


def recv_head(c, buf):
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d:
            return None, buf
        buf += d
    i = buf.index(b"\r\n\r\n")
    return buf[:i].decode("latin1"), buf[i + 4:]


def read_body(c, hdrs, rest):
    n = 0
    if "content-length" in hdrs:
        want = int(hdrs["content-length"])
        got = len(rest)
        rest = b""
        while got < want:
            d = c.recv(min(65536, want - got))
            if not d:
                break
            got += len(d)
        return got, b""
    if hdrs.get("transfer-encoding", "").lower() == "chunked":
        buf = rest
        total = 0
        while True:
            while b"\r\n" not in buf:
                d = c.recv(65536)
                if not d:
                    return total, b""
                buf += d
            line, buf = buf.split(b"\r\n", 1)
            size = int(line.split(b";")[0], 16)
            while len(buf) < size + 2:
                d = c.recv(65536)
                if not d:
                    return total, b""
                buf += d
            total += size
            buf = buf[size + 2:]
            if size == 0:
                return total, buf
    return 0, rest


def handle(c):
    buf = b""
    try:
        while True:
            head, buf = recv_head(c, buf)
            if head is None:
                return
            lines = head.split("\r\n")
            method, target, ver = lines[0].split(" ", 2)
            hdrs = {}
            for l in lines[1:]:
                k, v = l.split(":", 1)
                hdrs[k.strip().lower()] = v.strip()
            path = target.split("?")[0]
            if path.startswith("/a/"):
                path = path[2:]
            q = {}
            if "?" in target:
                for kv in target.split("?", 1)[1].split("&"):
                    if "=" in kv:
                        k, v = kv.split("=", 1)
                        q[k] = v
            with lock:
                st["now"] += 1
                st["total"] += 1
                st["peak"] = max(st["peak"], st["now"])
                st["paths"][path] = st["paths"].get(path, 0) + 1
            done = [False]
            def leave():
                if not done[0]:
                    done[0] = True
                    with lock:
                        st["now"] -= 1
            try:
                keep = serve(c, method, path, q, hdrs, head, buf, leave)
            finally:
                leave()
            buf = b""
            if not keep:
                return
    except Exception as e:
        pass
    finally:
        try:
            c.close()
        except Exception:
            pass


def ok(c, body=b"ok\n", status="200 OK", extra=""):
    c.sendall(f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body)


def serve(c, method, path, q, hdrs, head, rest, leave=lambda: None):
    if path == "/stats":
        with lock:
            body = json.dumps(st).encode()
        ok(c, body)
        return True
    if path == "/reset":
        with lock:
            st["peak"] = st["now"]
            st["total"] = 0
            st["paths"] = {}
        ok(c)
        return True
    if path == "/stream":
        # chunked body dribbling: n chunks, ms apart
        n = int(q.get("n", 10)); ms = int(q.get("ms", 500))
        read_body(c, hdrs, rest)
        c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n")
        for i in range(n):
            data = f"chunk {i} at {time.time():.3f}\n".encode()
            c.sendall(b"%x\r\n%s\r\n" % (len(data), data))
            time.sleep(ms / 1000)
        c.sendall(b"0\r\n\r\n")
        return True
    if path == "/stream10":
        # HTTP/1.0 close-delimited dribble
        n = int(q.get("n", 10)); ms = int(q.get("ms", 500))
        read_body(c, hdrs, rest)
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n")
        for i in range(n):
            c.sendall(f"line {i} at {time.time():.3f}\n".encode())
            time.sleep(ms / 1000)
        return False
    if path == "/sse":
        read_body(c, hdrs, rest)
        n = int(q.get("n", 10)); ms = int(q.get("ms", 500))
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n")
        for i in range(n):
            data = f"data: {i}\n\n".encode()
            c.sendall(b"%x\r\n%s\r\n" % (len(data), data))
            time.sleep(ms / 1000)
        c.sendall(b"0\r\n\r\n")
        return True
    if path == "/big":
        read_body(c, hdrs, rest)
        mb = int(q.get("mb", 50))
        c.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {mb<<20}\r\n\r\n".encode())
        blk = b"z" * (1 << 20)
        for i in range(mb):
            c.sendall(blk)
        return True
    if path == "/late408":
        read_body(c, hdrs, rest)
        ok(c, b"first\n")
        time.sleep(float(q.get("s", "1")))
        try:
            c.sendall(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        except Exception:
            pass
        if q.get("close", "1") == "1":
            return False
        time.sleep(30)
        return False
    if path == "/proc102":
        read_body(c, hdrs, rest)
        n = int(q.get("n", 20)); ms = int(q.get("ms", 500))
        for i in range(n):
            c.sendall(b"HTTP/1.1 102 Processing\r\n\r\n")
            time.sleep(ms / 1000)
        ok(c, b"finally\n")
        return True
    if path == "/closemid":
        read_body(c, hdrs, rest)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 100)
        time.sleep(float(q.get("s", "0.2")))
        return False
    if path == "/closemidchunk":
        read_body(c, hdrs, rest)
        c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
        time.sleep(float(q.get("s", "0.2")))
        return False
    if path == "/rstmid":
        read_body(c, hdrs, rest)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 100)
        time.sleep(0.1)
        import struct
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        return False
    if path == "/503":
        read_body(c, hdrs, rest)
        ok(c, b"busy\n", "503 Service Unavailable", "Retry-After: 7\r\n")
        return True
    if path == "/upload":
        # optionally answers 100-continue itself
        if hdrs.get("expect", "").lower() == "100-continue" and q.get("cont", "1") == "1":
            c.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        t0 = time.time()
        n, _ = read_body(c, hdrs, rest)
        ok(c, f"got {n} bytes in {time.time()-t0:.3f}s expect={hdrs.get('expect')}\n".encode())
        return True
    if path == "/reject413":
        ok(c, b"too big\n", "413 Payload Too Large", "Connection: close\r\n")
        return False
    if path == "/head":
        read_body(c, hdrs, rest)
        body = b"y" * 12345
        hdr = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\nETag: \"abc\"\r\n\r\n".encode()
        c.sendall(hdr if method == "HEAD" else hdr + body)
        return True
    if path == "/headchunked":
        read_body(c, hdrs, rest)
        hdr = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        c.sendall(hdr if method == "HEAD" else hdr + b"3\r\nabc\r\n0\r\n\r\n")
        return True
    if path == "/echo":
        n, _ = read_body(c, hdrs, rest)
        body = (f"{method} {path} body={n}\n" + head + "\n").encode()
        ok(c, body)
        return True
    if path == "/slow":
        read_body(c, hdrs, rest)
        time.sleep(int(q.get("ms", 100)) / 1000)
        leave()  # counted out before the answer leaves, so the next request cannot overlap it
        ok(c)
        return True
    if path == "/bighead":
        read_body(c, hdrs, rest)
        n = int(q.get("n", 60000))
        ok(c, b"ok\n", extra=f"X-Big: {'a'*n}\r\n")
        return True
    if path == "/ws":
        key = hdrs.get("sec-websocket-key", "")
        acc = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        c.sendall(f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {acc}\r\n\r\n".encode())
        if rest:
            c.sendall(rest)
        while True:
            d = c.recv(65536)
            if not d:
                return False
            c.sendall(d)
    ok(c, f"{method} {path}\n".encode())
    return True


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", PORT))
s.listen(1024)
while True:
    c, _ = s.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()

#!/usr/bin/env python3
"""A counting upstream for the review: tracks in-flight and the peak, with modes for
misbehaving answers. GET /__stats -> {"in_flight":..,"peak":..,"total":..}; GET /__reset.
Mode by path prefix:
  /slow?ms=N      sleep N ms then 200 (default latency from argv)
  /close          read request, close without answering
  /nolen          answer 200 without Content-Length, then close
  /1xx            send 100 Continue and 103 Early Hints, then 200
  /drip           answer head then body byte by byte, 200ms apart (10 bytes)
  /badhdr         answer with a malformed header line
  /early          answer 200 before reading the request body, then close
  /huge           1 MiB body
"""
import socket, threading, sys, time, json

lock = threading.Lock()
state = {"in_flight": 0, "peak": 0, "total": 0}
LAT = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.05

def read_head(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d:
            return None, b""
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head.decode("latin1"), rest

def read_body(c, head, rest):
    cl = 0
    chunked = False
    for line in head.split("\r\n")[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == "content-length":
            cl = int(v.strip())
        if k.strip().lower() == "transfer-encoding" and "chunked" in v.lower():
            chunked = True
    if chunked:
        while not rest.endswith(b"0\r\n\r\n"):
            d = c.recv(65536)
            if not d:
                return
            rest += d
        return
    while len(rest) < cl:
        d = c.recv(65536)
        if not d:
            return
        rest += d

def handle(c):
    try:
        while True:
            head, rest = read_head(c)
            if head is None:
                return
            path = head.split(" ")[1]
            if path.startswith("/__stats"):
                with lock:
                    b = json.dumps(state).encode()
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(b) + b)
                continue
            if path.startswith("/__reset"):
                with lock:
                    state.update(in_flight=0, peak=0, total=0)
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                continue
            if path.startswith("/early"):
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nearly")
                return
            read_body(c, head, rest)
            counted = [True]
            with lock:
                state["in_flight"] += 1
                state["total"] += 1
                state["peak"] = max(state["peak"], state["in_flight"])
            try:
                if path.startswith("/kaclose"):
                    with lock:
                        state["in_flight"] -= 1
                    counted[0] = False
                    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    time.sleep(0.02)
                    return
                if path.startswith("/close"):
                    return
                if path.startswith("/nolen"):
                    c.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nno length here")
                    return
                if path.startswith("/1xx"):
                    c.sendall(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n")
                    time.sleep(0.05)
                    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    continue
                if path.startswith("/drip"):
                    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
                    for i in range(10):
                        time.sleep(0.2); c.sendall(b"x")
                    continue
                if path.startswith("/badhdr"):
                    c.sendall(b"HTTP/1.1 200 OK\r\nBad Header Line\r\nContent-Length: 2\r\n\r\nok")
                    continue
                if path.startswith("/huge"):
                    body = b"y" * (1 << 20)
                    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                    continue
                ms = LAT
                if "ms=" in path:
                    ms = int(path.split("ms=")[1].split("&")[0]) / 1000
                time.sleep(ms)
                with lock:
                    state["in_flight"] -= 1
                    counted[0] = False
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
            finally:
                if counted[0]:
                    with lock:
                        state["in_flight"] -= 1
    except (ConnectionError, OSError):
        pass
    finally:
        c.close()

s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1024)
while True:
    c, _ = s.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()

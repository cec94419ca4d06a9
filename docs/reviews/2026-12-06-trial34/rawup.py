#!/usr/bin/env python3
"""Canned raw answers on 127.0.0.1:9040, one per path (see CANNED); reads the head only."""
import socket, threading
CANNED = {
 b"/cookies": b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 2\r\n\r\nok",
 b"/fold": b"HTTP/1.1 200 OK\r\nX-A: one\r\n two\r\nContent-Length: 2\r\n\r\nok",
 b"/cl-te": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
 b"/two-cl": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
 b"/two-cl-diff": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok!",
 b"/cl-list": b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok",
 b"/neg-cl": b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nok",
 b"/plus-cl": b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok",
 b"/no-len": b"HTTP/1.1 200 OK\r\n\r\nuntil close",
 b"/lf-only": b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
 b"/http10-ka": b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
 b"/space-name": b"HTTP/1.1 200 OK\r\nX A: b\r\nContent-Length: 2\r\n\r\nok",
 b"/colon-space": b"HTTP/1.1 200 OK\r\nX-A : b\r\nContent-Length: 2\r\n\r\nok",
 b"/nul": b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 2\r\n\r\nok",
 b"/obs-text": b"HTTP/1.1 200 OK\r\nX-A: caf\xe9\r\nContent-Length: 2\r\n\r\nok",
 b"/reason-utf8": b"HTTP/1.1 200 \xc3\xa7a va\r\nContent-Length: 2\r\n\r\nok",
 b"/status-2digit": b"HTTP/1.1 20 OK\r\nContent-Length: 2\r\n\r\nok",
 b"/hop": b"HTTP/1.1 200 OK\r\nConnection: x-secret\r\nX-Secret: internal\r\nKeep-Alive: timeout=5\r\nProxy-Authenticate: Basic\r\nContent-Length: 2\r\n\r\nok",
 b"/101": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n",
 b"/trailer-chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: x-t\r\n\r\n2\r\nok\r\n0\r\nx-t: 1\r\nContent-Length: 5\r\n\r\n",
 b"/early-close-chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n",
}
def serve(c):
    try:
        data = b""
        while b"\r\n\r\n" not in data:
            d = c.recv(65536)
            if not d: return
            data += d
        path = data.split(b" ", 2)[1]
        c.sendall(CANNED.get(path, b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
    finally:
        c.close()
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 9040)); s.listen(128)
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()

#!/usr/bin/env python3
"""Logs every byte it receives (repr, per connection) and answers 200 after the head."""
import socket, threading, sys, time
def h(c, n):
    c.settimeout(2); buf=b""
    try:
        while True:
            d=c.recv(65536)
            if not d: break
            buf+=d
            if b"\r\n\r\n" in buf and not buf.endswith(b"HOLD"):
                pass
    except Exception: pass
    sys.stdout.write(f"--- conn {n}: {buf!r}\n"); sys.stdout.flush()
def h2(c, n):
    # answer as soon as the head is in, then keep reading 1 s to log the rest
    buf=b""; c.settimeout(1.0); answered=False
    try:
        while True:
            d=c.recv(65536)
            if not d: break
            buf+=d
            if not answered and b"\r\n\r\n" in buf:
                time.sleep(0.2)
                try: c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
                except Exception: pass
                answered=True
    except Exception: pass
    sys.stdout.write(f"--- conn {n}: {buf!r}\n"); sys.stdout.flush(); c.close()
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR,1); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(64)
n=0
while True:
    c,_=s.accept(); n+=1; threading.Thread(target=h2,args=(c,n),daemon=True).start()

#!/usr/bin/env python3
"""Slow clients: a head dripped 1 byte a second; a keep-alive connection left idle after one
request; a body dripped 1 byte every 2 s. Prints when the gate closes each."""
import socket, threading, time
def drip_head():
    s = socket.create_connection(("127.0.0.1", 8080)); t0 = time.time()
    data = b"GET /x HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: " + b"a" * 100
    try:
        for b in data:
            s.send(bytes([b])); time.sleep(1)
    except Exception as e:
        print(f"drip head: send failed after {time.time()-t0:.1f}s ({e})"); return
    print("drip head: never closed")
def idle_keepalive():
    s = socket.create_connection(("127.0.0.1", 8080)); t0 = time.time()
    s.sendall(b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n"); s.recv(1000)
    s.settimeout(30)
    try:
        d = s.recv(1000); print(f"idle keep-alive: closed after {time.time()-t0:.1f}s {d[:40]!r}")
    except Exception as e: print("idle keep-alive:", e)
def drip_body():
    s = socket.create_connection(("127.0.0.1", 8080)); t0 = time.time()
    s.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
    try:
        for i in range(100):
            s.send(b"a"); time.sleep(2)
            s.setblocking(False)
            try:
                d = s.recv(1000)
                print(f"drip body: answer after {time.time()-t0:.1f}s {d[:60]!r}"); return
            except BlockingIOError: pass
            finally: s.setblocking(True)
    except Exception as e:
        print(f"drip body: send failed after {time.time()-t0:.1f}s ({e})")
ts = [threading.Thread(target=f) for f in (drip_head, idle_keepalive, drip_body)]
[t.start() for t in ts]; [t.join(timeout=40) for t in ts]

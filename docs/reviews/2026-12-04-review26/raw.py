#!/usr/bin/env python3
"""raw.py PORT 'python bytes expr' [timeout] [--timed] : send bytes, print what comes back with timestamps"""
import socket, sys, time

port = int(sys.argv[1])
data = eval(sys.argv[2])
tmo = float(sys.argv[3]) if len(sys.argv) > 3 else 5
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(tmo)
t0 = time.time()
if isinstance(data, list):
    for part in data:
        if isinstance(part, (int, float)):
            time.sleep(part)
        else:
            s.sendall(part)
else:
    s.sendall(data)
out = b""
try:
    while True:
        d = s.recv(65536)
        if not d:
            print(f"[{time.time()-t0:.3f}s] EOF")
            break
        print(f"[{time.time()-t0:.3f}s] {len(d)} bytes: {d[:600]!r}")
except socket.timeout:
    print(f"[{time.time()-t0:.3f}s] timeout (connection still open)")
except ConnectionResetError:
    print(f"[{time.time()-t0:.3f}s] RST")

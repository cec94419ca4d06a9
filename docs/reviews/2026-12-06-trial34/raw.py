#!/usr/bin/env python3
"""Send raw bytes to the gate and print what comes back: raw.py HOST:PORT 'escaped bytes' [wait_s]"""
import socket, sys, time, codecs
host, port = sys.argv[1].split(":")
data = codecs.escape_decode(sys.argv[2].encode())[0]
wait = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
s = socket.create_connection((host, int(port)))
s.sendall(data)
s.settimeout(wait)
out = b""
t0 = time.time()
try:
    while True:
        d = s.recv(65536)
        if not d:
            out += b"\n<<closed by gate after %.2fs>>" % (time.time() - t0); break
        out += d
except socket.timeout:
    out += b"\n<<still open after %.1fs>>" % wait
except ConnectionResetError:
    out += b"\n<<reset after %.2fs>>" % (time.time() - t0)
print(out.decode("latin1"))

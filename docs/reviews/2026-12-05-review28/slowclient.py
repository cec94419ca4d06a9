#!/usr/bin/env python3
"""N clients that each download URL PATH (a large body) reading at RATE bytes/s, one after
another, for DURATION s. slowclient.py PORT PATH N RATE DURATION -> JSON: downloads, seconds each."""
import json, socket, sys, threading, time
port, path, n, rate, duration = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
out = {"done": 0, "times": [], "errors": 0, "statuses": {}}
lock = threading.Lock()
end = time.time() + duration
def one():
    while time.time() < end:
        t = time.time()
        try:
            s = socket.create_connection(("127.0.0.1", port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            got, head = 0, b""
            chunk = max(1024, int(rate / 20))
            while True:
                b = s.recv(chunk)
                if not b: break
                if not head:
                    head = b[:12]
                got += len(b)
                time.sleep(len(b) / rate)
            s.close()
            with lock:
                out["done"] += 1; out["times"].append(round(time.time() - t, 2))
                k = head[9:12].decode(errors="replace"); out["statuses"][k] = out["statuses"].get(k, 0) + 1
        except OSError:
            with lock: out["errors"] += 1
            time.sleep(0.5)
ts = [threading.Thread(target=one) for _ in range(n)]
[t.start() for t in ts]; [t.join() for t in ts]
print(json.dumps(out))

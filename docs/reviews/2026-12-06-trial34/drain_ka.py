#!/usr/bin/env python3
"""20 keep-alive clients loop GET /delay?ms=50 on the gate at PORT; PID gets SIGTERM after
1 s. Counts answers, answers that said `Connection: close`, and requests sent on a kept
connection that got no answer at all (the connection closed under them)."""
import os, signal, socket, sys, threading, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
stats = {"answers": 0, "close_hdr": 0, "lost": 0, "refused": 0}
lock = threading.Lock()
stop = time.time() + 3
def client():
    s = None
    while time.time() < stop:
        if s is None:
            try: s = socket.create_connection(("127.0.0.1", port))
            except OSError:
                with lock: stats["refused"] += 1
                time.sleep(0.05); continue
        try:
            s.sendall(b"GET /delay?ms=50 HTTP/1.1\r\nHost: x\r\n\r\n")
            data = b""
            while b"\r\n\r\n" not in data:
                d = s.recv(4096)
                if not d: raise ConnectionError("closed")
                data += d
            head = data.split(b"\r\n\r\n")[0].lower()
            body = data.split(b"\r\n\r\n", 1)[1]
            while len(body) < 6:
                body += s.recv(4096)
            with lock:
                stats["answers"] += 1
                if b"connection: close" in head: stats["close_hdr"] += 1
            if b"connection: close" in head:
                s.close(); s = None
        except OSError:
            with lock: stats["lost"] += 1
            s.close(); s = None
ts = [threading.Thread(target=client) for _ in range(20)]
[t.start() for t in ts]
time.sleep(1); os.kill(pid, signal.SIGTERM); t_term = time.time()
[t.join() for t in ts]
print(stats)

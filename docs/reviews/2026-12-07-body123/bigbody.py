#!/usr/bin/env python3
"""A body of SIZE bytes through a gate, and the gate's memory while it passes.

usage: bigbody.py GATE_BINARY SIZE [BOUND]

Starts a sink upstream (reads each request's body to its end, counts it, answers 200 with
the count), the gate in front of it (one pool; `client_max_body_size = BOUND` when given),
and a client that sends `Content-Length: SIZE` and SIZE zero bytes in 1 MiB writes, as fast
as loopback takes them. Samples the gate's VmRSS every 0.1 s. Prints the answer's status
line, the upstream's count, the time taken, and the gate's RSS at start, its peak while the
body passed and VmHWM. With a BOUND below SIZE: how long the 413 took and how many bytes
the client got written before the gate closed the connection (the drain of `handle::LINGER`).
"""
import os, socket, subprocess, sys, tempfile, threading, time

gate_bin, size = sys.argv[1], int(sys.argv[2])
bound = sys.argv[3] if len(sys.argv) > 3 else None

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

got = []
def sink(listener):
    while True:
        c, _ = listener.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()

def serve(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d: return
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    length = next(int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:"))
    n = len(rest)
    while n < length:
        d = c.recv(1 << 20)
        if not d: break
        n += len(d)
    got.append(n)
    body = str(n).encode()
    c.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))

up = socket.socket(); up.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
up.bind(("127.0.0.1", 0)); up.listen(16)
threading.Thread(target=sink, args=(up,), daemon=True).start()
px = free_port()
conf = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
conf.write((f"client_max_body_size = {bound}\n" if bound else "") +
           f'listen = ["127.0.0.1:{px}"]\nworkers = 1\n\n[[pools]]\nname = "api"\n'
           f'upstream = "http://127.0.0.1:{up.getsockname()[1]}"\nmax_concurrency = 4\n\n'
           f'[[routes]]\npool = "api"\n')
conf.close()
gate = subprocess.Popen([gate_bin, "serve", "--config", conf.name],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", px)).close(); break
    except OSError:
        time.sleep(0.05)

def status(key):
    for l in open(f"/proc/{gate.pid}/status"):
        if l.startswith(key): return int(l.split()[1])

rss = [status("VmRSS:")]
done = threading.Event()
def sample():
    while not done.is_set():
        rss.append(status("VmRSS:")); time.sleep(0.1)
threading.Thread(target=sample, daemon=True).start()

c = socket.create_connection(("127.0.0.1", px))
t0 = time.monotonic()
c.sendall(b"POST /up HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n" % size)
answer, sent, chunk = b"", 0, bytes(1 << 20)
c.setblocking(False)
first = None
while sent < size:
    try:
        d = c.recv(65536)
        if d == b"": break
        answer += d
        first = first or time.monotonic() - t0
    except BlockingIOError:
        pass
    except ConnectionResetError:
        break
    try:
        sent += c.send(chunk[: min(len(chunk), size - sent)])
    except BlockingIOError:
        time.sleep(0.0005)
    except (BrokenPipeError, ConnectionResetError):
        break
c.setblocking(True); c.settimeout(30)
try:
    while b"\r\n\r\n" not in answer or (bound is None and not answer.split(b"\r\n\r\n", 1)[1]):
        d = c.recv(65536)
        if not d: break
        answer += d
except (ConnectionResetError, socket.timeout):
    pass
took = time.monotonic() - t0
done.set()
line = answer.split(b"\r\n")[0].decode() if answer else "no answer"
print(f"size {size} bound {bound}: {line}"
      f" (first byte of the answer at {first and round(first, 3)} s)")
print(f"  client wrote {sent} bytes in {took:.2f} s; the upstream counted {got}")
print(f"  gate RSS: {rss[0]} kB at start, peak {max(rss)} kB while the body passed, "
      f"VmHWM {status('VmHWM:')} kB")
gate.terminate(); gate.wait(); os.unlink(conf.name)

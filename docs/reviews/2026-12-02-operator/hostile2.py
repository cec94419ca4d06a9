#!/usr/bin/env python3
"""Clients that stall, vanish and half-close, and upstreams that misbehave; checks the
gate's /status at rest after each."""
import socket, time, json, http.client, threading, sys
GATE = ("127.0.0.1", 18080)
def status():
    c = http.client.HTTPConnection("127.0.0.1", 19901, timeout=5)
    c.request("GET", "/status"); s = json.loads(c.getresponse().read()); c.close()
    p = s["pools"]["api"]
    return {k: p[k] for k in ("in_flight", "queued")}, {k: v for k, v in p["counters"].items() if v}
def upstats():
    c = http.client.HTTPConnection("127.0.0.1", 19000, timeout=5)
    c.request("GET", "/__stats"); s = json.loads(c.getresponse().read()); c.close(); return s
def conn():
    s = socket.create_connection(GATE); s.settimeout(8); return s
def readall(s, limit=8):
    out=b""; t=time.time()
    try:
        while time.time()-t<limit:
            d=s.recv(65536)
            if not d: out+=b"<EOF>"; break
            out+=d
    except socket.timeout: out+=b"<timeout>"
    except ConnectionResetError: out+=b"<RST>"
    return out, round(time.time()-t,2)
def first(out): return out[0].split(b"\r\n")[0], out[1], len(out[0]), out[0][-50:]
H=b"Host: x\r\n"
which = sys.argv[1:]
def case(name):
    return not which or any(w in name for w in which)

if case("slowloris"):
    socks=[]
    for i in range(300):
        s=socket.create_connection(GATE); s.sendall(b"GET /slow HTTP/1.1\r\n"); socks.append(s)
    t=time.time()
    for k in range(5):
        time.sleep(1)
        for s in socks:
            try: s.sendall(b"X-a: b\r\n")
            except OSError: pass
    # a normal request while they trickle
    c=http.client.HTTPConnection(*GATE, timeout=5); c.request("GET","/slow?ms=1"); print("normal request during slowloris:", c.getresponse().status)
    closed=0
    for s in socks:
        s.settimeout(0.5)
        try:
            d=s.recv(100)
            if d==b"" or d.startswith(b"HTTP/1.1 408"): closed+=1
        except socket.timeout: pass
        except OSError: closed+=1
    print(f"slowloris: {closed}/300 closed by the gate after {time.time()-t:.1f}s (header_read_timeout 3s)")
    for s in socks: s.close()

if case("vanish-mid-body"):
    s=conn(); s.sendall(b"POST /slow?ms=10 HTTP/1.1\r\n"+H+b"Content-Length: 100000\r\n\r\n"+b"a"*5000); time.sleep(0.3); s.close()
    s=conn(); s.sendall(b"POST /slow?ms=10 HTTP/1.1\r\n"+H+b"Transfer-Encoding: chunked\r\n\r\n1000\r\n"+b"a"*100); time.sleep(0.3)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"); s.close()  # RST
    time.sleep(0.5); print("vanish mid-body (FIN, RST):", status())

if case("stall-mid-body"):
    s=conn(); s.sendall(b"POST /slow?ms=10 HTTP/1.1\r\n"+H+b"Content-Length: 100\r\n\r\n"+b"a"*10)
    print("stall mid-body:", first(readall(s, 6)), status())

if case("halfclose"):
    s=conn(); s.sendall(b"GET /slow?ms=200 HTTP/1.1\r\n"+H+b"\r\n"); s.shutdown(socket.SHUT_WR)
    print("half-closed after GET:", first(readall(s, 3)), status())
    s=conn(); s.sendall(b"POST /slow?ms=200 HTTP/1.1\r\n"+H+b"Content-Length: 3\r\n\r\nabc"); s.shutdown(socket.SHUT_WR)
    print("half-closed after POST:", first(readall(s, 3)), status())

if case("vanish-mid-answer"):
    s=conn(); s.sendall(b"GET /huge HTTP/1.1\r\n"+H+b"\r\n"); s.recv(1000); s.close()
    s=conn(); s.sendall(b"GET /drip HTTP/1.1\r\n"+H+b"\r\n"); time.sleep(0.5); s.recv(1000); s.close()
    time.sleep(3); print("vanish mid-answer (huge, drip), 3 s later:", status())

if case("noread"):
    # asks for 1 MiB x 20 pipelined and never reads: send_timeout 3s must free the slot
    s=conn(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall((b"GET /huge HTTP/1.1\r\n"+H+b"\r\n")*20)
    time.sleep(1); print("client not reading, 1 s:", status()[0])
    time.sleep(6); print("client not reading, 7 s:", status()[0]); s.close()

if case("upstreams"):
    for path in [b"/close", b"/nolen", b"/1xx", b"/drip", b"/badhdr", b"/huge"]:
        s=conn(); s.sendall(b"GET "+path+b" HTTP/1.1\r\n"+H+b"\r\n")
        o=readall(s, 5); print(f"upstream {path.decode():8s}", first(o))
        s.close()
    s=conn(); s.sendall(b"POST /early HTTP/1.1\r\n"+H+b"Content-Length: 2000000\r\n\r\n")
    try:
        for i in range(200): s.sendall(b"a"*10000)
    except OSError as e: print("early: send failed", e)
    print("upstream /early (answers before body)", first(readall(s, 5)))
    time.sleep(0.5); print("at rest:", status())
print("final:", status(), upstats())

#!/usr/bin/env python3
"""Hostile clients against the gate on 127.0.0.1:18080; prints what each got."""
import socket, sys, time, json, http.client, threading
GATE = ("127.0.0.1", 18080)

def status():
    c = http.client.HTTPConnection("127.0.0.1", 19901, timeout=5)
    c.request("GET", "/status"); s = json.loads(c.getresponse().read()); c.close()
    p = s["pools"]["api"] if isinstance(s["pools"], dict) else s["pools"][0]
    return {k: p[k] for k in ("in_flight", "queued", "limit", "closed")}

def raw(data, read_for=3.0, shut=False, chunks=None, gap=0.0):
    s = socket.create_connection(GATE); s.settimeout(read_for)
    if chunks:
        for ch in chunks:
            s.sendall(ch); time.sleep(gap)
    else:
        s.sendall(data)
    if shut:
        s.shutdown(socket.SHUT_WR)
    out = b""; t0 = time.time()
    try:
        while time.time() - t0 < read_for:
            d = s.recv(65536)
            if not d: out += b"<EOF>"; break
            out += d
    except socket.timeout:
        out += b"<timeout>"
    except ConnectionResetError:
        out += b"<RST>"
    s.close()
    return out, round(time.time() - t0, 2)

def show(name, r):
    out, t = r
    lines = out.split(b"\r\n")
    heads = [l for l in out.split(b"\r\n") if l.startswith(b"HTTP/")]
    reason = [l for l in lines if l.lower().startswith(b"x-sluicegate-reason")]
    print(f"{name:38s} {t:5.2f}s statuses={[h.decode()[:30] for h in heads]} {[r.decode() for r in reason]} tail={out[-60:]!r}")

H = b"Host: x\r\n"
cases = {
 "bad chunk size": b"POST /slow HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
 "chunk size overflow": b"POST /slow HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\nabc\r\n0\r\n\r\n",
 "chunk LF only": b"POST /slow HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n3\nabc\n0\n\n",
 "chunk data longer than size": b"POST /slow HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n",
 "TE chunked + CL": b"POST /slow HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
 "TE gzip, chunked": b"POST /slow HTTP/1.1\r\n" + H + b"Transfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
 "TE chunked, gzip (not last)": b"POST /slow HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked, gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
 "two CL differing": b"POST /slow HTTP/1.1\r\n" + H + b"Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
 "CL negative": b"POST /slow HTTP/1.1\r\n" + H + b"Content-Length: -1\r\n\r\n",
 "CL huge": b"POST /slow HTTP/1.1\r\n" + H + b"Content-Length: 99999999999999999999999\r\n\r\n",
 "pipelined 3 GETs": (b"GET /slow?ms=10 HTTP/1.1\r\n" + H + b"\r\n") * 3,
 "pipelined GET after POST body": b"POST /slow HTTP/1.1\r\n" + H + b"Content-Length: 3\r\n\r\nabcGET /slow HTTP/1.1\r\n" + H + b"\r\n",
 "HTTP/0.9": b"GET /\r\n",
 "HTTP/2 preface": b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
 "obs-fold header": b"GET /slow HTTP/1.1\r\n" + H + b"X-A: a\r\n  folded\r\n\r\n",
 "space before colon": b"GET /slow HTTP/1.1\r\n" + H + b"X-A : a\r\n\r\n",
 "NUL in header": b"GET /slow HTTP/1.1\r\n" + H + b"X-A: a\x00b\r\n\r\n",
 "bare LF request": b"GET /slow HTTP/1.1\n" + b"Host: x\n\n",
 "abs URI other host": b"GET http://evil.example/slow HTTP/1.1\r\nHost: x\r\n\r\n",
 "expect 100": b"POST /slow HTTP/1.1\r\n" + H + b"Expect: 100-continue\r\nContent-Length: 3\r\n\r\n",
 "expect bogus": b"POST /slow HTTP/1.1\r\n" + H + b"Expect: bogus\r\nContent-Length: 3\r\n\r\nabc",
 "max-forwards/TRACE": b"TRACE /slow HTTP/1.1\r\n" + H + b"\r\n",
 "long URI 20k": b"GET /slow?" + b"a" * 20000 + b" HTTP/1.1\r\n" + H + b"\r\n",
 "200 headers": b"GET /slow HTTP/1.1\r\n" + H + b"".join(b"X-%d: v\r\n" % i for i in range(200)) + b"\r\n",
 "one 15k header": b"GET /slow HTTP/1.1\r\n" + H + b"X-Big: " + b"a" * 15000 + b"\r\n\r\n",
 "one 17k header": b"GET /slow HTTP/1.1\r\n" + H + b"X-Big: " + b"a" * 17000 + b"\r\n\r\n",
 "method garbage": b"G\x01T /slow HTTP/1.1\r\n" + H + b"\r\n",
 "huge method": b"A" * 5000 + b" /slow HTTP/1.1\r\n" + H + b"\r\n",
}
only = sys.argv[1:] 
for name, data in cases.items():
    if only and not any(o in name for o in only): continue
    show(name, raw(data, read_for=2.5))
print("status at rest:", status())

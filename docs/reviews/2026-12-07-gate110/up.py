# upstream: logs raw bytes received per connection; behaviour by path
import socket, threading, sys, time
port = int(sys.argv[1])
log = open(f"/tmp/g110/up-{port}.log", "a", buffering=1)
inflight=0; peak=0; lk=threading.Lock()
def readhead(c, buf):
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d: return None, b""
        buf += d
    h, _, rest = buf.partition(b"\r\n\r\n")
    return h, rest
def hdr(h, name):
    for l in h.split(b"\r\n")[1:]:
        k,_,v = l.partition(b":")
        if k.strip().lower()==name: return v.strip()
    return None
def readbody(c, h, rest):
    cl = hdr(h, b"content-length"); te = hdr(h, b"transfer-encoding")
    if cl is not None:
        n=int(cl)
        while len(rest)<n:
            d=c.recv(65536)
            if not d: break
            rest+=d
        return rest[:n], rest[n:]
    if te and b"chunked" in te.lower():
        while not ((rest.startswith(b"0\r\n") or b"\r\n0\r\n" in rest) and rest.endswith(b"\r\n\r\n")):
            d=c.recv(65536)
            if not d: break
            rest+=d
        return rest, b""
    return b"", rest
def serve(c):
    global inflight, peak
    buf=b""
    try:
      while True:
        h, rest = readhead(c, buf)
        if h is None: return
        body, buf = readbody(c, h, rest)
        log.write(repr(h)+" BODY "+repr(body[:200])+"\n")
        path = h.split(b"\r\n")[0].split(b" ")[1].decode()
        with lk: inflight+=1; peak=max(peak,inflight)
        try:
            r = handle(c, path, h, body)
        finally:
            with lk: inflight-=1
        if r=="close": c.close(); return
    except Exception as e:
        log.write(f"ERR {e!r}\n")
def ok(c, body=b"ok\n", extra=b"", status=b"200 OK"):
    c.sendall(b"HTTP/1.1 "+status+b"\r\nContent-Length: %d\r\n%s\r\n"%(len(body),extra)+body)
def handle(c, path, h, body):
    p = path.split("?")[0]
    q = path.split("?")[1] if "?" in path else ""
    if p=="/stats": ok(c, f"inflight={inflight} peak={peak}\n".encode()); return
    if p=="/echo": ok(c, h+b"\n\nBODY:"+body); return
    if p.startswith("/sleep/"):
        time.sleep(int(p.split("/")[2])/1000); ok(c); return
    if p.startswith("/stream/"):  # N chunks, one per 200ms
        n=int(p.split("/")[2])
        c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for i in range(n):
            time.sleep(0.2); c.sendall(b"2\r\nx\n\r\n")
        c.sendall(b"0\r\n\r\n"); return
    if p=="/close": ok(c, extra=b"Connection: close\r\n"); return "close"
    if p=="/never": time.sleep(3600); return "close"
    if p=="/1xxflood":
        t=time.time()
        try:
            while time.time()-t<float(q or 5):
                c.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"*100); time.sleep(0.01)
        except Exception as e: return "close"
        ok(c); return
    if p.startswith("/big/"):
        ok(c, b"x"*int(p.split("/")[2])); return
    if p=="/199":
        c.sendall(b"HTTP/1.1 199 Weird\r\n\r\n"); ok(c); return
    if p=="/100then":
        c.sendall(b"HTTP/1.1 100 Continue\r\n\r\n"); time.sleep(0.2); ok(c, b"final\n"); return
    ok(c); return
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR,1)
s.bind(("127.0.0.1",port)); s.listen(512)
while True:
    c,_=s.accept(); threading.Thread(target=serve,args=(c,),daemon=True).start()

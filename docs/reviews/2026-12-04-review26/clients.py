import socket, threading, time, collections, sys
N=int(sys.argv[1]); path=sys.argv[2]; port=int(sys.argv[3]) if len(sys.argv)>3 else 19320
res = collections.Counter(); lat=[]
def one(i):
    t=time.time()
    try:
        s=socket.create_connection(("127.0.0.1",port)); s.settimeout(40)
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: a\r\n\r\n".encode())
        d=b""
        while b"\r\n\r\n" not in d:
            x=s.recv(4096)
            if not x: break
            d+=x
        k=d.split(b"\r\n")[0].decode() if d else "EOF"
        if b"x-sluicegate-reason" in d.lower():
            k += " " + d.lower().split(b"x-sluicegate-reason: ")[1].split(b"\r\n")[0].decode()
        res[k] += 1
    except Exception as e:
        res[type(e).__name__]+=1
    lat.append(time.time()-t)
ts=[threading.Thread(target=one,args=(i,)) for i in range(N)]
[t.start() for t in ts]; [t.join() for t in ts]
print(dict(res), "max latency %.2f" % max(lat))

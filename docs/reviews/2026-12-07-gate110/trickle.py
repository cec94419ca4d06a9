import socket, time, sys, threading
port=int(sys.argv[1]); n=int(sys.argv[2]); secs=float(sys.argv[3])
def one(i):
    s=socket.create_connection(("127.0.0.1",port))
    s.sendall(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n")
    t=time.time()
    while time.time()-t<secs:
        s.sendall(b"x"); time.sleep(1)
    s.close()
for i in range(n): threading.Thread(target=one,args=(i,),daemon=True).start()
time.sleep(secs+0.5)

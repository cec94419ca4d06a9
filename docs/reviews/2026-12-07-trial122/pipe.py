import socket, sys, time, threading
port=int(sys.argv[1]); n=int(sys.argv[2]); path=sys.argv[3] if len(sys.argv)>3 else '/ok'
s=socket.create_connection(('127.0.0.1',port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY,1)
req=b'GET %s HTTP/1.1\r\nHost: x\r\n\r\n' % path.encode()
t0=time.time()
def w():
    try: s.sendall(req*n)
    except OSError as e: print('send error', e)
threading.Thread(target=w,daemon=True).start()
got=b''; cnt=0; s.settimeout(10)
while cnt<n:
    try: d=s.recv(1<<20)
    except socket.timeout: print('timeout'); break
    if not d: print('EOF'); break
    got+=d; c=got.count(b'HTTP/1.1 '); 
    if c: cnt+=c; got=got[got.rfind(b'HTTP/1.1 ')+9:]
print(port,'answers',cnt,'of',n,'in %.2fs'%(time.time()-t0))

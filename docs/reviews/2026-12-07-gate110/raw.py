import socket, sys, time
port=int(sys.argv[1]); data=eval(sys.argv[2]); wait=float(sys.argv[3]) if len(sys.argv)>3 else 3
s=socket.create_connection(("127.0.0.1",port)); s.settimeout(wait)
t=time.time(); s.sendall(data); out=b""
try:
    while True:
        d=s.recv(65536)
        if not d: out+=b"<EOF>"; break
        out+=d
except socket.timeout: out+=b"<timeout>"
except ConnectionResetError: out+=b"<RST>"
print(f"{time.time()-t:.2f}s", out.decode('latin1'))

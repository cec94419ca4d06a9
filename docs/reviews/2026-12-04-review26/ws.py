import socket, sys, time
port=int(sys.argv[1]); hold=float(sys.argv[2])
s=socket.create_connection(("127.0.0.1",port)); s.settimeout(5)
s.sendall(b"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
d=s.recv(4096); print(d.split(b"\r\n")[0])
end=time.time()+hold
while time.time()<end:
    s.sendall(b"ping"); 
    try: r=s.recv(100)
    except Exception as e: print("recv", e); break
    if not r: print("closed by gate at %.1f" % (hold-(end-time.time()))); break
    time.sleep(0.5)
s.close()

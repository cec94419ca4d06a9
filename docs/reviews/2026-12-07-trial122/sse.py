import socket, sys, time
port = int(sys.argv[1]); path = sys.argv[2] if len(sys.argv) > 2 else '/sse?n=4&every=1'
s = socket.create_connection(('127.0.0.1', port))
s.sendall(b'GET %s HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n' % path.encode())
t0 = time.time(); buf = b''
s.settimeout(15)
while True:
    try: d = s.recv(65536)
    except socket.timeout: print('timeout'); break
    if not d: print('%.3f EOF' % (time.time()-t0)); break
    print('%.3f got %d bytes: %r' % (time.time()-t0, len(d), d[:80]))
    buf += d
    if buf.endswith(b'0\r\n\r\n'): break

import socket, sys, time
def raw(data, port=19180, wait=2.0, chunks=None):
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(wait)
    if isinstance(data, bytes): data=[data]
    for d in data:
        s.sendall(d); time.sleep(0.05)
    out=b""
    try:
        while True:
            d=s.recv(65536)
            if not d: out+=b"<EOF>"; break
            out+=d
    except socket.timeout: out+=b"<open>"
    s.close(); return out
if __name__=="__main__":
    print(raw(eval(sys.argv[1]), wait=float(sys.argv[2]) if len(sys.argv)>2 else 2.0).decode('latin1'))

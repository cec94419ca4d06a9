import sys, time, random
from rawhttp import exchange
# requests at intervals near the upstream's 1.0 s idle close, each on a new client connection
port=int(sys.argv[1]); n=int(sys.argv[2]); random.seed(int(sys.argv[3]) if len(sys.argv)>3 else 1)
codes={}
for i in range(n):
    m = ['GET','POST','PUT'][i%3]
    body = b'' if m=='GET' else b'hello'
    out = exchange(port, b'%s /idle/x HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' % (m.encode(), len(body), body), 5)
    code=out[9:12].decode() or 'none'
    codes[(m,code)]=codes.get((m,code),0)+1
    time.sleep(random.uniform(0.990, 1.003))
print(port, sorted(codes.items()))

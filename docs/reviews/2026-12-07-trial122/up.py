#!/usr/bin/env python3
"""A raw HTTP/1.1 upstream with odd behaviours (trial122).
--close-after N : after N answers on a connection, read the next request and close without answering
--idle-close S  : close a connection idle S seconds (like Node's keepAliveTimeout, without saying so)
--fin-after N   : close right after the Nth answer (no Connection: close)
Paths: /ok  /sse?n=N&every=S  /poll?after=S  /hints  /continue  /bighead?kb=K  /count
"""
import socket, threading, time, sys, argparse, urllib.parse
ap = argparse.ArgumentParser()
ap.add_argument('--port', type=int, default=19000)
ap.add_argument('--close-after', type=int, default=0)
ap.add_argument('--idle-close', type=float, default=0)
ap.add_argument('--fin-after', type=int, default=0)
a = ap.parse_args()
stats = {'conns': 0, 'reqs': 0, 'dropped': 0, 'bodies': 0}
lock = threading.Lock()

def readreq(f):
    line = f.readline()
    if not line:
        return None
    while line in (b'\r\n', b'\n'):
        line = f.readline()
        if not line: return None
    hdrs = {}
    while True:
        h = f.readline()
        if not h: return None
        if h in (b'\r\n', b'\n'): break
        k, _, v = h.decode('latin1').partition(':')
        hdrs.setdefault(k.strip().lower(), []).append(v.strip())
    return line.decode('latin1').split(), hdrs

def readbody(f, hdrs, sock=None):
    if 'chunked' in ','.join(hdrs.get('transfer-encoding', [])).lower():
        out = b''
        while True:
            sz = int(f.readline().split(b';')[0], 16)
            if sz == 0:
                while f.readline() not in (b'\r\n', b'\n', b''): pass
                return out
            out += f.read(sz); f.readline()
    n = int(hdrs.get('content-length', ['0'])[0])
    return f.read(n) if n else b''

def send(c, status, body=b'', extra=''):
    c.sendall(('HTTP/1.1 %s\r\nContent-Length: %d\r\n%s\r\n' % (status, len(body), extra)).encode() + body)

def handle(c):
    with lock: stats['conns'] += 1
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    f = c.makefile('rb')
    served = 0
    try:
        while True:
            if a.idle_close:
                c.settimeout(a.idle_close)
            try:
                r = readreq(f)
            except socket.timeout:
                return
            c.settimeout(None)
            if r is None: return
            (method, target, *_), hdrs = r
            if a.close_after and served >= a.close_after:
                with lock: stats['dropped'] += 1
                return
            u = urllib.parse.urlsplit(target); q = dict(urllib.parse.parse_qsl(u.query))
            path = u.path
            for pre in ('/short', '/fin', '/drop', '/idle', '/adl'):
                if path.startswith(pre + '/'): path = path[len(pre):]
            if path == '/continue' and 'expect' in hdrs:
                c.sendall(b'HTTP/1.1 100 Continue\r\n\r\n')
            body = readbody(f, hdrs)
            with lock:
                stats['reqs'] += 1
                if body: stats['bodies'] += 1
            served += 1
            if path == '/sse':
                n = int(q.get('n', 5)); every = float(q.get('every', 1))
                c.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n')
                for i in range(n):
                    ev = ('data: %d %.3f\n\n' % (i, time.time())).encode()
                    c.sendall(b'%x\r\n%s\r\n' % (len(ev), ev))
                    time.sleep(every)
                c.sendall(b'0\r\n\r\n')
            elif path == '/poll':
                time.sleep(float(q.get('after', 35)))
                send(c, '200 OK', b'polled\n')
            elif path == '/hints':
                c.sendall(b'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n')
                time.sleep(0.2)
                send(c, '200 OK', b'hinted\n', 'Link: </style.css>; rel=preload; as=style\r\n')
            elif path == '/bighead':
                kb = int(q.get('kb', 60))
                send(c, '200 OK', b'big\n', 'X-Big: %s\r\n' % ('a' * (kb * 1024)))
            elif path == '/echo':
                head = '%s %s\n' % (method, target) + ''.join('%s: %s\n' % (k, v) for k, vs in hdrs.items() for v in vs)
                send(c, '200 OK', head.encode() + b'body=' + body + b'\n')
            elif path == '/flood1xx':
                secs = float(q.get('secs', 5)); code = q.get('code', '103'); t_end = time.time() + secs; n = 0
                msg = ('HTTP/1.1 %s Info\r\nLink: </a.css>; rel=preload\r\n\r\n' % code).encode()
                while time.time() < t_end:
                    c.sendall(msg * 100); n += 100
                    if 'every' in q: time.sleep(float(q['every']))
                send(c, '200 OK', b'after %d interim\n' % n)
            elif path == '/work':
                time.sleep(float(q.get('ms', 20)) / 1000)
                send(c, '200 OK', b'worked\n')
            elif path == '/304cl':
                c.sendall(b'HTTP/1.1 304 Not Modified\r\nContent-Length: 1000\r\nETag: "x"\r\n\r\n')
            elif path == '/headcl':
                c.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n' + (b'' if method == 'HEAD' else b'x' * 1000))
            elif path == '/204te':
                c.sendall(b'HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n')
            elif path == '/count':
                send(c, '200 OK', ('%r\n' % stats).encode())
            elif path == '/head204':
                c.sendall(b'HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello')
            else:
                send(c, '200 OK', b'ok %d\n' % len(body))
            if a.fin_after and served >= a.fin_after:
                return
    except (ConnectionError, OSError):
        pass
    finally:
        try: c.close()
        except OSError: pass

s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', a.port)); s.listen(1024)
print('listening', a.port, vars(a), flush=True)
while True:
    c, _ = s.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()

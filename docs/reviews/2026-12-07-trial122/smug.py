import sys
from rawhttp import exchange
port=int(sys.argv[1])
cases = {
 'underscore-xff': b'GET /echo HTTP/1.1\r\nHost: x\r\nX_Forwarded_For: 6.6.6.6\r\n\r\n',
 'underscore-te': b'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer_Encoding: chunked\r\n\r\nhello',
 'te-tab': b'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\tchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
 'te-vt': b'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding:\x0bchunked\r\n\r\nhello',
 'te-chunked-identity': b'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
 'te-two-lines': b'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
 'cl-leading-zero': b'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 005\r\n\r\nhello',
 'chunk-0x': b'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n',
 'chunk-lf-ext': b'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;a\nb\r\nhello\r\n0\r\n\r\n',
 'cl-huge': b'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551615\r\n\r\nhello',
 'cl-1e18': b'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000000000\r\n\r\nhello',
 'host-two': b'GET /echo HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n',
 'te-http10': b'POST /echo HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
 'space-in-name': b'GET /echo HTTP/1.1\r\nHost: x\r\nX-Forwarded-For : 6.6.6.6\r\n\r\n',
 'abs-form-https': b'GET https://other.example/echo HTTP/1.1\r\nHost: x\r\n\r\n',
 'abs-form-ws': b'GET ws://other.example/echo HTTP/1.1\r\nHost: x\r\n\r\n',
 'null-in-uri': b'GET /echo%00x HTTP/1.1\r\nHost: x\r\n\r\n',
 'hash-in-target': b'GET /echo#frag HTTP/1.1\r\nHost: x\r\n\r\n',
 'te-trailer-smuggle': b'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTE: trailers\r\n\r\n5\r\nhello\r\n0\r\nContent-Length: 50\r\nHost: evil\r\n\r\n',
}
only = [a for a in sys.argv[2:] if a != '-v']; VERBOSE = '-v' in sys.argv
for name, raw in cases.items():
    if only and name not in only: continue
    out = exchange(port, raw + b'GET /echo HTTP/1.1\r\nHost: second\r\n\r\n')
    stat=[l for l in out.split(b'\r\n') if l.startswith(b'HTTP/')]
    body=out.decode('latin1').replace('\r\n',' | ')
    print('%-20s %s' % (name, [x.decode() for x in stat]), '::', body[:600].replace('\n',' ; ') if VERBOSE else '')

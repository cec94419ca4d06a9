from raw import raw
cases = {
 "CL list 3,3": b"POST /echohead HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc",
 "TE twice lines": b"POST /echohead HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
 "TE Chunked case": b"POST /echohead HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
 "TE xchunked": b"POST /echohead HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
 "TE in 1.0": b"POST /echohead HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
 "TE identity": b"POST /echohead HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\nContent-Length: 3\r\n\r\nabc",
 "CL +3": b"POST /echohead HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc",
 "space in name": b"GET /echohead HTTP/1.1\r\nHost: a\r\nX-A : 1\r\n\r\n",
 "tab in value": b"GET /echohead HTTP/1.1\r\nHost: a\r\nX-A: 1\t2\r\n\r\n",
 "ipv6 host": b"GET /echohead HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
 "no host 1.0": b"GET /echohead HTTP/1.0\r\n\r\n",
 "absolute form": b"GET http://other.example:99/echohead?q HTTP/1.1\r\nHost: a\r\n\r\n",
 "asterisk GET": b"GET * HTTP/1.1\r\nHost: a\r\n\r\n",
 "OPTIONS *": b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
 "1.0 keepalive": b"GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /x HTTP/1.0\r\n\r\n",
 "1.0 plain": b"GET /x HTTP/1.0\r\n\r\nGET /x HTTP/1.0\r\n\r\n",
 "HTTP/1.2": b"GET /x HTTP/1.2\r\nHost: a\r\n\r\n",
 "HTTP/2.0 line": b"GET /x HTTP/2.0\r\nHost: a\r\n\r\n",
 "lowercase method": b"get /echohead HTTP/1.1\r\nHost: a\r\n\r\n",
 "fragment": b"GET /echohead#frag HTTP/1.1\r\nHost: a\r\n\r\n",
 "HEAD": b"HEAD /x HTTP/1.1\r\nHost: a\r\n\r\n",
 "HEAD nolen": b"HEAD /nolen-keep HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n",
 "Max-Forwards TRACE": b"TRACE /echohead HTTP/1.1\r\nHost: a\r\nMax-Forwards: 0\r\n\r\n",
 "GET with body CL": b"GET /echohead HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc",
 "content-length 0 POST": b"POST /echohead HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
 "POST no length": b"POST /echohead HTTP/1.1\r\nHost: a\r\n\r\n",
 "CL huge": b"POST /echohead HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n",
 "bare CR": b"GET /echohead HTTP/1.1\rHost: a\r\n\r\n",
 "LF only": b"GET /echohead HTTP/1.1\nHost: a\n\n",
 "leading CRLF": b"\r\n\r\nGET /echohead HTTP/1.1\r\nHost: a\r\n\r\n",
}
import sys
sel = sys.argv[1:] 
for k, v in cases.items():
    if sel and k not in sel: continue
    print("=====", k); print(raw(v, wait=1.0).decode('latin1'))

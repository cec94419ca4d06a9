import sys, time, threading
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        ms = 0
        p = self.path.split('?')[0]
        if p.startswith('/sleep/'):
            ms = int(p.split('/')[2])
        time.sleep(ms/1000)
        body = b"ok %d\n" % ms
        self.send_response(200); self.send_header('Content-Length', str(len(body))); self.end_headers(); self.wfile.write(body)
    do_POST = do_GET
    def log_message(self, *a): pass
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer.request_queue_size = 1024
ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()

import sys, threading, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
WORKERS = int(sys.argv[2]) if len(sys.argv) > 2 else 4
SVC = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
sem = threading.Semaphore(WORKERS)
lock = threading.Lock()
inflight = 0; peak = 0; served = 0
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def log_message(self, *a): pass
    def do_GET(self):
        global inflight, peak, served
        if self.path == "/stats":
            body = f"{peak} {served}".encode()
        else:
            with lock:
                inflight += 1; peak = max(peak, inflight)
            with sem:
                time.sleep(SVC)
            with lock:
                inflight -= 1; served += 1
            body = b"ok"
        self.send_response(200); self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer.request_queue_size = 512
s = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
s.serve_forever()

"""An independent SSE server for knee's stream timing (tests/e2e/run_stream.sh), standard library
only: GET /?events=N&gap_ms=G&first_ms=F answers text/event-stream, chunked (HTTP/1.1), the first
event after F ms, then one every G ms, each event its own chunk and write; /cut streams two events
and then closes in the middle of a third (a stream that ends mid-event); /never sends one event
and then nothing (a stream that never ends); /plain answers text/plain. Prints "PORT n" once
listening. Times are slept (one thread per connection): the server's own pace, not knee's."""
import http.server
import socketserver
import sys
import time
import urllib.parse


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = {k: float(v[0]) for k, v in urllib.parse.parse_qs(u.query).items()}
        if u.path == "/plain":
            body = b"data: not an event stream\n\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        if u.path == "/cut":
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        n = int(q.get("events", 5))
        time.sleep(q.get("first_ms", 0) / 1e3)
        if u.path == "/never":
            self.chunk(b"data: 0\n\n")
            time.sleep(60)
            return
        if u.path == "/cut":
            self.chunk(b": a comment\n\ndata: 0\n\n")
            self.chunk(b"data: 1\n\n")
            self.chunk(b"data: 2")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            self.close_connection = True
            return
        for i in range(n):
            if i:
                time.sleep(q.get("gap_ms", 10) / 1e3)
            self.chunk(b": tick\n\nid: %d\ndata: {\"i\":%d}\n\n" % (i, i) if i % 2 else b"data: %d\n\n" % i)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
print("PORT", srv.server_address[1], flush=True)
srv.serve_forever()

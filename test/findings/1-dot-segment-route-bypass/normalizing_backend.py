# A backend that, like most servers and frameworks, removes dot segments (RFC 3986 §5.2.4)
# after percent-decoding: /public/../api/x and /public/%2e%2e/api/x are /api/x to it.
import http.server, posixpath, sys, urllib.parse
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        path = posixpath.normpath(urllib.parse.unquote(self.path.split("?")[0]))
        body = (b"SECRET admin data\n" if path.startswith("/api") else b"public page\n")
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()

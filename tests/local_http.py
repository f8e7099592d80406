"""A throw-away HTTP server on 127.0.0.1 for the network-profile tests."""

from __future__ import annotations

import contextlib
import http.server
import threading


@contextlib.contextmanager
def serving(body: bytes):
    """Serve `body` to every GET; yields the port."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()

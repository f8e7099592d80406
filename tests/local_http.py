"""A throw-away HTTP server on 127.0.0.1 for the network-profile tests."""

from __future__ import annotations

import contextlib
import http.server
import threading


def _handler(body: bytes, hits: "list | None" = None, keep_alive: bool = False):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"   # 1.1: the connection stays open

        def do_GET(self):
            if hits is not None:
                hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    return Handler


@contextlib.contextmanager
def serving(body: bytes, hits: "list | None" = None):
    """Serve `body` to every GET (each path requested goes into `hits`); yields the port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(body, hits))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


@contextlib.contextmanager
def serving_tls(body: bytes, workdir, keep_alive: bool = False):
    """The same over TLS, with a throw-away self-signed certificate for
    127.0.0.1; yields (port, the certificate as PEM text)."""
    import shutil
    import ssl
    import subprocess
    if shutil.which("openssl") is None:
        import pytest
        pytest.skip("openssl is not installed (apt-get install openssl)")
    key, cert = str(workdir / "key.pem"), str(workdir / "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(body, keep_alive=keep_alive))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with open(cert) as f:
            yield server.server_address[1], f.read()
    finally:
        server.shutdown()

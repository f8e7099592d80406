"""Attacks on the network profile's egress proxy: ways to make it connect
somewhere the policy refuses (other spellings of loopback, redirects, userinfo
tricks, the proxy itself, IPv6 forms), with RestrictedPython on and off. The
policy is the default one (public addresses only) plus one allowed test
server; every refused destination is on this machine, so a failure here is a
door to the host."""

from __future__ import annotations

import contextlib
import http.server
import threading

import pytest
from local_http import serving

from runner_harness import SyncRunner

from sandbox import profiles
from sandbox import network_allow as egress_policy

NETWORK = profiles.allowed_modules(["basic", "network"])
SECRET = "the host's loopback service"


@contextlib.contextmanager
def redirecting(to: str):
    """A server that answers every GET with a redirect to `to`."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", to)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def target():
    """The loopback service nobody allowed."""
    with serving(SECRET.encode()) as port:
        yield port


@pytest.fixture(scope="module")
def redirector(target):
    with redirecting(f"http://127.0.0.1:{target}/") as port:
        yield port


@pytest.fixture(scope="module")
def runner(redirector):
    # only the redirector is named; the target beside it is not
    r = SyncRunner(network=True, network_policy=egress_policy.parse(f"127.0.0.1:{redirector}"))
    yield r
    r.close()


def spellings(port: int) -> list[str]:
    return [
        f"http://2130706433:{port}/", f"http://0x7f000001:{port}/", f"http://127.1:{port}/",
        f"http://017700000001:{port}/", f"http://localhost.:{port}/", f"http://LOCALHOST:{port}/",
        f"http://[::1]:{port}/", f"http://[::ffff:127.0.0.1]:{port}/", f"http://[::ffff:7f00:1]:{port}/",
        f"http://[0:0:0:0:0:0:0:1]:{port}/", f"http://0.0.0.0:{port}/", f"http://127.0.0.2:{port}/",
        f"http://user@127.0.0.1:{port}/", f"http://127.0.0.1%2f@example.com:{port}/",
        "http://127.0.0.1:3128/", "http://169.254.169.254/", f"http://[fe80::1%25lo]:{port}/",
    ]


@pytest.mark.parametrize("restricted", [True, False])
def test_other_spellings_of_loopback_are_refused(runner, target, restricted):
    code = ("import urllib.request\nresult = []\n"
            f"for url in {spellings(target)!r}:\n"
            "    try:\n"
            "        result.append(urllib.request.urlopen(url, timeout=5).read().decode())\n"
            "    except Exception as e:\n"
            "        result.append('refused: ' + str(e))")
    r = runner.run(code, restricted=restricted, allowed=NETWORK, timeout=60)
    assert r["success"], r
    assert SECRET not in str(r), r
    # each one reached the proxy and was turned down there (403, or 502 for a name no resolver knows)
    assert all(answer.startswith(("refused: HTTP Error 403", "refused: HTTP Error 502")) for answer in r["result"]), \
        r["result"]
    assert len(r["network"]) == len(spellings(target)) and not any(c["allowed"] for c in r["network"])


@pytest.mark.parametrize("restricted", [True, False])
def test_a_redirect_from_an_allowed_server_does_not_lead_to_loopback(runner, redirector, restricted):
    code = ("import urllib.request\n"
            f"result = urllib.request.urlopen('http://127.0.0.1:{redirector}/', timeout=5).read().decode()")
    r = runner.run(code, restricted=restricted, allowed=NETWORK)
    assert not r["success"] and SECRET not in str(r), r
    allowed = [c["port"] for c in r["network"] if c["allowed"]]
    assert allowed == [redirector], r["network"]


def raw_requests(target: int) -> list[bytes]:
    return [
        f"CONNECT 127.0.0.1:{target} HTTP/1.1\r\n\r\n".encode(),
        f"CONNECT [::1]:{target} HTTP/1.1\r\n\r\n".encode(),
        f"CONNECT localhost:{target} HTTP/1.1\r\n\r\n".encode(),
        b"CONNECT 127.0.0.1:3128 HTTP/1.1\r\n\r\n",                      # the proxy itself
        f"GET http://127.0.0.1:{target}/ HTTP/1.1\r\nHost: allowed\r\n\r\n".encode(),
        f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{target}\r\n\r\n".encode(),             # origin form: no host to go to
        f"GET https://127.0.0.1:{target}/ HTTP/1.1\r\n\r\n".encode(),
        f"CONNECT 127.0.0.1:{target} HTTP/1.1\r\n\r\n".encode().replace(b" HTTP", b"\x00 HTTP"),
        f"CONNECT 127.0.0.1:{target}\r\n\r\n".encode(),
        b"CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n",
        f"GET http://127.0.0.1:{target}/ HTTP/1.1\r\n".encode() + b"X: y\r\n" * 5000 + b"\r\n",
    ]


def test_hand_written_proxy_requests_reach_nothing_refused(runner, target):
    """RestrictedPython off: the snippet speaks to the proxy port itself."""
    code = ("import socket\nresult = []\n"
            f"for request in {raw_requests(target)!r}:\n"
            "    s = socket.create_connection(('127.0.0.1', 3128), timeout=5)\n"
            "    s.sendall(request)\n"
            "    answer = b''\n"
            "    try:\n"
            "        while chunk := s.recv(4096):\n"
            "            answer += chunk\n"
            "    except OSError:\n"
            "        pass\n"
            "    result.append(answer.decode('latin-1')[:300])\n"
            "    s.close()")
    r = runner.run(code, restricted=False, allowed=NETWORK, timeout=60)
    assert r["success"], r
    assert SECRET not in str(r), r
    for request, answer in zip(raw_requests(target), r["result"]):
        status = answer.split(" ", 2)[1] if answer.startswith("HTTP/1.1 ") else answer
        assert status in ("400", "403", "431"), (request[:80], answer)


def test_the_snippet_cannot_resolve_or_reach_names_itself(runner):
    """No resolver in the sandbox: names are the proxy's to resolve."""
    code = ("import socket\nresult = []\n"
            "for name in ('localhost', 'example.com'):\n"
            "    try:\n"
            "        result.append(socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)[0][4][0])\n"
            "    except OSError as e:\n"
            "        result.append(type(e).__name__)")
    r = runner.run(code, restricted=False, allowed=NETWORK)
    assert r["success"], r
    # /etc/hosts may still answer for localhost: that is the sandbox's own, empty loopback
    assert r["result"][0] in ("127.0.0.1", "::1", "gaierror") and r["result"][1] == "gaierror", r

"""The HTTP transport's gate, in front of the MCP app: DNS-rebinding protection
(Host and Origin) for any bind address, then the bearer token.

A browser page on evil.example can make a victim's browser send requests to
127.0.0.2:8765 once evil.example resolves there; the Host header still says
evil.example and the Origin says where the page came from. So the Host must
name this server as bound (and, for loopback or wildcard binds, one of the
loopback spellings), and an Origin, when sent, must be one of those hosts;
`Origin: null` (sandboxed iframes, file: pages) never is.

Refusals are JSON-RPC-shaped, say what to send, and advertise no OAuth: the
`WWW-Authenticate` challenge names no resource metadata and the OAuth discovery
paths answer 404, so OAuth-capable clients are not sent into a flow this server
does not offer. A wrong token is logged once per client address.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging

from sandbox.config import MAX_MESSAGE_BYTES

logger = logging.getLogger("sandbox.http")
OAUTH_DISCOVERY = "/.well-known/"
MAX_LOGGED_ADDRESSES = 1024

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def allowed_hosts(bind: str, port: int, extra: tuple[str, ...] = ()) -> frozenset[str]:
    """The Host header values that name this server: bind:port, the loopback
    spellings for a loopback or wildcard bind, and the operator's extra names."""
    def with_port(name: str) -> str:
        if ":" in name and not name.startswith("["):
            name = f"[{name}]"  # a bare IPv6 address
        return f"{name}:{port}".lower()

    names = {bind, *extra}
    if is_loopback(bind) or _is_wildcard(bind):
        names.update(LOOPBACK_NAMES)
    names.discard("0.0.0.0")
    names.discard("::")
    return frozenset(with_port(n) for n in names)


class HttpGate:
    """ASGI wrapper: Host and Origin checked (403), then `Authorization: Bearer <token>` (401)."""

    def __init__(self, app, token: str, hosts: frozenset[str], max_body: int | None = None):
        """`max_body`: config.message_cap(settings); the default cap when not given."""
        self.app = app
        self.max_body = max_body
        self.expected = f"Bearer {token}".encode()
        self.hosts = hosts
        self.origins = frozenset(f"{scheme}://{h}" for h in hosts for scheme in ("http", "https"))
        self.logged: set[str] = set()

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "lifespan"):
            # MCP speaks plain HTTP; a WebSocket (served when uvicorn finds a
            # websockets package) would pass a gate that checks only "http"
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or ())
            host = headers.get(b"host", b"").decode("latin-1").lower()
            origin = headers.get(b"origin")
            if host not in self.hosts:
                return await _refuse(send, 403, f"Host {host[:100]!r} does not name this server; use "
                                                f"http://{min(self.hosts)}/mcp (or add the name to "
                                                "SANDBOX_HTTP_ALLOWED_HOSTS)")
            if origin is not None and origin.decode("latin-1").lower().rstrip("/") not in self.origins:
                return await _refuse(send, 403, "cross-origin requests are refused: the Origin header "
                                                "must be this server's own address")
            if str(scope.get("path", "")).startswith(OAUTH_DISCOVERY):
                return await _refuse(send, 404, "this server does not offer OAuth: send the operator's token as "
                                                "Authorization: Bearer <SANDBOX_API_TOKEN>")
            presented = headers.get(b"authorization", b"")
            if not hmac.compare_digest(presented, self.expected):
                self._log_refusal(scope, presented)
                return await _refuse(send, 401, "unauthorized: send Authorization: Bearer <SANDBOX_API_TOKEN> "
                                                "(the token the operator set; this server does not offer OAuth)",
                                     [(b"www-authenticate", b'Bearer realm="mcp-server-python-sandbox"')])
            cap = self.max_body or MAX_MESSAGE_BYTES
            length = headers.get(b"content-length")
            if length is not None and not length.isdigit():
                return await _refuse(send, 400, "Content-Length must be a number of bytes")
            if length is not None and int(length) > cap:
                return await _refuse(send, 413, f"the request body is larger than {cap} bytes: send smaller code "
                                                "and files (SANDBOX_MAX_CODE_SIZE and SANDBOX_MAX_INPUT_SIZE are "
                                                "the limits)")
            receive = _capped(receive, cap)   # a chunked body has no length to check first
        await self.app(scope, receive, send)

    def _log_refusal(self, scope, presented: bytes) -> None:
        client = scope.get("client") or ("?", 0)
        address = str(client[0])
        if address in self.logged or len(self.logged) >= MAX_LOGGED_ADDRESSES:
            return
        self.logged.add(address)
        what = "a wrong bearer token" if presented else "no bearer token"
        logger.warning("HTTP request from %s with %s refused (logged once per address)", address, what)


class BodyTooLarge(Exception):
    """A chunked request body went past the gate's cap; the app's reading fails."""


def _capped(receive, cap: int):
    total = 0

    async def capped():
        nonlocal total
        message = await receive()
        if message.get("type") == "http.request":
            total += len(message.get("body", b""))
            if total > cap:
                raise BodyTooLarge(f"the request body is larger than {cap} bytes")
        return message
    return capped


async def _refuse(send, status: int, message: str, headers=()) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}}).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()), *headers],
    })
    await send({"type": "http.response.body", "body": body})

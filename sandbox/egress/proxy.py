"""The network profile's only way out: an HTTP proxy in the server, one per
execution, accepting on the listening socket the child opened in its own
network namespace (namespaces.open_proxy_listener).

It speaks what HTTP_PROXY / HTTPS_PROXY clients send: CONNECT host:port for
TLS (the tunnel is opaque to us) and absolute-form requests for plain http://
(forwarded as origin-form with "Connection: close"), and SOCKS5's CONNECT
(no authentication; names, IPv4 and IPv6) on the same port, told apart by the
first byte (0x05). Each destination is
checked by egress_policy on the name asked for, then resolved here and checked
again on the address this proxy connects to. Everything the child sends is
hostile: the request head is size- and time-capped, and per execution the
connections and the bytes in both directions are limited; the execution's own
timeout ends them all (close()).

A refusal answers 403 with the reason as the status text, so the snippet's
exception says why ("host not in SANDBOX_NETWORK_ALLOW ...").
"""

from __future__ import annotations

import asyncio
import socket
import time
import urllib.parse
from dataclasses import dataclass

from sandbox import network_allow as egress_policy
from sandbox.config import DEFAULTS

MAX_HEAD = 16 << 10          # request line and headers
HEAD_TIMEOUT = 10.0          # to send them
RESOLVE_TIMEOUT = 10.0
MAX_LOOKUPS = 2              # name lookups (worker threads) of one execution at once
CONNECT_TIMEOUT = 10.0
CHUNK = 64 << 10
POLICY_REFUSALS = (403, 429)   # the allow-list, the connection limit: security events
_HOP_HEADERS = (b"connection", b"proxy-connection", b"keep-alive", b"proxy-authorization", b"te",
                b"trailer", b"upgrade")


@dataclass(frozen=True)
class Limits:
    max_connections: int = DEFAULTS.network_max_connections
    max_bytes: int = DEFAULTS.network_max_bytes       # both directions, all connections of one execution


class Refused(Exception):
    """A request the proxy will not carry out; the message is the reason."""

    def __init__(self, reason: str, status: int = 403):
        super().__init__(reason)
        self.status = status


DROP_MAX = 256   # connections closed unread at most per listener and call end (its backlog is 64)


class EgressSession:
    """The proxy of one execution; close() ends it and returns what it did."""

    def __init__(self, policy: egress_policy.Policy, limits: Limits):
        self.policy = policy
        self.limits = limits
        self.records: list[dict] = []        # at most max_connections + 1 per listener
        self.connections = 0
        self.bytes_total = 0
        self.listeners: list[socket.socket] = []
        self.tasks: set[asyncio.Task] = set()
        self.lookups = asyncio.Semaphore(MAX_LOOKUPS)
        self.closed = False

    def start(self, listener: socket.socket, *, drop_waiting: bool = False) -> None:
        """Accept on the child's listener. A request the fork server handed to
        a second child (the first was killed before it ran) brings a second one.
        `drop_waiting`: a session's listener, before its call runs; whatever waits
        in its backlog was connected between calls and belongs to none."""
        if self.closed:
            listener.close()
            return
        listener.setblocking(False)
        if drop_waiting:
            _drop_waiting(listener)
        self.listeners.append(listener)
        self._spawn(self._accept(listener))

    def _spawn(self, coroutine) -> None:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _accept(self, listener: socket.socket) -> None:
        """Up to the connection limit; the one after it is told so, and then
        nothing more is accepted: further connects wait in the child's backlog
        and cost this server nothing, however hard the snippet tries."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                connection, _ = await loop.sock_accept(listener)
                over = self.connections >= self.limits.max_connections
                self.connections += 1
                self._spawn(self._serve(connection, over))
                if over:
                    return
        except OSError:
            return

    async def close(self) -> list[dict]:
        self.closed = True
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        for listener in self.listeners:
            _drop_waiting(listener)   # a session's listener outlives the call: leave nothing for the next
            listener.close()
        return self.records

    # ---- one connection --------------------------------------------------
    async def _serve(self, connection: socket.socket, over_limit: bool) -> None:
        record = {"host": "", "port": 0, "allowed": False, "bytes_sent": 0, "bytes_received": 0}
        upstream = writer = method = None
        started = time.monotonic()
        try:
            reader, writer = await asyncio.open_connection(sock=connection, limit=MAX_HEAD)
            try:
                if over_limit:
                    raise Refused(f"connection limit reached ({self.limits.max_connections} per execution); "
                                  "further connections are not accepted", 429)
                first = await asyncio.wait_for(reader.readexactly(1), HEAD_TIMEOUT)
                if first == SOCKS_VERSION:
                    method = "SOCKS5"
                    host, port = await asyncio.wait_for(_socks_request(reader, writer), HEAD_TIMEOUT)
                    head = b""
                else:
                    method, host, port, head = await self._read_request(reader, first)
                record.update(host=host, port=port, method=method)
                address = await self._destination(host, port)
                record["address"] = str(address)
                upstream = await self._connect(address, port)
            except Refused as refused:
                record["reason"], record["status"] = str(refused), refused.status
                if method == "SOCKS5":
                    if refused.status != 407:  # (that one was answered in the greeting)
                        writer.write(_socks_reply(SOCKS_REPLY.get(refused.status, 1)))
                    await writer.drain()
                else:
                    await _answer(writer, refused.status, str(refused))
                return
            record["allowed"] = True
            up_reader, up_writer = upstream
            if method == "SOCKS5":
                writer.write(_socks_reply(0))
            elif method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                up_writer.write(head)
                record["bytes_sent"] += len(head)
                self.bytes_total += len(head)
            await self._relay(reader, writer, up_reader, up_writer, record)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError, OSError):
            pass
        except asyncio.CancelledError:
            record.setdefault("reason", "the execution ended")  # close(): end quietly
        finally:
            record["milliseconds"] = round((time.monotonic() - started) * 1000)
            self.records.append(record)
            if writer is None:
                connection.close()
            for w in (writer, upstream[1] if upstream else None):
                if w is not None:
                    w.close()

    async def _read_request(self, reader, first: bytes) -> tuple[str, str, int, bytes]:
        """(method, host, port, the head to send upstream for plain http); `first` is
        the head's first byte, already read."""
        try:
            head = first + await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
        except asyncio.LimitOverrunError:
            raise Refused(f"request head larger than {MAX_HEAD} bytes", 431) from None
        except asyncio.TimeoutError:
            raise Refused("no complete request head in time", 408) from None
        line, _, rest = head.partition(b"\r\n")
        parts = line.split(b" ")
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
            raise Refused("not an HTTP/1.x proxy request", 400)
        method, target, version = (p.decode("ascii", "replace") for p in parts)
        if method == "CONNECT":
            host, port = _host_port(target)
            return method, host, port, b""
        url = urllib.parse.urlsplit(target)
        if url.scheme != "http" or not url.hostname:
            raise Refused("only http:// URLs go through the proxy as requests; use https:// (CONNECT) for TLS", 400)
        try:
            port = url.port or 80
        except ValueError:
            raise Refused("bad port in the URL", 400) from None
        host = _check_host(url.hostname)
        path = url.path or "/"
        if url.query:
            path += "?" + url.query
        # Host is written from the URL the policy checked: a Host header of the
        # snippet's choosing would pick another site behind the same address.
        headers = [h for h in rest.split(b"\r\n")
                   if h and h.split(b":", 1)[0].strip().lower() not in _HOP_HEADERS + (b"host",)]
        authority = f"[{host}]" if ":" in host else host
        if port != 80:
            authority += f":{port}"
        upstream_head = b"\r\n".join([f"{method} {path} {version}".encode("ascii", "replace"),
                                      f"Host: {authority}".encode("ascii"), *headers,
                                      b"Connection: close", b"", b""])
        return method, host, port, upstream_head

    async def _destination(self, host: str, port: int):
        """The address to connect to: the first one the policy allows, of those
        our resolver returned (connect goes to that address, not the name)."""
        reason = self.policy.refuse_name(host, port)
        if reason:
            raise Refused(reason)
        literal = egress_policy.parse_address(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                infos = await asyncio.wait_for(self._resolve(host, port), RESOLVE_TIMEOUT)
            except (OSError, asyncio.TimeoutError) as exc:
                raise Refused(f"cannot resolve {host}: {exc}", 502) from None
            addresses = list(dict.fromkeys(egress_policy.parse_address(info[4][0]) for info in infos))
        refusals = []
        for address in addresses:
            why = self.policy.refuse_address(address, port)
            if why is None:
                return address
            refusals.append(why)
        raise Refused(f"{host} resolves to a refused address: {refusals[0]}" if literal is None else refusals[0])

    async def _resolve(self, host: str, port: int) -> list:
        """getaddrinfo in a worker thread, at most MAX_LOOKUPS of them per execution:
        a timed-out lookup's thread runs on (a name whose DNS server never answers
        holds it for the resolver's own timeouts), and one execution's names must not
        take every worker from the others'. Its slot is free when its thread is."""
        await self.lookups.acquire()
        lookup = asyncio.get_running_loop().run_in_executor(None, socket.getaddrinfo, host, port, 0,
                                                            socket.SOCK_STREAM)
        lookup.add_done_callback(lambda _: self.lookups.release())
        return await asyncio.shield(lookup)

    async def _connect(self, address, port: int):
        try:
            return await asyncio.wait_for(asyncio.open_connection(str(address), port, limit=CHUNK),
                                          CONNECT_TIMEOUT)
        except (OSError, asyncio.TimeoutError) as exc:
            raise Refused(f"cannot connect to {address}:{port}: {type(exc).__name__}", 502) from None

    async def _relay(self, reader, writer, up_reader, up_writer, record: dict) -> None:
        """Both directions until both ends are done, or until the execution's
        byte limit: then both are cut."""
        async def pump(source, sink, key):
            while data := await source.read(CHUNK):
                self.bytes_total += len(data)
                record[key] += len(data)
                if self.bytes_total > self.limits.max_bytes:
                    record["reason"] = f"byte limit reached ({self.limits.max_bytes} bytes per execution)"
                    raise ConnectionAbortedError
                sink.write(data)
                await sink.drain()
            if sink.can_write_eof():
                sink.write_eof()

        pumps = {asyncio.ensure_future(pump(reader, up_writer, "bytes_sent")),
                 asyncio.ensure_future(pump(up_reader, writer, "bytes_received"))}
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)


# ---- SOCKS5 (RFC 1928): CONNECT only, no authentication -----------------------
SOCKS_VERSION = b"\x05"
# our refusal status -> SOCKS reply: 2 not allowed by the ruleset, 4 host unreachable,
# 7 command not supported, 8 address type not supported (1: general failure)
SOCKS_REPLY = {403: 2, 429: 2, 502: 4, 400: 1, 407: 7, 501: 7, 505: 8}


async def _socks_request(reader, writer) -> tuple[str, int]:
    """The greeting (after its version byte) and the request: (host, port)."""
    methods = await reader.readexactly((await reader.readexactly(1))[0])
    if 0 not in methods:
        writer.write(b"\x05\xff")
        raise Refused("SOCKS5 without authentication is the only method offered here", 407)
    writer.write(b"\x05\x00")
    version, command, _reserved, kind = await reader.readexactly(4)
    if version != 5:
        raise Refused("not a SOCKS5 request", 400)
    if kind == 1:
        host = socket.inet_ntop(socket.AF_INET, await reader.readexactly(4))
    elif kind == 4:
        host = socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16))
    elif kind == 3:
        host = (await reader.readexactly((await reader.readexactly(1))[0])).decode("ascii", "replace")
    else:
        raise Refused("SOCKS5 address type not supported", 505)
    port = int.from_bytes(await reader.readexactly(2), "big")
    if command != 1:
        raise Refused("only SOCKS5 CONNECT is supported (no BIND, no UDP)", 501)
    if not 0 < port < 65536:
        raise Refused("bad port", 400)
    return _check_host(host), port


def _socks_reply(code: int) -> bytes:
    return bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0])


def _host_port(target: str) -> tuple[str, int]:
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise Refused("CONNECT needs host:port", 400)
    return _check_host(host.strip("[]")), int(port)


def _check_host(host: str) -> str:
    host = egress_policy.normalise_host(host)
    if egress_policy.parse_address(host) is None and not (
            host and len(host) <= 253 and all(c.isalnum() or c in "-._" for c in host) and host.isascii()):
        raise Refused("not a valid host name", 400)
    return host


async def _answer(writer, status: int, reason: str) -> None:
    """The refusal, with the reason as status text (what urllib puts in its exception)."""
    text = "".join(c if c.isprintable() and c.isascii() else "?" for c in reason)[:300]
    body = f"refused by the sandbox's egress proxy: {text}\n".encode()
    writer.write(f"HTTP/1.1 {status} {text}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
                 f"Connection: close\r\n\r\n".encode() + body)
    try:
        await asyncio.wait_for(writer.drain(), 5)
    except (ConnectionError, asyncio.TimeoutError):
        pass


def _drop_waiting(listener: socket.socket) -> None:
    """Close, unread, the connections waiting in a listener's backlog (at most
    DROP_MAX: a backlog holds fewer, and a snippet still connecting cannot keep
    the server here)."""
    for _ in range(DROP_MAX):
        try:
            connection, _ = listener.accept()
        except OSError:   # none left (BlockingIOError), or the listener is gone
            return
        connection.close()

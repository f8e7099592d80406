"""Code mode, in the server: a client connection to each upstream MCP server of
SANDBOX_TOOL_SERVERS, its tools and their policy.

Each upstream is served by a task that connects (stdio or streamable HTTP),
lists the tools, keeps listening for tools/list_changed, pings while idle,
and reconnects with a growing delay when the connection fails; an upstream
that fails is reported (log, get_sandbox_info) with the reason, and the others
keep working. Only the tools the policy exposes are ever listed to a snippet
(by name if the file names them, and only read-only ones unless allow_writes).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sandbox.codemode import schema_shapes
from sandbox.config import DEFAULTS
from sandbox.codemode import upstream_transports
from sandbox.wire.terminal_text import terminal_safe
from sandbox.tool_servers import ToolServer, identifier

logger = logging.getLogger("sandbox.codemode.upstreams")

CONNECT_TIMEOUT = 30.0
PING_INTERVAL = 10.0
MAX_BACKOFF = 30.0
MAX_DOC = 200
MAX_SHOWN_PARAMETERS = 40   # of a tool's call form (an upstream's schema may list thousands)
SHAPE_DEPTH = 3             # levels of nested objects a call form opens when they fit
RESULT_DEPTH = 1            # a result's: its keys (every stub goes into execute_code's description)
MAX_CALL_FORM = 600         # characters; deeper shapes give way to `{...}` beyond
RECONNECTING = "reconnecting"


class RemoteTool:
    def __init__(self, server: ToolServer, tool):
        self.server = server
        self.name = tool.name
        self.attribute = identifier(tool.name)
        # an upstream's words go into our tool description and get_sandbox_info: one line,
        # no terminal controls
        self.description = terminal_safe(" ".join((tool.description or "").split()))
        self.input_schema = tool.input_schema or {"type": "object"}
        self.output_schema = tool.output_schema
        annotations = tool.annotations
        self.read_only = bool(annotations and annotations.read_only_hint is True)
        self._checker = None   # the inputSchema's validator, built at the first call

    def arguments_problem(self, arguments) -> str | None:
        """What is wrong with a call's arguments for the inputSchema, or None."""
        from sandbox.codemode import argument_schema
        if self._checker is None:
            try:
                self._checker = argument_schema.checker(self.input_schema)
            except Exception:  # noqa: BLE001 - jsonschema.SchemaError, or a schema it cannot read at all
                return "the tool's own inputSchema is invalid"
        return argument_schema.problem(self._checker, arguments)

    def refusal(self) -> str | None:
        """Why the policy does not expose this tool, else None."""
        if self.server.tools is not None and self.name not in self.server.tools:
            return f"not among the tools SANDBOX_TOOL_SERVERS exposes for {self.server.name}"
        if not self.read_only and not self.server.allow_writes:
            return (f"it is not declared read-only, and {self.server.name} does not have allow_writes "
                    "in SANDBOX_TOOL_SERVERS")
        return None

    def call_form(self) -> str:
        """`tools.server.tool(a: str, b: list[{id: int}] = ...) -> dict`, from the schemas:
        argument shapes as deep as fits in MAX_CALL_FORM characters (schema_shapes)."""
        for depth in range(SHAPE_DEPTH, -1, -1):
            form = self._call_form(depth)
            if len(form) <= MAX_CALL_FORM:
                break
        return form

    def _call_form(self, depth: int) -> str:
        properties = self.input_schema.get("properties") or {}
        required = set(self.input_schema.get("required") or ())
        params = []
        for name, schema in list(properties.items())[:MAX_SHOWN_PARAMETERS]:
            kind = _python_type(schema, depth, self.input_schema)
            params.append(f"{identifier(name)[:MAX_DOC]}: {kind}" + ("" if name in required else " = ..."))
        if len(properties) > MAX_SHOWN_PARAMETERS:
            params.append(f"... ({len(properties) - MAX_SHOWN_PARAMETERS} more parameters)")
        returns = (_python_type(self.output_schema, min(depth, RESULT_DEPTH), self.output_schema)
                   if self.output_schema else "Any")
        return f"tools.{self.server.attribute}.{self.attribute}({', '.join(params)}) -> {returns}"

    def stub(self) -> str:
        """The call form and the description: one line."""
        doc = self.description[:MAX_DOC]
        return self.call_form() + (f"  # {doc}" if doc else "")


def _python_type(schema, depth: int, root) -> str:
    return schema_shapes.shape(schema if isinstance(schema, dict) else {}, depth, root)


class Upstream:
    def __init__(self, spec: ToolServer, on_change=None, max_message: int = upstream_transports.message_limit(1 << 20)):
        self.spec = spec
        self.on_change = on_change or (lambda: None)  # the tools it offers may have changed
        self.status = "connecting"
        self.tools: dict[str, RemoteTool] = {}     # by attribute
        self.session = None
        self.connected = asyncio.Event()           # set once the first attempt ended, either way
        self.ready = asyncio.Event()               # set while a session is ready
        self._changed = asyncio.Event()
        self._cut = asyncio.Event()                # a message passed the cap: this connection ends
        self.cap = upstream_transports.MessageCap(max_message, on_cut=self._end_connection)

    def _end_connection(self) -> None:
        self._cut.set()
        self.ready.clear()    # no new call goes to the connection that is ending
        self.status = f"{RECONNECTING}: an answer passed {self.cap.limit} bytes"
        self._changed.set()   # wakes the connection's loop

    @property
    def offering(self) -> bool:
        """Its tools are callable: connected, or on its way back after a cut (a call waits)."""
        return self.session is not None or self.reconnecting

    @property
    def reconnecting(self) -> bool:
        """Its connection was ended for an answer past the cap, and a new one is on its way."""
        return self.status.startswith(RECONNECTING)

    async def run(self) -> None:
        backoff = 1.0
        while True:
            try:
                await self._serve_one_connection()
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # noqa: BLE001 - ExceptionGroups from anyio included
                if not self._cut.is_set():
                    self.status = f"failed: {_reason(exc)}"
            finally:
                was_ready, self.session = self.session is not None, None
                self.ready.clear()
                self.connected.set()
                if was_ready:
                    self.on_change()
            if self._cut.is_set():
                if was_ready:   # a call's answer failed, not the connection: again at once
                    logger.warning("tool server %s: %s", self.spec.name, self.status)
                    backoff = 1.0
                    continue
                self.status = f"failed: a message passed {self.cap.limit} bytes before the tools were listed"
            logger.warning("tool server %s: %s (retrying in %g s)", self.spec.name, self.status, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)

    async def _serve_one_connection(self) -> None:
        from mcp.client.session import ClientSession
        self._cut.clear()
        async with self._transport() as (read, write):
            async with ClientSession(read, write, message_handler=self._on_message) as session:
                await asyncio.wait_for(session.initialize(), CONNECT_TIMEOUT)
                await self._list(session)
                self.session, self.status = session, "ready"
                self.ready.set()
                self.connected.set()
                self.on_change()
                logger.info("tool server %s: %d tools", self.spec.name, len(self.tools))
                listener = asyncio.ensure_future(self._listen(session))
                try:
                    while True:
                        try:
                            await asyncio.wait_for(self._changed.wait(), PING_INTERVAL)
                        except asyncio.TimeoutError:
                            await asyncio.wait_for(session.send_ping(), PING_INTERVAL)
                            continue
                        if self._cut.is_set():
                            return
                        self._changed.clear()
                        await self._list(session)
                        self.on_change()
                finally:
                    listener.cancel()
                    with contextlib.suppress(BaseException):
                        await listener

    def _transport(self):
        if self.spec.url is not None:
            return upstream_transports.streamable_http(self.spec.url, self.spec.headers, self.cap)
        return upstream_transports.stdio(self.spec, self.cap)

    async def _list(self, session) -> None:
        listing = await asyncio.wait_for(session.list_tools(), CONNECT_TIMEOUT)
        self.tools = {}
        for tool in listing.tools:
            remote = RemoteTool(self.spec, tool)
            if remote.attribute in self.tools:
                # two names that sanitise alike (get-time, get_time): the later one gets a suffix
                taken = remote.attribute
                remote.attribute = next(f"{taken}_{n}" for n in range(2, 10_000) if f"{taken}_{n}" not in self.tools)
                logger.warning("tool server %s: tools %r and %r are both %s as identifiers; %r is tools.%s.%s",
                               self.spec.name, self.tools[taken].name, remote.name, taken, remote.name,
                               self.spec.attribute, remote.attribute)
            self.tools[remote.attribute] = remote

    async def _listen(self, session) -> None:
        """tools/list_changed: a subscriptions/listen stream (MCP 2026-07-28); older
        servers send the notification unasked (_on_message)."""
        from mcp.client.subscriptions import ListenNotSupportedError, listen
        try:
            async with listen(session, tools_list_changed=True) as events:
                async for _event in events:
                    self._changed.set()
        except ListenNotSupportedError:
            logger.debug("tool server %s speaks %s: change notifications come unasked", self.spec.name,
                         session.protocol_version)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the pings notice a dead connection
            logger.warning("tool server %s: no change notifications (%s)", self.spec.name, _reason(exc))

    async def _on_message(self, message) -> None:
        if "ToolListChanged" in type(message).__name__ or getattr(message, "method", "") == "notifications/tools/list_changed":
            self._changed.set()


def _reason(exc: BaseException) -> str:
    while getattr(exc, "exceptions", None):   # an (anyio) exception group: its first member
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"[:300]


class Registry:
    """Every upstream, and what snippets may call."""

    def __init__(self, specs: tuple[ToolServer, ...], max_result_bytes: int = DEFAULTS.tool_result_max):
        limit = upstream_transports.message_limit(max_result_bytes)
        self.upstreams = {spec.attribute: Upstream(spec, self._changed, limit) for spec in specs}
        self.tasks: list[asyncio.Task] = []
        self.listeners: list = []   # called with the new stubs when what snippets can call changed
        self._last_stubs: list[str] | None = None

    def _changed(self) -> None:
        stubs = self.stubs()
        if stubs == self._last_stubs:
            return
        self._last_stubs = stubs
        for listener in self.listeners:
            listener(stubs)

    def start(self) -> None:
        self.tasks = [asyncio.ensure_future(u.run()) for u in self.upstreams.values()]

    async def wait_connected(self, timeout: float) -> None:
        """Until each upstream's first attempt ended (ready or failed), at most `timeout`."""
        waits = [u.connected.wait() for u in self.upstreams.values()]
        if waits:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waits), timeout)

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(BaseException):
                await task

    def exposed(self) -> list[RemoteTool]:
        return [tool for u in self.upstreams.values() if u.offering
                for tool in u.tools.values() if tool.refusal() is None]

    def listing(self) -> dict:
        """{server: {tool: its stub line}} of the connected upstreams' tools, the ones
        the policy refuses included (calling one gets the reason, and is a security event)."""
        out: dict = {}
        for upstream in self.upstreams.values():
            tools = out.setdefault(upstream.spec.attribute, {})
            for tool in upstream.tools.values() if upstream.offering else ():
                why = tool.refusal()
                tools[tool.attribute] = f"not allowed: {why}" if why else tool.stub()
        return out

    def lookup(self, server: str, tool: str) -> tuple[Upstream | None, RemoteTool | None, str | None]:
        """(upstream, tool, None), or a refusal: (.., .., why)."""
        upstream = self.upstreams.get(server)
        if upstream is None:
            return None, None, f"no tool server named {server!r} (tools has: {', '.join(self.upstreams) or 'none'})"
        if upstream.session is None or not upstream.ready.is_set():
            return upstream, None, f"tool server {server!r} is not connected ({upstream.status})"
        remote = upstream.tools.get(tool)
        if remote is None:
            return upstream, None, f"{server} has no tool {tool!r}"
        why = remote.refusal()
        if why:
            return upstream, remote, f"tools.{server}.{tool} is not allowed: {why}"
        return upstream, remote, None

    def status(self) -> list[dict]:
        return [{"server": u.spec.name, "attribute": u.spec.attribute, "status": u.status,
                 "tools": sorted(t.attribute for t in u.tools.values() if t.refusal() is None),
                 "not_exposed": sorted(t.attribute for t in u.tools.values() if t.refusal() is not None),
                 "renamed": {t.name: t.attribute for t in u.tools.values() if t.attribute != identifier(t.name)}}
                for u in self.upstreams.values()]

    def stubs(self) -> list[str]:
        return [tool.stub() for tool in self.exposed()]

"""Server assembly: the SDK's MCPServer with the five tools, the run-file resource, and a
lifespan that starts the runner and always closes it (killing every child).

Only the SDK's public API: the tools are built with `Tool.from_function`, compacted, and
handed to `MCPServer(tools=...)`; the tools' work is in tool_handlers.

No `from __future__ import annotations` here: the SDK reads the tool signatures,
whose schemas are built from this module's settings at registration time.
"""

import asyncio
import contextlib
import logging
import weakref
from contextlib import asynccontextmanager
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.tools import Tool
from mcp.server.subscriptions import InMemorySubscriptionBus, ToolsListChanged
from mcp.types import CallToolResult, ToolAnnotations
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field, WithJsonSchema

from sandbox import __version__
from sandbox.config import LAYER_NAMES, MIN_MEMORY_LIMIT, Settings
from sandbox.forkserver.runner import Runner
from sandbox.limits_parse import format_size
from sandbox.mcp import content_blocks, descriptions, info_summary, published_schemas
from sandbox.mcp.audit import AuditLog
from sandbox.mcp.file_store import URI_PREFIX, FileExpired
from sandbox.mcp.start_gate import StartGate, waited_for_start
from sandbox.mcp.tool_handlers import SERVER_NAME, SandboxTools
from sandbox.mcp.tool_models import (ExecutionResult, InputFile, InputURI, SandboxInfo, SessionClosed, SessionCreated,
                                     ValidationResult, file_content)

logger = logging.getLogger(__name__)

UPSTREAM_WAIT = 15.0   # seconds start-up waits for the tool servers' first connection
INSTRUCTIONS = (
    "Runs Python snippets in a hardened, isolated child process (namespaces, seccomp, Landlock, "
    "rlimits, RestrictedPython). Each call starts from a clean state, unless it passes the "
    "session_id of a session made with create_session. Call get_sandbox_info to see the allowed "
    "modules and limits."
)

# What MCP assumes of a tool that gives no hint: not read-only, destructive, not
# idempotent, open to the world.
HINT_DEFAULTS = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False, "open_world_hint": True}


def hints(*, read_only: bool, destructive: bool, idempotent: bool, open_world: bool) -> ToolAnnotations:
    """The tool's annotations, each written only where it says more than MCP's default
    (and destructive/idempotent only for a tool that writes: MCP reads them for no other)."""
    given = {"read_only_hint": read_only, "open_world_hint": open_world,
             **({} if read_only else {"destructive_hint": destructive, "idempotent_hint": idempotent})}
    return ToolAnnotations(**{name: value for name, value in given.items() if value != HINT_DEFAULTS[name]})


def published(tool: Tool, settings: Settings) -> Tool:
    """The tool as tools/list shows it: its schemas without the prose and titles pydantic
    writes (the models stay what answers are checked against), and without the arguments
    this server's settings refuse (files without the filesystem profile, session_id
    without sessions): a model is not offered what it cannot use."""
    offered = {"files": settings.enable_filesystem, "session_id": settings.max_sessions > 0}
    metadata = tool.fn_metadata.model_copy(
        update={"output_schema": published_schemas.output_schema(tool.fn_metadata.output_schema)})
    parameters = published_schemas.input_schema(tool.parameters, without=[n for n, on in offered.items() if not on])
    return tool.model_copy(update={"parameters": parameters, "fn_metadata": metadata})


def connection_of(ctx: Context):
    """The client's connection. The SDK makes a ServerSession per request, which is
    gone once the call answered; its connection lives as long as the client does. The
    public API names no connection, so this reads the session's (where an SDK has no
    such split, the session is the connection)."""
    return getattr(ctx.session, "_connection", ctx.session)


class ToolListPublisher:
    """execute_code's description follows the sandbox (does it have a private /tmp for
    scratch files?) and the upstreams' tools; a change reaches our clients on a
    subscriptions/listen stream (MCP 2026-07-28), or by notifications/tools/list_changed
    on the connections of older clients.

    `execute_code` is the Tool this server lists: the SDK offers no call to change a
    registered tool, so its description is changed on the object handed to MCPServer.
    `connections`: connection -> protocol version, filled as clients call execute_code."""

    def __init__(self, execute_code: Tool, tools: SandboxTools, bus: InMemorySubscriptionBus,
                 connections: weakref.WeakKeyDictionary):
        self.execute_code = execute_code
        self.tools = tools
        self.bus = bus
        self.connections = connections
        self.notifying: set[asyncio.Task] = set()

    def describe(self) -> None:
        tools = self.tools
        stubs = tools.registry.stubs() if tools.registry is not None else None
        scratch = tools.runner.layers().get("namespaces", {}).get("active", False)
        self.execute_code.description = descriptions.execute_description(
            tools.settings, stubs, scratch=scratch, proxy_url=tools.proxy_url)

    def changed(self) -> None:
        """An upstream's tools changed (listed anew, connected, lost)."""
        self.describe()
        sends = [self.bus.publish(ToolsListChanged())]
        sends += [_notify_quietly(connection) for connection, version in list(self.connections.items())
                  if version not in MODERN_PROTOCOL_VERSIONS]
        for send in sends:
            task = asyncio.ensure_future(send)
            self.notifying.add(task)   # a task nobody holds may be collected before it ran
            task.add_done_callback(self.notifying.discard)


async def _notify_quietly(connection) -> None:
    """A change notification is advisory: a client gone meanwhile is no error."""
    with contextlib.suppress(Exception):
        await connection.send_tool_list_changed()


def log_layers(layers: dict) -> None:
    """One line for the active layers, one per inactive layer with its reason (the
    details of each are in get_sandbox_info and `check`)."""
    ordered = sorted(layers, key=lambda n: (LAYER_NAMES + (n,)).index(n))
    active = [name for name in ordered if layers[name].get("active")]
    if active:
        logger.info("isolation layers active: %s", ", ".join(active))
    for name in ordered:
        if not layers[name].get("active"):
            logger.warning("isolation layer %s INACTIVE: %s", name, layers[name].get("detail", ""))


def starting_what(settings: Settings) -> str:
    """What the start does, as a request waiting for it is told."""
    if settings.enable_data_science:
        return "the data-science libraries are loaded once for every run"
    return "the isolation layers are checked"


def build_server(settings: Settings, runner: Runner, audit: AuditLog | None = None, *, proxy_url: str,
                 on_start_failure=None) -> MCPServer:
    """An MCPServer that answers `initialize` at once, starts the runner behind it (tools/list
    and tools/call wait for the start) and always closes it (killing every child).
    `proxy_url`: where a snippet finds the egress proxy (the kernel side decides it);
    `on_start_failure(exc)`: told when the start fails (the tools then answer with the problem)."""
    tools = SandboxTools(settings, runner, audit or AuditLog(settings.audit_log), proxy_url=proxy_url)
    bus = InMemorySubscriptionBus()   # subscriptions/listen: tools/list_changed reaches our clients
    connections: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    listed = [published(tool, settings) for tool in sandbox_tools(tools, connections)]
    publisher = ToolListPublisher(next(t for t in listed if t.name == "execute_code"), tools, bus, connections)

    async def start() -> None:
        await runner.start()
        if tools.registry is not None:
            tools.registry.start()
            await tools.registry.wait_connected(UPSTREAM_WAIT)
            # from here on a change is news: nobody could list the tools before (tools/list waits)
            tools.registry.listeners.append(lambda stubs: publisher.changed())
        publisher.describe()
        log_layers(runner.layers())
        logger.info(
            "ready: profiles %s, restricted python %s, concurrency %d",
            ",".join(settings.enabled_profiles), "on" if settings.restricted_python else "OFF",
            settings.max_concurrency,
        )

    @asynccontextmanager
    async def lifespan(_server):
        gate.begin()
        sweeper = asyncio.ensure_future(tools.sessions.run_sweeper())
        try:
            yield {}
        finally:
            # a client that left before the start ended still learns of its failure (the exit status)
            await gate.end(wait=not asyncio.current_task().cancelling())
            sweeper.cancel()
            await tools.sessions.close_all()
            if tools.registry is not None:
                await tools.registry.close()
            await runner.aclose()

    server = MCPServer(SERVER_NAME, subscriptions=bus, version=__version__, instructions=INSTRUCTIONS,
                       lifespan=lifespan, log_level=settings.log_level.upper(), tools=listed)
    gate = StartGate(server, start, starting_what(settings), on_start_failure)

    @server.resource(URI_PREFIX + "{token}", name="run-file",
                     description=f"a file a run left under out/, kept {settings.file_ttl:g} s after the run")
    async def run_file(token: str) -> str | bytes:
        """A file served from the store by the token the server minted (never a path)."""
        try:
            stored = tools.files.get(token)
        except FileExpired as exc:
            raise ResourceError(str(exc)) from None
        text = (content_blocks.plain_text(stored.data)
                if stored.mime_type in content_blocks.TEXT_TYPES.values() else None)
        return stored.data if text is None else text

    return server


# The forms (text, {"base64"}, {"uri"}) are named in the parameter's description; the
# arguments are still checked against the models.
FILE_CONTENT_SCHEMA = {"type": ["string", "object"]}


def after_start_wait(report_progress):
    """The run's progress counts on from the time the call waited for the start: a
    client's progress only ever grows."""
    waited = waited_for_start()
    if not waited:
        return report_progress

    async def report(progress: float, total: float | None = None, message: str | None = None) -> None:
        await report_progress(round(waited + progress, 1), None if total is None else round(waited + total, 1), message)

    return report


def sandbox_tools(tools: SandboxTools, connections: weakref.WeakKeyDictionary) -> list[Tool]:
    """The five tools: their signatures (the SDK builds the input schemas from them) over
    SandboxTools' methods. `connections`: where execute_code notes its caller's connection."""
    s = tools.settings

    timeout_schema = {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": s.max_timeout,
        "default": s.timeout,
        "description": "seconds",
    }
    memory_schema = {
        "type": ["string", "integer"],
        "default": format_size(s.default_memory_limit),
        "description": f'bytes or a size ("64m", "1g"), {format_size(MIN_MEMORY_LIMIT)} to '
                       f"{format_size(s.max_memory_limit)}",
    }

    async def execute_code(
        code: Annotated[str, Field(description="Python source")],
        timeout: Annotated[Any, WithJsonSchema(timeout_schema)] = s.timeout,
        capture_output: Annotated[bool, Field(description="false: discard stdout and stderr")] = True,
        allowed_imports: Annotated[
            list[Annotated[str, Field(max_length=200)]],
            Field(max_length=500, description="only these of the allowed modules"),
        ] = [],  # noqa: B006 - never mutated
        memory_limit: Annotated[Any, WithJsonSchema(memory_schema)] = format_size(s.default_memory_limit),
        use_container: Annotated[bool, Field(description=descriptions.USE_CONTAINER)] = False,
        files: Annotated[
            dict[Annotated[str, Field(max_length=255)],
                 Annotated[str | InputFile | InputURI, WithJsonSchema(FILE_CONTENT_SCHEMA)]] | None,
            Field(description=descriptions.files_parameter(s)),
        ] = None,
        session_id: Annotated[str | None, Field(max_length=100, description="from create_session")] = None,
        ctx: Context = None,
    ) -> Annotated[CallToolResult, ExecutionResult]:
        if ctx is not None and tools.registry is not None:
            with contextlib.suppress(Exception):
                connections[connection_of(ctx)] = ctx.request_context.protocol_version
        return await tools.execute(code, timeout, capture_output, allowed_imports, memory_limit, use_container,
                                   files and {name: file_content(value) for name, value in files.items()},
                                   report_progress=after_start_wait(ctx.report_progress) if ctx is not None else None,
                                   session_id=session_id)

    async def validate_code(
        code: Annotated[str, Field(description="Python source")],
    ) -> Annotated[CallToolResult, ValidationResult]:
        return await tools.validate(code)

    async def create_session(
        memory_limit: Annotated[Any, WithJsonSchema(memory_schema)] = format_size(s.default_memory_limit),
    ) -> Annotated[CallToolResult, SessionCreated]:
        return await tools.create_session(memory_limit)

    async def close_session(
        session_id: Annotated[str, Field(max_length=100, description="from create_session")],
    ) -> Annotated[CallToolResult, SessionClosed]:
        return await tools.close_session(session_id)

    async def get_sandbox_info(
        detail: Annotated[bool, Field(description="every field, as JSON text")] = False,
    ) -> Annotated[CallToolResult, SandboxInfo]:
        info = tools.info()
        return content_blocks.tool_result(info, text=None if detail else info_summary.summary(info))

    return [
        Tool.from_function(
            execute_code, title="Run Python",
            description=descriptions.execute_description(s, proxy_url=tools.proxy_url),
            annotations=hints(read_only=False, destructive=False, idempotent=False, open_world=s.enable_network)),
        Tool.from_function(
            create_session, title="Start a session", description=descriptions.session_description(s),
            annotations=hints(read_only=False, destructive=False, idempotent=False, open_world=False)),
        Tool.from_function(
            close_session, title="End a session", description=descriptions.CLOSE_SESSION,
            annotations=hints(read_only=False, destructive=True, idempotent=True, open_world=False)),
        Tool.from_function(
            validate_code, title="Check Python", description=descriptions.VALIDATE_CODE,
            annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False)),
        Tool.from_function(
            get_sandbox_info, title="Describe the sandbox", description=descriptions.SANDBOX_INFO,
            annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False)),
    ]

"""The MCP face of the sandbox: five tools, their schemas, and the glue that turns
a tool call into a runner request.

No untrusted byte is parsed here: the code is only measured (len, sha256) and
handed to the runner, which compiles and runs it in a hardened child. Every tool
returns structured content (validated against its declared output schema) plus
the same dict as JSON text, for clients without structured output. Refusals and
failed executions are tool results with isError=true, never protocol errors.

No `from __future__ import annotations` here: the SDK reads the tool signatures,
whose schemas are built from this module's settings at registration time.
"""

import asyncio
import contextlib
import json
import logging
import time
import uuid
import weakref
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, get_args

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.subscriptions import InMemorySubscriptionBus, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError, WithJsonSchema

from sandbox import __version__, namespaces, profiles
from sandbox.mcp import answers
from sandbox.restricted.subsets import registry
from sandbox.forkserver import outcome
from sandbox.wire import protocol
from sandbox.mcp.audit import AuditLog
from sandbox.mcp.file_store import URI_PREFIX, FileExpired, FileStore
from sandbox.config import LAYER_NAMES, MIN_MEMORY_LIMIT, MODULE_NAME, PROFILE_SWITCHES, Settings
from sandbox.limits_parse import SIZE_SYNTAX, format_size, parse_seconds, parse_size
from sandbox.mcp.rate_limit import RateLimit
from sandbox.forkserver.runner import ExecRequest, LayerUnavailable, Runner
from sandbox.mcp.sessions import SessionRefused, Sessions
from sandbox.wire.terminal_text import terminal_safe
from sandbox.mcp import descriptions
from sandbox.mcp import info_summary
from sandbox.mcp import published_schemas
from sandbox.mcp import rate_limit
from sandbox.codemode import tool_calls
from sandbox.codemode import upstreams
from sandbox.mcp.descriptions import execute_description, network_note

logger = logging.getLogger(__name__)

SERVER_NAME = "mcp-server-python-sandbox"
PROGRESS_INTERVAL = 1.0  # seconds between progress notifications (the first after one second)

ErrorType = Literal[protocol.ERROR_TYPES]
_ERROR_TYPES = frozenset(protocol.ERROR_TYPES)



# ----------------------------------------------------------------------------- output schemas


class SecurityEvent(BaseModel):
    kind: str
    detail: str = ""
    source: Literal["server", "sandbox"] = Field(
        "server", description='"sandbox": reported from inside the sandbox (by the RestrictedPython layer, or '
                              'forged by a snippet running real Python); "server": observed outside it')


class OutputFile(BaseModel):
    path: str = Field(description="path under the workspace, e.g. out/report.csv")
    size: int
    mime_type: str
    uri: str | None = Field(None, description="readable with resources/read for SANDBOX_FILE_TTL seconds")
    returned_as: str = Field(description='"text" or "blob" (an embedded resource block), "link" (a '
                                         'resource_link block), or "image" (a figure\'s image block)')
    note: str | None = Field(None, description="why it is not returned as its name says (an image too large for "
                                               "a client to decode goes as application/octet-stream)")


class RefusedFile(BaseModel):
    path: str
    reason: str


class NetworkConnection(BaseModel):
    host: str = Field(description="the host the snippet asked the egress proxy for")
    port: int
    allowed: bool
    address: str | None = Field(None, description="the address the proxy connected to")
    method: str | None = Field(None, description='"CONNECT" (HTTPS tunnel) or the HTTP method')
    bytes_sent: int = 0
    bytes_received: int = 0
    milliseconds: int | None = None
    reason: str | None = Field(None, description="why it was refused or cut")
    status: int | None = Field(None, description="the HTTP status the proxy refused it with (403: the "
                                                 "allow-list, 429: the connection limit, 4xx/502: malformed "
                                                 "or unreachable)")


class ToolCall(BaseModel):
    server: str
    tool: str
    ok: bool
    milliseconds: int = 0
    error: str | None = None


class ImageInfo(BaseModel):
    mime_type: str


class ExecutionResult(BaseModel):
    success: bool
    execution_id: str
    result: Any = Field(None, description="value of a top-level `result` variable, else of the last expression")
    stdout: str = ""
    stderr: str = ""
    execution_time: float = Field(0.0, description="wall-clock seconds")
    variables: list[str] = Field(default_factory=list, description="names the snippet defined")
    error: str | None = None
    error_type: ErrorType | None = None
    line: int | None = Field(None, description="line of the error in the snippet, when known")
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    cpu_time: float | None = None
    max_rss_bytes: int | None = None
    security_events: list[SecurityEvent] = Field(default_factory=list)
    traceback: str | None = None
    signal: str | None = Field(None, description="the signal that ended the snippet, when one did (e.g. SIGSEGV)")
    result_truncated: bool = Field(False, description="the result value exceeded the output limit and was cut")
    files: list[OutputFile] = Field(
        default_factory=list, description="files the snippet wrote under out/ (filesystem profile)"
    )
    files_truncated: bool = False
    images: list[ImageInfo] = Field(
        default_factory=list, description="matplotlib figures; each is also an image content block"
    )
    images_truncated: bool = False
    artifacts_error: str | None = Field(
        None, description="why figures or out/ files could not be collected (the result itself stands)")
    network: list[NetworkConnection] = Field(
        default_factory=list, description="connections through the egress proxy (network profile)")
    tool_calls: list[ToolCall] = Field(
        default_factory=list, description="calls the snippet made through `tools` (code mode)")
    session_id: str | None = Field(None, description="the session this call ran in")
    session_ended: bool = Field(False, description="the session ended with this call: its state is gone")
    session_end_reason: str | None = Field(None, description="why, when the call itself succeeded")
    files_refused: list[RefusedFile] = Field(
        default_factory=list, description="entries under out/ not returned: symbolic links, FIFOs, devices, "
                                          "hard links, names with control characters")


class ValidationError_(BaseModel):
    line: int | None = None
    message: str


class Validation(BaseModel):
    valid: bool
    errors: list[ValidationError_] = Field(default_factory=list)
    message: str = ""


class CodeAnalysis(BaseModel):
    line_count: int
    character_count: int
    estimated_complexity: str


class ValidationResult(BaseModel):
    validation: Validation
    analysis: CodeAnalysis
    recommendations: list[str] = Field(default_factory=list)


class LayerInfo(BaseModel):
    active: bool
    detail: str = ""


class ProfileInfo(BaseModel):
    enabled: bool
    switch: str | None = Field(None, description="environment variable that enables this profile")
    modules: list[str] = Field(description="modules of this profile that are importable on this host")
    detail: str | None = Field(None, description="what the profile opens, when it is more than modules")


class TimeoutLimits(BaseModel):
    default: float
    max: float


class MemoryLimits(BaseModel):
    default: str
    default_bytes: int
    min_bytes: int
    max: str
    max_bytes: int


class Limits(BaseModel):
    timeout: TimeoutLimits
    memory_limit: MemoryLimits
    max_output_size: int = Field(description="bytes kept of stdout and of stderr, each")
    max_code_size: int
    max_concurrency: int


class SessionLimits(BaseModel):
    open: int = Field(description="sessions open now")
    max_sessions: int
    idle_ttl: float = Field(description="seconds a session lives without a call")
    max_lifetime: float = Field(description="seconds a session lives at most")


class SessionCreated(BaseModel):
    session_id: str = Field(description="pass it as session_id to execute_code; close it with close_session")
    expires_in: float = Field(description="seconds until it ends unless used (each call restarts the idle clock)")
    idle_ttl: float
    max_lifetime: float
    profiles: list[str]
    limits: dict = Field(description="memory_limit (the whole session's), timeout per call (default, max)")


class SessionClosed(BaseModel):
    closed: bool
    message: str


class ServerInfo(BaseModel):
    name: str
    version: str


class InputFile(BaseModel):
    base64: str


def _file_content(value):
    return value.model_dump() if isinstance(value, InputFile) else value


class WeakeningInfo(BaseModel):
    setting: str
    value: str
    source: str = Field(description='"environment", the path of the settings file, or "default"')
    opens: str


class SandboxInfo(BaseModel):
    server: ServerInfo
    restricted_python: bool
    python_layer: str = Field(description="what the RestrictedPython layer claims with the enabled profiles")
    weakened_by: list[WeakeningInfo] = Field(
        description="settings that give snippets more than the defaults, and where each came from")
    profiles: dict[str, ProfileInfo]
    extra_imports: list[str] = Field(description="modules added by SANDBOX_ALLOWED_IMPORTS")
    allowed_modules: list[str]
    module_subsets: dict[str, list[str]] = Field(
        default_factory=dict, description="modules a snippet imports as a sandbox subset (these names only), "
                                          "where the whole module is not allowed")
    limits: Limits
    layers: dict[str, LayerInfo]
    strongest_isolation_available: bool = Field(description="whether execute_code(use_container=true) can run here")
    sessions: SessionLimits
    tool_servers: list[dict] = Field(
        default_factory=list, description="code mode: each upstream MCP server, its status and the tools exposed")
    tool_stubs: list[str] = Field(default_factory=list, description="code mode: what snippets can call")
    rules: str | None = Field(None, description="the RestrictedPython rules in full, with every sandbox subset")


# ----------------------------------------------------------------------------- request checks


class RequestRefused(Exception):
    """A tool call turned down before any child runs."""

    def __init__(self, error_type: str, message: str, security_kind: str | None = None):
        super().__init__(message)
        self.error_type = error_type
        self.security_kind = security_kind  # set when the refusal is also a security event


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_timeout(value: object, settings: Settings) -> float:
    accepted = f"a number of seconds greater than 0 and at most {settings.max_timeout:g} (SANDBOX_MAX_TIMEOUT)"
    try:
        seconds = parse_seconds(value)
    except ValueError:
        seconds = None
    if seconds is None or not 0 < seconds <= settings.max_timeout:
        raise RequestRefused("invalid_argument", f"timeout must be {accepted}; got {_shown(value)}")
    return seconds


def check_memory_limit(value: object, settings: Settings) -> int:
    accepted = (
        f"{SIZE_SYNTAX}, from {format_size(MIN_MEMORY_LIMIT)} to "
        f"{format_size(settings.max_memory_limit)} (SANDBOX_MAX_MEMORY_LIMIT)"
    )
    try:
        size = parse_size(value)
    except ValueError:
        size = None
    if size is None or not MIN_MEMORY_LIMIT <= size <= settings.max_memory_limit:
        raise RequestRefused("invalid_argument", f"memory_limit must be {accepted}; got {_shown(value)}")
    return size


def check_code_size(code: str, settings: Settings) -> None:
    """Cheap on purpose: a length, never a parse."""
    limit = settings.max_code_size
    # A str of n characters is at most 4n bytes of UTF-8: skip encoding when it cannot matter.
    size = len(code) if len(code) > limit else len(code.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise RequestRefused(
            "invalid_argument",
            f"code is {size} bytes; the limit is {limit} bytes ({format_size(limit)}, SANDBOX_MAX_CODE_SIZE)",
        )


def check_input_files(files: dict | None, code: str, settings: Settings) -> dict | None:
    """Input files need the filesystem profile and count toward SANDBOX_MAX_CODE_SIZE with the code.
    Names and contents are only measured here; the child writes them (and refuses bad names)."""
    if not files:
        return None
    if not settings.enable_filesystem:
        raise RequestRefused(
            "invalid_argument",
            "files needs the filesystem profile, which is off; the operator can set SANDBOX_ENABLE_FILESYSTEM=true",
        )
    total = len(code)
    for name, content in files.items():
        text = content if isinstance(content, str) else content.get("base64", "")
        total += len(name) + len(text)
    if total > settings.max_code_size:
        raise RequestRefused(
            "invalid_argument",
            f"code and files together are {total} characters; the limit is {settings.max_code_size} "
            "(SANDBOX_MAX_CODE_SIZE)",
        )
    return files


def narrow_imports(requested: list[str], allowed: frozenset[str], settings: Settings) -> frozenset[str]:
    """allowed_imports can only narrow the configured modules, never widen them."""
    if not requested:
        return allowed
    for name in requested:
        if not isinstance(name, str) or not (MODULE_NAME.fullmatch(name) or name in allowed):
            raise RequestRefused("invalid_argument", f"allowed_imports: {_shown(name)} is not a module name")
    refused = [name for name in dict.fromkeys(requested)
               if name not in allowed and not profiles.is_allowed(name, allowed)]   # (pkg.* is not a module name)
    if refused:
        reasons = "; ".join(f"{name} ({_why_not_allowed(name, settings)})" for name in refused)
        raise RequestRefused(
            "security_violation",
            f"allowed_imports asks for modules this server does not allow: {reasons}. "
            "allowed_imports can only narrow the modules the server's profiles allow; "
            "get_sandbox_info lists them.",
            security_kind="blocked_import",
        )
    return frozenset(requested)


def _why_not_allowed(name: str, settings: Settings) -> str:
    for profile, switch in PROFILE_SWITCHES.items():
        if profile not in settings.enabled_profiles and profiles.is_allowed(name, profiles.PROFILES[profile]):
            return f"in the {profile} profile, which is off; the operator can set {switch}=true"
    why = profiles.refusal_reason(name, network=settings.enable_network, filesystem=settings.enable_filesystem)
    if why is not None:
        return f"never allowed: {why}"
    return "not in the enabled profiles; the operator can add it with SANDBOX_ALLOWED_IMPORTS"


def describe_missing_layers(missing) -> str:
    """The message for use_container=true on a host that cannot provide every layer."""
    parts = "; ".join(f"{layer} ({reason or 'no reason given'})" for layer, reason in missing)
    return (
        "use_container=true asks for the strongest isolation this host offers, with every layer "
        f"active, but these layers are not available here: {parts}. There is no container runtime; "
        "run without use_container to accept the layers that are active (get_sandbox_info lists "
        "them), or move to a host that provides the missing ones."
    )


# ----------------------------------------------------------------------------- the tools


class SandboxTools:
    """State shared by the tools: settings, the runner, the audit log, the concurrency slots."""

    def __init__(self, settings: Settings, runner: Runner, audit: AuditLog):
        self.settings = settings
        self.runner = runner
        self.audit = audit
        self.allowed = settings.allowed_modules()
        self.files = FileStore(settings.file_store_size, settings.file_ttl)
        # Bounds children running at once; the rest wait here without blocking the loop.
        self.slots = asyncio.Semaphore(settings.max_concurrency)
        self.rate = RateLimit(settings.rate_limit)
        self.sessions = Sessions(runner, audit, max_sessions=settings.max_sessions, ttl=settings.session_ttl,
                                 max_lifetime=settings.session_max_lifetime)
        # connections seen calling execute_code: those on a protocol before 2026-07-28 hear of
        # changed tools by a notification on the connection (newer ones listen on the bus)
        self.connections: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # connection -> protocol
        self.notifying: set[asyncio.Task] = set()
        self.registry = (upstreams.Registry(settings.tool_servers, settings.tool_result_max)
                         if settings.tool_servers else None)
        runner.tool_registry, runner.audit = self.registry, audit
        runner.tool_limits = tool_calls.Limits(budget=settings.tool_call_budget,
                                               call_timeout=settings.tool_call_timeout,
                                               max_result_bytes=settings.tool_result_max)

    # --- execute_code

    async def execute(self, code, timeout, capture_output, allowed_imports, memory_limit, use_container, files=None,
                      report_progress=None, session_id=None):
        """`report_progress(elapsed, total, message)`: called about once a second for runs
        longer than a second (a no-op unless the client sent a progressToken). With a
        `session_id`, the call runs in that session's process, after any call before it."""
        settings = self.settings
        execution_id = uuid.uuid4().hex
        seconds = memory = None
        imports = list(allowed_imports or [])
        try:
            seconds = check_timeout(timeout, settings)
            memory = check_memory_limit(memory_limit, settings)
            check_code_size(code, settings)
            files = check_input_files(files, code, settings)
            modules = narrow_imports(imports, self.allowed, settings)
            if use_container:
                self._check_every_layer()
            session = None
            if session_id is not None:
                session = self._session(session_id)
                memory = session.memory_limit  # the process's limit, set when the session was created
            wait = self.rate.admit()   # last: a call refused for its arguments is not counted
            if wait is not None:
                raise RequestRefused("rate_limited", rate_limit.refusal(settings.rate_limit, wait))
        except RequestRefused as refused:
            return self._refuse(refused, execution_id, code, imports, seconds, memory, use_container, session_id)

        request = ExecRequest(
            code=code,
            timeout=seconds,
            memory_limit=memory,
            allowed_modules=modules,
            restricted=settings.restricted_python,
            capture_output=capture_output,
            strict=use_container,
            execution_id=execution_id,
            **({"files": files} if files else {}),
            **({"tools": self.registry.listing()} if self.registry else {}),
        )
        audit_args = dict(
            code=code,
            profiles=list(settings.enabled_profiles),
            allowed_imports=imports,
            timeout=seconds,
            memory_limit=memory,
            use_container=use_container,
            session_id=session_id,
        )
        try:
            async with self._session_turn(session, seconds), self.slots:
                raw = await self._run_with_progress(request, report_progress, session_id)
        except RequestRefused as refused:
            return self._refuse(refused, execution_id, code, imports, seconds, memory, use_container, session_id)
        except LayerUnavailable as exc:
            refused = RequestRefused("isolation_unavailable", describe_missing_layers(exc.missing), "missing_layer")
            return self._refuse(refused, execution_id, code, imports, seconds, memory, use_container, session_id)
        except Exception:
            logger.exception("runner failed on execution %s", execution_id)
            raw = outcome.compose(outcome.ChildOutcome(
                execution_id=execution_id, failure="the sandbox failed to run this request; see the server log"))
        except BaseException:
            # Cancelled (notifications/cancelled, client gone, shutdown): the runner
            # has killed the child on its way out; record it and let it propagate.
            self.audit.execution(execution_id=execution_id, result=None, outcome="cancelled", **audit_args)
            raise
        sizes = {name: raw.get(f"{name}_bytes") for name in ("stdout", "stderr", "result")} if isinstance(raw, dict) else {}
        file_blocks = []
        if isinstance(raw, dict) and raw.get("files"):
            raw = dict(raw)
            file_blocks = answers.file_blocks(raw, self.files)
        if session is not None and isinstance(raw, dict):
            raw = self._after_session_call(session, raw)
        result, images = normalize_execution(raw, execution_id)
        if not capture_output:
            result["stdout"] = result["stderr"] = ""
            result["stdout_truncated"] = result["stderr_truncated"] = False
        self.audit.execution(execution_id=result["execution_id"], result=result, output_sizes=sizes, **audit_args)
        blocks = answers.image_blocks(images, self.files) + file_blocks
        result_repr = raw.get("result_repr") if isinstance(raw, dict) else None
        return tool_result(result, is_error=not result["success"], text=self.answer_text(result, result_repr),
                           blocks=blocks)

    # --- sessions

    def _session(self, session_id):
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestRefused("session_not_found",
                                 session_gone_message(self.settings, self.sessions.end_cause(session_id)))
        return session

    @asynccontextmanager
    async def _session_turn(self, session, seconds: float):
        """One call at a time per session: wait for the one before, within this call's timeout."""
        if session is None:
            yield
            return
        try:
            await asyncio.wait_for(session.lock.acquire(), seconds)
        except asyncio.TimeoutError:
            raise RequestRefused("timeout", f"the session was busy with another call for this call's whole "
                                            f"timeout ({seconds:g} s): calls in one session run one at a "
                                            "time; wait for the other call, or pass a longer timeout") from None
        try:
            if self.sessions.get(session.id) is not session:  # ended while this call waited
                raise RequestRefused("session_not_found",
                                     session_gone_message(self.settings, self.sessions.end_cause(session.id)))
            yield
        finally:
            session.lock.release()

    def _after_session_call(self, session, raw: dict) -> dict:
        raw = {**raw, "session_id": session.id}
        session.last_used = time.monotonic()
        if raw.get("session_ended"):
            cause = f"{raw.get('error_type')}: {raw.get('error')}"[:300]
            self.sessions.ended_by_call(session.id, cause)
        return raw

    async def create_session(self, memory_limit) -> CallToolResult:
        try:
            memory = check_memory_limit(memory_limit, self.settings)
            session = await self.sessions.create(memory)
        except RequestRefused as refused:
            return tool_result({"error": str(refused), "error_type": refused.error_type}, is_error=True,
                               text=str(refused))
        except SessionRefused as refused:
            return tool_result({"error": str(refused), "error_type": "invalid_argument"}, is_error=True,
                               text=str(refused))
        s = self.settings
        created = SessionCreated(
            session_id=session.id,
            expires_in=round(session.expires_in(s.session_ttl, s.session_max_lifetime, time.monotonic()), 1),
            idle_ttl=s.session_ttl, max_lifetime=s.session_max_lifetime, profiles=list(s.enabled_profiles),
            limits={"memory_limit": format_size(memory), "memory_limit_bytes": memory,
                    "timeout": {"default": s.timeout, "max": s.max_timeout}},
        ).model_dump(mode="json")
        return tool_result(created)

    async def close_session(self, session_id: str) -> CallToolResult:
        if await self.sessions.close(session_id):
            return tool_result(SessionClosed(closed=True, message="the session and its state are gone").model_dump())
        return tool_result({"closed": False, "message": "unknown or expired session: nothing to close",
                            "error_type": "session_not_found"}, is_error=True,
                           text="unknown or expired session: nothing to close")

    async def _run_with_progress(self, request: ExecRequest, report_progress, session_id=None) -> dict:
        if report_progress is None:
            return await self.runner.execute(request, session=session_id)
        last = {"line": None}
        started = time.monotonic()

        async def tick() -> None:
            while True:
                await asyncio.sleep(PROGRESS_INTERVAL)
                elapsed = time.monotonic() - started
                message = f"{elapsed:.0f} s of {request.timeout:g} s"
                if last["line"]:
                    message += f": {last['line']}"
                await report_progress(round(elapsed, 1), float(request.timeout), message)

        ticker = asyncio.ensure_future(tick())
        try:
            return await self.runner.execute(request, on_output=lambda line: last.update(line=line),
                                             session=session_id)
        finally:
            ticker.cancel()

    def _check_every_layer(self) -> None:
        missing = [(name, info.get("detail", "")) for name, info in self.runner.layers().items() if not info.get("active")]
        if missing:
            raise RequestRefused("isolation_unavailable", describe_missing_layers(missing), "missing_layer")

    def _refuse(self, refused, execution_id, code, imports, seconds, memory, use_container, session_id=None):
        result = ExecutionResult(
            success=False, execution_id=execution_id, error=str(refused), error_type=refused.error_type,
            session_id=session_id,
        ).model_dump(mode="json")
        self.audit.execution(
            execution_id=execution_id, code=code, profiles=list(self.settings.enabled_profiles),
            allowed_imports=imports, timeout=seconds, memory_limit=memory, use_container=use_container, result=result,
            session_id=session_id,
        )
        if refused.security_kind:
            self.audit.security(refused.security_kind, str(refused), execution_id)
        return tool_result(result, is_error=True, text=self.answer_text(result))

    def answer_text(self, result: dict, result_repr: str | None = None) -> str:
        return answers.execution_text(result, result_repr, max_timeout=self.settings.max_timeout,
                                      max_memory=self.settings.max_memory_limit)

    # --- validate_code

    async def validate(self, code):
        execution_id = uuid.uuid4().hex
        profiles_on = list(self.settings.enabled_profiles)
        try:
            check_code_size(code, self.settings)
        except RequestRefused as refused:
            result = refused_validation(code, str(refused))
            self.audit.validation(execution_id=execution_id, code=code, profiles=profiles_on, result=result,
                                  outcome="error")
            return tool_result(result, is_error=True)
        try:
            async with self.slots:
                raw = await self.runner.validate(
                    code, allowed_modules=self.allowed, restricted=self.settings.restricted_python,
                    tools=self.registry.listing() if self.registry else None,
                )
            result = ValidationResult.model_validate(raw).model_dump(mode="json")
            verdict = "error" if raw.get("error_type") else "success"  # the runner's internal_error
        except Exception as exc:
            if not isinstance(exc, ValidationError):  # a malformed answer is reported, not a crash
                logger.exception("runner failed to validate %s", execution_id)
            result = refused_validation(code, "the sandbox failed to validate this code; see the server log")
            verdict = "error"
        except BaseException:
            self.audit.validation(execution_id=execution_id, code=code, profiles=profiles_on, result=None,
                                  outcome="cancelled")
            raise
        self.audit.validation(execution_id=execution_id, code=code, profiles=profiles_on, result=result,
                              outcome=verdict)
        return tool_result(result, is_error=verdict != "success")

    # --- get_sandbox_info

    def info(self) -> dict:
        s = self.settings
        profile_info = {}
        for name in profiles.PROFILES:
            profile_info[name] = ProfileInfo(
                enabled=name in s.enabled_profiles,
                switch=PROFILE_SWITCHES.get(name),
                modules=sorted(profiles.profile_modules_available(name)),
                detail=network_note(s) if name == "network" else None,
            )
        layers = {name: LayerInfo(active=bool(v.get("active")), detail=str(v.get("detail", "")))
                  for name, v in self.runner.layers().items()}
        return SandboxInfo(
            server=ServerInfo(name=SERVER_NAME, version=__version__),
            restricted_python=s.restricted_python,
            python_layer=profiles.python_layer_claim(s.enabled_profiles, s.restricted_python,
                                                      s.extra_imports),
            weakened_by=[WeakeningInfo(**{**item, "value": str(item["value"])}) for item in s.weakening],
            profiles=profile_info,
            extra_imports=list(s.extra_imports),
            allowed_modules=sorted(self.allowed),
            module_subsets={name: registry.shown_names(name) for name in registry.SUBSETS
                            if s.restricted_python and not profiles.permits(name, self.allowed)},
            limits=Limits(
                timeout=TimeoutLimits(default=s.timeout, max=s.max_timeout),
                memory_limit=MemoryLimits(
                    default=format_size(s.default_memory_limit), default_bytes=s.default_memory_limit,
                    min_bytes=MIN_MEMORY_LIMIT, max=format_size(s.max_memory_limit), max_bytes=s.max_memory_limit,
                ),
                max_output_size=s.max_output_size,
                max_code_size=s.max_code_size,
                max_concurrency=s.max_concurrency,
            ),
            layers=layers,
            sessions=SessionLimits(open=len(self.sessions.open), max_sessions=s.max_sessions,
                                   idle_ttl=s.session_ttl, max_lifetime=s.session_max_lifetime),
            tool_servers=self.registry.status() if self.registry else [],
            tool_stubs=self.registry.stubs() if self.registry else [],
            strongest_isolation_available=bool(layers) and all(layer.active for layer in layers.values()),
            rules=descriptions.rules_detail() if s.restricted_python else None,
        ).model_dump(mode="json")


UPSTREAM_WAIT = 15.0   # seconds start-up waits for the tool servers' first connection


# What MCP assumes of a tool that gives no hint: not read-only, destructive, not
# idempotent, open to the world.
HINT_DEFAULTS = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False, "open_world_hint": True}


def hints(*, read_only: bool, destructive: bool, idempotent: bool, open_world: bool) -> ToolAnnotations:
    """The tool's annotations, each written only where it says more than MCP's default
    (and destructive/idempotent only for a tool that writes: MCP reads them for no other)."""
    given = {"read_only_hint": read_only, "open_world_hint": open_world,
             **({} if read_only else {"destructive_hint": destructive, "idempotent_hint": idempotent})}
    return ToolAnnotations(**{name: value for name, value in given.items() if value != HINT_DEFAULTS[name]})


def _publish_compactly(tool, settings: Settings) -> None:
    """The schemas tools/list shows, without the prose and titles pydantic writes (the
    models stay what answers are checked against), and without the arguments this
    server's settings refuse (files without the filesystem profile, session_id without
    sessions): a model is not offered what it cannot use."""
    offered = {"files": settings.enable_filesystem, "session_id": settings.max_sessions > 0}
    tool.parameters = published_schemas.input_schema(tool.parameters, without=[n for n, on in offered.items() if not on])
    tool.fn_metadata.output_schema = published_schemas.output_schema(tool.fn_metadata.output_schema)
    tool.__dict__.pop("output_schema", None)   # a cached copy of the one above


def _describe_tools(server, tools: "SandboxTools") -> None:
    """execute_code's description once the sandbox is up (does it have a private /tmp
    for scratch files?), with the tool stubs known once the upstreams answered."""
    tool = server._tool_manager.get_tool("execute_code")
    if tool is not None:
        stubs = tools.registry.stubs() if tools.registry is not None else None
        scratch = tools.runner.layers().get("namespaces", {}).get("active", False)
        tool.description = execute_description(tools.settings, stubs, scratch=scratch)


def _tools_changed(server, tools: "SandboxTools", bus) -> None:
    """An upstream's tools changed (listed anew, connected, lost): execute_code's
    description follows, and our clients hear of it: on a subscriptions/listen stream
    (MCP 2026-07-28), or by notifications/tools/list_changed on their connection."""
    _describe_tools(server, tools)
    sends = [bus.publish(ToolsListChanged())]
    sends += [_notify_quietly(connection) for connection, version in list(tools.connections.items())
              if version not in MODERN_PROTOCOL_VERSIONS]
    for send in sends:
        task = asyncio.ensure_future(send)
        tools.notifying.add(task)   # a task nobody holds may be collected before it ran
        task.add_done_callback(tools.notifying.discard)


async def _notify_quietly(connection) -> None:
    """A change notification is advisory: a client gone meanwhile is no error."""
    with contextlib.suppress(Exception):
        await connection.send_tool_list_changed()


def _connection_of(ctx: Context):
    """The client's connection. The SDK makes a ServerSession per request, which is
    gone once the call answered; its connection lives as long as the client does
    (where an SDK has no such split, the session is the connection)."""
    return getattr(ctx.session, "_connection", ctx.session)


def session_gone_message(s: Settings, cause: str | None = None) -> str:
    """`cause`: why this handle's session ended, when this server still remembers."""
    if cause is not None:
        return f"this session has ended ({cause}); its state is gone: create a new one with create_session"
    return ("unknown or expired session: create a new one with create_session (a session ends when closed, "
            f"after {s.session_ttl:g} s without a call, after {s.session_max_lifetime:g} s at most, or when a "
            "call in it times out, runs out of memory or crashes; its state is then gone)")


def normalize_execution(raw: object, execution_id: str) -> tuple[dict, list[dict]]:
    """Keep the runner's answer to the declared schema: known keys, known error types.
    Figures come back apart, to become image content blocks rather than base64 in the data."""
    if not isinstance(raw, dict):
        raw = {"success": False, "error": "the sandbox returned no result", "error_type": "internal_error"}
    raw = dict(raw)
    # the server's id, not the runner's internal one: the audit log's records of one
    # execution (the execution, its tool calls, its refusals) must carry the same id
    raw["execution_id"] = execution_id
    if raw.get("error_type") is not None and raw.get("error_type") not in _ERROR_TYPES:
        raw["error_type"] = "internal_error"
    if not raw.get("success") and raw.get("error_type") is None:
        raw["error_type"] = "internal_error"
    images = [
        image for image in raw.pop("images", None) or ()
        if isinstance(image, dict) and isinstance(image.get("base64"), str)
        and image.get("mime_type") == "image/png"  # checked for the PNG signature by the fork server
    ]
    raw["images"] = [{"mime_type": image["mime_type"]} for image in images]
    try:
        return ExecutionResult.model_validate(raw).model_dump(mode="json"), images
    except ValidationError:
        logger.error("runner result for %s does not match the schema; reporting an internal error", execution_id)
        return ExecutionResult(
            success=False, execution_id=str(raw.get("execution_id")), error_type="internal_error",
            error="the sandbox returned a malformed result",
        ).model_dump(mode="json"), []


def refused_validation(code: str, message: str) -> dict:
    # Counting characters and newlines is not parsing: safe to do here.
    return ValidationResult(
        validation=Validation(valid=False, errors=[ValidationError_(line=None, message=message)], message=message),
        analysis=CodeAnalysis(line_count=code.count("\n") + 1, character_count=len(code), estimated_complexity="unknown"),
        recommendations=[],
    ).model_dump(mode="json")


def tool_result(data: dict, *, is_error: bool = False, text: str | None = None, blocks: list = ()) -> CallToolResult:
    """Structured content plus a text block (`text`, else the same dict as JSON; terminal
    controls written as escapes) and the run's figures and files as further content blocks."""
    text = json.dumps(data, ensure_ascii=False) if text is None else text
    content: list = [TextContent(type="text", text=terminal_safe(text))]
    return CallToolResult(content=content + list(blocks), structured_content=data, is_error=is_error)


# ----------------------------------------------------------------------------- assembly


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


def build_server(settings: Settings, runner: Runner, audit: AuditLog | None = None) -> MCPServer:
    """An MCPServer whose lifespan starts the runner and always closes it (killing every child)."""
    tools = SandboxTools(settings, runner, audit or AuditLog(settings.audit_log))

    @asynccontextmanager
    async def lifespan(_server):
        await runner.start()
        if tools.registry is not None:
            tools.registry.listeners.append(lambda stubs: _tools_changed(_server, tools, bus))
            tools.registry.start()
            await tools.registry.wait_connected(UPSTREAM_WAIT)
        _describe_tools(_server, tools)
        sweeper = asyncio.ensure_future(tools.sessions.run_sweeper())
        try:
            log_layers(runner.layers())
            logger.info(
                "ready: profiles %s, restricted python %s, concurrency %d",
                ",".join(settings.enabled_profiles), "on" if settings.restricted_python else "OFF",
                settings.max_concurrency,
            )
            yield {}
        finally:
            sweeper.cancel()
            await tools.sessions.close_all()
            if tools.registry is not None:
                await tools.registry.close()
            await runner.aclose()

    bus = InMemorySubscriptionBus()   # subscriptions/listen: tools/list_changed reaches our clients
    server = MCPServer(
        SERVER_NAME,
        subscriptions=bus,
        version=__version__,
        instructions=(
            "Runs Python snippets in a hardened, isolated child process (namespaces, seccomp, Landlock, "
            "rlimits, RestrictedPython). Each call starts from a clean state, unless it passes the "
            "session_id of a session made with create_session. Call get_sandbox_info to see the allowed "
            "modules and limits."
        ),
        lifespan=lifespan,
        log_level=settings.log_level.upper(),
    )
    _register_tools(server, tools)
    return server


def _register_tools(server: MCPServer, tools: SandboxTools) -> None:
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
            dict[Annotated[str, Field(max_length=255)], str | InputFile] | None,
            Field(description="files written before the run"),
        ] = None,
        session_id: Annotated[str | None, Field(max_length=100, description="from create_session")] = None,
        ctx: Context = None,
    ) -> Annotated[CallToolResult, ExecutionResult]:
        if ctx is not None and tools.registry is not None:
            with contextlib.suppress(Exception):
                tools.connections[_connection_of(ctx)] = ctx.request_context.protocol_version
        return await tools.execute(code, timeout, capture_output, allowed_imports, memory_limit, use_container,
                                   files and {name: _file_content(value) for name, value in files.items()},
                                   report_progress=ctx.report_progress if ctx is not None else None,
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
        session_id: Annotated[str, Field(max_length=100, description="the handle create_session returned")],
    ) -> Annotated[CallToolResult, SessionClosed]:
        return await tools.close_session(session_id)

    async def get_sandbox_info(
        detail: Annotated[bool, Field(description="every field, as JSON text")] = False,
    ) -> Annotated[CallToolResult, SandboxInfo]:
        info = tools.info()
        return tool_result(info, text=None if detail else info_summary.summary(info))

    server.add_tool(
        execute_code,
        description=execute_description(s),
        title="Run Python",
        annotations=hints(read_only=False, destructive=False, idempotent=False, open_world=s.enable_network),
    )
    server.add_tool(
        create_session,
        description=descriptions.session_description(s),
        title="Start a session",
        annotations=hints(read_only=False, destructive=False, idempotent=False, open_world=False),
    )
    server.add_tool(
        close_session,
        description=descriptions.CLOSE_SESSION,
        title="End a session",
        annotations=hints(read_only=False, destructive=True, idempotent=True, open_world=False),
    )
    server.add_tool(
        validate_code,
        description=descriptions.VALIDATE_CODE,
        title="Check Python",
        annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False),
    )
    server.add_tool(
        get_sandbox_info,
        description=descriptions.SANDBOX_INFO,
        title="Describe the sandbox",
        annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False),
    )

    for name in ("execute_code", "create_session", "close_session", "validate_code", "get_sandbox_info"):
        _publish_compactly(server._tool_manager.get_tool(name), s)

    @server.resource(URI_PREFIX + "{token}", name="run-file",
                     description=f"a file a run left under out/, kept {s.file_ttl:g} s after the run")
    async def run_file(token: str) -> str | bytes:
        """A file served from the store by the token the server minted (never a path)."""
        try:
            stored = tools.files.get(token)
        except FileExpired as exc:
            raise ResourceError(str(exc)) from None
        text = answers.plain_text(stored.data) if stored.mime_type in answers.TEXT_TYPES.values() else None
        return stored.data if text is None else text

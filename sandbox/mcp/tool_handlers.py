"""The five tools' work, apart from how the SDK registers them: each call's checks, its
runner request, its audit record and its answer (structured content plus content blocks).

No untrusted byte is parsed here: the code is only measured (len, sha256) and handed to
the runner, which compiles and runs it in a hardened child. Refusals and failed executions
are tool results with isError=true, never protocol errors.
"""

import asyncio
import logging
import time
import uuid
from contextlib import asynccontextmanager

from mcp.types import CallToolResult
from pydantic import ValidationError

from sandbox import __version__, profiles
from sandbox.codemode import tool_calls, upstreams
from sandbox.config import MIN_MEMORY_LIMIT, PROFILE_SWITCHES, Settings
from sandbox.forkserver import child_report
from sandbox.forkserver.runner import ExecRequest, LayerUnavailable, Runner
from sandbox.limits_parse import format_size
from sandbox.mcp import content_blocks, descriptions, rate_limit
from sandbox.mcp.audit import AuditLog
from sandbox.mcp.content_blocks import tool_result
from sandbox.mcp.file_store import FileStore
from sandbox.mcp.rate_limit import RateLimit
from sandbox.mcp.request_checks import (RequestRefused, check_code_size, check_input_files, check_memory_limit,
                                        check_timeout, describe_missing_layers, narrow_imports,
                                        session_gone_message)
from sandbox.mcp.sessions import SessionRefused, Sessions
from sandbox.mcp.tool_models import (ExecutionResult, LayerInfo, Limits, MemoryLimits, MountInfo, ProfileInfo,
                                     SandboxInfo, ServerInfo, SessionClosed, SessionCreated, SessionLimits, TimeoutLimits,
                                     ValidationResult, WeakeningInfo, normalize_execution, refused_validation)
from sandbox.restricted.subsets import registry

logger = logging.getLogger(__name__)

SERVER_NAME = "mcp-server-python-sandbox"
PROGRESS_INTERVAL = 1.0  # seconds between progress notifications (the first after one second)


class SandboxTools:
    """State shared by the tools: settings, the runner, the audit log, the concurrency slots.
    `proxy_url`: where a snippet finds the egress proxy, as get_sandbox_info tells it."""

    def __init__(self, settings: Settings, runner: Runner, audit: AuditLog, *, proxy_url: str):
        self.settings = settings
        self.proxy_url = proxy_url
        self.runner = runner
        self.audit = audit
        self.allowed = settings.allowed_modules()
        self.files = FileStore(settings.file_store_size, settings.file_ttl)
        # Bounds children running at once; the rest wait here without blocking the loop.
        self.slots = asyncio.Semaphore(settings.max_concurrency)
        self.rate = RateLimit(settings.rate_limit)
        self.sessions = Sessions(runner, audit, max_sessions=settings.max_sessions, ttl=settings.session_ttl,
                                 max_lifetime=settings.session_max_lifetime)
        self.registry = (upstreams.Registry(settings.tool_servers, settings.tool_result_max)
                         if settings.tool_servers else None)
        self.tool_limits = tool_calls.Limits(budget=settings.tool_call_budget,
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
            files = check_input_files(files, settings, self.files)
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
            raw = child_report.compose(child_report.ChildOutcome(
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
            file_blocks = content_blocks.file_blocks(raw, self.files)
        if session is not None and isinstance(raw, dict):
            raw = self._after_session_call(session, raw)
        result, images = normalize_execution(raw, execution_id)
        if not capture_output:
            result["stdout"] = result["stderr"] = ""
            result["stdout_truncated"] = result["stderr_truncated"] = False
        self.audit.execution(execution_id=result["execution_id"], result=result, output_sizes=sizes, **audit_args)
        blocks = content_blocks.image_blocks(images, self.files) + file_blocks
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
        calls = (tool_calls.ToolSession(self.registry, self.tool_limits, self.audit, request.execution_id)
                 if request.tools else None)
        if report_progress is None:
            return await self.runner.execute(request, session=session_id, tool_session=calls)
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
                                             session=session_id, tool_session=calls)
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
        return content_blocks.execution_text(result, result_repr, max_timeout=self.settings.max_timeout,
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
                detail=descriptions.network_note(s, self.proxy_url) if name == "network" else None,
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
                max_input_size=s.max_input_size,
                max_concurrency=s.max_concurrency,
            ),
            mounts=[MountInfo(path=m.sandbox, mode=m.mode) for m in s.mounts],
            layers=layers,
            sessions=SessionLimits(open=len(self.sessions.open), max_sessions=s.max_sessions,
                                   idle_ttl=s.session_ttl, max_lifetime=s.session_max_lifetime),
            tool_servers=self.registry.status() if self.registry else [],
            tool_stubs=self.registry.stubs() if self.registry else [],
            strongest_isolation_available=bool(layers) and all(layer.active for layer in layers.values()),
            rules=descriptions.rules_detail() if s.restricted_python else None,
        ).model_dump(mode="json")

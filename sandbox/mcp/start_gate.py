"""Answer `initialize` at once, start the sandbox behind it.

A client gives a server a few seconds to answer `initialize`; the fork server takes longer
with the data-science profile (it imports numpy, pandas and the rest once, so that no child
pays for them). So the start runs as a task beside the transport, and the requests that need
it (tools/list: the tools' descriptions follow the sandbox's layers; tools/call) wait for it,
telling a client that sent a progressToken what they wait for. A start that fails leaves the
answers a failed start always gives (config_failure): the tools carry the problem, every call
answers with it.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable

from sandbox.forkserver.runner import LayerUnavailable
from sandbox.mcp.config_failure import build_failed_server, start_problem

NOTICE_INTERVAL = 1.0                 # seconds between progress notifications while a request waits
GATED_METHODS = ("tools/list", "tools/call")

# how long the request being handled waited for the start (its progress counts on from there)
_waited: contextvars.ContextVar[float] = contextvars.ContextVar("waited_for_start", default=0.0)


def waited_for_start() -> float:
    """Seconds the current request waited for the sandbox to start."""
    return _waited.get()


class StartGate:
    """`start`: the sandbox's start (the runner, the tool servers); `what`: what it does,
    as a waiting request's progress says it; `on_failure(exc)`: told once, when it fails."""

    def __init__(self, start: Callable[[], Awaitable[None]], what: str,
                 on_failure: Callable[[BaseException], None] | None = None):
        self._start = start
        self.what = what
        self._on_failure = on_failure
        self._task: asyncio.Task | None = None
        self.failure: BaseException | None = None
        self._failed_server = None     # the low-level server of the failed start's answers

    def begin(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        try:
            await self._start()
        except Exception as exc:  # noqa: BLE001 - every failed start is told to the client
            self.failure = exc
            self._failed_server = build_failed_server(start_failure_text(exc), start_problem)._lowlevel_server
            if self._on_failure is not None:
                self._on_failure(exc)

    @property
    def ready(self) -> bool:
        return self._task is not None and self._task.done() and self.failure is None

    async def wait(self, report_progress=None) -> None:
        """Until the start has ended (either way); `report_progress(progress, total, message)`
        about once a second meanwhile."""
        began = time.monotonic()
        while not self._task.done():
            await asyncio.wait({self._task}, timeout=NOTICE_INTERVAL)
            if not self._task.done() and report_progress is not None:
                waited = time.monotonic() - began
                await report_progress(round(waited, 1), None,
                                      f"waiting {waited:.0f} s for the sandbox to start ({self.what}); "
                                      "this request runs as soon as it is ready")
        _waited.set(time.monotonic() - began)

    async def end(self, *, wait: bool) -> None:
        """At shutdown: let a start under way finish (`wait`, so that its failure is still
        told), or cancel it."""
        if self._task is None or self._task.done():
            return
        if not wait:
            self._task.cancel()
        await asyncio.wait({self._task})

    def guard(self, lowlevel) -> None:
        """Make the low-level server's tools/list and tools/call wait for the start, and
        answer as the failed start's server does once it failed."""
        for method in GATED_METHODS:
            entry = lowlevel.get_request_handler(method)
            lowlevel.add_request_handler(method, entry.params_type, self._gated(method, entry.handler))

    def _gated(self, method: str, handler):
        async def gated(ctx, params):
            await self.wait(ctx.session.report_progress)
            if self._failed_server is not None:
                return await self._failed_server.get_request_handler(method).handler(ctx, params)
            return await handler(ctx, params)

        return gated


def start_failure_text(exc: BaseException) -> str:
    """What the client is told of a failed start."""
    if isinstance(exc, LayerUnavailable):
        missing = "; ".join(f"{layer} ({reason})" for layer, reason in exc.missing)
        return (f"SANDBOX_REQUIRE names isolation layers this host does not have: {missing}; run it on a host "
                "that has them, or leave them out of SANDBOX_REQUIRE")
    return str(exc) or type(exc).__name__

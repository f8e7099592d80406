"""Answer `initialize` at once, start the sandbox behind it.

A client gives a server a few seconds to answer `initialize`; the fork server takes longer
with the data-science profile (it imports numpy, pandas and the rest once, so that no child
pays for them). So the start runs as a task beside the transport, and the requests that need
it (tools/list: the tools' descriptions follow the sandbox's layers; tools/call) wait for it,
telling a client that sent a progressToken what they wait for. A start that fails leaves the
answers a failed start always gives (config_failure): the tools carry the problem, every call
answers with it. The wait is a middleware, the SDK's public way to wrap a request.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable

from sandbox.forkserver.runner import LayerUnavailable
from sandbox.mcp.config_failure import offer_the_problem, start_problem

NOTICE_INTERVAL = 1.0                 # seconds between progress notifications while a request waits
GATED_METHODS = ("tools/list", "tools/call")

# how long the request being handled waited for the start (its progress counts on from there)
_waited: contextvars.ContextVar[float] = contextvars.ContextVar("waited_for_start", default=0.0)


def waited_for_start() -> float:
    """Seconds the current request waited for the sandbox to start."""
    return _waited.get()


class StartGate:
    """`server`: the MCPServer whose requests wait; `start`: the sandbox's start (the
    runner, the tool servers); `what`: what it does, as a waiting request's progress says
    it; `on_failure(exc)`: told once, when it fails."""

    def __init__(self, server, start: Callable[[], Awaitable[None]], what: str,
                 on_failure: Callable[[BaseException], None] | None = None):
        self._server = server
        self._start = start
        self.what = what
        self._on_failure = on_failure
        self._task: asyncio.Task | None = None
        server.middleware.append(self._wait_for_the_start)

    def begin(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        try:
            await self._start()
        except Exception as exc:  # noqa: BLE001 - every failed start is told to the client
            offer_the_problem(self._server, start_problem(start_failure_text(exc)))
            if self._on_failure is not None:
                self._on_failure(exc)

    async def wait(self, report_progress=None) -> None:
        """Until the start has ended (either way); `report_progress(progress, total, message)`
        about once a second meanwhile."""
        began = time.monotonic()
        while self._task is not None and not self._task.done():
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

    async def _wait_for_the_start(self, ctx, call_next):
        """The middleware: a request that needs the sandbox waits for its start."""
        if ctx.method in GATED_METHODS and ctx.request_id is not None:
            await self.wait(ctx.session.report_progress)
        return await call_next(ctx)


def start_failure_text(exc: BaseException) -> str:
    """What the client is told of a failed start."""
    if isinstance(exc, LayerUnavailable):
        missing = "; ".join(f"{layer} ({reason})" for layer, reason in exc.missing)
        return (f"SANDBOX_REQUIRE names isolation layers this host does not have: {missing}; run it on a host "
                "that has them, or leave them out of SANDBOX_REQUIRE")
    return str(exc) or type(exc).__name__

"""A synchronous face for tests/mcp_client.py: one real MCP stdio session, run
in a background thread with its own event loop, so that session- and
module-scoped pytest fixtures (and hypothesis tests, and bench/soak.py) can
share one server and call its tools from ordinary synchronous code.

    server = SyncServer({"SANDBOX_TIMEOUT": "5"}, cwd="/some/dir")
    data, raw, elapsed = server.call("execute_code", {"code": "result = 1"})
    server.close()

`call` raises ServerGone when the session broke (the server died or closed the
pipe); `restart()` starts a fresh server with the same settings.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sys
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parents[1]
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

import mcp_client  # noqa: E402  (tests/mcp_client.py: the shared helper)
from sandbox import process_names  # noqa: E402
from mcp_client import structured  # noqa: E402,F401


@asynccontextmanager
async def open_watched_session(env, *, cwd=None, timeout=60.0, start_timeout=60.0, on_message=None):
    """tests/mcp_client.open_session plus a message handler: every transport-level
    fault (a line on the server's stdout that is not JSON-RPC) and every
    notification reaches `on_message`, so a test sees a corrupted channel."""
    import tempfile
    import uuid

    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    tag = uuid.uuid4().hex
    argv = mcp_client.server_command()
    params = StdioServerParameters(command=argv[0], args=argv[1:],
                                   env=mcp_client.server_env({**(env or {}), mcp_client.TAG_VARIABLE: tag}),
                                   cwd=str(cwd) if cwd else tempfile.gettempdir())

    async def handler(message):
        if on_message is not None:
            on_message(message)

    with tempfile.NamedTemporaryFile("w+", prefix="mcp-server-python-sandbox-stderr-", suffix=".log", delete=False) as errlog:
        stderr_path = errlog.name
        try:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=timeout, message_handler=handler) as session:
                    with anyio.fail_after(start_timeout):
                        await session.initialize()
                        listing = await session.list_tools()
                    server = mcp_client.SandboxServer(session=session, tag=tag, stderr_path=stderr_path)
                    server.tools = {tool.name: tool for tool in listing.tools}
                    server.pid = mcp_client.find_tagged_process(tag)
                    yield server
        finally:
            os.unlink(stderr_path)


class ServerGone(RuntimeError):
    """The MCP session is broken: the server died, hung past the deadline, or closed stdout."""


class SyncServer:
    def __init__(self, env: "dict[str, str] | None" = None, *, cwd: "str | None" = None,
                 request_timeout: float = 120.0, start_timeout: float = 120.0):
        self.env = dict(env or {})
        self.cwd = cwd
        self.request_timeout = request_timeout
        self.start_timeout = start_timeout
        self.restarts = 0
        self._start()

    # ---- life cycle ---------------------------------------------------------
    def _start(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: "asyncio.Event | None" = None
        self._error: "BaseException | None" = None
        self._finished = threading.Event()
        self.server = None
        self.broken = False
        self.wire_faults: list = []      # non-JSON-RPC lines and other transport faults
        self.notifications: list = []    # what the server sent besides answers
        self._thread = threading.Thread(target=self._run, name="mcp-session", daemon=True)
        self._thread.start()
        if not self._ready.wait(self.start_timeout + 10):
            raise ServerGone("the MCP server did not start in time")
        if self._error is not None:
            raise ServerGone(f"the MCP server did not start: {type(self._error).__name__}: {self._error}")

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._main())
        finally:
            self._finished.set()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        try:
            async with open_watched_session(self.env, cwd=self.cwd, timeout=self.request_timeout,
                                            start_timeout=self.start_timeout, on_message=self._on_message) as server:
                self.server = server
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - reported to the caller
            if not self._ready.is_set():
                self._error = exc
            self.broken = True
        finally:
            self._ready.set()

    def _on_message(self, message) -> None:
        if isinstance(message, Exception):
            self.wire_faults.append(f"{type(message).__name__}: {str(message)[:300]}")
        else:
            self.notifications.append(repr(message)[:300])

    @property
    def pid(self) -> "int | None":
        return self.server.pid if self.server else None

    def alive(self) -> bool:
        pid = self.pid
        return bool(pid) and not self.broken and mcp_client.state_of(pid) not in (None, "Z", "X")

    def stderr_text(self) -> str:
        try:
            return self.server.stderr_text()
        except Exception:  # noqa: BLE001
            return ""

    def close(self, timeout: float = 20.0) -> None:
        if self._stop is not None and not self._finished.is_set():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._finished.wait(timeout)
        self._thread.join(timeout)
        if not self._loop.is_closed() and self._finished.is_set():
            self._loop.close()

    def kill_and_close(self) -> None:
        """For a server that misbehaves: SIGKILL it, then unwind the session."""
        pid = self.pid
        if pid and mcp_client.state_of(pid) not in (None, "Z", "X"):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        self.close(timeout=10)

    def restart(self) -> None:
        self.kill_and_close() if not self.alive() else self.close()
        self.restarts += 1
        self._start()

    # ---- calls --------------------------------------------------------------
    def call(self, name: str, arguments: "dict | None" = None, timeout: "float | None" = None):
        """(data, CallToolResult, elapsed seconds). An MCPError (a JSON-RPC error
        answer) propagates as is; a broken session raises ServerGone."""
        if self.broken or self.server is None:
            raise ServerGone("the MCP session is already broken")
        timeout = timeout or self.request_timeout
        started = time.monotonic()
        future = asyncio.run_coroutine_threadsafe(self.server.call(name, arguments or {}, timeout=timeout),
                                                  self._loop)
        try:
            data, result = future.result(timeout + 15)
        except concurrent.futures.TimeoutError:
            future.cancel()
            self.broken = True
            raise ServerGone(f"no answer to {name} within {timeout + 15:g} s") from None
        except Exception as exc:
            if _is_protocol_error(exc):
                raise
            if self.alive() and not _is_transport_error(exc):
                raise  # the client itself refused (e.g. it cannot serialize the arguments)
            self.broken = True
            raise ServerGone(f"{name} failed: {type(exc).__name__}: {exc}") from exc
        return data, result, time.monotonic() - started

    def execute(self, code: str, client_timeout: "float | None" = None, **arguments):
        """execute_code; returns (data, elapsed)."""
        data, _result, elapsed = self.call("execute_code", {"code": code, **arguments}, timeout=client_timeout)
        return data, elapsed

    def healthy(self, timeout: float = 60.0) -> bool:
        """The server answers an ordinary execution correctly."""
        try:
            data, _r, _e = self.call("execute_code", {"code": "result = 6 * 7", "timeout": 2}, timeout=timeout)
        except Exception:  # noqa: BLE001
            return False
        return bool(data) and data.get("success") is True and data.get("result") == 42


def _is_transport_error(exc: BaseException) -> bool:
    import anyio
    return isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream,
                            ConnectionError, EOFError, OSError))


def _is_protocol_error(exc: BaseException) -> bool:
    """A JSON-RPC error answer (the server is fine, it refused the request)."""
    try:
        from mcp.shared.exceptions import MCPError
    except ImportError:  # pragma: no cover
        return False
    return isinstance(exc, MCPError)


# ---- /proc helpers shared by the soak and death tests --------------------------------

def children_of(pid: int) -> "list[int]":
    return [p for p in mcp_client.all_pids() if mcp_client.parent_of(p) == pid]


def start_time(pid: int) -> "int | None":
    fields = mcp_client._stat(pid)
    return int(fields[19]) if fields else None


FORK_SERVER_TITLE = process_names.PREFIX + process_names.FORK_SERVER


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def fork_server_of(server_pid: int) -> "int | None":
    """The fork server: the server's child named so (sandbox/process_names.py)."""
    for child in children_of(server_pid):
        if cmdline(child).startswith(FORK_SERVER_TITLE):
            return child
    return None


def all_descendants(pid: int) -> "list[int]":
    """Every process below pid, zombies included."""
    children: "dict[int, list[int]]" = {}
    for candidate in mcp_client.all_pids():
        parent = mcp_client.parent_of(candidate)
        if parent is not None:
            children.setdefault(parent, []).append(candidate)
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return found


def process_stats(pid: "int | None") -> dict:
    """fds, threads, direct children, zombie descendants, descendants and RSS of pid;
    children and descendants are the sandbox processes, the fork server's cloner
    is counted apart (cloners)."""
    if not pid or mcp_client.state_of(pid) is None:
        return {"pid": pid, "alive": False}
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        fds = None
    threads = rss_kib = None
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("Threads:"):
                    threads = int(line.split()[1])
                elif line.startswith("VmRSS:"):
                    rss_kib = int(line.split()[1])
    except OSError:
        pass
    below = all_descendants(pid)
    return {
        "pid": pid,
        "alive": True,
        "fds": fds,
        "threads": threads,
        "children": len(mcp_client.sandboxes(children_of(pid))),
        "descendants": len(mcp_client.sandboxes(below)),
        "cloners": len(below) - len(mcp_client.sandboxes(below)),
        "zombies": sum(1 for p in below if mcp_client.state_of(p) == "Z"),
        "rss_kib": rss_kib,
    }

"""Test helper: start the sandbox MCP server as a subprocess and talk to it.

Two ways in:

* `open_session(...)`: a real `mcp` ClientSession over stdio, the way a desktop
  client connects. Works from the checkout (`bin/mcp-server-python-sandbox`), from a `.pyz`,
  or from any command line.
* `RawServer(...)`: bare JSON-RPC lines over the server's pipes, for tests that
  must see (or break) the wire itself.

Plus /proc helpers to find the server's process tree, so tests can prove that
no sandbox child outlives its request.

Usage:
    async with open_session({"SANDBOX_MAX_CONCURRENCY": "4"}) as server:
        data, result = await server.call("execute_code", {"code": "result = 1"})
"""

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.from_thread import start_blocking_portal
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from sandbox.forkserver.cloner import NAME as CLONER_NAME

REPO_ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = REPO_ROOT / "bin" / "mcp-server-python-sandbox"
TAG_VARIABLE = "MCP_TEST_SERVER_TAG"  # marks the server process so /proc can find it


def server_command(pyz: "str | Path | None" = None, python: str = sys.executable) -> list[str]:
    """The command that starts the server: the checkout's launcher, or a .pyz."""
    return [python, str(pyz)] if pyz else [python, str(LAUNCHER)]


def server_env(overrides: "dict[str, str] | None" = None) -> dict[str, str]:
    """This process's environment without any SANDBOX_* setting, plus `overrides`.

    The test runner's own SANDBOX_* variables never leak into a server under test, and
    SANDBOX_ENV_FILE points at an empty file unless a test sets it, so a developer's
    ./.env cannot change a test's outcome.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDBOX_")}
    env["SANDBOX_ENV_FILE"] = os.devnull
    if os.environ.get("SANDBOX_TEST_POOL_SIZE"):  # `make test` runs the suites with the pool on and off
        env["SANDBOX_POOL_SIZE"] = os.environ["SANDBOX_TEST_POOL_SIZE"]
    env.update(overrides or {})
    return env


# ----------------------------------------------------------------------------- MCP session


@dataclass
class SandboxServer:
    """An open MCP session with a running server."""

    session: ClientSession
    tag: str
    stderr_path: str
    pid: "int | None" = None
    tools: dict = field(default_factory=dict)

    async def call(self, name: str, arguments: "dict | None" = None, timeout: "float | None" = None):
        """Call a tool; returns (structured dict or parsed text JSON, CallToolResult)."""
        result = await self.session.call_tool(name, arguments or {}, read_timeout_seconds=timeout)
        return structured(result), result

    def stderr_text(self) -> str:
        with open(self.stderr_path, encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def descendants(self) -> list[int]:
        return descendants(self.pid) if self.pid else []


def structured(result) -> "dict | None":
    """The structured content of a CallToolResult, else its first text block as JSON."""
    if result.structured_content is not None:
        return result.structured_content
    for block in result.content:
        if getattr(block, "type", None) == "text":
            try:
                return json.loads(block.text)
            except ValueError:
                return None
    return None


def result_text(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


@asynccontextmanager
async def open_session(
    env: "dict[str, str] | None" = None,
    *,
    pyz: "str | Path | None" = None,
    command: "list[str] | None" = None,
    cwd: "str | Path | None" = None,
    timeout: float = 120.0,
    start_timeout: float = 120.0,
):
    """Start the server, initialize an MCP session and list its tools.

    env: SANDBOX_* overrides (see server_env). pyz: run this .pyz instead of the
    checkout. command: any other command line. timeout: per-request read timeout.
    """
    tag = uuid.uuid4().hex
    argv = command or server_command(pyz)
    params = StdioServerParameters(
        command=argv[0],
        args=argv[1:],
        env=server_env({**(env or {}), TAG_VARIABLE: tag}),
        cwd=str(cwd) if cwd else tempfile.gettempdir(),
    )
    with tempfile.NamedTemporaryFile("w+", prefix="mcp-server-python-sandbox-stderr-", suffix=".log", delete=False) as errlog:
        stderr_path = errlog.name
        try:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=timeout) as session:
                    with anyio.fail_after(start_timeout):
                        await session.initialize()
                        listing = await session.list_tools()
                    server = SandboxServer(session=session, tag=tag, stderr_path=stderr_path)
                    server.tools = {tool.name: tool for tool in listing.tools}
                    server.pid = find_tagged_process(tag)
                    yield server
        finally:
            if os.environ.get("SANDBOX_MCP_TEST_KEEP_STDERR") != "1":
                os.unlink(stderr_path)


class BlockingServer:
    """A SandboxServer driven from synchronous code (pytest tests, scripts) through an
    event loop running in a helper thread."""

    def __init__(self, server: SandboxServer, portal):
        self.server = server
        self.portal = portal

    def call(self, name: str, arguments: "dict | None" = None, timeout: "float | None" = None):
        return self.portal.call(self.server.call, name, arguments, timeout)

    def run(self, async_fn, *args):
        """Run `await async_fn(server, *args)` on the session's loop (e.g. to gather calls)."""
        return self.portal.call(async_fn, self.server, *args)

    @property
    def pid(self) -> "int | None":
        return self.server.pid

    @property
    def tools(self) -> dict:
        return self.server.tools

    def stderr_text(self) -> str:
        return self.server.stderr_text()

    def descendants(self) -> list[int]:
        return self.server.descendants()


@contextmanager
def blocking_session(env: "dict[str, str] | None" = None, **kwargs):
    """open_session for synchronous callers: `with blocking_session(env) as server: server.call(...)`."""
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(open_session(env, **kwargs)) as server:
            yield BlockingServer(server, portal)


# ----------------------------------------------------------------------------- raw JSON-RPC


class RawServer:
    """The server over bare pipes: write any line, read what comes back, line by line."""

    def __init__(self, env: "dict[str, str] | None" = None, *, pyz=None, command=None, cwd=None):
        self.tag = uuid.uuid4().hex
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            command or server_command(pyz),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=server_env({**(env or {}), TAG_VARIABLE: self.tag}),
            cwd=str(cwd) if cwd else tempfile.gettempdir(),
        )
        self.lines: list[bytes] = []  # every stdout line received, for wire-purity checks
        self._queue: "queue.Queue[bytes | None]" = queue.Queue()
        self._reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._reader.start()
        self._next_id = 1

    def send_raw(self, data: "bytes | str") -> None:
        if isinstance(data, str):
            data = data.encode()
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_raw(json.dumps(message) + "\n")

    def start_request(self, method: str, params: "dict | None" = None) -> int:
        """Send a request without waiting; returns its id."""
        request_id = self._next_id
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def response_to(self, request_id: int, timeout: float = 120.0) -> dict:
        return self.wait_for(lambda m: m.get("id") == request_id and ("result" in m or "error" in m), timeout)

    def request(self, method: str, params: "dict | None" = None, timeout: float = 120.0) -> dict:
        """Send a request and return the response with the same id (other lines are kept)."""
        return self.response_to(self.start_request(method, params), timeout)

    def call_tool(self, name: str, arguments: dict, timeout: float = 120.0) -> dict:
        return self.request("tools/call", {"name": name, "arguments": arguments}, timeout)

    def cancel(self, request_id: int, reason: str = "test") -> None:
        self.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": request_id, "reason": reason}})

    def initialize(self) -> dict:
        response = self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "0"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def read_line(self, timeout: float) -> bytes:
        """One stdout line, or TimeoutError; EOFError once the server closed stdout."""
        try:
            line = self._queue.get(timeout=max(0.0, timeout))
        except queue.Empty:
            raise TimeoutError("no line from the server in time") from None
        if line is None:
            self._queue.put(None)
            raise EOFError("server closed its stdout")
        return line

    def _read_stdout(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, predicate, timeout: float = 120.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            line = self.read_line(max(0.0, deadline - time.monotonic()))
            message = json.loads(line)
            if predicate(message):
                return message

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def close(self, timeout: float = 10.0) -> int:
        """Close stdin (what a departing client does) and wait for the server to exit."""
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        finally:
            self._reader.join(timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.process.poll() is None:
            try:
                self.close()
            except subprocess.TimeoutExpired:
                pass
        self.process.stdout.close()
        self.stderr.close()


# ----------------------------------------------------------------------------- /proc


def _stat(pid: int) -> "list[str] | None":
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read().decode(errors="replace")
    except OSError:
        return None
    # comm may contain spaces and parentheses: split after the last ')'.
    return data[data.rindex(")") + 2:].split()


def parent_of(pid: int) -> "int | None":
    fields = _stat(pid)
    return int(fields[1]) if fields else None


def state_of(pid: int) -> "str | None":
    fields = _stat(pid)
    return fields[0] if fields else None


def cpu_ticks(pid: int) -> int:
    fields = _stat(pid)
    return int(fields[11]) + int(fields[12]) if fields else 0


def name_of(pid: int) -> "str | None":
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


CLONER = CLONER_NAME.decode()  # the fork server's helper that the sandboxes are cloned from


def cloner_of(zygote: "int | None") -> "int | None":
    """The fork server's cloner among its children (None without one)."""
    try:
        with open(f"/proc/{zygote}/task/{zygote}/children") as f:
            children = [int(p) for p in f.read().split()]
    except (OSError, TypeError):
        return None
    return next((p for p in children if name_of(p) == CLONER), None)


def sandboxes(pids) -> "list[int]":
    """The sandbox processes among pids: all but the fork server's cloner."""
    return [p for p in pids if name_of(p) != CLONER]


def all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def descendants(pid: int) -> list[int]:
    """Every live (non-zombie) process below pid, whatever its namespace."""
    children: dict[int, list[int]] = {}
    for candidate in all_pids():
        parent = parent_of(candidate)
        if parent is not None:
            children.setdefault(parent, []).append(candidate)
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), ()):
            if state_of(child) not in (None, "Z", "X"):
                found.append(child)
            stack.append(child)
    return found


def find_tagged_process(tag: str) -> "int | None":
    """The topmost process whose environment carries TAG_VARIABLE=tag (the server itself)."""
    marker = f"{TAG_VARIABLE}={tag}".encode()
    tagged = set()
    for pid in all_pids():
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                if marker in handle.read().split(b"\0"):
                    tagged.add(pid)
        except OSError:
            continue
    tops = [pid for pid in tagged if parent_of(pid) not in tagged]
    return min(tops) if tops else None


def wait_until(predicate, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()

"""The server side of the fork server: starts the connection, sends it requests
and hands back results. Used by the MCP server (asyncio) and the CLI.

The connection is spawned with a clean environment (no secret of the server's
reaches it, hence none can reach a child) and with stdout pointing nowhere:
the server's stdout is the MCP channel. If the fork server dies, in-flight
requests fail with internal_error and the next request starts a new one.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field

from sandbox import network_allow as policy
from sandbox import profiles
from sandbox.config import DEFAULTS
from sandbox.egress import proxy as egress_proxy
from sandbox.forkserver import outcome
from sandbox.wire import protocol
from sandbox.wire import messages
from sandbox.wire.messages import RunOrder, RunRequest
from sandbox.codemode import tool_calls
from sandbox.layer_names import ALL_LAYERS, KERNEL_LAYERS

HELLO_TIMEOUT = 120.0         # the fork server imports the profile's modules first
VALIDATION_TIMEOUT = 30.0      # seconds: parsing takes milliseconds, but a loaded host may wait for a child
FORK_SERVER_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **profiles.LIBRARY_ENV}
BOOT = ("import sys, json; c = json.loads(sys.argv[1]); sys.path[:] = c['sys_path']; "
        "from sandbox.forkserver.fork_server import main; main()")


@dataclass(frozen=True)
class RunnerConfig:
    max_timeout: float = DEFAULTS.max_timeout
    max_memory: int = DEFAULTS.max_memory_limit
    max_output: int = 1 << 20
    network: bool = False
    filesystem: bool = False
    preload: tuple = ()
    pool_size: int = DEFAULTS.pool_size
    require: frozenset = frozenset()
    disabled_layers: frozenset = frozenset()   # test/diagnostic switch: SANDBOX_UNSAFE_DISABLE_LAYERS
    restricted_python: bool = DEFAULTS.restricted_python   # what get_sandbox_info reports as the default
    workspace_size: int = 64 << 20             # the filesystem profile's /workspace
    network_policy: policy.Policy = DEFAULTS.network_policy   # the network profile's allow-list
    network_limits: egress_proxy.Limits = egress_proxy.Limits()
    session_max_lifetime: float = DEFAULTS.session_max_lifetime   # bounds a session's CPU time (its rlimit)


@dataclass(frozen=True)
class ExecRequest:
    code: str
    timeout: float
    memory_limit: int
    allowed_modules: frozenset
    restricted: bool = True
    capture_output: bool = True
    strict: bool = False
    files: dict | None = None          # filesystem profile: {relative path: text | {"base64": ...}}
    tools: dict | None = None          # code mode: {server: {tool: doc}} the snippet may call
    execution_id: str = ""             # the process's name while it runs; the audit records of its tool calls


class LayerUnavailable(RuntimeError):
    def __init__(self, missing: list):
        self.missing = missing
        super().__init__("required isolation layers are not active here: "
                         + "; ".join(f"{name} ({reason})" for name, reason in missing))


@dataclass
class ForkServerConnection:
    """The runner's handle on one fork server process: its control socket, the
    requests awaiting its answer, and the task that reads them."""
    process: asyncio.subprocess.Process
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    pending: dict = field(default_factory=dict)
    task: asyncio.Task | None = None
    alive: bool = True
    fd_channel: socket.socket | None = None   # network profile: proxy listeners arrive here


class Runner:
    def __init__(self, config: RunnerConfig):
        self.config = config
        self._connection: ForkServerConnection | None = None
        self._layers: dict | None = None
        self._start_lock = asyncio.Lock()
        self._closed = False
        self._egress: dict[str, egress_proxy.EgressSession] = {}   # by request id
        self._session_listeners: dict[str, socket.socket] = {}      # network profile, by session id
        self._session_calls: dict[str, str] = {}                    # session id -> request id in flight
        self._sessions: set[str] = set()                             # open in the current fork server
        # called with (session id, reason) when a session's process ends between calls
        self.on_session_ended = None
        # code mode: the upstream registry, the limits of one execution's calls, the audit log
        self.tool_registry = None
        self.tool_limits = tool_calls.Limits()
        self.audit = None
        self._tool_sessions: dict[str, tool_calls.ToolSession] = {}   # by request id

    # ---- lifecycle -----------------------------------------------------
    async def start(self) -> None:
        async with self._start_lock:
            if self._connection is not None and self._connection.alive:
                return
            self._connection = await self._spawn_fork_server()
        self._check_required(self.config.require)

    async def _spawn_fork_server(self) -> ForkServerConnection:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fds_ours, fds_theirs = (socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                                if self.config.network else (None, None))
        config = {
            "sys_path": _fork_server_sys_path(),
            "parent_pid": os.getpid(),
            "ctl_fd": theirs.fileno(),
            "max_timeout": self.config.max_timeout,
            "max_memory": self.config.max_memory,
            "max_output": self.config.max_output,
            "network": self.config.network,
            "filesystem": self.config.filesystem,
            "preload": list(self.config.preload),
            "pool_size": self.config.pool_size,
            "disabled_layers": sorted(self.config.disabled_layers),
            "workspace_size": self.config.workspace_size,
            "session_max_lifetime": self.config.session_max_lifetime,
        }
        passed = [theirs]
        if fds_theirs is not None:
            config["fd_channel"] = fds_theirs.fileno()
            passed.append(fds_theirs)
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-I", "-S", "-c", BOOT, json.dumps(config),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=None,
                pass_fds=[s.fileno() for s in passed], env=FORK_SERVER_ENV, cwd="/", close_fds=True)
        finally:
            for s in passed:
                s.close()
        reader, writer = await asyncio.open_unix_connection(sock=ours)
        connection = ForkServerConnection(process=process, reader=reader, writer=writer, fd_channel=fds_ours)
        if fds_ours is not None:
            fds_ours.setblocking(False)
            asyncio.get_running_loop().add_reader(fds_ours, self._receive_listener, fds_ours)
        try:
            hello = await asyncio.wait_for(_read_message(reader), HELLO_TIMEOUT)
            if not isinstance(hello, messages.Hello):
                raise protocol.FrameError(f"its first message was not hello but {type(hello).__name__}")
        except Exception as exc:
            process.kill()
            await process.wait()
            raise RuntimeError(f"the sandbox fork server did not start ({type(exc).__name__}: {exc}); "
                               "see its messages on stderr") from None
        self._layers = dict(hello.layers)
        self._layers["restricted_python"] = (
            {"active": True, "detail": "RestrictedPython compiles every snippet with its full guard set "
                                       "and an import allow-list of module proxies"}
            if self.config.restricted_python else
            {"active": False, "detail": "switched off by SANDBOX_RESTRICTED_PYTHON=false: "
                                        "the kernel layers alone are the boundary"})
        connection.task = asyncio.ensure_future(self._read_loop(connection))
        return connection

    async def aclose(self) -> None:
        self._closed = True
        connection, self._connection = self._connection, None
        if connection is None:
            return
        try:
            connection.writer.write(protocol.encode(messages.Shutdown().to_frame()))
            await connection.writer.drain()
        except (ConnectionError, RuntimeError):
            pass
        connection.writer.close()
        try:
            await asyncio.wait_for(connection.process.wait(), 5)
        except asyncio.TimeoutError:
            connection.process.kill()
            await connection.process.wait()
        if connection.task:
            connection.task.cancel()
        _close_fd_channel(connection)

    def layers(self) -> dict:
        if self._layers is None:
            return {name: {"active": False, "detail": "not started yet"} for name in ALL_LAYERS}
        return {name: dict(self._layers[name]) for name in ALL_LAYERS if name in self._layers}

    def missing_layers(self, names=None) -> list:
        """(layer, reason) for each layer in `names` (default: every kernel
        layer plus RestrictedPython) that is not active."""
        names = ALL_LAYERS if names is None else names
        current = self.layers()
        return [(n, current.get(n, {}).get("detail", "unknown layer")) for n in names
                if not current.get(n, {}).get("active")]

    def fork_server_pid(self) -> int | None:
        return self._connection.process.pid if self._connection and self._connection.alive else None

    def _check_required(self, names) -> None:
        missing = self.missing_layers(sorted(names))
        if missing:
            raise LayerUnavailable(missing)

    # ---- requests -------------------------------------------------------
    async def execute(self, request: ExecRequest, on_output=None, session: str | None = None) -> dict:
        """Run one request (in `session`'s process, when given); `on_output(line)` gets
        the last printed line about once a second while it runs (for progress
        notifications). A session's answer says whether the session ended with it
        (`session_ended`)."""
        if request.strict and self._layers is not None:
            # (the server checks first; this holds for any other caller of the runner)
            self._check_required([*KERNEL_LAYERS] + (["restricted_python"] if request.restricted else []))
        run = RunRequest(
            code=request.code,
            timeout=min(float(request.timeout), self.config.max_timeout),
            memory_limit=min(int(request.memory_limit), self.config.max_memory),
            allowed_modules=tuple(sorted(request.allowed_modules)),
            restricted=bool(request.restricted),
            capture_output=bool(request.capture_output),
            max_output=self.config.max_output,
            files=request.files or None,
            execution_id=request.execution_id or None,
            tools=request.tools if request.tools and self.tool_registry is not None else None,
        )
        return await self._call("execute", run, run.timeout, on_output, session)

    async def open_session(self, session: str) -> dict:
        """A process for the session, from the warm pool when one is ready:
        {"ok": True} or {"ok": False, "error": ...}."""
        answer = await self._call("session_open", None, 30.0, session=session)
        if answer.get("ok") is True:
            self._sessions.add(session)
        return answer

    async def close_session(self, session: str) -> None:
        self._sessions.discard(session)
        listener = self._session_listeners.pop(session, None)
        if listener is not None:
            listener.close()
        connection = self._connection
        if connection is None or not connection.alive:
            return
        try:
            connection.writer.write(protocol.encode(messages.SessionClose(session=session).to_frame()))
            await connection.writer.drain()
        except (ConnectionError, RuntimeError):
            pass

    async def validate(self, code: str, *, allowed_modules, restricted: bool = True, tools: dict | None = None) -> dict:
        run = RunRequest(code=code, timeout=VALIDATION_TIMEOUT, memory_limit=min(256 << 20, self.config.max_memory),
                         allowed_modules=tuple(sorted(allowed_modules)), restricted=bool(restricted),
                         capture_output=False, max_output=4096, tools=tools)
        return await self._call("validate", run, VALIDATION_TIMEOUT)

    async def _call(self, op: str, body: RunRequest | None, timeout: float, on_output=None, session: str | None = None) -> dict:
        if session is None or op == "session_open":
            return await self._exchange(op, body, timeout, on_output, session)
        try:
            result = await self._exchange(op, body, timeout, on_output, session)
        except asyncio.CancelledError:
            self._session_ended(session, "its call was cancelled")  # (the fork server killed it)
            raise
        if result.get("session_ended") is not False:
            # said so, or a failure of the fork server's (it died, or did not answer)
            result = {**result, "session_ended": True}
            self._session_ended(session, None)
            await self.close_session(session)
        return result

    async def _exchange(self, op: str, body: RunRequest | None, timeout: float, on_output=None,
                        session: str | None = None) -> dict:
        if self._closed:
            raise RuntimeError("the runner is closed")
        request_id = uuid.uuid4().hex
        future = asyncio.get_running_loop().create_future()
        started = time.monotonic()
        if op == "execute" and body.tools:
            self._tool_sessions[request_id] = tool_calls.ToolSession(
                self.tool_registry, self.tool_limits, self.audit, body.execution_id or "")
        egress = None
        if self.config.network and op == "execute":
            egress = self._egress[request_id] = egress_proxy.EgressSession(
                self.config.network_policy, self.config.network_limits)
            if session is not None:
                self._session_calls[session] = request_id
                if session in self._session_listeners:
                    egress.start(_duplicate(self._session_listeners[session]), drop_waiting=True)
        try:
            connection = await self._send(request_id, future, op, body, on_output, session)
        except (ConnectionError, RuntimeError) as exc:
            await self._end_egress(request_id)
            calls = self._tool_sessions.pop(request_id, None)
            if calls is not None:
                await calls.close()
            return _internal_error(request_id, op, f"the fork server is unavailable ({type(exc).__name__})",
                                   time.monotonic() - started)
        try:
            # the fork server enforces the timeout; this only guards against a hung fork server
            result = await asyncio.wait_for(asyncio.shield(future), timeout + 30)
            if request_id in self._tool_sessions:
                result = with_tool_calls(result, *await self._tool_sessions.pop(request_id).close())
            return with_network(result, await self._end_egress(request_id)) if egress else result
        except asyncio.CancelledError:
            await self._cancel(connection, request_id)
            raise
        except (asyncio.TimeoutError, ConnectionError) as exc:
            await self._cancel(connection, request_id)
            return _internal_error(request_id, op, f"the fork server did not answer ({type(exc).__name__})",
                                   time.monotonic() - started)
        finally:
            connection.pending.pop(request_id, None)
            calls = self._tool_sessions.pop(request_id, None)
            if calls is not None:
                await calls.close()
            if session is not None and self._session_calls.get(session) == request_id:
                del self._session_calls[session]
            await self._end_egress(request_id)

    def _tool_call(self, connection: ForkServerConnection, request_id: str, call: dict) -> None:
        """Code mode: check and perform a snippet's call, then send the answer back
        to its child; a call for an execution that has ended is dropped."""
        calls = self._tool_sessions.get(request_id)
        if calls is None:
            return

        async def perform() -> None:
            try:
                answer = await calls.call(call)
            except Exception as exc:  # noqa: BLE001 - the snippet waits for an answer: it gets one
                answer = {"ok": False, "error": f"the server could not handle this call: {type(exc).__name__}"}
            try:
                connection.writer.write(protocol.encode(messages.ToolResult(
                    id=request_id, call_id=call["call_id"], answer=answer).to_frame()))
                await connection.writer.drain()
            except (ConnectionError, RuntimeError):
                pass

        calls.spawn(perform())

    def _session_ended(self, session: str, reason: str | None) -> None:
        """`reason` None: the caller already knows (the answer to its call said so)."""
        self._sessions.discard(session)
        listener = self._session_listeners.pop(session, None)
        if listener is not None:
            listener.close()
        if self.on_session_ended is not None and reason is not None:
            self.on_session_ended(session, reason)

    def _receive_listener(self, channel: socket.socket) -> None:
        """A child's proxy listener, tagged with the id of the execution it runs."""
        try:
            message, fds, _flags, _addr = socket.recv_fds(channel, 64, 4)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            message, fds = b"", []
        if not message and not fds:  # the fork server is gone
            asyncio.get_running_loop().remove_reader(channel)
            return
        listeners = [socket.socket(fileno=fd) for fd in fds]
        tag = message.decode("ascii", "replace")
        if tag.startswith("session:") and len(listeners) == 1:
            self._keep_session_listener(tag[len("session:"):], listeners[0])
            return
        session = self._egress.get(tag)
        if session is None or len(listeners) != 1:
            for listener in listeners:
                listener.close()
            return
        session.start(listeners[0])

    def _keep_session_listener(self, session: str, listener: socket.socket) -> None:
        """A session's listener serves each of its calls in turn (a duplicate per call)."""
        old = self._session_listeners.pop(session, None)
        if old is not None:
            old.close()
        self._session_listeners[session] = listener
        call = self._egress.get(self._session_calls.get(session, ""))
        if call is not None:
            call.start(_duplicate(listener))

    async def _end_egress(self, request_id: str) -> list:
        session = self._egress.pop(request_id, None)
        return await session.close() if session is not None else []

    async def _send(self, request_id: str, future, op: str, body: RunRequest | None, on_output=None,
                    session: str | None = None) -> ForkServerConnection:
        """Hand the request to a live fork server; one that died since the last
        request (its socket refuses the write) is replaced once."""
        for attempt in (1, 2):
            if self._connection is None or not self._connection.alive:
                await self.start()
            connection = self._connection
            connection.pending[request_id] = (future, op, on_output)
            try:
                message = (messages.SessionOpen(id=request_id, session=session) if body is None
                           else RunOrder(op=op, id=request_id, run=body, session=session))
                connection.writer.write(protocol.encode(message.to_frame()))
                await connection.writer.drain()
                return connection
            except (ConnectionError, RuntimeError):
                connection.pending.pop(request_id, None)
                connection.alive = False
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _cancel(self, connection: ForkServerConnection, request_id: str) -> None:
        try:
            connection.writer.write(protocol.encode(messages.Cancel(id=request_id).to_frame()))
            await connection.writer.drain()
        except (ConnectionError, RuntimeError):
            pass

    async def _read_loop(self, connection: ForkServerConnection) -> None:
        try:
            while True:
                message = await _read_message(connection.reader)
                if isinstance(message, messages.SessionEnded):
                    self._session_ended(message.session, message.reason)
                    continue
                if isinstance(message, messages.ForwardedToolCall):
                    self._tool_call(connection, message.id, message.call)
                    continue
                if not isinstance(message, (messages.Output, messages.Answer)):
                    continue
                entry = connection.pending.get(message.id)
                if entry is None:
                    continue
                future, _op, on_output = entry
                if isinstance(message, messages.Output):
                    if on_output is not None:
                        on_output(message.line[:500])
                elif not future.done():
                    future.set_result(message.result)
        except (asyncio.IncompleteReadError, ConnectionError, protocol.FrameError):
            pass
        finally:
            connection.alive = False
            _close_fd_channel(connection)
            if not self._closed:
                print("sandbox: the fork server exited; it will be restarted on the next request",
                      file=sys.stderr, flush=True)
            for request_id, (future, op, _on_output) in list(connection.pending.items()):
                if not future.done():
                    future.set_result(_internal_error(request_id, op, "the sandbox fork server died", 0.0))
            busy = set(self._session_calls)  # (their calls' answers say it)
            for session in list(self._sessions):
                self._session_ended(session, None if session in busy else "the sandbox fork server died")
            try:
                connection.process.kill()
            except ProcessLookupError:
                pass


async def _read_message(reader: asyncio.StreamReader):
    """The next message from the fork server, decoded by its op; None for one that is malformed."""
    header = await reader.readexactly(protocol.HEADER.size)
    (size,) = protocol.HEADER.unpack(header)
    if size > 256 << 20:
        raise protocol.FrameError("oversized control frame")
    body = await reader.readexactly(size)
    try:
        return messages.control_message(protocol.decode(body), messages.TO_RUNNER)
    except protocol.FrameError as exc:
        # the stream is still in step: one message lost (its request times out), not every request
        print(f"sandbox: dropped a message from the fork server: {exc}", file=sys.stderr, flush=True)
        return None


def _fork_server_sys_path() -> list:
    """The fork server runs with -I -S: give it exactly the import path we use,
    plus the directory holding this package."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [package_parent] + [p for p in sys.path if p and os.path.exists(p)]
    return list(dict.fromkeys(os.path.abspath(p) for p in paths))


def with_tool_calls(result: dict, calls: list, events: list) -> dict:
    """The execution's tool calls, and the refused ones as security events seen by the server."""
    result = dict(result)
    result["tool_calls"] = calls
    if events:
        result["security_events"] = list(result.get("security_events") or []) + events
    return result


def _duplicate(listener: socket.socket) -> socket.socket:
    return socket.socket(fileno=os.dup(listener.fileno()))


def with_network(result: dict, connections: list) -> dict:
    """The execution's connections through the egress proxy, each refusal also
    a security event (seen by the server, not reported by the sandbox)."""
    result = dict(result)
    result["network"] = connections
    refused = [c for c in connections if c.get("status") in egress_proxy.POLICY_REFUSALS]
    if refused:
        result["security_events"] = list(result.get("security_events") or []) + [
            {"kind": "network_refused", "detail": f"{c['host']}:{c['port']}: {c['reason']}", "source": "server"}
            for c in refused]
    return result


def _close_fd_channel(connection: ForkServerConnection) -> None:
    if connection.fd_channel is not None:
        try:
            asyncio.get_running_loop().remove_reader(connection.fd_channel)
        except RuntimeError:
            pass
        connection.fd_channel.close()
        connection.fd_channel = None


def _internal_error(request_id: str, op: str, message: str, elapsed: float) -> dict:
    return outcome.compose(outcome.ChildOutcome(execution_id=request_id, op=op, failure=message, elapsed=elapsed))


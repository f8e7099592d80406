"""The fork server: a single-threaded process, started once by the runner
with a clean environment, that forks and supervises every sandbox child.

Why a separate process: the MCP server is asyncio with threads, and neither
forking a threaded process nor unshare(CLONE_NEWUSER) in one is safe. The
fork server has RestrictedPython and the profile's modules imported already, so a
child pays nothing for them, and it keeps a warm pool of children hardened in
advance and waiting for their request.

One event loop (selectors) watches the control socket to the runner, every
child's pipes and a pidfd per child. Wall-clock timeouts, output caps and
cancellation are enforced here: the child is SIGKILLed, and as PID 1 of its
pid namespace its death takes everything inside with it. A session's call at
its time limit is interrupted first (SIGINT: KeyboardInterrupt in the snippet)
and killed only when it has not stopped within the grace period.
"""

from __future__ import annotations

import gc
import json
import os
import secrets
import selectors
import signal
import socket
import sys
import time

from sandbox import child as child_mod
from sandbox import layers, libc, privileges, process_names
from sandbox.forkserver import child_report, spawning
from sandbox.forkserver.children import (Child, cpu_seconds, interrupt, kill, killed_before_running, last_line, log,
                                         memory_in_use, outcome_of, session_memory, thread_count)
from sandbox.forkserver.pool import ChildPool
from sandbox.restricted import run as restricted
from sandbox.wire import cutting
from sandbox.wire import messages, protocol
from sandbox.wire.messages import ChildOrder, RunOrder, RunRequest

READ_CHUNK = 1 << 16
SETUP_TIMEOUT = 20.0      # a child that is not ready by then is broken
REFILL_IDLE = 0.002       # seconds of quiet before the pool is refilled
EXIT_GRACE = 2.0          # after the child exited, wait at most this for pipe EOF
MAX_RETRIES = 3           # a request whose child was killed from outside before it ran
PROGRESS_INTERVAL = 1.0   # the last printed line goes to the server at most this often
IDLE_CHECK = 1.0          # how often the CPU time of sessions between calls is looked at
IDLE_CPU_ALLOWANCE = 0.1  # seconds of it a session may use between calls (reading the next one)


class ForkServer:
    def __init__(self, ctl: socket.socket, config: dict):
        self.ctl = ctl
        self.ctl.setblocking(False)
        self.config = config
        self.selector = selectors.DefaultSelector()
        self.ctl_reader = protocol.FrameReader(
            protocol.control_frame_cap(int(config.get("max_request", protocol.MAX_REQUEST))))
        self.ctl_out = bytearray()
        self.pool = ChildPool(self.selector, int(config.get("pool_size", 0)), on_exit=self.on_exit)
        self.max_output = int(config["max_output"])
        self.running = True
        self.selector.register(self.ctl, selectors.EVENT_READ, ("ctl", None))
        self.layer_report: dict = {}
        # network profile: each child's proxy listener goes to the runner here (SCM_RIGHTS)
        self.fd_channel = socket.socket(fileno=config["fd_channel"]) if "fd_channel" in config else None
        if self.fd_channel is not None:
            self.fd_channel.setblocking(False)
        self.next_idle_check = 0.0

    # ---- start-up -------------------------------------------------------
    def prepare(self) -> None:
        spec, self.layer_report = layers.establish(self, self.config)
        # What every child inherits stays out of its collections: a full collection in a
        # child would visit (and so copy) every page of ours, whenever this process's
        # counters at the clone happen to call for one.
        gc.collect()
        gc.freeze()
        # shared with the cloner, so with every child: fewer page-table entries to copy and free
        libc.collapse_to_huge_pages()
        self.pool.start(spec)
        self.send(messages.Hello(pid=os.getpid(), layers=self.layer_report, active=tuple(sorted(spec.layers))))

    # ---- the loop -------------------------------------------------------
    def run(self) -> None:
        while self.running:
            timeout = self.next_timer()
            if self.pool.needs_refill():
                timeout = REFILL_IDLE if timeout is None else min(timeout, REFILL_IDLE)
            events = self.selector.select(timeout)
            for key, mask in events:
                if self.selector.get_map().get(key.fd) is not key:
                    continue  # closed by an earlier event of this batch (its number may be reused)
                kind, obj = key.data
                try:
                    self.dispatch(kind, obj, key.fileobj, mask)
                except Exception as exc:  # noqa: BLE001 - one bad child must not stop the server
                    log(f"error handling {kind}: {type(exc).__name__}: {exc}")
            self.check_timers()
            if not events and (self.pool.idle() == 0
                               or not any(c.state == "running" for c in self.pool.children.values())):
                # Refill when nothing waits to be handled and no request runs: a fork
                # beside a running request would delay its answer. Once the pool is
                # drained (sustained load), every quiet moment refills it anyway: the
                # next request would otherwise wait for a child forked for it.
                self.pool.refill()
        self.pool.close()

    def dispatch(self, kind: str, obj, fileobj, mask) -> None:
        if kind == "ctl":
            if mask & selectors.EVENT_READ:
                self.read_control()
            if mask & selectors.EVENT_WRITE:
                self.flush_control()
        elif kind == "pidfd":
            self.on_exit(obj)
        elif kind == "request":
            self.write_request(obj)
        else:
            self.on_readable(obj, kind, fileobj)

    def next_timer(self) -> float | None:
        now = time.monotonic()
        deadlines = []
        for c in self.pool.children.values():
            if c.deadline is not None:
                deadlines.append(c.deadline)
            if c.state == "starting":
                deadlines.append(c.started + SETUP_TIMEOUT)
            if c.exited_at is not None:
                deadlines.append(c.exited_at + EXIT_GRACE)
        if self.pool.needs_refill() and self.pool.spawn_backoff_until > now:
            deadlines.append(self.pool.spawn_backoff_until)
        if any(self.between_calls(c) for c in self.pool.children.values()):
            deadlines.append(self.next_idle_check)
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - now)

    def check_timers(self) -> None:
        now = time.monotonic()
        for c in list(self.pool.children.values()):
            if (c.deadline is not None and now >= c.deadline and c.status is None and c.session is not None
                    and not c.interrupted and not c.killed):
                # a session keeps its state through a timeout when the snippet stops at the interrupt
                interrupt(c)
                c.deadline = now + protocol.INTERRUPT_GRACE
            elif c.deadline is not None and now >= c.deadline and c.status is None and not c.timed_out:
                c.timed_out = not c.killed  # not when the result was already in
                c.deadline = None
                c.memory_at_timeout = memory_in_use(c.pid)
                kill(c)
            elif c.state == "starting" and now >= c.started + SETUP_TIMEOUT and c.status is None:
                c.setup_error = c.setup_error or {"layer": "startup", "error": "child did not become ready"}
                kill(c)
            if c.exited_at is not None and now >= c.exited_at + EXIT_GRACE:
                for fd in list(c.open_fds):
                    self.pool.close_fd(c, fd)
                self.maybe_finish(c)
        if now >= self.next_idle_check:
            self.next_idle_check = now + IDLE_CHECK
            for c in list(self.pool.children.values()):
                if self.between_calls(c):
                    self.ran_between_calls(c)

    # ---- control channel -------------------------------------------------
    def read_control(self) -> None:
        try:
            data = self.ctl.recv(1 << 20)
        except BlockingIOError:
            return
        if not data:
            # the runner is gone: nobody can use our children any more
            self.running = False
            return
        for message in self.ctl_reader.feed(data):
            self.handle(message)

    def handle(self, body: dict) -> None:
        try:
            message = messages.control_message(body, messages.TO_FORK_SERVER)
        except protocol.FrameError as exc:
            log(f"dropped a control message: {exc}")  # the runner's own bug: its request times out
            return
        if isinstance(message, RunOrder) and message.session is not None:
            self.session_call(message)
        elif isinstance(message, RunOrder):
            self.start_request(message)
        elif isinstance(message, messages.ToolResult):
            self.on_tool_result(message)
        elif isinstance(message, messages.SessionOpen):
            self.open_session(message)
        elif isinstance(message, messages.SessionClose):
            for c in self.pool.children.values():
                if c.session is not None and c.session == message.session:
                    if c.request is None:
                        c.report = False  # nobody waits for its end
                    else:
                        c.cancelled = True  # the call in flight is answered: cancelled, session ended
                    kill(c)
        elif isinstance(message, messages.Cancel):
            for c in self.pool.children.values():
                if c.request is not None and c.request.id == message.id and c.status is None:
                    c.cancelled = True
                    kill(c)
        elif isinstance(message, messages.Shutdown):
            self.running = False

    def send(self, message: messages.Message) -> None:
        self.ctl_out += protocol.encode(message.to_frame())
        self.flush_control()

    def flush_control(self) -> None:
        while self.ctl_out:
            try:
                sent = self.ctl.send(self.ctl_out)
            except BlockingIOError:
                break
            except OSError:
                self.running = False
                return
            del self.ctl_out[:sent]
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.ctl_out else 0)
        self.selector.modify(self.ctl, events, ("ctl", None))

    # ---- children --------------------------------------------------------
    def start_request(self, order: RunOrder, fresh: bool = False, retries: int = 0) -> None:
        child = (None if fresh else self.pool.take_ready()) or self.pool.spawn()
        if child is None:
            self.send(messages.Answer(id=order.id, result=child_report.compose(child_report.ChildOutcome(
                execution_id=order.id, op=order.op,
                failure="could not create a sandbox process (the host is out of processes or memory)"))))
            return
        child.retries = retries
        self.assign(child, order)

    def assign(self, child: Child, order: RunOrder, session: bool = False) -> None:
        child.request = order
        child.nonce = secrets.token_hex(16)
        child.pending = bytearray(protocol.encode(ChildOrder(op=order.op, nonce=child.nonce, session=session,
                                                             request=order.run).to_frame()))
        child.dispatched = time.monotonic()
        if child.state == "ready":
            self.begin_running(child)
        self.write_request(child)

    # ---- sessions ---------------------------------------------------------
    def open_session(self, message: messages.SessionOpen) -> None:
        """A pooled child (or a new one) becomes the session's: it leaves the
        pool and serves the session's calls until it is closed or dies."""
        child = self.pool.take_ready() or self.pool.spawn()
        if child is None:
            self.send(messages.Answer(id=message.id, result={
                "ok": False, "error": "could not create a sandbox process (the host is out of processes or memory)"}))
            return
        child.session = message.session[:64]
        self.maybe_hand_listener_over(child)
        self.send(messages.Answer(id=message.id, result={"ok": True}))

    def session_call(self, order: RunOrder) -> None:
        child = next((c for c in self.pool.children.values() if c.session == order.session
                      and c.status is None and not c.killed), None)
        why = ("its process is gone" if child is None else "it is running another call" if child.request
               else child.session_end_reason if self.ran_between_calls(child) else None)
        if why is not None:
            result = child_report.compose(child_report.ChildOutcome(
                execution_id=order.id, op=order.op, failure=f"the session cannot take this call: {why}"))
            self.send(messages.Answer(id=order.id, result=result, session_ended=child is None or child.killed))
            return
        child.out, child.written_total, child.line_sent, child.interrupted = {}, 0, 0.0, False
        child.result_frame, child.result_payload, child.frame_error, child.tool_call = None, b"", None, None
        self.assign(child, order, session=True)

    def end_session_call(self, c: Child) -> None:
        """The result of a session's call is in: whatever it printed is already
        in the pipes (the child flushed before writing the result), so it is
        read now; the child stays, ready for the next call, unless the call
        left threads running (a session keeps state between calls, not code
        that runs while nobody waits for it)."""
        for fd in (c.stdout_r, c.stderr_r):
            if fd in c.open_fds:
                self.drain(c, fd)
        if thread_count(c.pid) != 1:
            c.session_end_reason = "the call left threads running: a session keeps state, not running code"
            kill(c)
            return
        result = child_report.compose(outcome_of(c))
        self.send(messages.Answer(id=c.request.id, result={**result, "session_memory": session_memory(c.pid)},
                                  session_ended=False))
        c.request, c.deadline, c.state = None, None, "ready"
        c.idle_cpu = cpu_seconds(c.pid)
        c.result_frame, c.result_payload = None, b""  # an idle death must not be read as this call's

    @staticmethod
    def between_calls(c: Child) -> bool:
        return c.idle_cpu is not None and c.request is None and c.status is None and not c.killed

    def ran_between_calls(self, c: Child) -> bool:
        """A session that used CPU while no call was running (a timer's signal
        handler, say) is ended: between calls it keeps state, not running code.
        Measured here from /proc, whatever the child says."""
        if not self.between_calls(c):
            return False
        used = (cpu_seconds(c.pid) or 0.0) - c.idle_cpu
        if used <= IDLE_CPU_ALLOWANCE:
            return False
        c.session_end_reason = (f"it ran code between calls ({used:.1f} s of CPU, from a timer or signal "
                                "handler): a session keeps state, not running code; cancel timers before a "
                                "call ends")
        kill(c)
        return True

    def drain(self, c: Child, fd: int) -> None:
        kind = "stdout" if fd == c.stdout_r else "stderr"
        while fd in c.open_fds:
            data = self.read_pipe(c, fd)
            if not data:
                return
            self.on_output(c, kind, data)

    def read_pipe(self, c: Child, fd: int) -> bytes | None:
        """One read of a child's pipe: None when nothing waits in it, b"" at its end
        (or on an error), which closes it."""
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return None
        except OSError:
            data = b""
        if not data:
            self.pool.close_fd(c, fd)
        return data

    def begin_running(self, child: Child) -> None:
        child.state = "running"
        run = child.request.run
        child.deadline = time.monotonic() + run.timeout
        child.result_cap = min(run.max_output, self.max_output)
        child.frames.max_size = protocol.result_frame_cap(child.result_cap)
        self.maybe_hand_listener_over(child)

    def take_listener(self, c: Child) -> None:
        go, c.go = c.go, None
        c.listener = spawning.receive_listener(go)
        if c.listener is None:
            c.setup_error = {"layer": "namespaces", "error": "the child sent no proxy listener"}
            kill(c)

    def maybe_hand_listener_over(self, c: Child) -> None:
        """To the runner, tagged with the execution id (its egress proxy accepts
        on it for as long as the execution runs) or the session's."""
        if c.listener is None:
            return
        if c.session is not None:
            tag = "session:" + c.session
        elif c.state == "running" or not c.report:
            tag = c.request.id if c.request else ""
        else:
            return  # a pooled child: once it has a request
        fd, c.listener = c.listener, None
        try:
            if c.report and self.fd_channel is not None:
                socket.send_fds(self.fd_channel, [tag.encode()[:80]], [fd])
        except OSError as exc:
            log(f"could not hand the proxy listener to the server: {exc}")
        finally:
            os.close(fd)

    def write_request(self, c: Child) -> None:
        if c.request_w is None:
            return
        try:
            while c.pending:
                written = os.write(c.request_w, c.pending)
                del c.pending[:written]   # a bytearray drops its head without copying the rest
        except BlockingIOError:
            pass
        except OSError:
            c.pending = bytearray()  # the child is gone; its exit will be reported
        registered = c.request_w in self.selector.get_map()
        if c.pending and not registered:
            self.selector.register(c.request_w, selectors.EVENT_WRITE, ("request", c))
        elif not c.pending and registered:
            # kept open until the child exits: what it left unread tells whether it ran
            self.selector.unregister(c.request_w)

    def on_readable(self, c: Child, kind: str, fd: int) -> None:
        data = self.read_pipe(c, fd)
        if data is None:
            return
        if not data:
            self.maybe_finish(c)
            return
        if kind == "result":
            self.on_result_bytes(c, data)
        else:
            self.on_output(c, kind, data)

    def on_result_bytes(self, c: Child, data: bytes) -> None:
        if c.frame_error:
            return  # the stream is already known to be corrupt; drain and ignore
        try:
            for body in c.frames.feed(data):  # one at a time: "ready" raises the cap for the result
                self.on_result_frame(c, *protocol.split_sectioned(body))
                if c.frame_error:
                    return
        except protocol.FrameError as exc:
            c.frame_error = str(exc)
            kill(c)

    def on_result_frame(self, c: Child, header: dict, payload: memoryview) -> None:
        """One frame of the child's result channel; FrameError when it is malformed."""
        kind = header.get("kind")
        try:
            small = messages.child_frame(header) if kind in messages.CHILD_FRAMES else None
        except protocol.FrameError as exc:
            what = "a tool call out of turn or malformed" if kind == "tool_call" else "a malformed frame"
            raise protocol.FrameError(f"{what}: {exc}") from None
        if isinstance(small, messages.Ready) and c.state == "starting" and not payload:
            c.state = "ready"
            if c.go is not None:
                self.take_listener(c)
                if c.listener is None:
                    return
                self.maybe_hand_listener_over(c)
            if c.request is not None:
                self.begin_running(c)
        elif isinstance(small, messages.SetupError) and c.state == "starting" and not payload:
            c.setup_error = {"layer": small.layer, "error": small.error}
        elif isinstance(small, messages.ToolCall) and c.state == "running" and c.result_frame is None and not payload:
            self.on_tool_call(c, small)
        elif kind == "result" and c.state == "running" and c.result_frame is None:
            frame = messages.result_frame(header, c.request.op)
            if frame.nonce != c.nonce:
                c.frame_error = "result frame does not carry this execution's nonce"
            else:
                c.result_frame, c.result_payload = frame, bytes(payload)
            if c.session is not None and c.frame_error is None:
                self.end_session_call(c)
                return
            # the answer goes out once the snippet's processes are gone,
            # whatever the frame says: a forged early reply frees nothing
            kill(c)
        else:
            # a second result, or a frame out of turn: someone is writing
            # into the result pipe who should not be
            c.frame_error = "unexpected extra frame on the result channel"
            c.result_frame = None
            kill(c)

    def on_tool_call(self, c: Child, call: messages.ToolCall) -> None:
        """Code mode: pass the call on to the server, which checks it and performs
        it; only its shape is checked here (decoding it did). One call at a time per
        child, and only once it has read the answer to the one before."""
        # a call while the previous answer is still unread would pile answers up here
        if call.nonce != c.nonce or c.tool_call is not None or c.pending or not c.request.run.tools:
            c.frame_error = "a tool call out of turn or malformed"
            kill(c)
            return
        c.tool_call = call.call_id
        self.send(messages.ForwardedToolCall(id=c.request.id, call={
            "call_id": call.call_id, "server": call.server, "tool": call.tool, "arguments": call.arguments}))

    def on_tool_result(self, message: messages.ToolResult) -> None:
        for c in self.pool.children.values():
            if (c.request is not None and c.request.id == message.id and c.status is None
                    and c.tool_call is not None and c.tool_call == message.call_id):
                c.tool_call = None
                c.pending += protocol.encode({**message.answer, "call_id": message.call_id})
                self.write_request(c)
                return

    def on_output(self, c: Child, stream: str, data: bytes) -> None:
        cap = min(c.request.run.max_output, self.max_output) if c.request else self.max_output
        if stream not in c.out:
            spec = self.pool.spec
            c.out[stream] = cutting.HeadTail(cap, out_dir=bool(spec and spec.filesystem and spec.namespaced))
        c.out[stream].feed(data)
        c.written_total += len(data)
        now = time.monotonic()
        if stream == "stdout" and c.report and c.request is not None and now - c.line_sent >= PROGRESS_INTERVAL:
            line = last_line(c.out[stream])
            if line:
                c.line_sent = now
                self.send(messages.Output(id=c.request.id, line=line))
        if c.written_total > max(8 * cap, 8 << 20) and not c.flooded and c.status is None:
            c.flooded = True
            kill(c)

    def on_exit(self, c: Child) -> None:
        if self.pool.reap(c):
            self.maybe_finish(c)

    def maybe_finish(self, c: Child) -> None:
        """Report once the child is reaped (so every process of the sandbox is gone:
        the reply, the concurrency slot and the timeout end only then) and the
        pipes are drained (or EXIT_GRACE has passed since the exit)."""
        if c.status is not None and not c.open_fds and c.pid in self.pool.children:
            del self.pool.children[c.pid]
        if c.state == "finished" or c.open_fds or c.status is None:
            return
        c.state = "finished"
        if c.session is not None and c.report:
            if c.request is not None:   # the call it was running ended it
                self.send(messages.Answer(id=c.request.id, result=child_report.compose(outcome_of(c)),
                                          session_ended=True, session_end_reason=c.session_end_reason))
            else:
                why = c.session_end_reason or child_report.compose(outcome_of(c, idle=True)).get("error")
                self.send(messages.SessionEnded(session=c.session, reason=f"its process ended between calls: {why}"))
            return
        if c.request is None or not c.report:
            return  # an idle pooled child died (killed from outside, or failed setup), or a probe
        if killed_before_running(c) and c.retries < MAX_RETRIES:
            # a pooled child killed from outside (the OOM killer) as it was handed the
            # request: nothing of the snippet ran (no output, no result), so the request
            # goes to a freshly forked child; the rest of the pool may be dying as well
            self.start_request(c.request, fresh=True, retries=c.retries + 1)
            return
        self.send(messages.Answer(id=c.request.id, result=child_report.compose(outcome_of(c))))

    # ---- synchronous use during start-up (layer probing) ------------------
    def run_one(self, spec: child_mod.ChildSpec, run: RunRequest, timeout: float = 20.0) -> Child:
        """Run one request on a fresh child to completion, blocking."""
        c = self.pool.spawn(spec)
        if c is None:
            raise OSError("fork failed")
        c.request = RunOrder(op="execute", id="probe", run=run)
        c.report = False
        c.nonce = secrets.token_hex(16)
        c.pending = bytearray(protocol.encode(ChildOrder(op="execute", nonce=c.nonce, session=False,
                                                         request=run).to_frame()))
        c.dispatched = time.monotonic()
        self.write_request(c)
        end = time.monotonic() + timeout
        while c.state != "finished" and time.monotonic() < end:
            for key, mask in self.selector.select(0.05):
                kind, obj = key.data
                if kind != "ctl" and obj is c and self.selector.get_map().get(key.fd) is key:
                    self.dispatch(kind, obj, key.fileobj, mask)
            self.check_timers()
        if c.state != "finished":
            kill(c)
            os.waitpid(c.pid, 0)
        return c


def main() -> None:
    config = json.loads(sys.argv[1])
    process_names.name_fork_server(config["parent_pid"])
    privileges.set_parent_death_signal(signal.SIGKILL)
    if os.getppid() != config["parent_pid"]:
        os._exit(1)  # the runner died before we were ready
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the runner decides when we stop
    restricted.warm(config.get("preload", ()))  # children inherit the imports and pay nothing for them
    fork_server = ForkServer(socket.socket(fileno=config["ctl_fd"]), config)
    fork_server.prepare()
    fork_server.run()
    os._exit(0)

"""One child as the fork server sees it: its state from fork to exit, what /proc says
of it, and the outcome its end makes."""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import termios
import time
from dataclasses import dataclass, field

from sandbox.forkserver import child_report
from sandbox.wire import cutting
from sandbox.wire import protocol
from sandbox.wire.messages import ExecuteResult, RunOrder, ValidationResult

MAX_PROGRESS_LINE = 200


def log(message: str) -> None:
    print(f"sandbox-fork-server[{os.getpid()}]: {message}", file=sys.stderr, flush=True)


@dataclass
class Child:
    pid: int
    pidfd: int
    result_r: int
    stdout_r: int
    stderr_r: int
    request_w: int | None
    started: float
    state: str = "starting"          # starting -> ready -> running -> finished
    request: RunOrder | None = None  # the runner's order once assigned
    retries: int = 0                 # times its order went to a fresh child (killed before it ran)
    nonce: str = ""
    pending: bytearray = field(default_factory=bytearray)   # request bytes not yet written
    deadline: float | None = None
    dispatched: float = 0.0
    frames: protocol.FrameReader = field(
        default_factory=lambda: protocol.FrameReader(protocol.MAX_STARTUP_FRAME, raw=True))
    open_fds: set = field(default_factory=set)
    out: dict = field(default_factory=dict)   # stream name -> cutting.HeadTail, once output arrives
    written_total: int = 0
    line_sent: float = 0.0                   # when the last printed line was forwarded (progress)
    result_frame: ExecuteResult | ValidationResult | None = None   # the result frame's header
    result_payload: bytes = b""          # its sections, undecoded
    result_cap: int = 0                  # bytes of JSON the result value may take
    frame_error: str | None = None
    killed: bool = False                 # the fork server sent SIGKILL
    request_unread: int = 0              # request bytes still in the pipe when the child exited
    go: int | None = None                # network profile: our end of the go channel, until ready
    listener: int | None = None          # the proxy listener it sent, until handed to the runner
    setup_error: dict | None = None
    status: int | None = None
    rusage: object = None
    exited_at: float | None = None
    timed_out: bool = False
    interrupted: bool = False            # a session's call got SIGINT at its time limit
    memory_at_timeout: tuple | None = None   # (bytes in use, limit) of data when it was killed for time
    flooded: bool = False
    cancelled: bool = False
    report: bool = True              # False for the start-up probe: nobody awaits it
    session: str | None = None       # the session this child keeps alive between calls
    session_end_reason: str | None = None   # why the fork server ended it after a call that succeeded
    idle_cpu: float | None = None    # a session between calls: its CPU time when its last call ended
    tool_call: int | None = None     # code mode: the call it waits on (one at a time)


def thread_count(pid: int) -> int:
    """Threads of a child (its /proc entry; 0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (its /proc entry; None when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    except (OSError, ValueError, IndexError):
        return None


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def memory_in_use(pid: int) -> tuple[int, int] | None:
    """(VmData, its soft RLIMIT_DATA) of a process in bytes, from its /proc entry;
    None when it is gone or has no data limit."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            in_use = next(int(line.split()[1]) * 1024 for line in f if line.startswith(b"VmData:"))
        with open(f"/proc/{pid}/limits", "rb") as f:
            limit = next(line[26:].split()[0] for line in f if line.startswith(b"Max data size"))
        return None if limit == b"unlimited" else (in_use, int(limit))
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def session_memory(pid: int) -> dict | None:
    """What a session's process holds, read from its /proc entry (never from what it
    says): resident bytes, and the bytes of data it may still allocate before its
    memory limit (None without one); None when it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            resident = next(int(line.split()[1]) * 1024 for line in f if line.startswith(b"VmRSS:"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    data = memory_in_use(pid)
    return {"resident_bytes": resident, "headroom_bytes": None if data is None else max(0, data[1] - data[0])}


def unread_bytes(fd: int) -> int:
    """Bytes waiting in a pipe (FIONREAD works on either end)."""
    buf = bytearray(4)
    try:
        fcntl.ioctl(fd, termios.FIONREAD, buf)
    except OSError:
        return 0
    return int.from_bytes(buf, sys.byteorder)


def last_line(out: cutting.HeadTail) -> str:
    """The last non-empty line printed so far, short (the progress message)."""
    recent = bytes(out.tail or out.head)[-4 * MAX_PROGRESS_LINE:]
    lines = [line for line in recent.decode("utf-8", "replace").splitlines() if line.strip()]
    # shown by the client as a status: no terminal escapes, no bidi overrides
    return "".join(ch if ch.isprintable() else "\ufffd" for ch in lines[-1][-MAX_PROGRESS_LINE:]) if lines else ""


def interrupt(c: Child) -> None:
    """SIGINT to a session's child at its call's time limit: KeyboardInterrupt in the
    snippet (a handler the child installs while the snippet runs, the only way a
    signal from outside reaches PID 1 of a namespace)."""
    c.interrupted = True
    try:
        signal.pidfd_send_signal(c.pidfd, signal.SIGINT)
    except ProcessLookupError:
        pass  # already exited: its exit event is on its way


def kill(c: Child) -> None:
    """SIGKILL the child; as PID 1 of its namespace, its exit completes only
    once every other process inside is gone too."""
    if c.killed or c.status is not None:
        return
    c.killed = True
    try:
        signal.pidfd_send_signal(c.pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass  # already exited: its exit event is on its way


def killed_before_running(c: Child) -> bool:
    """Killed from outside (the OOM killer) before the snippet started: it
    left its request unread, or died at once with nothing written."""
    return (c.status is not None and os.WIFSIGNALED(c.status)
            and not (c.killed or c.timed_out or c.cancelled or c.flooded)
            and c.result_frame is None and not c.written_total
            and (c.request_unread > 0 or time.monotonic() - c.dispatched < 1.0))


def outcome_of(c: Child, idle: bool = False) -> child_report.ChildOutcome:
    """What the fork server observed of the child's run (`idle`: of a session between calls)."""
    run = None if idle else c.request.run
    ru = c.rusage
    cpu_time = (ru.ru_utime + ru.ru_stime) if ru else 0.0
    max_rss = (ru.ru_maxrss * 1024) if ru else 0
    return child_report.ChildOutcome(
        execution_id="" if idle else c.request.id,
        op="execute" if idle else c.request.op,
        frame=c.result_frame,
        payload=c.result_payload,
        result_cap=c.result_cap,
        frame_error=c.frame_error,
        setup_error=c.setup_error,
        status=c.status,
        cpu_time=cpu_time,
        max_rss_bytes=max_rss,
        stdout=c.out.get("stdout"),
        stderr=c.out.get("stderr"),
        timed_out=c.timed_out,
        interrupted=c.interrupted,
        memory_at_timeout=c.memory_at_timeout,
        output_flooded=c.flooded,
        cancelled=c.cancelled,
        elapsed=time.monotonic() - c.dispatched,
        timeout=float(run.timeout) if run else 0.0,
        capture_output=run.capture_output if run else True,
    )

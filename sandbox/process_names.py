"""What a sandbox process is called in ps, top and /proc/<pid>/{cmdline,comm}.

The fork server is started as `python -I -S -c <boot code> <config>`, and every
sandbox process is forked from it, so without this they would all show that
line. Each one writes its role over its own copy of the command line instead
(the kernel reads /proc/<pid>/cmdline from that memory, as setproctitle(3)
does) and sets its thread name (comm, 15 bytes): `sandbox: fork server (server
pid 4242)`, `sandbox: execution 3f2a... (server pid 4242)`. A name is only a
label for the operator: the server finds its processes by pid and pidfd,
never by name (a snippet that can write its own memory can rename itself).
Names carry nothing but the role, the execution id the answer shows anyway
and the MCP server's pid, which tells the operator whose process it is.
"""

from __future__ import annotations

import ctypes
import re

from sandbox import libc

FORK_SERVER = "fork server"
CLONER = "cloner"
POOLED = "pooled child"
SESSION_IDLE = "session, between calls"
VALIDATION = "validation"
PREFIX = "sandbox: "

COMM = {FORK_SERVER: b"sandbox-forksrv", CLONER: b"sandbox-cloner"}   # what top shows
CHILD_COMM = b"sandbox"
_UNSAFE = re.compile(r"[^0-9A-Za-z_.-]")

# The command line's memory, found once by the fork server; every process forked from it
# has the same addresses. (start, end, server pid), or None before name_fork_server.
_area: tuple[int, int, int] | None = None


def name_fork_server(server_pid: int) -> None:
    """Called first by the fork server: find the command line and name the process."""
    global _area
    start, end = _argument_area()
    _area = (start, end, int(server_pid))
    name(FORK_SERVER)


def name(role: str) -> None:
    """This process's command line becomes `sandbox: <role> (server pid N)`."""
    libc.set_process_name(COMM.get(role, CHILD_COMM))
    if _area is None:
        return
    start, end, server_pid = _area
    title = f"{PREFIX}{role} (server pid {server_pid})".encode("ascii", "replace")
    size = end - start
    if size < 2:
        return
    # zeros after the title: the kernel shows the area up to its end, which stays NUL,
    # so ps sees one argument and nothing of the line it replaced
    ctypes.memset(start, 0, size)
    ctypes.memmove(start, title, min(len(title), size - 1))


def execution(execution_id: str, session: bool) -> str:
    """The role of a process running one execution (`execution` + its id)."""
    label = f"execution {_UNSAFE.sub('', str(execution_id))[:64]}".rstrip()
    return f"session, {label}" if session else label


def title_of(pid: int) -> str:
    """A process's command line as ps shows it (for tests and diagnostics)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return b" ".join(part for part in handle.read().split(b"\0") if part).decode(errors="replace")
    except OSError:
        return ""


def _argument_area() -> tuple[int, int]:
    """arg_start and arg_end of /proc/self/stat (fields 48 and 49, Linux >= 3.5)."""
    with open("/proc/self/stat", "rb") as handle:
        fields = handle.read().rsplit(b")", 1)[1].split()
    return int(fields[45]), int(fields[46])

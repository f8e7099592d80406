"""The quiet process every sandbox child is cloned from.

A clone write-protects the cloning process's memory, which it shares with the
new child from then on: every page the cloning process writes afterwards costs
it a copy-on-write fault (about 3.5 us on this kind of VM). The fork server's
event loop writes some 370 pages per execution between two clones, over a
millisecond of CPU per execution (bench/README.md). So the fork server, once it
is ready (imports, spec, seccomp program), forks this process, which does
nothing but clone: it receives a child's pipe ends over a Unix socket, clones
with CLONE_PARENT and answers with the pid. The child is the fork server's own
(its parent, which reaps it, writes its id maps, holds its pidfd and whose
death kills it, exactly as before); only the memory it starts from is the
cloner's, the fork server's as it was when ready.

The cloner dies with the fork server (parent-death signal) and holds no fd but
its socket and the fork server's pidfd. If it is gone, the fork server clones
directly again, with new pipes for the child it was making (ForkServer.clone says why).
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import socket

from sandbox import child as child_mod
from sandbox import namespaces, privileges, process_names
from sandbox import libc
from sandbox.forkserver.children import log

NAME = process_names.COMM[process_names.CLONER]   # /proc/<pid>/comm (each child renames itself)
_SOCKET_FD, _FORK_SERVER_PIDFD = 3, 4   # the cloner's own fds (0-2 stay: its stderr is the log)
_CHILD_ENDS = 5                    # request, result, stdout, stderr, go
_ANSWER = 8
CLONE_TIMEOUT = 10.0               # a clone takes about a millisecond; the fork server must never hang on one


class ClonerLost(Exception):
    """The cloner died or hung during a clone (ForkServer.clone says what follows)."""


class Cloner:
    """The fork server's handle: clone(ends) -> the new child's pid."""

    def __init__(self, pid: int, sock: socket.socket):
        self.pid = pid
        self.sock = sock

    @classmethod
    def start(cls, spec: child_mod.ChildSpec, fork_server_pidfd: int) -> "Cloner":
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            try:
                ours.close()
                _serve(spec, theirs.detach(), fork_server_pidfd)
            finally:
                os._exit(1)
        theirs.close()
        ours.settimeout(CLONE_TIMEOUT)
        return cls(pid, ours)

    def clone(self, ends: list[int]) -> int:
        """Clone a child holding `ends`; the caller closes its copies. OSError
        when the clone failed; ConnectionError when the cloner is gone or stuck
        (then call close)."""
        try:
            socket.send_fds(self.sock, [b"c"], ends)
            answer = self.sock.recv(_ANSWER)
        except TimeoutError:
            raise ConnectionError(f"the cloner did not answer in {CLONE_TIMEOUT} s") from None
        if len(answer) != _ANSWER:
            raise ConnectionError("the cloner is gone")
        pid = int.from_bytes(answer, "little", signed=True)
        if pid < 0:
            raise OSError(-pid, f"clone: {os.strerror(-pid)}")
        return pid

    def close(self) -> None:
        """Stop it and reap it (it may have died already)."""
        self.sock.close()
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _serve(spec: child_mod.ChildSpec, sock_fd: int, fork_server_pidfd: int) -> None:
    """The cloner's loop. Never returns."""
    privileges.set_parent_death_signal(signal.SIGKILL)
    process_names.name(process_names.CLONER)
    # above every fd first, so that neither dup2 clobbers the other's source
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 16) for fd in (sock_fd, fork_server_pidfd)]
    os.dup2(high[0], _SOCKET_FD)
    os.dup2(high[1], _FORK_SERVER_PIDFD)
    libc.close_range_from(_FORK_SERVER_PIDFD + 1)   # the server's channels, the epoll fd, ...
    if select.select([_FORK_SERVER_PIDFD], [], [], 0)[0]:
        os._exit(0)  # the fork server died before the parent-death signal was armed
    try:
        child_mod.prepare_template(spec)
    except BaseException as exc:  # noqa: BLE001 - the fork server then clones directly
        log(f"the cloner could not apply the template's layers ({exc}): cloning directly")
        os._exit(1)
    sock = socket.socket(fileno=_SOCKET_FD)
    flags = (namespaces.clone_flags(own_network=spec.own_network) if spec.namespaced else 0) | libc.CLONE_PARENT
    while True:
        message, ends, _, _ = socket.recv_fds(sock, 1, _CHILD_ENDS)
        if not message:
            os._exit(0)
        if len(ends) != _CHILD_ENDS:
            pid = -22  # EINVAL
        else:
            try:
                pid = libc.clone_process(flags)
            except OSError as exc:
                pid = -(exc.errno or 12)
            if pid == 0:
                request, result, stdout, stderr, go = ends
                child_mod.run(spec, child_mod.ChildPipes(request=request, result=result, stdout=stdout,
                                                         stderr=stderr, go=go, fork_server=_FORK_SERVER_PIDFD),
                              from_template=True)
                os._exit(child_mod.SETUP_FAILED)  # run never returns
        for fd in ends:
            os.close(fd)
        sock.send(pid.to_bytes(_ANSWER, "little", signed=True))

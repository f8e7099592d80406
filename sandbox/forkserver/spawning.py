"""How a child comes to be: cloned straight into its namespaces (when the cloner does not
serve its spec), its id maps written from outside, then let go; and, with the network
profile, the proxy listener it sends back before it is ready."""

from __future__ import annotations

import os
import socket

from sandbox import child as child_mod
from sandbox import libc
from sandbox import namespaces


def clone_directly(spec: child_mod.ChildSpec, ends: list[int], fork_server_pidfd: int) -> int:
    """The pid of a child cloned from this process into the spec's namespaces; in the
    child, its hardening and its requests (never returns there)."""
    flags = namespaces.clone_flags(own_network=spec.own_network) if spec.namespaced else 0
    pid = libc.clone_process(flags)
    if pid == 0:
        request, result, stdout, stderr, go = ends
        child_mod.run(spec, child_mod.ChildPipes(request=request, result=result, stdout=stdout,
                                                 stderr=stderr, go=go, fork_server=fork_server_pidfd))
        os._exit(child_mod.SETUP_FAILED)  # run never returns
    return pid


def let_go(pid: int, spec: child_mod.ChildSpec, go_w: int) -> None:
    """Write the child's id maps, then tell it to go on. OSError if the maps cannot
    be written: the caller closes the channel, the child reads EOF instead and fails
    its setup."""
    if spec.namespaced:
        outer = (namespaces.SANDBOX_ID,) * 2 if spec.host_root else (os.getuid(), os.getgid())
        namespaces.map_child_ids(pid, *outer, deny_setgroups=not spec.host_root)
    os.write(go_w, b"1")


def go_channel() -> tuple[int, int]:
    """(child's end, fork server's end): a Unix socket pair, so that the child can
    send a socket back on it."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    return theirs.detach(), ours.detach()


def is_listening_tcp(fd: int) -> bool:
    try:
        with socket.socket(fileno=os.dup(fd)) as s:
            return (s.family == socket.AF_INET and s.type == socket.SOCK_STREAM
                    and s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) == 1)
    except OSError:
        return False


def receive_listener(go_fd: int) -> int | None:
    """The network profile's child sent its proxy listener before "ready": it must be
    waiting on the go channel (closed here) now, a listening TCP socket; None if not."""
    go = socket.socket(fileno=go_fd)
    try:
        go.setblocking(False)
        _, fds, _, _ = socket.recv_fds(go, 1, 1)
    except OSError:
        fds = []
    finally:
        go.close()
    for fd in fds[1:]:
        os.close(fd)
    if fds and is_listening_tcp(fds[0]):
        return fds[0]
    if fds:
        os.close(fds[0])
    return None

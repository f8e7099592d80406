"""The fork server's children as a whole: each one born (cloned, from the cloner when it
serves the spec, with its pipes registered for the fork server's loop), the warm pool
of children hardened in advance, and their end (reaped, their descriptors closed)."""

from __future__ import annotations

import os
import select
import selectors
import time

from sandbox import child as child_mod
from sandbox import libc
from sandbox.forkserver import spawning
from sandbox.forkserver.children import Child, kill, log, unread_bytes
from sandbox.forkserver.cloner import Cloner, ClonerLost

BACKOFF = 1.0   # seconds without a pool refill after a clone or a pooled child failed


class ChildPool:
    def __init__(self, selector: selectors.BaseSelector, size: int, on_exit):
        self.selector = selector
        self.size = size
        self.on_exit = on_exit              # called with a child whose exit was seen outside the loop
        self.children: dict[int, Child] = {}   # by pid
        self.spec: child_mod.ChildSpec | None = None
        self.own_pidfd = os.pidfd_open(os.getpid())  # lets a child see the fork server die
        self.cloner: Cloner | None = None   # once started: the children of self.spec come from it
        self.strays: set[int] = set()       # children a dead cloner made, not yet reaped (clone)
        self.spawn_backoff_until = 0.0

    def start(self, spec: child_mod.ChildSpec) -> None:
        """From now on the pool holds children of `spec`, cloned by the cloner."""
        self.spec = spec
        self.cloner = Cloner.start(spec, self.own_pidfd)

    def take_ready(self) -> Child | None:
        for c in list(self.children.values()):
            if c.request is None and c.status is None and self.exited_unnoticed(c):
                continue  # killed from outside before its exit event was handled
            if c.state == "ready" and c.request is None and c.status is None and c.session is None:
                return c
        # none ready (the pool drains under load): the oldest child still hardening
        # will be ready sooner than a fresh fork; it runs the request once ready
        starting = [c for c in self.children.values()
                    if c.state == "starting" and c.request is None and c.status is None and c.session is None]
        return min(starting, key=lambda c: c.started, default=None)

    def exited_unnoticed(self, c: Child) -> bool:
        readable, _, _ = select.select([c.pidfd], [], [], 0)
        if readable:
            self.on_exit(c)
        return c.status is not None

    def idle(self) -> int:
        """Pooled children not yet given a request (ready, or still hardening)."""
        return sum(1 for c in self.children.values()
                   if c.request is None and c.status is None and c.state in ("starting", "ready")
                   and c.session is None)

    def needs_refill(self) -> bool:
        return self.idle() < self.size

    def refill(self) -> None:
        if self.spec is not None and self.needs_refill() and time.monotonic() >= self.spawn_backoff_until:
            self.spawn()

    def spawn(self, spec: child_mod.ChildSpec | None = None) -> Child | None:
        spec = spec or self.spec
        self.reap_strays()
        while True:
            pipes = [os.pipe() for _ in range(4)] + [spawning.go_channel()]  # request, result, stdout, stderr, go
            (req_r, req_w), (res_r, res_w), (out_r, out_w), (err_r, err_w), (go_r, go_w) = pipes
            try:
                pid = self.clone(spec, [req_r, res_w, out_w, err_w, go_r])
                break
            except (OSError, ClonerLost) as exc:
                for pair in pipes:
                    for fd in pair:
                        os.close(fd)
                if isinstance(exc, ClonerLost):
                    continue  # cloned directly now, with pipes no stray child holds
                log(f"clone failed: {exc}")
                self.spawn_backoff_until = time.monotonic() + BACKOFF
                return None
        for fd in (req_r, res_w, out_w, err_w, go_r):
            os.close(fd)
        try:
            spawning.let_go(pid, spec, go_w)
            let_go = True
        except OSError as exc:
            log(f"could not map the ids of child {pid}: {exc}")
            let_go = False
        c = Child(pid=pid, pidfd=os.pidfd_open(pid), result_r=res_r, stdout_r=out_r, stderr_r=err_r,
                  request_w=req_w, started=time.monotonic())
        if let_go and spec.network:
            c.go = go_w  # the child sends its proxy listener back on it
        else:
            os.close(go_w)
        for fd, kind in ((res_r, "result"), (out_r, "stdout"), (err_r, "stderr")):
            os.set_blocking(fd, False)
            c.open_fds.add(fd)
            self.selector.register(fd, selectors.EVENT_READ, (kind, c))
        os.set_blocking(req_w, False)
        self.selector.register(c.pidfd, selectors.EVENT_READ, ("pidfd", c))
        self.children[pid] = c
        return c

    def clone(self, spec: child_mod.ChildSpec, ends: list[int]) -> int:
        """The pid of a new child holding `ends`, from the cloner when it serves
        this spec (every child but the start-up probe). ClonerLost when the cloner
        died or hung on this clone: it may have made a child that holds copies of
        `ends` before it went (ours, by CLONE_PARENT, its pid unknown), so the caller
        must close them and never hand them to another child; that child reads EOF
        where it waits for its id maps, fails its setup and is reaped as a stray."""
        if spec is self.spec and self.cloner is not None:
            try:
                return self.cloner.clone(ends)
            except ConnectionError:
                log("the cloner is gone: cloning directly from now on")
                self.cloner.close()
                self.cloner = None
                known = set(self.children)
                self.strays.update(pid for pid in libc.children_of_self() if pid not in known)
                raise ClonerLost from None
        return spawning.clone_directly(spec, ends, self.own_pidfd)

    def reap_strays(self) -> None:
        """Children a dead cloner made for us: reaped once they have exited."""
        for pid in list(self.strays):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.strays.discard(pid)

    def reap(self, c: Child) -> bool:
        """Whether the child has exited now (its status and usage recorded, its pidfd,
        request pipe and unsent listener closed); False when it still runs or was reaped."""
        if c.status is not None:
            return False  # already reaped: its pidfd is closed and the number may be another child's
        try:
            pid, status, rusage = os.wait4(c.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status, rusage = c.pid, 0, None
        if pid == 0:
            return False
        self.selector.unregister(c.pidfd)
        os.close(c.pidfd)
        c.status, c.rusage, c.exited_at = status, rusage, time.monotonic()
        for fd in (c.go, c.listener):
            if fd is not None:
                os.close(fd)
        c.go = c.listener = None
        if c.request_w is not None:
            c.request_unread = unread_bytes(c.request_w) if c.request is not None else 0
            if c.request_w in self.selector.get_map():
                self.selector.unregister(c.request_w)
            os.close(c.request_w)
            c.request_w = None
        if c.request is None and c.setup_error:
            log(f"a pooled child failed to start: {c.setup_error}")
            self.spawn_backoff_until = time.monotonic() + BACKOFF
        return True

    def close_fd(self, c: Child, fd: int) -> None:
        if fd in c.open_fds:
            c.open_fds.discard(fd)
            self.selector.unregister(fd)
            os.close(fd)

    def close(self) -> None:
        if self.cloner is not None:
            self.cloner.close()
            self.cloner = None
        for c in list(self.children.values()):
            kill(c)
        for c in list(self.children.values()):
            try:
                os.waitpid(c.pid, 0)
            except ChildProcessError:
                pass

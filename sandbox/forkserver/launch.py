"""Spawning the fork server process, apart from talking to it.

The spawn is synchronous and needs no event loop, so the server can start the fork
server before it imports the MCP SDK: with the data-science profile the fork server's
imports (numpy, pandas, ...) then run beside the server's own instead of after them.

The process gets a clean environment (no secret of the server's reaches it, hence none
can reach a child), /dev/null for stdin and stdout (the server's stdout is the MCP
channel), the server's stderr, and only the sockets named here.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass

from sandbox import profiles

FORK_SERVER_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **profiles.LIBRARY_ENV}
BOOT = ("import sys, json; c = json.loads(sys.argv[1]); sys.path[:] = c['sys_path']; "
        "from sandbox.forkserver.fork_server import main; main()")


class ForkServerProcess:
    """The spawned process, awaited through its pidfd (no child watcher, no thread)."""

    def __init__(self, popen: subprocess.Popen):
        self._popen = popen
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    def kill(self) -> None:
        self._popen.kill()   # (a no-op once it was reaped)

    async def wait(self) -> int:
        if self._popen.poll() is None:
            pidfd = os.pidfd_open(self.pid)
            loop = asyncio.get_running_loop()
            exited = loop.create_future()
            loop.add_reader(pidfd, lambda: exited.done() or exited.set_result(None))
            try:
                await exited
            finally:
                loop.remove_reader(pidfd)
                os.close(pidfd)
        return self._popen.wait()


@dataclass
class Launched:
    """A fork server just spawned: its process and the runner's ends of its sockets."""
    process: ForkServerProcess
    control: socket.socket
    fd_channel: socket.socket | None   # network profile: the proxy listeners arrive here

    def discard(self) -> None:
        """A launch nobody will use: the process is killed, the sockets closed."""
        self.process.kill()
        self.control.close()
        if self.fd_channel is not None:
            self.fd_channel.close()


def launch(config: dict, *, network: bool) -> Launched:
    """Spawn a fork server with `config` (the sockets' numbers are added here)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    fds_ours, fds_theirs = (socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET) if network else (None, None))
    config = {**config, "parent_pid": os.getpid(), "ctl_fd": theirs.fileno()}
    passed = [theirs]
    if fds_theirs is not None:
        config["fd_channel"] = fds_theirs.fileno()
        passed.append(fds_theirs)
    try:
        popen = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", BOOT, json.dumps(config)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=None,
            pass_fds=[s.fileno() for s in passed], env=FORK_SERVER_ENV, cwd="/", close_fds=True)
    except BaseException:
        ours.close()
        if fds_ours is not None:
            fds_ours.close()
        raise
    finally:
        for s in passed:
            s.close()
    return Launched(ForkServerProcess(popen), ours, fds_ours)

"""Sandboxes that share the fork server's empty network namespace (as root, with
Landlock ABI 6 and seccomp: namespaces.py) cannot reach each other through it.

Two sandboxes run at once with RestrictedPython off (real sockets): the first
binds an abstract stream socket and an abstract datagram socket and waits; the
second, started while the first waits, connects and sends to both names. Each
reports the inode of its network namespace, so the test knows whether the two
shared one; with Landlock or seccomp off they must not, and the second then
finds nothing under those names at all."""

from __future__ import annotations

import asyncio
import os
import secrets

import pytest

from runner_harness import BASIC, MiB, SyncRunner
from sandbox import landlock
from sandbox.runner import ExecRequest

SHARED_HERE = os.geteuid() == 0 and landlock.abi_version() >= 6

LISTENER = """
import os, socket, select
name = {name!r}
stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
stream.bind(name)
stream.listen(4)
datagram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
datagram.bind(name + b'-dgram')
# our own sockets answer us: the probe below would see a connection if one came
own = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
own.connect(name)
peer, _ = stream.accept()
peer.close(); own.close()
ready, _, _ = select.select([stream, datagram], [], [], 4.0)
result = {{"netns": os.stat('/proc/self/ns/net').st_ino, "own connection": True,
          "heard from outside": [s.type.name for s in ready]}}
"""

PROBE = """
import os, socket
name = {name!r}
def attempt(kind, action):
    s = socket.socket(socket.AF_UNIX, kind)
    try:
        action(s)
        return 'reached'
    except OSError as exc:
        return type(exc).__name__
    finally:
        s.close()
result = {{"netns": os.stat('/proc/self/ns/net').st_ino,
          "connect": attempt(socket.SOCK_STREAM, lambda s: s.connect(name)),
          "sendto": attempt(socket.SOCK_DGRAM, lambda s: s.sendto(b'x', name + b'-dgram'))}}
"""


def run_pair(runner: SyncRunner) -> tuple[dict, dict]:
    name = b"\0sbx-shared-net-" + secrets.token_hex(6).encode()

    def request(code: str) -> ExecRequest:
        return ExecRequest(code=code.format(name=name), timeout=15, memory_limit=128 * MiB,
                           allowed_modules=frozenset(BASIC), restricted=False)

    async def both():
        first = asyncio.ensure_future(runner.runner.execute(request(LISTENER)))
        await asyncio.sleep(1.0)   # the listener is bound by now
        second = await runner.runner.execute(request(PROBE))
        return await first, second

    listener, probe = runner.loop.run_until_complete(both())
    assert listener["success"] and probe["success"], (listener, probe)
    return listener["result"], probe["result"]


@pytest.fixture(params=["every layer", "landlock off", "seccomp off"])
def runner(request):
    disabled = frozenset() if request.param == "every layer" else frozenset({request.param.split()[0]})
    r = SyncRunner(pool_size=2, disabled_layers=disabled)
    yield request.param, r
    r.close()


def test_sandboxes_cannot_reach_each_other_through_a_network_namespace(runner):
    mode, r = runner
    listener, probe = run_pair(r)
    assert listener["own connection"] and listener["heard from outside"] == [], listener
    assert "reached" not in (probe["connect"], probe["sendto"]), probe
    shared = listener["netns"] == probe["netns"]
    assert shared == (SHARED_HERE and mode == "every layer"), (mode, listener, probe)
    if shared:  # Landlock's scope refuses another domain's abstract socket
        assert probe["connect"] == "PermissionError" and probe["sendto"] == "PermissionError", probe
    else:       # a namespace of its own: nothing is bound under that name
        assert probe["connect"] == "ConnectionRefusedError" and probe["sendto"] == "ConnectionRefusedError", probe


def test_get_sandbox_info_says_which_network_namespace_the_sandboxes_have():
    r = SyncRunner(pool_size=0)
    try:
        detail = r.layers()["namespaces"]["detail"]
    finally:
        r.close()
    expected = "shared by the sandboxes" if SHARED_HERE else "an empty network namespace of its own"
    assert expected in detail, detail

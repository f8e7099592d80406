"""Sandboxes that share the fork server's empty network namespace (as root, with
Landlock ABI 6 and seccomp: namespaces.py) cannot reach each other through it.

Two sandboxes run at once with RestrictedPython off (real sockets): the first
binds an abstract stream socket and an abstract datagram socket and waits; the
second, started while the first waits, connects and sends to both names. Each
reports the inode of its network namespace, so the test knows whether the two
shared one; with Landlock or seccomp off they must not, and the second then
finds nothing under those names at all. Last, a process beside the sandboxes, in
the fork server's namespace, binds the names: no sandbox of any profile reaches
it, with RestrictedPython on and off."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys

import pytest

from runner_harness import BASIC, MiB, SyncRunner
from slowness import scaled
from sandbox import landlock
from sandbox.forkserver.runner import ExecRequest

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
print('listening', flush=True)
ready, _, _ = select.select([stream, datagram], [], [], {wait})
result = {{"netns": os.stat('/proc/self/ns/net').st_ino, "own connection": True,
          "heard from outside": [s.type.name for s in ready]}}
"""

REACH_OUT = """
import socket
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
result = {{"connect": attempt(socket.SOCK_STREAM, lambda s: s.connect(name)),
          "sendto": attempt(socket.SOCK_DGRAM, lambda s: s.sendto(b'x', name + b'-dgram'))}}
"""
PROBE = REACH_OUT + """
import os
result['netns'] = os.stat('/proc/self/ns/net').st_ino
try:   # what is bound in the namespace, by name: /proc/net/unix
    open('/proc/net/unix').close()
    result['proc net'] = 'readable'
except OSError as exc:
    result['proc net'] = type(exc).__name__
"""

def run_pair(runner: SyncRunner) -> tuple[dict, dict]:
    name = b"\0sbx-shared-net-" + secrets.token_hex(6).encode()
    wait = scaled(6)   # the listener's wait: the probe's whole run fits in it

    def request(code: str) -> ExecRequest:
        return ExecRequest(code=code.format(name=name, wait=wait), timeout=wait + 30, memory_limit=128 * MiB,
                           allowed_modules=frozenset(BASIC), restricted=False)

    async def both():
        listening = asyncio.Event()
        first = asyncio.ensure_future(runner.runner.execute(request(LISTENER),
                                                            on_output=lambda line: listening.set()))
        # the probe starts once the listener printed that it is bound (or it ended)
        await asyncio.wait([first, asyncio.ensure_future(listening.wait())],
                           return_when=asyncio.FIRST_COMPLETED)
        second = await runner.runner.execute(request(PROBE))
        return await first, second

    listener, probe = runner.loop.run_until_complete(both())
    assert listener["success"] and probe["success"], (listener, probe)
    return listener["result"], probe["result"]


@pytest.fixture(params=["every layer", "landlock off", "seccomp off"])
def runner(request):
    disabled = frozenset() if request.param == "every layer" else frozenset({request.param.split()[0]})
    r = SyncRunner(pool_size=2, disabled_layers=disabled, max_timeout=300)
    yield request.param, r
    r.close()


def test_sandboxes_cannot_reach_each_other_through_a_network_namespace(runner):
    mode, r = runner
    listener, probe = run_pair(r)
    assert listener["own connection"] and listener["heard from outside"] == [], listener
    assert "reached" not in (probe["connect"], probe["sendto"]), probe
    shared = listener["netns"] == probe["netns"]
    assert shared == (SHARED_HERE and mode == "every layer"), (mode, listener, probe)
    if shared:  # Landlock's scope refuses another domain's abstract socket, and hides the names
        assert probe["connect"] == "PermissionError" and probe["sendto"] == "PermissionError", probe
        assert probe["proc net"] == "PermissionError", probe
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


# ----------------------------------------------------------------------------- a socket beside the sandboxes

HOST_LISTENER = r"""
import ctypes, json, os, select, socket, sys
zygote, name = int(sys.argv[1]), sys.argv[2].encode()
target = os.open(f"/proc/{zygote}/ns/net", os.O_RDONLY)
if os.fstat(target).st_ino != os.stat("/proc/self/ns/net").st_ino:   # (as root: the shared one)
    assert ctypes.CDLL(None, use_errno=True).setns(target, 0x40000000) == 0, ctypes.get_errno()
stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
stream.bind(b"\0" + name)
stream.listen(4)
datagram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
datagram.bind(b"\0" + name + b"-dgram")
print("ready", flush=True)
select.select([sys.stdin], [], [], float(sys.argv[3]))   # the test closes our stdin when the snippet is done
ready, _, _ = select.select([stream, datagram], [], [], 0)
print(json.dumps([s.type.name for s in ready]), flush=True)
"""


@pytest.fixture(scope="module", params=["basic", "filesystem", "network"])
def profile_runner(request):
    r = SyncRunner(pool_size=1, **({request.param: True} if request.param != "basic" else {}))
    yield r
    r.close()


@pytest.mark.parametrize("restricted", [True, False], ids=["RestrictedPython on", "RestrictedPython off"])
def test_a_socket_bound_in_the_fork_servers_namespace_is_out_of_reach(profile_runner, restricted):
    """What a process beside the sandboxes (in the fork server's network namespace, the
    one the sandboxes share as root) binds, no sandbox reaches: in every profile, with
    RestrictedPython on and off (asked to allow the socket module too)."""
    name = "sbx-beside-" + secrets.token_hex(6)
    helper = subprocess.Popen([sys.executable, "-c", HOST_LISTENER, str(profile_runner.runner.fork_server_pid()),
                               name, "300"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert helper.stdout.readline().strip() == "ready"
        answer = profile_runner.run(REACH_OUT.format(name=b"\0" + name.encode()), restricted=restricted,
                                    allowed=BASIC | {"socket"})
        helper.stdin.close()
        heard = helper.stdout.readline()
    finally:
        helper.kill()
        helper.wait()
    assert heard.strip() == "[]", heard
    if answer["success"]:
        assert set(answer["result"]) == {"connect", "sendto"}, answer
        assert "reached" not in answer["result"].values(), answer
    else:   # RestrictedPython refuses the socket module itself
        assert restricted and "socket" in answer["error"], answer

"""Attacks on the one-process child itself (RestrictedPython off, so the snippet
uses os, ctypes and /proc freely): the snippet is PID 1 of its namespace, its
user namespace was mapped from outside, and the fork server's descriptors
were all closed before it ran. Each attack runs with every layer on, and with
Landlock off where Landlock alone would hide /proc (so that the rest holds on
its own)."""

from __future__ import annotations

import os

import pytest

from runner_harness import SyncRunner

IS_ROOT = os.geteuid() == 0


@pytest.fixture(scope="module", params=["all layers", "landlock off"])
def runner(request):
    disabled = frozenset({"landlock"}) if request.param == "landlock off" else frozenset()
    r = SyncRunner(pool_size=1, disabled_layers=disabled)
    yield r
    r.close()


def run(runner, code: str) -> dict:
    answer = runner.run(code, restricted=False, timeout=10)
    assert answer["success"], answer
    return answer["result"]


def still_fine(runner) -> None:
    answer = runner.run("result = 6 * 7")
    assert answer["success"] and answer["result"] == 42, answer


def test_only_its_own_pipes_are_open(runner):
    probe = run(runner, """
import os
found = []
for fd in range(0, 1024):
    try:
        os.fstat(fd)
        found.append(fd)
    except OSError:
        pass
result = found
""")
    # stdin, stdout, stderr and the result pipe; no request pipe, no go pipe, no
    # pidfd of the fork server, nothing of another child
    assert probe == [0, 1, 2, 4], probe


def test_the_id_maps_cannot_be_rewritten_nor_groups_regained(runner):
    got = run(runner, """
import os
def attempt(path, text):
    try:
        with open(path, 'w') as f:
            f.write(text)
        return 'written'
    except OSError as e:
        return type(e).__name__
result = {
    'uid_map': attempt('/proc/self/uid_map', '0 0 4294967295\\n'),
    'gid_map': attempt('/proc/self/gid_map', '0 0 4294967295\\n'),
    'setgroups': attempt('/proc/self/setgroups', 'allow'),
    'uid': os.getuid(),
}
try:
    os.setgroups([0])
    result['setgroups([0])'] = 'ok'
except OSError as e:
    result['setgroups([0])'] = type(e).__name__
for name, fn in (('setuid(0)', lambda: os.setuid(0)), ('setresuid', lambda: os.setresuid(0, 0, 0))):
    try:
        fn()
        result[name] = 'ok'
    except OSError as e:
        result[name] = type(e).__name__
""")
    assert got["uid"] == 1000, got
    for key in ("uid_map", "gid_map", "setgroups"):
        assert got[key] != "written", got
    for key in ("setgroups([0])", "setuid(0)", "setresuid"):
        assert got[key] != "ok", got
    still_fine(runner)


def test_signals_from_inside_do_not_end_it_early(runner):
    got = run(runner, """
import os, signal
seen = {}
for target in (1, -1, 0):
    try:
        os.kill(target, signal.SIGKILL)
        seen[target] = 'sent'
    except OSError as e:
        seen[target] = type(e).__name__
result = {'alive': True, 'pid': os.getpid(), 'ppid': os.getppid(), 'seen': {str(k): v for k, v in seen.items()}}
""")
    # PID 1 ignores signals from its own namespace; -1 reaches only the namespace
    assert got["alive"] and got["pid"] == 1 and got["ppid"] == 0, got
    still_fine(runner)


def test_no_other_process_is_visible_or_reachable(runner):
    got = run(runner, """
import os, signal
found = []
for pid in range(2, 4096):
    try:
        os.kill(pid, 0)
        found.append(pid)
    except ProcessLookupError:
        pass
    except OSError as e:
        found.append((pid, type(e).__name__))
result = found
""")
    assert got == [], got


def test_the_host_uid_behind_the_sandbox_owns_nothing_here(runner):
    if runner.layers()["landlock"]["active"]:
        pytest.skip("Landlock hides /proc/self/uid_map: checked with it off")
    got = run(runner, "result = open('/proc/self/uid_map').read().split()")
    outer = "65534" if IS_ROOT else str(os.getuid())
    assert got == ["1000", outer, "1"], got

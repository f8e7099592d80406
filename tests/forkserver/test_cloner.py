"""The cloner: the fork server's quiet helper that every sandbox child is
cloned from (sandbox/forkserver/cloner.py). The children stay the fork server's own, the
cloner holds nothing of the server's, dies with the fork server, and the
sandbox keeps working without it."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "redteam"))

from mcp_client import CLONER, name_of, parent_of, state_of, wait_until  # noqa: E402
from mcpsync import children_of  # noqa: E402
from runner_harness import BASIC, MiB, SyncRunner  # noqa: E402

from sandbox.forkserver.runner import ExecRequest, Runner, RunnerConfig  # noqa: E402

SNIPPET_PIDS = "import os\nresult = [os.getpid(), os.getppid()]"


def the_cloner(zygote: int) -> int:
    """The fork server's one child named CLONER. A child just cloned from it carries that
    name too until its first step renames it (a pool refill may be that far along), so the
    answer is the one left once every other has renamed itself."""
    def cloners():
        return [p for p in children_of(zygote) if name_of(p) == CLONER]
    assert wait_until(lambda: len(cloners()) == 1, 60), [(p, name_of(p)) for p in children_of(zygote)]
    return cloners()[0]


@pytest.fixture
def runner():
    r = SyncRunner(pool_size=2)
    yield r
    r.close()


def test_the_children_are_the_fork_servers_and_the_cloner_holds_no_fd_of_the_server(runner):
    assert runner.run("result = 1")["success"]
    zygote = runner.runner.fork_server_pid()
    cloner = the_cloner(zygote)
    assert wait_until(lambda: len(children_of(zygote)) >= 3, 60), children_of(zygote)
    sandboxes = [p for p in children_of(zygote) if p != cloner]
    # a child just cloned carries the cloner's name until its first step renames it
    renamed = lambda: all(name_of(p) == "sandbox" for p in sandboxes)  # noqa: E731
    assert sandboxes and wait_until(renamed, 60), [(p, name_of(p)) for p in sandboxes]
    assert all(parent_of(p) == zygote for p in sandboxes)
    # its socket to the fork server (3) and the fork server's pidfd (4), nothing else of the
    # server's: not the control socket, not a child's pipe
    fds = {int(fd): os.readlink(f"/proc/{cloner}/fd/{fd}") for fd in os.listdir(f"/proc/{cloner}/fd")}
    assert set(fds) <= {0, 1, 2, 3, 4}, fds
    assert fds[3].startswith("socket:") and "pidfd" in fds[4], fds


def test_a_killed_cloner_leaves_the_sandbox_working(runner):
    """Killed from outside (the OOM killer): the fork server notices at the next
    clone, reaps it and clones directly; no request fails for it."""
    assert runner.run("result = 1")["success"]
    zygote = runner.runner.fork_server_pid()
    cloner = the_cloner(zygote)
    os.kill(cloner, signal.SIGKILL)
    for i in range(6):   # drains the pool: the refills need a clone
        answer = runner.run(f"result = {i}")
        assert answer["success"] and answer["result"] == i, (answer.get("error_type"), answer.get("error"))
    assert wait_until(lambda: state_of(cloner) is None, 60), f"the dead cloner was not reaped: {state_of(cloner)}"
    assert not [p for p in children_of(zygote) if name_of(p) == CLONER]


def test_the_cloner_dies_with_the_fork_server():
    r = SyncRunner(pool_size=1)
    try:
        assert r.run("result = 1")["success"]
        zygote = r.runner.fork_server_pid()
        cloner = the_cloner(zygote)
        os.kill(zygote, signal.SIGKILL)
        assert wait_until(lambda: state_of(cloner) in (None, "Z", "X"), 60), "the cloner outlived the fork server"
    finally:
        r.close()


def test_a_snippet_sees_no_process_but_itself(runner):
    """With RestrictedPython off: PID 1 of its own pid namespace, its parent
    outside it (0), no other pid to signal (not the cloner, not the fork server),
    and the cloner is still there afterwards."""
    answer = runner.run(SNIPPET_PIDS + "\nimport signal\ntry:\n    os.kill(2, signal.SIGKILL)\n"
                        "    result.append('sent')\nexcept OSError as e:\n    result.append(e.errno)",
                        restricted=False)
    assert answer["success"], answer
    if not runner.layers()["namespaces"]["active"]:
        pytest.skip("the namespaces layer is not active here")
    assert answer["result"][:2] == [1, 0], answer
    assert answer["result"][2] == 3, answer   # ESRCH: nothing but itself in its pid namespace
    assert the_cloner(runner.runner.fork_server_pid())


def test_a_stuck_cloner_stalls_the_fork_server_once_at_most(runner):
    """Stopped (SIGSTOP, a debugger): the fork server gives up on it after
    CLONE_TIMEOUT, kills it and clones directly; every request is answered."""
    from sandbox.forkserver.cloner import CLONE_TIMEOUT
    assert runner.run("result = 1")["success"]
    zygote = runner.runner.fork_server_pid()
    cloner = the_cloner(zygote)
    os.kill(cloner, signal.SIGSTOP)
    started = time.monotonic()
    for i in range(4):
        answer = runner.run(f"result = {i}", timeout=30)
        assert answer["success"] and answer["result"] == i, answer
    assert time.monotonic() - started < 3 * CLONE_TIMEOUT
    assert wait_until(lambda: state_of(cloner) is None, 60), f"the stuck cloner was not ended: {state_of(cloner)}"


def _a_cloner_that_dies_after_cloning() -> dict:
    """In a throw-away process, a fork server whose cloner makes a child (the stray)
    holding the ends it was sent and dies before it answers: the OOM killer between
    the two. The stray waits for its go as a real child does and reports what it read."""
    import socket

    from sandbox import child as child_mod
    from sandbox.forkserver import fork_server
    report_r, report_w = os.pipe()
    strays = []

    class DiesAfterCloning:
        def clone(self, ends):
            pid = os.fork()
            if pid == 0:  # holding nothing but what a cloned child holds (and the report pipe)
                for fd in map(int, os.listdir("/proc/self/fd")):
                    if fd not in (ends[4], report_w):
                        try:
                            os.close(fd)
                        except OSError:
                            pass
                os.write(report_w, b"go" if os.read(ends[4], 1) else b"eof")
                os._exit(0)
            strays.append(pid)
            raise ConnectionError("the cloner is gone")

        def close(self):
            pass

    ctl, _server_end = socket.socketpair()
    z = fork_server.ForkServer(ctl, {"max_output": 1 << 16, "pool_size": 0})
    z.pool.spec = child_mod.ChildSpec(layers=frozenset(), network=False, hard_limits=None, seccomp_program=None,
                                 host_root=False, filesystem=False, workspace_size=0, readable=(),
                                 empty_network_shared=False)
    z.pool.cloner = DiesAfterCloning()
    c = z.pool.spawn()
    read = os.read(report_r, 8).decode()
    known = getattr(z.pool, "strays", set())   # (getattr: the test says what failed on a fork server without it)
    known_stray = set(strays) <= known
    deadline = time.monotonic() + 60
    while known and time.monotonic() < deadline:
        time.sleep(0.02)
        z.pool.reap_strays()
    return {"stray_read": read, "known_stray": known_stray, "left": sorted(known),
            "new_child": c is not None and c.pid not in strays, "cloner": z.pool.cloner is None}


def test_a_child_made_by_a_cloner_that_died_gets_no_request():
    """The stray holds copies of the pipes it was sent: the fork server must not
    hand them to the child it clones next (the stray took that child's go, or its
    request, and the request failed), and reaps the stray once it has exited."""
    from forked import child_value
    outcome = child_value(_a_cloner_that_dies_after_cloning)
    assert outcome == {"stray_read": "eof", "known_stray": True, "left": [], "new_child": True,
                       "cloner": True}, outcome


def test_children_of_one_template_do_not_share_their_random_state(runner):
    """Every child starts from the cloner's memory: the random module must be
    reseeded in each (its at-fork hook), or one execution predicts the next."""
    values = [runner.run("import random\nresult = random.getrandbits(64)")["result"] for _ in range(6)]
    assert len(set(values)) == len(values), values


SEES_OTHERS = """import os, resource
mine = '/tmp/only-' + TAG
with open(mine, 'w') as f:
    f.write('secret')
limits = {name: list(resource.getrlimit(getattr(resource, name)))
          for name in ('RLIMIT_CORE', 'RLIMIT_MSGQUEUE', 'RLIMIT_RTPRIO', 'RLIMIT_MEMLOCK', 'RLIMIT_NOFILE')}
def exists(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
result = {'tmp': sorted(os.listdir('/tmp')), 'pids': [p for p in range(1, 4096) if exists(p)],
          'limits': limits}
"""


def test_two_children_of_one_template_reach_nothing_of_each_other():
    """Two sessions' children alive at once, both cloned from the cloner: each writes its
    /tmp, and neither sees the other's file nor its process; both hold the limits the
    template applied for them."""
    async def scenario():
        runner = Runner(RunnerConfig(max_timeout=60, max_memory=512 * MiB, pool_size=2))
        await runner.start()
        try:
            if not runner.layers()["namespaces"]["active"]:
                pytest.skip("the namespaces layer is not active here")
            seen = {}
            for name in ("a", "b"):
                assert (await runner.open_session(name))["ok"]
                code = SEES_OTHERS.replace("TAG", repr(name))
                answer = await runner.execute(ExecRequest(code=code, timeout=30, memory_limit=128 * MiB,
                                                          allowed_modules=BASIC, restricted=False), session=name)
                assert answer["success"], (answer.get("error_type"), answer.get("error"), answer.get("stderr"))
                seen[name] = answer["result"]
            again = await runner.execute(ExecRequest(code="import os\nresult = sorted(os.listdir('/tmp'))",
                                                     timeout=30, memory_limit=128 * MiB, allowed_modules=BASIC,
                                                     restricted=False), session="a")
            return seen, again
        finally:
            await runner.aclose()

    seen, again = asyncio.run(scenario())
    assert "only-a" in seen["a"]["tmp"] and "only-b" not in seen["a"]["tmp"], seen
    assert "only-b" in seen["b"]["tmp"] and "only-a" not in seen["b"]["tmp"], seen
    assert again["success"] and "only-b" not in again["result"], again   # a is still alive, b too
    assert seen["a"]["pids"] == seen["b"]["pids"] == [1], seen   # itself, nothing else
    for name in ("a", "b"):
        limits = seen[name]["limits"]
        assert limits["RLIMIT_CORE"] == limits["RLIMIT_MSGQUEUE"] == limits["RLIMIT_RTPRIO"] == [0, 0], limits
        assert limits["RLIMIT_MEMLOCK"] == [0, 0] and limits["RLIMIT_NOFILE"] == [64, 64], limits


# ---- huge pages for what the children share (kernel.collapse_to_huge_pages) ----

def can_collapse() -> bool:
    """MADV_COLLAPSE is Linux 6.1; it works in every THP mode but 'never'."""
    release = tuple(int(part) for part in os.uname().release.split(".")[:2])
    try:
        mode = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return False
    return release >= (6, 1) and "[never]" not in mode


def _huge_kb_at(address: int) -> int:
    """AnonHugePages of the mapping of this process that holds `address`."""
    inside, huge = False, 0
    for line in Path("/proc/self/smaps").read_text().splitlines():
        bounds = line.split()[0]
        if "-" in bounds and ":" not in bounds:
            start, end = (int(x, 16) for x in bounds.split("-"))
            inside = start <= address < end
        elif inside and line.startswith("AnonHugePages:"):
            huge = int(line.split()[1])
    return huge


def _mapped(size: int, touched_pages: int):
    """An anonymous private mapping of `size` with its first pages written."""
    import mmap
    import ctypes
    region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    for page in range(touched_pages):
        region[page * mmap.PAGESIZE] = 1
    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    return region, address


def _resident_pages(address: int, size: int) -> int:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    vector = ctypes.create_string_buffer(size // os.sysconf("SC_PAGE_SIZE"))
    assert libc.mincore(address, size, vector) == 0
    return sum(byte & 1 for byte in vector.raw)


@pytest.mark.skipif(not can_collapse(), reason="MADV_COLLAPSE needs Linux 6.1 and THP not 'never'")
def test_dense_memory_is_collapsed_into_huge_pages():
    from sandbox import libc as kernel
    size = 8 << 20
    region, address = _mapped(size, size // os.sysconf("SC_PAGE_SIZE"))
    try:
        assert _huge_kb_at(address) == 0
        assert kernel.collapse_to_huge_pages() >= 4 << 20
        assert _huge_kb_at(address) >= 4096   # (at least the two 2 MB ranges aligned inside)
    finally:
        region.close()


def test_sparse_memory_is_left_alone():
    """A range mostly not in memory is not collapsed: a 2 MB page there would fill it."""
    from sandbox import libc as kernel
    size = 8 << 20
    region, address = _mapped(size, 0)
    for page in range(0, size, 512 << 10):   # one 4 KB page in every 512 KB
        region[page] = 1
    try:
        before = _resident_pages(address, size)
        kernel.collapse_to_huge_pages()
        assert _resident_pages(address, size) == before == 16
        assert _huge_kb_at(address) == 0
    finally:
        region.close()

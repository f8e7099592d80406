"""The hardened runner end to end through its API: ordinary snippets, each
kernel layer alone against the attack it must stop (RestrictedPython off so
the snippet may use os, socket and ctypes freely), bad input, limits, and the
life cycle of the fork server and its children."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from mcp_client import state_of, wait_until
from runner_harness import MiB, SyncRunner, descendants, only_layers
from slowness import scaled

IS_ROOT = os.geteuid() == 0


@pytest.fixture(scope="module")
def full():
    runner = SyncRunner()
    yield runner
    runner.close()


def ok(result: dict) -> dict:
    assert result["success"], result
    return result


def failed(result: dict, error_type: str) -> dict:
    assert not result["success"], result
    assert result["error_type"] == error_type, result
    return result


# ---- ordinary use -----------------------------------------------------------

def test_every_layer_is_active_here(full):
    layers = full.layers()
    for name in ("namespaces", "privilege_drop", "rlimits", "landlock", "seccomp", "restricted_python"):
        assert layers[name]["active"], (name, layers[name])


def test_result_stdout_and_shape(full):
    r = ok(full.run('result = 2 + 2\nprint(f"The answer is: {result}")'))
    assert r["result"] == 4
    assert r["stdout"] == "The answer is: 4\n"
    assert r["variables"] == ["result"]
    for key in ("execution_id", "stderr", "execution_time", "cpu_time", "max_rss_bytes"):
        assert key in r
    assert r["max_rss_bytes"] > 0


def test_last_expression_is_the_result(full):
    assert ok(full.run("x = 20\nx * 2 + 2"))["result"] == 42


# (read with RestrictedPython off: the snippet then sees the child's own modules)
# (the snippet's own module, which a run with RestrictedPython off is, is not counted)
RESOLVED_STATE = ("import sys\nlp = sys.modules['sandbox.restricted.libraries.policy'].POLICY\n"
                  "result = [lp.resolved_with, len([name for name in sys.modules if name != '__sandbox__'])]")


def test_children_start_with_the_library_tables_resolved(full):
    """The fork server resolves library_policy's tables after its last import
    (library_policy.settle): otherwise every child's first import resolves them all
    again, a walk over every module's names that copies much of the child's memory."""
    resolved_with, loaded = ok(full.run(RESOLVED_STATE, restricted=False))["result"]
    assert resolved_with == loaded


def test_a_subset_brings_no_new_module_into_the_child(full):
    """What the subsets are made of is in the fork server (registry.PRELOADED): a
    snippet's `import sqlite3` or `from pathlib import Path` then adds no module, which would
    make the child resolve the library tables again (8-15 ms a run, bench/README.md)."""
    made = ("import sys\nfrom sandbox.restricted import snippet_files\n"
            "from sandbox.restricted.subsets import registry\nbefore = set(sys.modules)\n"
            "for name in registry.SUBSETS:\n    if name != 'asyncio':\n"
            "        registry.make(name, snippet_files.SCRATCH_FILES, PermissionError, None, open)\n"
            "result = sorted(set(sys.modules) - before)")
    assert ok(full.run(made, restricted=False))["result"] == []


def test_children_collect_only_their_own_objects(full):
    """The fork server freezes its objects before the cloner starts: a child's full
    collection then visits only what the child made. Without it, a snippet that made
    300,000 small lists triggered collections over every object inherited (copying
    their pages): 0.5 s against 0.1 s in the data-science profile (bench/README.md)."""
    frozen = ok(full.run("import gc\nresult = gc.get_freeze_count()", restricted=False))["result"]
    assert frozen > 10_000


def test_runtime_error_has_line(full):
    r = failed(full.run("a = 1\nb = 0\nc = a / b\n"), "runtime_error")
    assert r["line"] == 3
    assert "ZeroDivisionError" in r["error"]


def test_import_outside_profile_is_security_violation(full):
    r = failed(full.run("import os\nresult = os.getpid()"), "security_violation")
    assert "os" in r["error"]


def test_output_is_truncated_and_marked():
    runner = SyncRunner(max_output=1000)
    try:
        r = ok(runner.run("for i in range(500):\n    print(f'{i:03d}' + 'x' * 17)"))
        out = r["stdout"]
        assert r["stdout_truncated"] and len(out) <= 1000
        assert out.startswith("000xxx") and out.endswith("499" + "x" * 17 + "\n")  # head and tail
        assert "bytes left out here" in out
    finally:
        runner.close()


def test_output_flood_is_killed_with_output_limit():
    runner = SyncRunner(max_output=10_000)
    try:
        r = failed(runner.run("while True:\n    print('A' * 1000)", timeout=20), "output_limit")
        assert r["stdout_truncated"] and len(r["stdout"]) <= 10_000 and "left out here" in r["stdout"]
    finally:
        runner.close()


def test_output_before_a_timeout_is_kept(full):
    r = failed(full.run("print('before', flush=True)\nwhile True:\n    pass", timeout=scaled(1)), "timeout")
    assert "before" in r["stdout"]


# ---- limits ------------------------------------------------------------------

def test_wall_clock_timeout_kills(full):
    start = time.monotonic()
    failed(full.run("import time\ntime.sleep(60)", timeout=1), "timeout")
    assert time.monotonic() - start < 30  # killed, not left to end its sleep


def test_cpu_bound_c_call_is_killed(full):
    start = time.monotonic()
    r = full.run("x = sum(range(10**12))", timeout=1)
    assert r["error_type"] == "timeout", r
    assert time.monotonic() - start < 30  # killed inside the C call, hours from its end


def test_memory_limit(full):
    failed(full.run("data = b'x' * (512 * 1024 * 1024)", memory=64 * MiB), "memory_limit")
    ok(full.run("data = b'x' * (16 * 1024 * 1024)\nresult = len(data)", memory=64 * MiB))


def test_a_timeout_at_the_memory_limit_says_so(full):
    """OpenBLAS (under numpy and scipy) retries an allocation that fails forever, so a
    BLAS call near the memory limit ends as a timeout, where a longer timeout is no help.
    A timeout while within reach of the memory limit says so, and what to pass instead;
    an ordinary timeout does not."""
    retrying = ("blocks = []\ntry:\n    while True:\n        blocks.append(bytearray(1 << 20))\n"
                "except MemoryError:\n    pass\nwhile True:\n    try:\n        bytearray(32 << 20)\n"
                "    except MemoryError:\n        pass")
    r = failed(full.run(retrying, timeout=scaled(2), memory=64 * MiB), "timeout")
    assert "within reach of its memory limit" in r["error"] and "pass a larger memory_limit" in r["error"], r
    r = failed(full.run("while True:\n    pass", timeout=1), "timeout")
    assert "memory" not in r["error"], r


def test_requested_limits_never_exceed_the_maxima(full):
    # asks for 10 TB and a day; the configured maxima (512 MiB) apply
    r = full.run("x = bytearray(1024 * 1024 * 1024)", memory=10**13, timeout=5)
    assert r["error_type"] == "memory_limit", r


# ---- each kernel layer alone ----------------------------------------------------

@pytest.fixture()
def host_secret():
    fd, path = tempfile.mkstemp(prefix="sbx-host-secret-", dir="/tmp")
    os.write(fd, b"HOSTSECRET-31337")
    os.close(fd)
    os.chmod(path, 0o644)  # world-readable: only the sandbox layers can stop the read
    yield path
    os.unlink(path)


READ_SECRET = "import sys\ntry:\n    print(open({path!r}).read())\nexcept OSError as e:\n    print('blocked', type(e).__name__)\n"


def test_namespaces_alone_hide_host_files_processes_and_network(host_secret):
    runner = SyncRunner(disabled_layers=only_layers("namespaces"))
    try:
        r = runner.run(READ_SECRET.format(path=host_secret), restricted=False)
        assert "HOSTSECRET" not in r["stdout"] and "blocked FileNotFoundError" in r["stdout"], r
        r = ok(runner.run("import os\nresult = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())",
                          restricted=False))
        assert r["result"] == [1], r   # only the snippet: PID 1 of its own namespace
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            port = listener.getsockname()[1]
            r = runner.run(f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=2)",
                           restricted=False)
            assert r["error_type"] == "runtime_error" and "OSError" in (r["error"] + r.get("traceback", "")), r
        r = ok(runner.run("import os\nresult = os.getppid()", restricted=False))
        assert r["result"] == 0  # the parent, outside the namespace, has no pid in it
        r = ok(runner.run("import socket\nresult = socket.gethostname()", restricted=False))
        assert r["result"] == "sandbox"
        # the clocks that count from the host's boot start near zero (a time namespace)
        r = ok(runner.run("import time\nresult = [time.monotonic(), time.clock_gettime(time.CLOCK_BOOTTIME),\n"
                          "          float(open('/proc/uptime').read().split()[0])]", restricted=False))
        host_uptime = time.clock_gettime(time.CLOCK_BOOTTIME)
        assert max(r["result"]) < min(60.0, host_uptime - 1.0), (r["result"], host_uptime)
    finally:
        runner.close()


@pytest.mark.skipif(not IS_ROOT, reason="the uid drop applies when the server runs as root")
def test_privilege_drop_alone_denies_root_files_and_capabilities():
    fd, path = tempfile.mkstemp(prefix="sbx-root-only-", dir="/tmp")
    os.write(fd, b"ROOTONLY")
    os.close(fd)
    os.chmod(path, 0o600)
    runner = SyncRunner(disabled_layers=only_layers("privilege_drop"))
    try:
        r = runner.run(READ_SECRET.format(path=path), restricted=False)
        assert "ROOTONLY" not in r["stdout"] and "blocked PermissionError" in r["stdout"], r
        r = ok(runner.run(
            "import os\nst = dict(l.split(':\\t') for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\n"
            "result = [st[k].strip() for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', 'NoNewPrivs')]"
            " + [os.getuid(), os.getgroups()]", restricted=False))
        assert r["result"] == ["0000000000000000"] * 5 + ["1", 65534, []], r
        r = runner.run("open('/etc/sbx-canary-write', 'w').write('x')", restricted=False)
        assert r["error_type"] == "runtime_error" and "PermissionError" in r["error"], r
        assert not os.path.exists("/etc/sbx-canary-write")
    finally:
        runner.close()
        os.unlink(path)


def test_landlock_alone_denies_reads_writes_and_tcp(host_secret):
    runner = SyncRunner(disabled_layers=only_layers("landlock"))
    try:
        r = runner.run(READ_SECRET.format(path=host_secret), restricted=False)
        assert "HOSTSECRET" not in r["stdout"] and "blocked PermissionError" in r["stdout"], r
        target = host_secret + ".written"
        r = runner.run(f"open({target!r}, 'w').write('x')", restricted=False)
        assert r["error_type"] == "runtime_error" and not os.path.exists(target), r
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            port = listener.getsockname()[1]
            r = runner.run(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)",
                           restricted=False)
            assert r["error_type"] == "runtime_error" and "PermissionError" in r["error"], r
        # ABI >= 6 scopes signals: the fork server outside the domain cannot be signalled
        r = runner.run("import os, signal\nos.kill(os.getppid(), 0)", restricted=False)
        assert r["error_type"] == "runtime_error" and "PermissionError" in r["error"], r
    finally:
        runner.close()


SECCOMP_PROBES = {
    "socket(AF_INET)": ("import socket\nsocket.socket(socket.AF_INET)", "EAFNOSUPPORT", "Address family"),
    "fork": ("import os\nos.fork()", "EPERM", "Operation not permitted"),
    "execve": ("import os\nos.execv('/bin/true', ['true'])", "EPERM", "Operation not permitted"),
    "unshare": ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                "assert libc.unshare(0x10000000) == -1\nraise OSError(ctypes.get_errno(), 'unshare')",
                "EPERM", "[Errno 1]"),
    "ptrace": ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
               "assert libc.ptrace(16, 1, 0, 0) == -1\nraise OSError(ctypes.get_errno(), 'ptrace')",
               "EPERM", "[Errno 1]"),
    "mount": ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
              "assert libc.mount(b'none', b'/tmp', b'tmpfs', 0, None) == -1\n"
              "raise OSError(ctypes.get_errno(), 'mount')", "EPERM", "[Errno 1]"),
}


@pytest.fixture(scope="module")
def seccomp_only():
    runner = SyncRunner(disabled_layers=only_layers("seccomp"))
    yield runner
    runner.close()


@pytest.mark.parametrize("probe", sorted(SECCOMP_PROBES))
def test_seccomp_alone_refuses(seccomp_only, probe):
    code, _errno_name, text = SECCOMP_PROBES[probe]
    r = seccomp_only.run(code, restricted=False)
    assert r["error_type"] == "runtime_error", r
    assert text in r["error"], r


def test_seccomp_alone_kills_x32_calls(seccomp_only):
    r = seccomp_only.run("import ctypes\nctypes.CDLL(None).syscall(0x40000000 | 39)", restricted=False)
    assert r["error_type"] == "security_violation" and r.get("signal") == "SIGSYS", r


def test_rlimits_alone(tmp_path):
    runner = SyncRunner(disabled_layers=only_layers("rlimits"), max_memory=256 * MiB)
    try:
        failed(runner.run("x = bytearray(400 * 1024 * 1024)", memory=64 * MiB, restricted=False), "memory_limit")
        r = runner.run("while True:\n    pass", timeout=1, restricted=False)
        assert r["error_type"] == "timeout", r
        big = tmp_path / "big"
        os.chmod(tmp_path, 0o777)
        r = runner.run(f"open({str(big)!r}, 'wb').write(b'x' * (32 << 20))", restricted=False)
        assert r["error_type"] == "runtime_error" and "File too large" in r["error"], r
        r = runner.run("import os\nfds = [os.open('/dev/null', os.O_RDONLY) for _ in range(200)]", restricted=False)
        assert r["error_type"] == "runtime_error" and "Too many open files" in r["error"], r
        if not IS_ROOT:  # the kernel never applies RLIMIT_NPROC to uid 0: see the next test
            r = runner.run(THREAD_BOMB, restricted=False)
            assert r["error_type"] == "runtime_error" and "thread" in r["error"], r
    finally:
        runner.close()


THREAD_BOMB = ("import threading, time\n"
               "ts = [threading.Thread(target=time.sleep, args=(2,)) for _ in range(100)]\n"
               "[t.start() for t in ts]")


def test_process_limit_holds_for_the_dropped_uid():
    runner = SyncRunner(disabled_layers=only_layers("rlimits", "privilege_drop"))
    try:
        r = runner.run(THREAD_BOMB, restricted=False)
        assert r["error_type"] == "runtime_error" and "thread" in r["error"], r
    finally:
        runner.close()


def test_all_kernel_layers_together_without_restricted_python(full, host_secret):
    r = full.run(READ_SECRET.format(path=host_secret), restricted=False)
    assert "HOSTSECRET" not in r["stdout"], r
    r = full.run("import os\nresult = sorted(os.environ)", restricted=False)
    assert "SANDBOX_CANARY_SECRET" not in str(r["result"]), r
    r = ok(full.run("import os\nopen_fds = []\nfor fd in range(64):\n    try:\n        os.fstat(fd)\n"
                    "        open_fds.append(fd)\n    except OSError:\n        pass\nresult = open_fds",
                    restricted=False))
    assert r["result"] == [0, 1, 2, 4], r  # stdin (/dev/null), stdout, stderr, the result pipe


# ---- bad input -------------------------------------------------------------------

@pytest.mark.parametrize("code,error_type", [
    ("", None),
    ("x = 1\x00", "syntax_error"),
    ("x = '\ud800'", "syntax_error|None"),
    ("def f(:\n", "syntax_error"),
    ("x = " + "-" * 6000 + "1", "syntax_error"),
    ("x = " + "[" * 100_000 + "]" * 100_000, "syntax_error"),
])
def test_bad_source_gets_a_structured_answer(full, code, error_type):
    r = full.run(code)
    expected = {None if e == "None" else e for e in error_type.split("|")} if error_type else {None}
    if error_type:
        expected.add("security_violation")
    assert r["error_type"] in expected, r
    ok(full.run("result = 1"))


def test_ten_megabytes_of_code(full):
    r = full.run("x = 1\n" * (10 * MiB // 6), timeout=20)
    assert r["success"] or r["error_type"] in ("timeout", "memory_limit", "syntax_error"), r
    ok(full.run("result = 1"))


def test_segfault_is_reported_and_contained(full):
    r = failed(full.run("import ctypes\nctypes.string_at(0)", restricted=False), "runtime_error")
    assert r.get("signal") == "SIGSEGV", r
    ok(full.run("result = 1"))


def test_child_that_closes_or_corrupts_its_result_pipe(full):
    r = full.run("import os\nos.close(4)", restricted=False)
    assert r["error_type"] == "internal_error", r
    r = full.run("import os\nos.write(4, b'garbage' * 100)", restricted=False)
    assert r["error_type"] == "internal_error" and "garbage" not in r["error"], r
    r = full.run("import os\nos.write(4, b'\\x00\\x00\\x00\\x02{}')", restricted=False)
    assert r["error_type"] == "internal_error", r
    ok(full.run("result = 1"))


def test_forged_result_frame_is_rejected(full):
    forged = ("import os, json, struct\nbody = json.dumps({'kind': 'result', 'success': True, "
              "'result': 'ESCAPED:forged', 'nonce': None}).encode()\n"
              "os.write(4, struct.pack('>I', len(body)) + body)\nos._exit(0)")
    r = full.run(forged, restricted=False)
    assert "ESCAPED" not in str(r) and r["error_type"] == "internal_error", r


def test_threads_work_but_fork_does_not(full):
    r = ok(full.run("import threading\nout = []\nts = [threading.Thread(target=out.append, args=(i,)) "
                    "for i in range(8)]\nfor t in ts:\n    t.start()\nfor t in ts:\n    t.join()\n"
                    "result = sorted(out)", restricted=False))
    assert r["result"] == list(range(8))
    r = full.run("import os\nos.fork()", restricted=False)
    assert r["error_type"] == "runtime_error", r
    ok(full.run("result = 1"))


# ---- life cycle -------------------------------------------------------------------

def test_zygote_killed_is_healed():
    runner = SyncRunner()
    try:
        ok(runner.run("result = 1"))
        zygote = runner.runner.fork_server_pid()
        os.kill(zygote, signal.SIGKILL)
        assert wait_until(lambda: state_of(zygote) in (None, "Z", "X"), 60)
        assert ok(runner.run("result = 2"))["result"] == 2
    finally:
        runner.close()


def test_no_child_outlives_the_runner():
    runner = SyncRunner(pool_size=2)
    zygote = runner.runner.fork_server_pid()
    ok(runner.run("result = 1"))
    assert wait_until(lambda: descendants(zygote), 60), "the pool should hold children"
    children = descendants(zygote)
    runner.close()

    def alive():
        return [pid for pid in children + [zygote] if state_of(pid) not in (None, "Z", "X")]
    wait_until(lambda: not alive(), 60)
    assert not alive()



# ---- the warm pool ----------------------------------------------------------------------

@pytest.fixture()
def pooled():
    runner = SyncRunner(pool_size=3)
    yield runner
    runner.close()


def wait_for_pool(runner, size: int, timeout: float = 120.0, exclude=()) -> list[int]:
    """The stage-1 pids of the zygote's children, once `size` are there (none of `exclude`)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        zygote = runner.runner.fork_server_pid()
        kids = [int(k) for k in open(f"/proc/{zygote}/task/{zygote}/children").read().split()]
        if len(kids) >= size and not set(kids) & set(exclude):
            return kids
        time.sleep(0.05)
    raise AssertionError("the pool did not fill")


def test_consecutive_executions_share_no_state(pooled):
    wait_for_pool(pooled, 3)
    first = ok(pooled.run("import json, random\ncounter = 41\nrandom.seed(7)\n"))
    assert first["variables"] == ["counter"]
    ok(pooled.run("import os, json\nopen('/tmp/left-behind', 'w').write('x')\njson.sbx_marker = 1\n"
                  "os.environ['SBX_LEFT'] = '1'\ncounter = 41", restricted=False))
    r = ok(pooled.run(
        "import os, json\nresult = [os.path.exists('/tmp/left-behind'), hasattr(json, 'sbx_marker'),\n"
        "          'SBX_LEFT' in os.environ, 'counter' in globals(), 'left-behind' in os.listdir('/tmp')]",
        restricted=False))
    assert r["result"] == [False, False, False, False, False], r


def test_killed_pooled_children_are_replaced(pooled):
    """What the OOM killer does to idle pooled children must never lose or delay the
    next request: many rounds, with both CPUs busy, every one answered correctly."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        for round_ in range(25):
            kids = wait_for_pool(pooled, 3)
            for pid in kids[: 1 + round_ % 3]:  # one, two or all of them
                os.kill(pid, signal.SIGKILL)
            started = time.monotonic()
            answer = pooled.run(f"result = {round_}")
            assert answer.get("result") == round_, (round_, answer)
            # a request handed to a dead child would wait for the fork server's own
            # deadlines (SETUP_TIMEOUT, 20 s): well past this one, even scaled
            assert time.monotonic() - started < min(scaled(5), 15), round_
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    wait_for_pool(pooled, 3)


def test_back_to_back_requests_on_the_pool(pooled):
    wait_for_pool(pooled, 3)
    assert [ok(pooled.run(f"result = {i}"))["result"] for i in range(6)] == list(range(6))


def test_deep_recursion_in_the_hardened_child(full):
    """The same depth in the real child (its stack, its guards): a result, and unbounded
    recursion a RecursionError, never a crash."""
    r = ok(full.run("def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\nresult = depth(950)"))
    assert r["result"] == 950
    r = full.run("def f(n):\n    return f(n + 1) + 1\nf(0)")
    assert r["error_type"] == "runtime_error" and "RecursionError" in r["error"], r


def test_a_package_wildcard_reaches_the_hardened_child():
    """SANDBOX_ALLOWED_IMPORTS=packaging.*: the child imports the submodules, and still
    refuses the modules they hold (packaging.tags.sys)."""
    from sandbox import profiles
    allowed = profiles.allowed_modules(["basic"], ["packaging.*"])
    r = SyncRunner(pool_size=1)
    try:
        answer = r.run("import packaging.version\nresult = str(packaging.version.Version('3.1'))", allowed=allowed)
        assert answer["success"] and answer["result"] == "3.1", answer
        answer = r.run("import packaging.tags\nresult = str(packaging.tags.sys)", allowed=allowed)
        assert answer["error_type"] == "security_violation" and "'sys', which is not allowed" in answer["error"], answer
    finally:
        r.close()

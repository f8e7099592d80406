"""Sessions through a real MCP client: state across calls by explicit handle,
isolation between sessions and from one-shot calls, the limits (count, idle
TTL, lifetime, memory, one call at a time), losing a session always said,
nothing left behind (processes, fds) after 200 sessions or a kill -9."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "redteam"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_client import RawServer, blocking_session, sandboxes, state_of, wait_until  # noqa: E402
from mcpsync import all_descendants, start_time, fork_server_of  # noqa: E402
from slowness import scaled  # noqa: E402

HAVE_PANDAS = importlib.util.find_spec("pandas") is not None


@pytest.fixture(scope="module", params=["rp", "norp"])
def server(request, tmp_path_factory):
    log = tmp_path_factory.mktemp("audit") / "audit.jsonl"
    env = {"SANDBOX_RESTRICTED_PYTHON": "true" if request.param == "rp" else "false",
           "SANDBOX_MAX_SESSIONS": "6", "SANDBOX_AUDIT_LOG": str(log), "SANDBOX_POOL_SIZE": "2",
           **({"SANDBOX_ENABLE_DATA_SCIENCE": "true"} if HAVE_PANDAS else {})}
    with blocking_session(env) as handle:
        handle.mode, handle.audit_log = request.param, log
        yield handle


def session_ends(audit_log) -> list:
    """The audit log's lines recording a session's end."""
    return [line for line in audit_log.read_text().splitlines() if '"session_ended"' in line]


def create(server, **arguments) -> str:
    data, result = server.call("create_session", arguments)
    assert not result.is_error, data
    return data["session_id"]


def run(server, code, session=None, **arguments):
    if session is not None:
        arguments["session_id"] = session
    data, result = server.call("execute_code", {"code": code, "timeout": 20, **arguments})
    return data, result


def close(server, session):
    data, _ = server.call("close_session", {"session_id": session})
    return data


def test_state_survives_three_calls(server):
    session = create(server)
    data, _ = run(server, "import math\nclass Account:\n    def __init__(self, owner):\n        self.owner = owner\n"
                          "        self.balance = 0\n    def deposit(self, n):\n        self.balance += n\n"
                          "        return self.balance\n"
                          "def tax(v):\n    return round(v * 0.2, 2)\n"
                          "acct = Account('ada')\nrows = [1, 2, 3]\nresult = 'loaded'", session)
    assert data["success"] and data["result"] == "loaded" and data["session_id"] == session, data
    data, _ = run(server, "acct.deposit(sum(rows))\nrows.append(10)\ntax(acct.balance) + math.floor(0.5)", session)
    assert data["success"] and data["result"] == 1.2, data
    data, _ = run(server, "result = [acct.owner, acct.deposit(4), len(rows), math.sqrt(16), result]", session)
    assert data["success"] and data["result"] == ["ada", 10, 4, 4.0, "loaded"], data
    assert {"acct", "rows", "tax", "Account"} <= set(data["variables"])
    assert not data["session_ended"]
    assert close(server, session)["closed"] is True


@pytest.mark.skipif(not HAVE_PANDAS, reason="the data-science extra is not installed (make install-datascience)")
def test_a_dataframe_survives(server):
    session = create(server)
    assert run(server, "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]})", session)[0]["success"]
    data, _ = run(server, "df['c'] = df.a * df.b\nint(df.c.sum())", session)
    assert data["success"] and data["result"] == 32, data
    data, _ = run(server, "df.shape[1]", session)
    assert data["result"] == 3, data
    close(server, session)


def test_sessions_are_isolated_from_each_other_and_from_one_shot_calls(server):
    a, b = create(server), create(server)
    plant = ("secret = 'only-in-a'\nimport json\n" +
             ("json.planted = 'module attribute'\n" if server.mode == "norp" else "") +
             ("open('/tmp/planted', 'w').write('file')\n" if server.mode == "norp" else ""))
    assert run(server, plant, a)[0]["success"]
    probe = ("import json\nfound = []\n"
             "try:\n    found.append(secret)\nexcept NameError:\n    pass\n"
             "found.append(getattr(json, 'planted', None))\n" +
             ("import os\nfound.append(os.path.exists('/tmp/planted'))\n" if server.mode == "norp" else "") +
             "result = found")
    for where in (b, None):
        data, _ = run(server, probe, where)
        assert data["success"], data
        assert "only-in-a" not in data["result"] and "module attribute" not in data["result"], data
        assert True not in data["result"], data
    data, _ = run(server, probe, a)   # ...while a still has all of it
    assert "only-in-a" in data["result"], data
    close(server, a)
    close(server, b)


def test_a_crash_ends_only_its_own_session(server):
    if server.mode == "rp":
        pytest.skip("with RestrictedPython on a snippet has no ctypes to crash the interpreter with")
    doomed, other = create(server), create(server)
    assert run(server, "kept = 42", doomed)[0]["success"] and run(server, "kept = 7", other)[0]["success"]
    data, result = run(server, "import ctypes\nctypes.string_at(0)", doomed)   # SIGSEGV
    assert data["error_type"] == "runtime_error" and data["signal"] == "SIGSEGV", data
    assert data["session_ended"] is True and "state (variables, imports, files) is gone" in result.content[0].text
    data, _ = run(server, "kept", doomed)
    assert data["error_type"] == "session_not_found" and "create a new one" in data["error"], data
    data, _ = run(server, "kept", other)
    assert data["success"] and data["result"] == 7, data
    close(server, other)


def test_a_timeout_interrupts_the_call_and_the_session_keeps_its_state(server):
    """At the time limit the snippet gets KeyboardInterrupt where it is, as in Jupyter."""
    session = create(server)
    assert run(server, "x = 1", session)[0]["success"]
    data, result = run(server, "import time\ny = 2\nwhile True:\n    x = 1\n    time.sleep(0.01)", session,
                       timeout=scaled(1))   # (the loop must have started when the interrupt comes)
    assert data["error_type"] == "timeout" and data["session_ended"] is False, data
    assert "interrupted (KeyboardInterrupt)" in data["error"] and "KeyboardInterrupt" in data["traceback"], data
    assert data["line"] in (4, 5) and "kept its state" in result.content[0].text, data
    data, _ = run(server, "result = (x, y)", session)
    assert data["success"] and data["result"] == [1, 2], data
    data, _ = run(server, "while True:\n    pass", session, timeout=1)   # pure bytecode, no sleep to cut
    assert data["error_type"] == "timeout" and data["session_ended"] is False, data
    assert run(server, "x + y", session)[0]["result"] == 3
    close(server, session)


def test_a_snippet_that_swallows_the_interrupt_is_killed_after_the_grace_period(server):
    session = create(server)
    assert run(server, "x = 1", session)[0]["success"]
    data, result = run(server, "try:\n    while True:\n        pass\nexcept KeyboardInterrupt:\n"
                               "    while True:\n        pass", session, timeout=scaled(1))
    assert data["error_type"] == "timeout" and data["session_ended"] is True, data
    assert "did not stop within" in data["error"], data
    assert "state (variables, imports, files) is gone" in result.content[0].text
    assert run(server, "x", session)[0]["error_type"] == "session_not_found"


def test_a_snippets_own_sigint_handler_neither_outlives_its_call_nor_escapes_the_kill(server):
    """With real Python the snippet may install its own SIGINT handler: the next call is
    interrupted all the same, and a handler that ignores the interrupt is killed."""
    if server.mode == "rp":
        pytest.skip("with RestrictedPython on a snippet has no signal module")
    session = create(server)
    assert run(server, "import signal\nsignal.signal(signal.SIGINT, lambda *_: None)\nx = 1", session)[0]["success"]
    data, _ = run(server, "while True:\n    pass", session, timeout=scaled(1))
    assert data["error_type"] == "timeout" and data["session_ended"] is False, data
    data, _ = run(server, "signal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass", session,
                  timeout=scaled(1))
    assert data["error_type"] == "timeout" and data["session_ended"] is True and "did not stop" in data["error"], data


def test_a_memory_error_is_an_ordinary_exception_in_a_session(server):
    """Python's MemoryError (an allocation refused, or a list grown to the limit) leaves
    the session as it was; the answer says what the session holds, read from /proc."""
    session = create(server, memory_limit="128m")
    data, result = run(server, "x = 1", session)
    before = data["session_memory"]
    assert 0 < before["resident_bytes"] and 0 < before["headroom_bytes"] <= 128 << 20, data
    assert "session memory: " in result.content[0].text and "left before its limit" in result.content[0].text
    for code in ("bytearray(10**12)", "hog = []\nwhile True:\n    hog.append(' ' * 10**6)"):
        data, result = run(server, code, session)
        assert data["error_type"] == "memory_limit" and data["session_ended"] is False, data
        assert "kept its state" in result.content[0].text
    data, _ = run(server, "del hog\nx", session)
    assert data["success"] and data["result"] == 1, data
    before = data["session_memory"]
    data, _ = run(server, "blob = b'x' * (50 << 20)", session)
    grown = data["session_memory"]["resident_bytes"] - before["resident_bytes"]
    assert grown >= 45 << 20 and data["session_memory"]["headroom_bytes"] < before["headroom_bytes"], (before, data)
    close(server, session)


def test_a_call_that_leaves_threads_running_ends_its_session(server):
    """Between calls a session holds state, not running code."""
    if server.mode == "rp":
        pytest.skip("with RestrictedPython on a snippet cannot start threads")
    session = create(server)
    data, result = run(server, "import threading, time\n"
                               "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\nresult = 'started'",
                       session)
    assert data["success"] and data["result"] == "started" and data["session_ended"], data
    assert "threads running" in data["session_end_reason"] and "session ended after this call" in result.content[0].text
    assert run(server, "result", session)[0]["error_type"] == "session_not_found"


def test_a_session_that_runs_code_between_calls_is_ended_and_the_next_call_told_why(server):
    """A timer's handler runs while no call does: the fork server sees the CPU it
    uses from /proc and ends the session; a handler that does nothing costs
    nothing and the session lives on."""
    if server.mode == "rp":
        pytest.skip("with RestrictedPython on a snippet cannot arm timers (no signal module)")
    quiet, busy = create(server), create(server)
    arm = ("import signal\n"
           "def handler(*_):\n    {body}\n"
           "signal.signal(signal.SIGALRM, handler)\n"
           "signal.setitimer(signal.ITIMER_REAL, 0.3)\nresult = 'armed'")
    assert run(server, arm.format(body="pass"), quiet)[0]["success"]
    data, _ = run(server, arm.format(body="while True: pass"), busy)
    assert data["success"] and not data["session_ended"], data
    assert wait_until(lambda: any(busy[:12] in line for line in session_ends(server.audit_log)), 60)
    data, result = run(server, "result = 'still here'", quiet)
    assert data["success"] and data["result"] == "still here", data
    data, result = run(server, "result = 1", busy)
    assert data["error_type"] == "session_not_found" and "ran code between calls" in data["error"], data
    assert "create_session" in data["error"] and result.is_error
    ends = [json.loads(line) for line in session_ends(server.audit_log)]
    assert any(busy[:12] in json.dumps(e) and "ran code between calls" in e["cause"] for e in ends), ends
    close(server, quiet)


def test_the_collector_runs_only_during_a_call(server):
    """A cycle the snippet dropped is finalized (a generator's `finally` runs) when the
    collector runs: only inside a call, under its policy, never while the child reports
    or waits for the next call. A collector callback sees where each collection starts."""
    if server.mode == "rp":
        pytest.skip("with RestrictedPython on a snippet cannot see the collector")
    session = create(server)
    arm = ("import gc, sys\nlog = []\n"
           "def seen(phase, info):\n"
           "    if phase == 'start':\n"
           "        frame, names = sys._getframe(), set()\n"
           "        while frame is not None:\n"
           "            names.add((frame.f_code.co_filename.rsplit('/', 1)[-1], frame.f_code.co_name))\n"
           "            frame = frame.f_back\n"
           "        log.append(('run.py', '_execute') in names)\n"
           "gc.callbacks.append(seen)\ngc.set_threshold(1)\nresult = 'armed'")
    assert run(server, arm, session)[0]["result"] == "armed"
    data, _ = run(server, "gc.set_threshold(700)\ngc.callbacks.remove(seen)\nresult = [all(log), len(log) > 0]", session)
    assert data["result"] == [True, True], data
    close(server, session)


def test_a_cycle_left_by_one_call_is_finalized_under_the_next_calls_policy(server):
    """A generator left in a cycle by one call is closed (its `finally` runs) at the next
    collection. That was while the next call compiled its (long) source, before its
    policy began: the enum functional API's name check was off there, and the output
    went past the call's streams."""
    if server.mode != "rp":
        pytest.skip("the policy is RestrictedPython's")
    session = create(server)
    leave = ("import enum\ndef gen():\n    box = []\n    try:\n        yield box\n    finally:\n        try:\n"
             "            enum.Enum('E', [('__init_subclass__', 1)])\n            print('ESCAPED:enum_check_off')\n"
             "        except Exception as e:\n            print('blocked:', type(e).__name__)\n"
             "def make():\n    g = gen()\n    next(g).append(g)\nfor i in range(3):\n    make()\nresult = 'left'")
    first, _ = run(server, leave, session)
    assert first["result"] == "left", first
    # (which collection finds each cycle depends on the allocations before it: some may go in
    # the first call; the second allocates enough for full collections)
    long_source = "\n".join(f"v{i} = [{i}, ({i}, {i} + 1)]" for i in range(600)) + "\nmore = [[i] for i in range(200000)]"
    data, _ = run(server, long_source, session)
    printed = first["stdout"] + data["stdout"]
    assert data["success"] and "ESCAPED" not in printed and printed.count("blocked:") == 3, (first, data)
    close(server, session)


def test_an_unknown_handle_is_refused_never_a_fresh_start(server):
    for handle in ("sess_doesnotexist", "", "x" * 100):
        data, result = run(server, "result = 1", handle)
        assert not data["success"] and data["error_type"] == "session_not_found", data
        assert result.is_error and data["result"] is None
    data = close(server, "sess_doesnotexist")
    assert data["closed"] is False


def test_calls_on_one_session_run_one_at_a_time(server):
    # the second call is sent while the first sleeps, on any machine
    session = create(server)
    assert run(server, "log = []", session)[0]["success"]
    first = f"import time\nlog.append('first-start')\ntime.sleep({scaled(2)})\nlog.append('first-end')"
    second = "log.append('second')\nlog"

    async def both(srv):
        import anyio
        answers = {}

        async def one(name, code, delay):
            await anyio.sleep(delay)
            answers[name] = await srv.call("execute_code", {"code": code, "session_id": session,
                                                            "timeout": scaled(10)})

        async with anyio.create_task_group() as group:
            group.start_soon(one, "first", first, 0)
            group.start_soon(one, "second", second, scaled(0.5))
        return answers

    answers = server.run(both)
    assert answers["second"][0]["result"] == ["first-start", "first-end", "second"], answers
    # a call that cannot get its turn within its own timeout is told so
    answers = {}

    def slow():
        answers["slow"] = run(server, f"import time\ntime.sleep({scaled(2)})", session, timeout=scaled(5))

    worker = threading.Thread(target=slow)
    worker.start()
    time.sleep(scaled(0.5))
    data, _ = run(server, "result = 1", session, timeout=0.5)
    worker.join()
    assert data["error_type"] == "timeout" and "one at a time" in data["error"], data
    assert answers["slow"][0]["success"]
    close(server, session)


def test_info_and_audit_record_sessions(server):
    session = create(server)
    info, _ = server.call("get_sandbox_info")
    assert info["sessions"]["open"] >= 1 and info["sessions"]["max_sessions"] == 6
    run(server, "x = 1", session)
    close(server, session)
    records = [json.loads(line) for line in server.audit_log.read_text().splitlines()]
    mine = [r for r in records if r.get("session_id") == session]
    assert [r["event"] for r in mine] == ["session_created", "execution", "session_ended"], mine
    assert mine[-1]["cause"] == "closed"
    assert "create_session" in server.tools["execute_code"].description
    assert "session_ended" in server.tools["create_session"].description


def test_the_red_team_inside_a_session_leaves_nothing_for_the_next_call(server):
    """Each corpus case runs in a fresh session; if the session survives, a
    follow-up call in it checks that the guards still hold and nothing of the
    attack is running or planted (threads, processes, files, builtins)."""
    import redteam_lib as lib
    context = {"allowed_modules": [], "server_pid": server.pid or 0, "fork_server_pid": 0}
    follow_up = {
        # every probe compiles (a refusal at compile time would hide the others) and must be refused
        "rp": ("def dunder():\n    return getattr((), '__cl' + 'ass__')\n"
               "def module():\n    import subprocess\n    return subprocess\n"
               "def host_file():\n    return open('/etc/passwd').read()\n"
               "def system():\n    import os\n    return os.system\n"
               "def frame():\n    def g():\n        yield 1\n    return getattr(g(), 'gi_frame')\n"
               "checks = []\n"
               "for probe in (dunder, module, host_file, system, frame):\n"
               "    try:\n"
               "        probe()\n"
               "        checks.append('OPEN: ' + probe.__name__)\n"
               "    except Exception:\n"
               "        pass\n"
               "result = checks"),
        "norp": ("import os, builtins, threading\nresult = []\n"
                 "if threading.active_count() != 1:\n    result.append('threads left running')\n"
                 "for pid in range(2, 300):\n"
                 "    try:\n"
                 "        os.kill(pid, 0)\n"
                 "        result.append('process %d left' % pid)\n"
                 "    except ProcessLookupError:\n"
                 "        pass\n"
                 "if builtins.open is not __import__('io').open:\n    result.append('open replaced')\n"),
    }[server.mode]
    failures, checked = [], 0
    for case in lib.load_corpus():
        if case.get("danger") in ("resource_exhaustion", "crash"):
            continue  # they end their session by design: tested above
        session = create(server)
        code = lib.materialize(case, context)
        run(server, code, session, timeout=5)
        data, _ = run(server, follow_up, session, timeout=10)
        if data.get("error_type") == "session_not_found" or data.get("session_ended"):
            continue  # the attack ended its own session: nothing left to look at
        if data.get("error_type") == "memory_limit" or "Too many open files" in str(data.get("error")):
            close(server, session)
            continue  # it used up its own session's limits (RES-019 keeps its fds): its state, no leak
        checked += 1
        if not data.get("success") or data.get("result"):
            failures.append((case["id"], data.get("result") or data.get("error")))
        close(server, session)
    assert not failures, failures
    eligible = [c for c in lib.load_corpus() if c.get("danger") not in ("resource_exhaustion", "crash")]
    assert checked > len(eligible) // 2, (checked, len(eligible))  # most leave their session alive to look at


def test_max_sessions_ttl_and_lifetime():
    ttl, lifetime = scaled(1.5), scaled(4)   # (a call and its answer well inside the TTL)
    env = {"SANDBOX_MAX_SESSIONS": "2", "SANDBOX_SESSION_TTL": f"{ttl:.2f}",
           "SANDBOX_SESSION_MAX_LIFETIME": f"{lifetime:.2f}"}
    with blocking_session(env) as server:
        a, b = create(server), create(server)
        data, result = server.call("create_session", {})
        assert result.is_error and "SANDBOX_MAX_SESSIONS=2" in data["error"] and "close_session" in data["error"]
        time.sleep(ttl + 0.5)                            # idle past the TTL
        data, _ = run(server, "result = 1", a)
        assert data["error_type"] == "session_not_found" and "idle for" in data["error"], data
        c = create(server)                               # the expired ones no longer count
        created = time.monotonic()
        while time.monotonic() < created + lifetime + 0.5:   # busy, but past its maximum lifetime
            run(server, "result = 1", c)
            time.sleep(ttl / 3)
        data, _ = run(server, "result = 1", c)
        assert data["error_type"] == "session_not_found" and "maximum lifetime" in data["error"], data
        info, _ = server.call("get_sandbox_info")
        assert info["sessions"]["open"] == 0, info["sessions"]
        assert b not in (a, c)


def test_network_and_filesystem_profiles_in_a_session(tmp_path):
    from local_http import serving
    with serving(b"through the proxy") as port, blocking_session(
            {"SANDBOX_ENABLE_NETWORK": "true", "SANDBOX_NETWORK_ALLOW": f"127.0.0.1:{port}",
             "SANDBOX_ENABLE_FILESYSTEM": "true"}) as server:
        session = create(server)
        get = f"import urllib.request\nurllib.request.urlopen('http://127.0.0.1:{port}/', timeout=5).read().decode()"
        for _ in range(2):                               # each call gets the proxy
            data, _ = run(server, get, session)
            assert data["success"] and data["result"] == "through the proxy", data
            assert len(data["network"]) == 1 and data["network"][0]["allowed"]
        data, _ = run(server, "open('notes.txt', 'w').write('kept')\nopen('out/a.txt', 'w').write('once')", session)
        assert [f["path"] for f in data["files"]] == ["out/a.txt"], data
        data, _ = run(server, "open('notes.txt').read()", session)
        assert data["result"] == "kept" and data["files"] == [], data   # out/ files come back once


def _tree(pid: int) -> dict:
    return {p: start_time(p) for p in all_descendants(pid)}


def test_200_sessions_leave_no_process_fd_or_memory_behind(tmp_path):
    with RawServer({"SANDBOX_MAX_SESSIONS": "4", "SANDBOX_LOG_LEVEL": "warning"}, cwd=str(tmp_path)) as server:
        server.initialize()
        pid = server.process.pid

        def call(name, arguments):
            answer = server.request("tools/call", {"name": name, "arguments": arguments}, timeout=60)
            return answer["result"]["structuredContent"]

        def cycle(i):
            handle = call("create_session", {})["session_id"]
            assert call("execute_code", {"code": f"x = {i}", "session_id": handle})["success"]
            assert call("execute_code", {"code": "x * 2", "session_id": handle})["result"] == 2 * i
            assert call("close_session", {"session_id": handle})["closed"]

        for i in range(20):
            cycle(i)
        fork_server = fork_server_of(pid)   # settled: the pool (2) full again
        assert wait_until(lambda: len(sandboxes(all_descendants(fork_server))) >= 2, 60)
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        rss = _rss(pid)
        children = len(all_descendants(pid))
        for i in range(200):
            cycle(i)
        assert wait_until(lambda: len(all_descendants(pid)) <= children, 60), all_descendants(pid)
        assert len(os.listdir(f"/proc/{pid}/fd")) <= fds + 2
        assert _rss(pid) < rss + (32 << 20), (rss, _rss(pid))


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


@pytest.mark.parametrize("how", ["kill -9", "shutdown"])
def test_the_servers_end_leaves_no_session_process(tmp_path, how):
    log = tmp_path / "audit.jsonl"
    with RawServer({"SANDBOX_LOG_LEVEL": "warning", "SANDBOX_AUDIT_LOG": str(log)}, cwd=str(tmp_path)) as server:
        server.initialize()
        pid = server.process.pid
        for i in range(3):
            answer = server.request("tools/call", {"name": "create_session", "arguments": {}}, timeout=60)
            handle = answer["result"]["structuredContent"]["session_id"]
            if i == 0:   # one busy, the others idle
                server.send({"jsonrpc": "2.0", "id": "busy", "method": "tools/call",
                             "params": {"name": "execute_code",
                                        "arguments": {"code": "while True:\n    pass", "session_id": handle,
                                                      "timeout": 60}}})
        fork_server = fork_server_of(pid)
        assert wait_until(lambda: len(sandboxes(all_descendants(fork_server))) >= 3, 60)
        tree = {fork_server: start_time(fork_server), **_tree(pid)}
        if how == "kill -9":
            os.kill(pid, signal.SIGKILL)
            server.process.wait(60)
        else:
            server.close(60)

        def survivors():
            return [p for p, started in tree.items() if start_time(p) == started and state_of(p) not in (None, "Z", "X")]
        wait_until(lambda: not survivors(), 60)
        assert not survivors(), survivors()
    if how == "shutdown":   # each session's end is on record
        ends = [json.loads(line) for line in log.read_text().splitlines() if '"session_ended"' in line]
        # (the busy one may end first, by its call's cancellation as the client went away)
        assert len(ends) == 3 and sum(e["cause"] == "server shutdown" for e in ends) >= 2, ends


def test_a_session_process_killed_between_calls_is_reported(tmp_path):
    """Killed from outside while idle (the OOM killer, an operator): the next call
    is told the session is gone, and the audit log says why."""
    log = tmp_path / "audit.jsonl"
    with blocking_session({"SANDBOX_POOL_SIZE": "0", "SANDBOX_AUDIT_LOG": str(log)}) as server:
        session = create(server)
        assert run(server, "x = 1", session)[0]["success"]
        fork_server = fork_server_of(server.pid)
        [child] = [p for p in sandboxes(all_descendants(fork_server)) if state_of(p) not in (None, "Z")]
        os.kill(child, signal.SIGKILL)
        assert wait_until(lambda: state_of(child) in (None, "Z", "X"), 60)
        assert wait_until(lambda: session_ends(log), 60)   # the fork server saw it
        data, _ = run(server, "x", session)
        assert data["error_type"] == "session_not_found", data
    ends = [json.loads(line) for line in log.read_text().splitlines() if '"session_ended"' in line]
    assert len(ends) == 1 and "ended between calls" in ends[0]["cause"] and "SIGKILL" in ends[0]["cause"], ends


def test_files_in_the_working_directory_survive_in_a_session_and_only_there(server):
    """What the description promises: the scratch directory is the session's, from call
    to call; a one-shot call and another session see an empty one."""
    first, other = create(server), create(server)
    data, _ = run(server, "open('notes.txt', 'w').write('kept')\nresult = 1", first)
    assert data["success"], data
    data, _ = run(server, "import os\nresult = [open('notes.txt').read(), os.listdir('.')]", first)
    assert data["success"] and data["result"] == ["kept", ["notes.txt"]], data
    for session in (other, None):
        data, _ = run(server, "import os\nresult = os.listdir('.')", session)
        assert data["success"] and data["result"] == [], data
    close(server, first)
    close(server, other)


def test_connections_left_waiting_by_one_call_are_not_the_next_calls():
    """The proxy stops accepting at the connection limit, so a snippet's further
    connections wait in its listener's backlog. In a session the listener outlives
    the call: what waits there when a call ends is dropped, not served (and
    counted) in the next call."""
    with blocking_session({"SANDBOX_ENABLE_NETWORK": "true", "SANDBOX_NETWORK_MAX_CONNECTIONS": "1",
                           "SANDBOX_RESTRICTED_PYTHON": "false"}) as server:
        session = create(server)
        data, _ = run(server, "import socket\n"
                              "held = [socket.create_connection(('127.0.0.1', 3128), timeout=5) for _ in range(4)]\n"
                              "result = len(held)", session)
        assert data["success"] and data["result"] == 4, data
        assert len(data["network"]) == 2, data["network"]   # the one within the limit, the one told so
        data, _ = run(server, "result = len(held)", session)
        assert data["success"] and data["network"] == [], data
        data, _ = run(server, "gone = []\n"
                              "for s in held[2:]:\n"
                              "    s.settimeout(5)\n"
                              "    gone.append(s.recv(1) == b'')\n"
                              "result = gone", session)
        assert data["success"] and data["result"] == [True, True], data   # closed by the proxy

"""kill -9 of the MCP server in the middle of executions leaves no process
behind: the fork server, the warm pool and every running snippet (with its
init) die with it. The whole tree below the server is recorded (pid plus start
time, so a reused pid is not mistaken for a survivor) just before the kill;
one second later none of those processes may be alive, and no process may
still carry the dead server's pid in the fork server's command line.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "redteam"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_client import RawServer, all_pids, sandboxes, state_of, wait_until  # noqa: E402
from mcpsync import all_descendants, cmdline, start_time, fork_server_of  # noqa: E402
from slowness import scaled  # noqa: E402

POOL = 2
RUNNING = {
    "rp": ["while True:\n    pass",
           "import time\ntime.sleep(120)",
           "x = 0\nwhile True:\n    try:\n        while True:\n            x += 1\n    except BaseException:\n        pass",
           "chunks = []\nwhile True:\n    chunks.append(1)\n    chunks = chunks[-1000:]"],
    # without RestrictedPython the snippet does its best to outlive its parents
    "norp": ["import os, signal, time\nfor s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGPIPE):\n"
             "    signal.signal(s, signal.SIG_IGN)\ntry:\n    os.setsid()\nexcept OSError:\n    pass\n"
             "try:\n    os.fork()\nexcept OSError:\n    pass\nwhile True:\n    time.sleep(0.1)",
             "import threading, time\nfor _ in range(8):\n    threading.Thread(target=time.sleep, args=(300,)).start()\n"
             "while True:\n    pass",
             "import ctypes\nlibc = ctypes.CDLL(None)\nlibc.prctl(1, 0, 0, 0, 0)\nwhile True:\n    pass",
             "import time\nwhile True:\n    time.sleep(1)"],
}


def _alive(pid: int, started) -> bool:
    return start_time(pid) == started and state_of(pid) not in (None, "Z", "X")


@pytest.mark.parametrize("mode", ["rp", "norp"])
def test_kill_9_during_executions_leaves_no_process(mode, tmp_path):
    env = {"SANDBOX_MAX_CONCURRENCY": "4", "SANDBOX_POOL_SIZE": str(POOL), "SANDBOX_LOG_LEVEL": "warning",
           "SANDBOX_RESTRICTED_PYTHON": "true" if mode == "rp" else "false"}
    with RawServer(env, cwd=str(tmp_path)) as server:
        server.initialize()
        pid = server.process.pid
        assert wait_until(lambda: fork_server_of(pid) is not None, 60), "no fork server"
        zygote = fork_server_of(pid)
        snippets = RUNNING[mode]
        for i, code in enumerate(snippets):
            server.send({"jsonrpc": "2.0", "id": f"long-{i}", "method": "tools/call",
                         "params": {"name": "execute_code", "arguments": {"code": code, "timeout": 120}}})
        # every snippet running, one process each (the pool refills only while no
        # request runs, so pooled children may or may not be there too)
        expected = len(snippets)
        assert wait_until(lambda: len([p for p in sandboxes(all_descendants(zygote)) if state_of(p) not in ("Z", None)])
                          >= expected, 60), f"executions did not start: {all_descendants(zygote)}"
        time.sleep(scaled(0.5))   # let the snippets get going (threads, setsid, ignored signals)
        tree = {p: start_time(p) for p in [zygote] + all_descendants(pid)}
        assert len(tree) >= expected + 1, tree
        os.kill(pid, signal.SIGKILL)
        server.process.wait(60)
        wait_until(lambda: not any(_alive(p, started) for p, started in tree.items()), 60)
        survivors = [(p, cmdline(p)[:100]) for p, started in tree.items() if _alive(p, started)]
        assert not survivors, f"{len(survivors)} of {len(tree)} processes outlived the server: {survivors}"
        marker = f"(server pid {pid})"   # every sandbox process's title names its server
        orphans = [p for p in all_pids() if marker in cmdline(p) and state_of(p) not in (None, "Z", "X")]
        assert not orphans, f"processes of the dead server's fork server remain: {orphans}"


def test_kill_9_with_an_idle_pool_leaves_no_process(tmp_path):
    with RawServer({"SANDBOX_POOL_SIZE": "4", "SANDBOX_LOG_LEVEL": "warning"}, cwd=str(tmp_path)) as server:
        server.initialize()
        answer = server.request("tools/call", {"name": "execute_code", "arguments": {"code": "result = 1"}}, timeout=60)
        assert answer["result"]["structuredContent"]["result"] == 1, answer
        pid = server.process.pid
        zygote = fork_server_of(pid)
        assert wait_until(lambda: len(sandboxes(all_descendants(zygote))) >= 4, 60), "the pool did not fill"
        tree = {p: start_time(p) for p in [zygote] + all_descendants(pid)}
        os.kill(pid, signal.SIGKILL)
        server.process.wait(60)
        wait_until(lambda: not any(_alive(p, started) for p, started in tree.items()), 60)
        survivors = [(p, cmdline(p)[:100]) for p, started in tree.items() if _alive(p, started)]
        assert not survivors, survivors

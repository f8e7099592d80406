"""Resource bombs through the MCP server: each must end with the right
error_type within its timeout plus a small margin, leave nothing running, and
the next call must succeed. Bombs that need plain Python (os.fork, threads,
files) run with RestrictedPython off: the kernel layers and the fork server
must bound them alone. With RestrictedPython on they fail at the import, which
is checked too.
"""

from __future__ import annotations

import time

import pytest

from mcpsync import all_descendants, fork_server_of
from mcp_client import state_of
from redteam_lib import MAX_OUTPUT, POOL_SIZE, TIME_MARGIN

LIMITS = {"timeout", "memory_limit", "output_limit"}
MEMORY = {"memory_limit", "runtime_error"}      # MemoryError is a runtime_error

# name -> (mode, code, timeout, accepted error types)
BOMBS = {
    "infinite_loop": ("rp", "while True:\n    pass\n", 2, {"timeout"}),
    "swallowing_loop": ("rp", "while True:\n    try:\n        while True:\n            pass\n"
                              "    except BaseException:\n        pass\n", 2, {"timeout"}),
    "sum_range": ("rp", "print(sum(range(10 ** 10)))\n", 2, {"timeout"}),
    "pow_huge": ("rp", "print(pow(10, 10 ** 9).bit_length())\n", 2, {"timeout", "memory_limit", "runtime_error"}),
    "bytes_10e10": ("rp", "x = b'x' * 10 ** 10\n", 2, MEMORY),
    "growing_list": ("rp", "chunks = []\nwhile True:\n    chunks.append('A' * (1 << 20))\n", 3, MEMORY | {"timeout"}),
    "fork_bomb": ("norp", "import os\nwhile True:\n    os.fork()\n", 2, {"runtime_error", "timeout"}),
    "fork_bomb_rp": ("rp", "import os\nwhile True:\n    os.fork()\n", 2, {"security_violation"}),
    "thread_bomb": ("norp", "import threading, time\nwhile True:\n"
                            "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n",
                    3, {"runtime_error", "timeout", "memory_limit"}),
    "output_flood": ("rp", "while True:\n    print('A' * 1000)\n", 3, {"output_limit", "timeout"}),
    "deep_recursion": ("rp", "def f(n):\n    return f(n + 1) + 1\n\nf(0)\n", 3, {"runtime_error"}),
    "regex_backtracking": ("rp", "import re\nprint(re.match(r'(a+)+$', 'a' * 40 + '!'))\n", 2, {"timeout"}),
    "disk_fill_tmp": ("norp", "with open('/tmp/sbx_fill_bomb', 'wb') as f:\n    while True:\n"
                              "        f.write(b'x' * (1 << 20))\n        f.flush()\n",
                      3, {"runtime_error", "timeout"}),
    "int_to_str": ("rp", "x = 10 ** 1000000\nprint(len(str(x)))\n", 3, {"runtime_error", "timeout"}),
    "factorial": ("rp", "import math\nprint(math.factorial(10 ** 7) % 10)\n", 2, {"timeout", "memory_limit"}),
    "decimal_precision": ("rp", "import decimal\nc = decimal.Context(prec=10 ** 8)\n"
                                "print(str(c.exp(decimal.Decimal(1)))[:10])\n", 2, LIMITS | {"runtime_error"}),
}


def _pool_settled(server_pid: int, timeout: float = 60.0) -> "tuple[bool, list]":
    deadline = time.monotonic() + timeout
    while True:
        fork_server = fork_server_of(server_pid)
        live = [p for p in all_descendants(fork_server)] if fork_server else []
        live = [p for p in live if state_of(p) not in (None, "Z")]
        if len(live) <= 3 * POOL_SIZE:
            return True, live
        if time.monotonic() > deadline:
            return False, live
        time.sleep(0.05)


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_bomb(name, servers):
    mode, code, timeout, accepted = BOMBS[name]
    handle = servers[mode]
    server = handle.ensure()
    data, _raw, elapsed = server.call("execute_code", {"code": code, "timeout": timeout}, timeout=timeout + 60)
    assert data["success"] is False, (name, data)
    assert data["error_type"] in accepted, (name, data)
    assert elapsed <= timeout + TIME_MARGIN, f"{name}: answered after {elapsed:.2f}s (timeout {timeout}s)"
    if data["error_type"] == "output_limit" or data.get("stdout_truncated"):
        assert len(data["stdout"].encode()) <= MAX_OUTPUT, (name, len(data["stdout"]))
        assert data["stdout_truncated"], name
    settled, live = _pool_settled(server.pid)
    assert settled, f"{name}: processes left after the answer: {live}"
    assert server.healthy(), f"{name}: the next request failed"


def test_fork_bomb_leaves_no_fork(servers):
    """With RestrictedPython off, fork is refused outright (seccomp): not one child."""
    server = servers["norp"].ensure()
    data, _raw, _elapsed = server.call("execute_code", {
        "code": "import os\nkids = 0\ntry:\n    while kids < 1000:\n        if os.fork() == 0:\n"
                "            os._exit(0)\n        kids += 1\nexcept OSError as e:\n    print(repr(e))\nresult = kids",
        "timeout": 3})
    assert data["success"] and data["result"] == 0, data


def test_segfault_is_reported_with_its_signal(servers):
    """crash_reported: a crashed interpreter is a runtime_error naming the signal,
    and the answer carries the `signal` field the runner computes."""
    server = servers["norp"].ensure()
    data, _raw, _elapsed = server.call("execute_code", {"code": "import ctypes\nctypes.string_at(0)", "timeout": 3})
    assert data["error_type"] == "runtime_error", data
    assert "SIGSEGV" in (data.get("error") or ""), data
    assert data.get("signal") == "SIGSEGV", f"the answer does not carry the signal field: {data}"
    assert server.healthy()

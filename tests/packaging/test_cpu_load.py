"""The busy loops of a loaded test run (tests/cpu_load.py) end with the run,
however it ends: stopped at its end, or left behind by a test process that was
killed."""

from __future__ import annotations

import os
import subprocess
import sys

import cpu_load
from mcp_client import cpu_ticks, state_of, wait_until

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_PROCESS = ("import sys, time\nsys.path.insert(0, sys.argv[1])\nimport cpu_load\n"
                "[loop] = cpu_load.start(1)\nprint(loop.pid, flush=True)\ntime.sleep(600)")


def test_stop_ends_the_loops_by_closing_their_pipe():
    loops = cpu_load.start(2)
    try:
        assert all(loop.poll() is None for loop in loops)
    finally:
        cpu_load.stop(loops)
    assert [loop.returncode for loop in loops] == [0, 0]   # they left on EOF: not killed


def test_a_loop_dies_with_a_test_process_that_was_killed():
    process = subprocess.Popen([sys.executable, "-c", TEST_PROCESS, HERE], stdout=subprocess.PIPE, text=True)
    try:
        loop = int(process.stdout.readline())
        # busy in its loop (a fraction of a second of CPU), past its start-up checks
        assert wait_until(lambda: cpu_ticks(loop) >= 30, 120), state_of(loop)
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
    assert wait_until(lambda: state_of(loop) in (None, "Z", "X"), 60), f"busy loop {loop} outlived its test process"

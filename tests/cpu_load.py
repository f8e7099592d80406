"""Busy loops that keep the CPUs loaded for the length of a test run
(SANDBOX_TEST_CPU_LOAD=N starts N of them; tests/conftest.py starts and ends them).

Each loop dies with the run however it ends: it stops when its stdin, a pipe
whose only writer is the test process, reaches end of file, and the kernel
kills it if the test process dies first (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import os
import subprocess
import sys

VARIABLE = "SANDBOX_TEST_CPU_LOAD"
PR_SET_PDEATHSIG = 1

LOOP = f"""
import ctypes, os, select, signal, sys
ctypes.CDLL(None).prctl({PR_SET_PDEATHSIG}, signal.SIGKILL)
if os.getppid() != int(sys.argv[1]):
    sys.exit()   # the test process was gone before the signal was armed
while not select.select([0], [], [], 0)[0]:
    for _ in range(200_000):
        pass
"""


def requested() -> int:
    return int(os.environ.get(VARIABLE) or 0)


def start(count: int) -> "list[subprocess.Popen]":
    return [subprocess.Popen([sys.executable, "-I", "-S", "-c", LOOP, str(os.getpid())],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
            for _ in range(count)]


def stop(loops: "list[subprocess.Popen]") -> None:
    for loop in loops:
        loop.stdin.close()
    for loop in loops:
        try:
            loop.wait(60)
        except subprocess.TimeoutExpired:
            loop.kill()
            loop.wait()

"""How much slower than the reference machine this test run is: slowness() >= 1,
measured once per run, and `scaled(seconds)` for the tests that need work to
finish inside a limit.

A test waits for events where it can (a pipe, a process's exit, a condition
polled under a generous ceiling). Where a limit of the product itself must be
short, because the test proves that limit fires (a snippet's `timeout`, a
session's idle TTL), the work that must finish before it is given a scaled
limit instead of a fixed one: `scaled(2)` is 2 s on the reference machine and
6 s on a machine three times slower, or on the same machine with its CPUs busy.

The measure: the fastest of a few runs of a fixed CPU workload and of a bare
`python -I -S -c pass` spawn (a burst of other work only ever adds time, so the
fastest is what the machine can do; busy CPUs slow every run), each divided by
its time on the reference machine
(a quiet 2-vCPU machine of the kind the README's timings come from), the two
ratios averaged (geometric mean): a spawn on a busy machine waits for a CPU
several times over, and alone would overstate what the tests' work suffers.
tests/conftest.py takes it at the start of the run, after starting any CPU load
asked for (SANDBOX_TEST_CPU_LOAD), and puts it in SANDBOX_TEST_SLOWNESS so that
every process of the run agrees on it. Setting SANDBOX_TEST_SLOWNESS yourself
skips the measure (e.g. `=3` to see which limits are scaled).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

VARIABLE = "SANDBOX_TEST_SLOWNESS"
REFERENCE_CPU = 0.030     # seconds for cpu_workload() on the reference machine
REFERENCE_SPAWN = 0.015   # seconds for spawn() there
ROUNDS = 5


def cpu_workload() -> float:
    started = time.perf_counter()
    total = 0
    for i in range(300_000):
        total += i * i % 7
    return time.perf_counter() - started


def spawn() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
    return time.perf_counter() - started


def measure() -> float:
    cpu = min(cpu_workload() for _ in range(ROUNDS))
    spawned = min(spawn() for _ in range(ROUNDS))
    return max(1.0, math.sqrt(cpu / REFERENCE_CPU * spawned / REFERENCE_SPAWN))


_measured: "list[float]" = []


def slowness() -> float:
    """The run's factor: SANDBOX_TEST_SLOWNESS, else measured once and stored there."""
    if not _measured:
        given = os.environ.get(VARIABLE)
        if not given:
            given = os.environ[VARIABLE] = f"{measure():.2f}"
        _measured.append(max(1.0, float(given)))
    return _measured[0]


def scaled(seconds: float) -> float:
    return seconds * slowness()

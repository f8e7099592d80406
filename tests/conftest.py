"""The test run's set-up: the CPU load asked for with SANDBOX_TEST_CPU_LOAD
(tests/cpu_load.py), started before anything else and ended with the run, and
the machine's slowness (tests/slowness.py), measured once under that load."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import cpu_load  # noqa: E402
import slowness  # noqa: E402

_loops: list = []


def pytest_configure(config):
    _loops.extend(cpu_load.start(cpu_load.requested()))
    slowness.slowness()   # measured here, under the load


def pytest_report_header(config):
    return (f"slowness {slowness.slowness():.2f} (tests/slowness.py), "
            f"CPU load: {len(_loops)} busy loop(s) ({cpu_load.VARIABLE})")


def pytest_unconfigure(config):
    cpu_load.stop(_loops)
    _loops.clear()

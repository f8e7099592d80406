"""The test run's set-up: the CPU load asked for with SANDBOX_TEST_CPU_LOAD
(tests/cpu_load.py), started before anything else and ended with the run, and
the machine's slowness (tests/slowness.py), measured once under that load.

With pytest-xdist (the Makefile's PARALLEL) both happen in the
controlling process only: the workers inherit the slowness through the environment.
Each worker's tests share the CPUs with the other workers', so the slowness is
measured with one more busy loop per other worker. tests/worker_scopes.py says
which tests run together on one worker.

Every test is marked with the part of the tree it tests, the name of its
directory (`pytest -m restricted`, `pytest -m "not e2e"`); the helper modules
stay here, at the top of tests/, importable from every directory."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The directories of tests/, each a marker registered in pyproject.toml.
PARTS = ("jail", "forkserver", "restricted", "mcp", "codemode", "egress", "e2e", "redteam", "compat", "packaging")

# tests/ first (the helper modules), then each part: a test may use what a test module of
# another part defines (test_cli's HTTP server, test_runner's snippets), as it is imported
# under its own name whichever directory pytest was pointed at.
for path in (*(os.path.join(HERE, part) for part in reversed(PARTS) if part != "compat"), HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

import pytest  # noqa: E402

import cpu_load  # noqa: E402
import slowness  # noqa: E402

_loops: list = []


def workers(config) -> int:
    """How many xdist workers this run has (1 without xdist)."""
    if getattr(config.option, "dist", "no") == "no":
        return 1
    return max(1, len(getattr(config.option, "tx", None) or []))


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        return   # an xdist worker: the controller started the load and measured the slowness
    _loops.extend(cpu_load.start(cpu_load.requested()))
    other_workers = cpu_load.start(workers(config) - 1)
    try:
        slowness.slowness()   # measured here, under the load
    finally:
        cpu_load.stop(other_workers)


def pytest_collection_modifyitems(config, items):
    for item in items:
        part = os.path.relpath(str(item.path), HERE).split(os.sep)[0]
        if part in PARTS:
            item.add_marker(part)


@pytest.hookimpl(optionalhook=True)   # a hook of pytest-xdist's, which may be absent
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") == "loadfile":
        import worker_scopes
        return worker_scopes.FileScheduling(config, log)
    return None


def pytest_report_header(config):
    return (f"slowness {slowness.slowness():.2f} (tests/slowness.py), "
            f"CPU load: {len(_loops)} busy loop(s) ({cpu_load.VARIABLE})")


def pytest_unconfigure(config):
    cpu_load.stop(_loops)
    _loops.clear()

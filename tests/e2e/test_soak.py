"""A 500-execution soak through the MCP server (bench/soak.py runs 10,000):
ordinary, failing, timing-out and bombing snippets, two in flight. Afterwards
the server and its fork server hold no more file descriptors, child processes
or zombies than after the warm-up (the warm pool's constant children are in
both counts), and every execution answered as expected.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_soak():
    spec = importlib.util.spec_from_file_location("bench_soak", ROOT / "bench" / "soak.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def report():
    soak = _load_soak()
    result = asyncio.run(soak.soak(count=500, concurrency=2, progress=False))
    print("\n" + soak.render(result))
    return soak, result


def test_every_execution_answered_as_expected(report):
    _soak, result = report
    assert sum(result["counts"].values()) == 500, result["counts"]
    assert not result["unexpected"], result["unexpected"][:10]


def test_no_growth_of_fds_children_or_zombies(report):
    soak, result = report
    problems = soak.growth(result)
    assert not problems, soak.render(result)


def test_pool_is_the_only_thing_left(report):
    _soak, result = report
    end = result["end"]["fork_server"]
    assert end["children"] <= 2, end          # SANDBOX_POOL_SIZE=2 warm children
    assert end["descendants"] <= 2, end       # each one process, PID 1 of its namespace
    assert end["zombies"] == 0, end
    assert end["cloners"] == 1, end           # the cloner the children come from, alive throughout
    assert result["end"]["server"]["children"] == 1, result["end"]["server"]   # the fork server only

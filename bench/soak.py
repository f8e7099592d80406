#!/usr/bin/env python3
"""Soak test: N executions through the MCP server (a real MCP client over stdio),
a mix of ordinary, failing, timing-out and bombing snippets, then the resource
use of the server and of its fork server at the start and at the end, read from
/proc: open fds, threads, child processes, zombies and RSS.

    python bench/soak.py                  # 10,000 executions
    python bench/soak.py --count 500 --concurrency 4 --json soak.json

Exit status 0 when nothing grew (fds, children, zombies) and every execution
answered as expected, 1 otherwise. tests/e2e/test_soak.py runs a 500-execution
version in the default test run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "redteam"))

from mcp_client import open_session, sandboxes, state_of  # noqa: E402
from mcpsync import all_descendants, children_of, process_stats, fork_server_of  # noqa: E402

POOL_SIZE = 2

# (kind, code, arguments, accepted error types: None = success)
MIX = [
    ("normal", "result = sum(range(1000))", {}, {None}),
    ("normal", "import json\nresult = json.loads(json.dumps({'a': [1, 2, 3]}))", {}, {None}),
    ("normal", "for i in range(50):\n    print('line', i)\nresult = 'printed'", {}, {None}),
    ("normal", "import math, statistics\nresult = statistics.mean(math.sqrt(i) for i in range(1000))", {}, {None}),
    ("normal", "import re\nresult = re.findall(r'\\d+', 'a1b22c333')", {}, {None}),
    ("normal", "x = [i * i for i in range(10000)]\nresult = len(x)", {}, {None}),
    ("normal", "import collections\nresult = dict(collections.Counter('mississippi'))", {}, {None}),
    ("normal", "import datetime\nresult = str(datetime.date(2024, 1, 1) + datetime.timedelta(days=40))", {}, {None}),
    ("normal", "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nresult = fib(15)", {}, {None}),
    ("normal", "result = 'x' * 1000", {"capture_output": False}, {None}),
    ("normal", "import hashlib\nresult = hashlib.sha256(b'soak').hexdigest()", {}, {None}),
    ("normal", "result = [str(i) for i in range(100)]", {}, {None}),
    ("failing", "1 / 0", {}, {"runtime_error"}),
    ("failing", "import subprocess", {}, {"security_violation"}),
    ("failing", "def f(:\n    pass", {}, {"syntax_error"}),
    ("failing", "().__class__", {}, {"security_violation", "syntax_error"}),
    ("timeout", "while True:\n    pass", {"timeout": 0.3}, {"timeout"}),
    ("timeout", "import time\ntime.sleep(5)", {"timeout": 0.2}, {"timeout"}),
    ("bomb", "x = b'x' * (10 ** 10)", {"memory_limit": "64m"}, {"memory_limit", "runtime_error"}),
    ("bomb", "chunks = []\nwhile True:\n    chunks.append('A' * (1 << 20))", {"memory_limit": "64m", "timeout": 3},
     {"memory_limit", "runtime_error", "timeout"}),
    ("bomb", "while True:\n    print('A' * 1000)", {"timeout": 2}, {"output_limit", "timeout"}),
    ("bomb", "def f(n):\n    return f(n + 1)\nf(0)", {}, {"runtime_error"}),
    ("bomb", "print(sum(range(10 ** 10)))", {"timeout": 0.3}, {"timeout"}),
]


def snapshot(server_pid: int) -> dict:
    fork_server = fork_server_of(server_pid)
    return {"server": process_stats(server_pid), "fork_server": process_stats(fork_server)}


def settled(server_pid: int) -> bool:
    """The fork server is back to its warm pool and nothing is left to reap."""
    fork_server = fork_server_of(server_pid)
    if not fork_server:
        return True
    below = all_descendants(fork_server)
    zombies = [p for p in below if state_of(p) == "Z"]
    return (len(sandboxes(children_of(fork_server))) <= POOL_SIZE and not zombies
            and len(sandboxes(below)) <= 3 * POOL_SIZE)


async def wait_settled(server_pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if settled(server_pid):
            await asyncio.sleep(0.3)      # and stays so (the pool refill has finished)
            if settled(server_pid):
                return True
        await asyncio.sleep(0.1)
    return settled(server_pid)


async def soak(count: int = 10_000, concurrency: int = 2, env: "dict | None" = None, progress: bool = True,
               warmup: int = 20) -> dict:
    env = {"SANDBOX_LOG_LEVEL": "warning", "SANDBOX_MAX_CONCURRENCY": str(concurrency), **(env or {})}
    started = time.monotonic()
    counts: dict = {}
    seconds: dict = {}
    unexpected: list = []
    async with open_session(env, timeout=120) as server:
        pid = server.pid

        async def one(i: int) -> None:
            kind, code, arguments, accepted = MIX[i % len(MIX)]
            t0 = time.monotonic()
            data, _result = await server.call("execute_code", {"code": code, **arguments}, timeout=120)
            seconds[kind] = seconds.get(kind, 0.0) + time.monotonic() - t0
            error_type = data.get("error_type") if isinstance(data, dict) else "no-answer"
            counts[kind] = counts.get(kind, 0) + 1
            if error_type not in accepted:
                unexpected.append({"i": i, "kind": kind, "code": code[:60], "error_type": error_type,
                                   "error": ((data or {}).get("error") or "")[:200] if isinstance(data, dict) else None})

        for i in range(warmup):
            await one(i)
        await wait_settled(pid)
        before = snapshot(pid)
        counts.clear()
        seconds.clear()
        gate = asyncio.Semaphore(concurrency)
        done = 0

        async def gated(i: int) -> None:
            nonlocal done
            async with gate:
                await one(i)
            done += 1
            if progress and done % 500 == 0:
                print(f"  {done}/{count} executions, {time.monotonic() - started:.0f}s", file=sys.stderr, flush=True)

        await asyncio.gather(*(gated(i) for i in range(count)))
        is_settled = await wait_settled(pid)
        after = snapshot(pid)
    return {"count": count, "concurrency": concurrency, "elapsed": round(time.monotonic() - started, 1),
            "counts": counts, "mean_seconds": {k: round(v / max(counts.get(k, 1), 1), 3) for k, v in seconds.items()},
            "unexpected": unexpected, "settled": is_settled, "start": before, "end": after}


def growth(report: dict) -> list:
    """What grew between start and end (fds, children, zombies) or is left over."""
    problems = []
    for proc in ("server", "fork_server"):
        start, end = report["start"][proc], report["end"][proc]
        if not end.get("alive"):
            problems.append(f"the {proc} is gone at the end")
            continue
        if start.get("pid") != end.get("pid"):
            problems.append(f"the {proc} was replaced ({start.get('pid')} -> {end.get('pid')})")
            continue
        for key in ("fds", "children", "zombies", "cloners"):
            if (end.get(key) or 0) > (start.get(key) or 0):
                problems.append(f"{proc} {key}: {start.get(key)} -> {end.get(key)}")
    if report["end"]["fork_server"].get("zombies"):
        problems.append(f"zombies below the fork server at the end: {report['end']['fork_server']['zombies']}")
    if not report["settled"]:
        problems.append("the fork server's tree did not return to its warm pool")
    return problems


def render(report: dict) -> str:
    lines = [f"soak: {report['count']} executions, concurrency {report['concurrency']}, {report['elapsed']}s "
             f"({report['count'] / max(report['elapsed'], 0.001):.0f}/s); mix {report['counts']}; "
             f"mean seconds per call {report.get('mean_seconds')}",
             f"{'':8} {'':6} {'pid':>8} {'fds':>5} {'threads':>8} {'children':>9} {'descend.':>9} {'zombies':>8} {'RSS KiB':>9}"]
    for proc in ("server", "fork_server"):
        for when in ("start", "end"):
            s = report[when][proc]
            lines.append(f"{proc:8} {when:6} {s.get('pid') or '-':>8} {s.get('fds', '-'):>5} {s.get('threads', '-'):>8} "
                         f"{s.get('children', '-'):>9} {s.get('descendants', '-'):>9} {s.get('zombies', '-'):>8} "
                         f"{s.get('rss_kib', '-'):>9}")
    if report["unexpected"]:
        lines.append(f"{len(report['unexpected'])} unexpected answers, first: {report['unexpected'][:5]}")
    problems = growth(report)
    lines.append("growth: " + ("; ".join(problems) if problems else "none"))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000, help="executions (default 10,000)")
    parser.add_argument("--concurrency", type=int, default=2, help="requests in flight (default 2)")
    parser.add_argument("--json", help="also write the report to this file")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="extra SANDBOX_* setting")
    args = parser.parse_args(argv)
    env = dict(item.split("=", 1) for item in args.env)
    report = asyncio.run(soak(args.count, args.concurrency, env))
    print(render(report))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(report, handle, indent=1)
    return 1 if growth(report) or report["unexpected"] else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())

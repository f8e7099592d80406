#!/usr/bin/env python3
"""CPU time and minor (copy-on-write) faults per execution of the fork server,
its cloner and the sandbox children, through the runner API:

    python bench/clone_cost.py [--runs 300] [--pool 4]

Read from /proc/<pid>/stat before and after the runs: the fork server's own
counters, the cloner's own (it lives for the whole run, so it is never reaped),
and the children's, reaped into the fork server's account. Prints one line.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from mcp_client import cloner_of  # noqa: E402
from runner_harness import SyncRunner  # noqa: E402


def counters(pid: int | None) -> tuple:
    """(own minor faults, reaped children's minor faults, own CPU s, children's CPU s)."""
    if pid is None:
        return 0, 0, 0.0, 0.0
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[7]), int(fields[8]), (int(fields[11]) + int(fields[12])) / tick,
            (int(fields[13]) + int(fields[14])) / tick)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--pool", type=int, default=4)
    args = parser.parse_args()
    runner = SyncRunner(pool_size=args.pool)
    try:
        runner.run("result = 1")
        time.sleep(0.5)
        fork_server = runner.runner.fork_server_pid()
        cloner = cloner_of(fork_server)
        z0, c0 = counters(fork_server), counters(cloner)
        for _ in range(args.runs):
            runner.run("result = 2 + 2")
        time.sleep(0.3)   # the last children reaped
        z1, c1 = counters(fork_server), counters(cloner)
    finally:
        runner.close()
    per = {name: (after - before) / args.runs for name, before, after in (
        ("fork_server_faults", z0[0], z1[0]), ("children_faults", z0[1], z1[1]), ("fork_server_cpu", z0[2], z1[2]),
        ("children_cpu", z0[3], z1[3]), ("cloner_faults", c0[0], c1[0]), ("cloner_cpu", c0[2], c1[2]))}
    print(f"per execution ({args.runs}, pool {args.pool}): fork server {per['fork_server_cpu'] * 1e3:.2f} ms CPU, "
          f"{per['fork_server_faults']:.0f} faults; cloner {per['cloner_cpu'] * 1e3:.2f} ms, "
          f"{per['cloner_faults']:.0f} faults{'' if cloner else ' (no cloner)'}; children "
          f"{per['children_cpu'] * 1e3:.2f} ms, {per['children_faults']:.0f} faults")


if __name__ == "__main__":
    main()

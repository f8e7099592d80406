"""The benchmark's own probes still work against today's child: a bench that
hangs or measures nothing is found here, not in the next `make bench`. Nothing
is timed: figures belong in bench/README.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sandbox import child

ROOT = Path(__file__).resolve().parents[2]


def test_hardening_steps_measures_every_step_of_the_child():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "hardening_steps.py"), "--json", "--runs", "2"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout)
    measured = set(res["steps"])
    assert set(res["layers"]) <= measured, (res["layers"], measured)
    assert {"start (fds, signals, environment)", "pre-warm", "the request: result = 2 + 2"} <= measured, measured
    assert all(row["n"] == 2 and row["cpu_ms"] > 0 for row in res["steps"].values()), res["steps"]
    # a cloned child copies pages from its first step on: a count of 0 means nothing was read
    assert res["child_faults"] > 0 and res["steps"]["start (fds, signals, environment)"]["faults"] > 0, res
    assert set(res["layers"]) <= {row[0] for row in child.HARDENING}


def test_hardening_steps_in_detail_labels_each_function_by_where_it_ran():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "hardening_steps.py"), "--json", "--runs", "2",
                          "--detail"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    steps = json.loads(out.stdout)["steps"]
    # the snippet is compiled twice in a pooled child: the pre-warm's and the request's
    assert {"  pre-warm > compile_snippet", "  request > compile_snippet", "  namespaces > build_root"} <= set(steps), steps
    assert steps["  pre-warm > compile_snippet"]["faults"] > steps["  request > compile_snippet"]["faults"], steps

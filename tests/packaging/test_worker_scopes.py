"""`make test`'s workers: a file never split, tests/redteam never split (tests/worker_scopes.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cpu_load
import worker_scopes

REPO = Path(__file__).resolve().parents[2]


def test_a_file_is_one_scope_and_the_red_team_one_scope():
    scope = worker_scopes.scope_of
    assert scope("tests/mcp/test_config.py::test_a[x::y]") == scope("tests/mcp/test_config.py::test_b") \
        == "tests/mcp/test_config.py"
    assert scope("tests/e2e/test_cli.py::test_a") != scope("tests/e2e/test_server_e2e.py::test_a")
    assert scope("tests/redteam/test_corpus.py::test_attack[rp-FS-001]") \
        == scope("tests/redteam/test_zz_host_canaries.py::test_host_canaries_untouched") == "tests/redteam"


def test_the_red_teams_files_run_on_one_worker_in_order():
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile", "-v",
         "tests/packaging/test_cpu_load.py", "tests/redteam/test_corpus.py::test_corpus_is_complete",
         "tests/redteam/test_zz_host_canaries.py::test_host_canaries_were_set_up"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env={**os.environ, cpu_load.VARIABLE: ""})   # the run's own busy loops are load enough
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = [line.split()[0] + " " + line.split("::")[0].split()[-1]
           for line in done.stdout.splitlines() if line.startswith("[gw")]
    red_team = [entry for entry in ran if "tests/redteam/" in entry]
    assert len(red_team) == 2 and len({entry.split()[0] for entry in red_team}) == 1, ran
    assert red_team[0].endswith("test_corpus.py") and red_team[1].endswith("test_zz_host_canaries.py"), ran

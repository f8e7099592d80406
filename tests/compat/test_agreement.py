"""validate_code agrees with execute_code on what the policy refuses: every snippet of
tests/compat/corpus.py's REFUSED list is refused by both, with a refusal that says
what to do instead, and for the known gaps neither one refuses what the other lets
through. (test_compat.py checks the other half: every corpus snippet passes both.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compat.corpus import GAPS, REFUSED  # noqa: E402
from runner_harness import SyncRunner  # noqa: E402

POLICY_ERRORS = ("security_violation", "syntax_error")


@pytest.fixture(scope="module")
def runner():
    made = SyncRunner()
    yield made
    made.close()


@pytest.mark.parametrize("code", REFUSED, ids=[f"refused-{i + 1:02d}" for i in range(len(REFUSED))])
def test_both_refuse(code, runner):
    ran = runner.run(code)
    assert not ran["success"] and ran["error_type"] in POLICY_ERRORS, ran
    checked = runner.validate(code)["validation"]
    assert not checked["valid"], (code, checked)
    # the refusal teaches: it names what to use instead, or why, not only "not allowed"
    assert len(ran["error"]) > 40, ran["error"]


@pytest.mark.parametrize("snippet", GAPS, ids=[g["id"] for g in GAPS])
def test_the_known_gaps_are_refused_by_both_or_neither(snippet, runner):
    ran = runner.run(snippet["code"])
    refused = not ran["success"] and ran["error_type"] in POLICY_ERRORS
    valid = runner.validate(snippet["code"])["validation"]["valid"]
    assert refused == (not valid), (snippet["id"], ran.get("error"), valid)

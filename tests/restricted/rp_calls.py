"""Calls of the RestrictedPython layer alone, shared by tests/restricted/test_rp_*.py:
execute() in-process, with io.StringIO streams and the basic profile, each reply
checked for the shape every reply has (its keys, JSON-safe, capped)."""

from __future__ import annotations

import io
import json

from sandbox import profiles
from sandbox.restricted import run as restricted

BASIC = profiles.allowed_modules(["basic"])
RESULT_KEYS = {"success", "result", "result_repr", "result_cut", "variables", "error", "error_type", "line", "traceback",
               "security_events"}
# Sources that blow up a parser or a compiler that recurses: each must fail cleanly.
PARSER_BOMBS = {
    "unary_minus": "x = " + "-" * 6000 + "1",
    "nested_brackets": "x = " + "[" * 100000 + "]" * 100000,
    "nested_parens": "x = " + "(" * 100000 + ")" * 100000,
    "long_sum": "x = " + "1+" * 100000 + "1",
    "nested_calls": "f(" * 5000 + ")" * 5000,
    "deep_lambdas": "f = " + "lambda: " * 3000 + "1",
    "huge_statement_echo": 'x = "' + "A" * 10**6 + '" +\n',
}


def run(code, *, allowed=BASIC, unrestricted=False):
    out, err = io.StringIO(), io.StringIO()
    reply = restricted.execute(code, restricted=not unrestricted, allowed_modules=allowed,
                               stdout=out, stderr=err)
    assert set(reply) == RESULT_KEYS
    json.dumps(reply)  # JSON-safe, always
    assert len(reply["error"] or "") <= restricted.MAX_MESSAGE
    assert len(reply["traceback"] or "") <= restricted.MAX_MESSAGE
    assert len(reply["security_events"]) <= restricted.MAX_EVENTS
    return reply, out.getvalue(), err.getvalue()


def _visible(reply, out, err):
    """Where an escape would show: output, result and error (the traceback quotes the
    snippet's own source lines, canary strings included)."""
    return out + err + json.dumps(reply["result"]) + str(reply["error"])


def ok(code, **kwargs):
    reply, out, _ = run(code, **kwargs)
    assert reply["success"], reply
    return reply["result"], out


def blocked(code, *, error_types=("security_violation",), **kwargs):
    """The snippet fails with one of ``error_types`` and nothing escapes."""
    reply, out, err = run(code, **kwargs)
    assert not reply["success"], reply
    assert reply["error_type"] in error_types, reply
    assert "ESCAPED" not in _visible(reply, out, err)
    if reply["error_type"] == "security_violation":
        assert reply["security_events"], reply
    return reply


def validate(code, allowed=BASIC, unrestricted=False):
    report = restricted.validate(code, restricted=not unrestricted, allowed_modules=allowed)
    json.dumps(report)
    assert set(report) == {"validation", "analysis", "recommendations"}
    assert set(report["validation"]) == {"valid", "errors", "message"}
    assert set(report["analysis"]) == {"line_count", "character_count", "estimated_complexity"}
    return report

"""A code-mode call's arguments are hostile, and the server checks them against
the upstream's inputSchema (sandbox/codemode/argument_schema.py): the same verdicts as
jsonschema, at a cost that grows with the arguments and no faster, and never a
fetch of a URL the schema names."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from local_http import serving  # noqa: E402
from slowness import scaled  # noqa: E402

from sandbox.codemode import argument_schema
from sandbox.codemode import upstreams
from sandbox.tool_servers import ToolServer  # noqa: E402

UNIQUE = {"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": True}}}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.0, 1.0, -2.0, 0.5, 1e300])
    | st.sampled_from(["", "a", "1", "true"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=8)


@settings(max_examples=400, deadline=None)
@given(st.lists(json_values, max_size=6))
def test_unique_items_agrees_with_jsonschema(items):
    """1 == 1.0, True != 1, {"a": 1} == {"a": 1.0}, key order ignored: whatever
    jsonschema calls equal, so does the bounded check (and nothing else)."""
    ours = argument_schema.problem(argument_schema.checker(UNIQUE), {"xs": items}) is None
    assert ours == jsonschema.Draft202012Validator(UNIQUE).is_valid({"xs": items}), items


# a check given all the time it needs: what it finds must not depend on the machine's speed
ROOMY = 600.0


def test_unique_items_never_compares_pair_by_pair(monkeypatch):
    """jsonschema's own check compares unhashable items pairwise: a snippet's 128 KiB
    call kept the server's event loop busy for 24 s. It is not used at all."""
    def pairwise(container):
        raise AssertionError("jsonschema's pairwise uniqueItems was used")
    monkeypatch.setattr(argument_schema, "CHECK_SECONDS", ROOMY)
    monkeypatch.setattr(jsonschema._utils, "uniq", pairwise)
    monkeypatch.setattr(jsonschema._keywords, "uniq", pairwise)
    checker = argument_schema.checker(UNIQUE)
    mixed = [item for i in range(9000) for item in (i, str(i))]          # unsortable: ints and strings
    assert argument_schema.problem(checker, {"xs": mixed}) is None
    assert argument_schema.problem(checker, {"xs": [{"a": i} for i in range(20000)]}) is None
    repeated = argument_schema.problem(checker, {"xs": mixed + [{"k": 1}, {"k": 1.0}]})
    assert repeated.startswith("has non-unique elements") and "{'k': 1.0} is repeated" in repeated
    with pytest.raises(AssertionError, match="pairwise"):
        jsonschema.validate({"xs": [{"a": 1}, {"a": 2}]}, UNIQUE)  # (the patch would have caught it)


def test_a_reference_to_a_url_is_never_fetched():
    """A schema's $ref to a URL: jsonschema would fetch it from the server (shown
    first against plain jsonschema); here the call is refused and nothing is asked."""
    hits: list = []
    with serving(json.dumps({"type": "integer"}).encode(), hits) as port:
        schema = {"type": "object", "properties": {"x": {"$ref": f"http://127.0.0.1:{port}/schema.json"}}}
        with pytest.warns(DeprecationWarning):
            jsonschema.validate({"x": 1}, schema)
        assert hits == ["/schema.json"]                                  # the door is real
        assert "inputSchema cannot be checked" in argument_schema.problem(argument_schema.checker(schema), {"x": 1})
        assert hits == ["/schema.json"]                                  # and closed here


def test_references_inside_the_schema_resolve():
    schema = {"type": "object", "$defs": {"Tag": {"type": "integer"}},
              "properties": {"tag": {"$ref": "#/$defs/Tag"}}, "required": ["tag"]}
    checker = argument_schema.checker(schema)
    assert argument_schema.problem(checker, {"tag": 3}) is None
    assert argument_schema.problem(checker, {"tag": "x"}) == "'x' is not of type 'integer'"
    assert argument_schema.problem(checker, {}) == "'tag' is a required property"
    assert argument_schema.problem(checker, ["tag"]) == "arguments must be keyword arguments"


def test_a_tool_checks_its_schema_once_and_says_when_it_is_invalid(monkeypatch):
    built = []
    real = argument_schema.checker
    monkeypatch.setattr(argument_schema, "checker", lambda schema: built.append(schema) or real(schema))
    server = ToolServer(name="up", attribute="up", command="true")
    tool = SimpleNamespace(name="t", description="", input_schema=UNIQUE, output_schema=None, annotations=None)
    remote = upstreams.RemoteTool(server, tool)
    assert remote.arguments_problem({"xs": [1, 2]}) is None
    assert "non-unique" in remote.arguments_problem({"xs": [2, 2]})
    assert len(built) == 1
    broken = upstreams.RemoteTool(server, SimpleNamespace(**{**vars(tool), "input_schema": {"type": 5}}))
    assert broken.arguments_problem({}) == "the tool's own inputSchema is invalid"


def test_a_check_looks_at_a_few_errors_and_stops_at_its_deadline(monkeypatch):
    """Every keyword is linear, but 64K items that each fail an anyOf kept the loop busy
    for 2 s, an enum of 100 values for 4 s (each error built and ranked): the check ranks
    the first few errors only, and stops between two keywords once CHECK_SECONDS are
    spent, refusing the call as too much to check."""
    checks = []
    real = argument_schema._timed

    def counting(check):
        timed = real(check)
        return lambda *args: checks.append(1) or timed(*args)

    monkeypatch.setattr(argument_schema, "_timed", counting)
    branches = {"type": "object", "properties": {"xs": {"type": "array", "items": {
        "anyOf": [{"type": "string"}, {"type": "boolean"}, {"type": "integer"}]}}}}
    checker = argument_schema.checker(branches)
    monkeypatch.setattr(argument_schema, "CHECK_SECONDS", ROOMY)
    assert argument_schema.problem(checker, {"xs": [None] * 60000}) == "None is not valid under any of the given schemas"
    assert len(checks) < 2000, len(checks)                       # not one error per item
    monkeypatch.setattr(argument_schema, "CHECK_SECONDS", 0.0)   # a check that is out of time at once
    assert argument_schema.problem(checker, {"xs": [1] * 10}).startswith("they take longer than 0 s to check")
    monkeypatch.setattr(argument_schema, "CHECK_SECONDS", 1.0)
    assert argument_schema.problem(checker, {"xs": [1, "a", True]}) is None   # (and the clock is reset)


EVIL = "a" * 40 + "!"   # `^(a+)+$` on it runs for hours


@pytest.mark.parametrize("schema, bad, good", [
    ({"type": "object", "properties": {"name": {"type": "string", "pattern": "^(a+)+$"}}},
     {"name": EVIL}, {"name": "aaa"}),
    ({"type": "object", "patternProperties": {"^(a+)+$": {"type": "integer"}}}, {EVIL: 1}, {"aaa": 1}),
    ({"type": "object", "properties": {"name": {"type": "object", "propertyNames": {"pattern": "^(a|aa)+$"}}}},
     {"name": {EVIL: 1}}, {"name": {"aaa": 1}}),
], ids=["pattern", "patternProperties", "propertyNames"])
def test_a_pattern_that_backtracks_badly_is_stopped_at_the_deadline(monkeypatch, schema, bad, good):
    """An upstream's own regular expression runs on the snippet's strings inside a single
    keyword: one that backtracks badly held the server's event loop, so every client
    waited. The check is interrupted by an alarm at its deadline and the call refused."""
    monkeypatch.setattr(argument_schema, "CHECK_SECONDS", 0.3)
    checker = argument_schema.checker(schema)
    started = time.monotonic()
    assert argument_schema.problem(checker, bad).startswith("they take longer than 0.3 s to check")
    assert time.monotonic() - started < 0.3 + scaled(2)
    assert argument_schema.problem(checker, good) is None          # the validator still works
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL      # and the alarm is put back
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)

"""Errors under the RestrictedPython layer alone: syntax and policy errors with their lines,
tracebacks of the snippet's frames only, parser bombs, the plain-Python mode, capped
messages and results, and refusals that say what to write instead."""

from __future__ import annotations

import json
import sys
import time

import pytest

from sandbox.restricted import run as restricted
from sandbox.restricted.json_value import cap_text, to_jsonable

from rp_calls import BASIC, PARSER_BOMBS, blocked, ok, run
from slowness import scaled


# --------------------------------------------------------------------- error reporting

def test_syntax_error_has_line():
    reply = blocked("x = 1\ny = (\n", error_types=("syntax_error",))
    assert reply["line"] in (2, 3)
    assert reply["error"].startswith("SyntaxError")
    assert reply["security_events"] == []


@pytest.mark.parametrize("code, shown", [
    ("x = 1\ndef f(:\n    pass", "    def f(:\n          ^"),
    ("if True:\n        total = (1 +\n", "    total = (1 +\n            ^"),     # indentation dropped, caret kept
    ("print 'hello'", "    print 'hello'\n    ^^^^^"),
])
def test_a_syntax_error_shows_the_line_and_where_in_it(code, shown):
    reply = blocked(code, error_types=("syntax_error",))
    assert shown in reply["error"], reply["error"]


def test_a_syntax_error_in_a_very_long_line_does_not_repeat_it():
    reply = blocked("x = 1 +" + " 1 +" * 100 + " )", error_types=("syntax_error",))
    assert reply["error"].count("\n") == 0 and len(reply["error"]) < 200, reply["error"]


def test_policy_error_is_security_violation_with_line():
    reply = blocked("x = 1\nexec('print(1)')")
    assert reply["line"] == 2
    assert "exec() is not available in the sandbox: write the code directly" in reply["error"]
    assert reply["security_events"][0]["kind"] == "compile_rejected"


def test_runtime_error_traceback_shows_only_snippet_frames():
    reply = blocked("import json\ndef load(text):\n    return json.loads(text)\nload('{\"a\": ')",
                    error_types=("runtime_error",))
    assert reply["line"] == 3
    assert reply["error"].startswith("JSONDecodeError")
    tb = reply["traceback"]
    assert 'File "<snippet>", line 4, in <module>' in tb
    assert 'File "<snippet>", line 3, in load' in tb
    assert "return json.loads(text)" in tb
    for leak in ("site-packages", "/work", ".py", "json/decoder", "restricted"):
        assert leak not in tb and leak not in reply["error"]


def test_recursion_error_is_runtime_error_with_short_traceback():
    reply = blocked("def f(n):\n    return f(n + 1)\nf(0)", error_types=("runtime_error",))
    assert reply["error"].startswith("RecursionError")
    assert "more frames" in reply["traceback"]


def test_memory_error_is_memory_limit():
    blocked("raise MemoryError", error_types=("memory_limit",))


@pytest.mark.parametrize("exc", ["SystemExit(3)", "KeyboardInterrupt", "GeneratorExit"])
def test_base_exceptions_do_not_propagate(exc):
    reply = blocked(f"raise {exc}", error_types=("runtime_error",))
    assert reply["error"].split(":")[0] in exc


def test_messages_are_capped():
    reply = blocked("_" + "a" * 5000 + "_ = 1")  # a guard-family name (ends with _): refused
    assert len(reply["error"]) <= restricted.MAX_MESSAGE
    assert "truncated" in reply["error"]
    reply = blocked("raise ValueError('x' * 10000)", error_types=("runtime_error",))
    assert len(reply["error"]) <= restricted.MAX_MESSAGE


def test_security_events_are_capped():
    code = "import typing\nfor i in range(200):\n    try:\n        typing.sys\n    except AttributeError:\n        pass"
    reply, _, _ = run(code)
    assert reply["success"]
    assert len(reply["security_events"]) == restricted.MAX_EVENTS


@pytest.mark.parametrize("code,line", [("a = 1\x00", 1), ("x = '\ud800'", 1), ("x = 1\ny = 2\n\x00", 3)])
def test_nul_and_surrogates_are_syntax_errors(code, line):
    reply = blocked(code, error_types=("syntax_error",))
    assert reply["line"] == line


def test_non_text_source_is_syntax_error():
    reply = blocked(b"x = 1", error_types=("syntax_error",))
    assert "text" in reply["error"]


def test_coding_cookie_is_ignored():
    code = "# -*- coding: utf_7 -*-\ndef f(x):\n    return x\n#+AAo-print('ESCAPED:utf7')\nf(1)"
    result, out = ok(code)
    assert result == 1 and out == ""


# --------------------------------------------------------------------- parser bombs

@pytest.mark.parametrize("name", sorted(PARSER_BOMBS))
def test_parser_bombs_fail_cleanly_and_quickly(name):
    started = time.monotonic()
    reply = blocked(PARSER_BOMBS[name], error_types=("syntax_error", "security_violation"))
    assert time.monotonic() - started < scaled(10)
    assert len(reply["error"]) <= restricted.MAX_MESSAGE
    report = restricted.validate(PARSER_BOMBS[name], restricted=True, allowed_modules=BASIC)
    assert report["validation"]["valid"] is False


@pytest.mark.parametrize("name", ["unary_minus", "deep_lambdas"])
def test_a_source_too_deep_to_compile_says_what_to_do(name):
    reply = blocked(PARSER_BOMBS[name], error_types=("syntax_error",))
    assert "flatten the nesting, send less code, or pass a larger memory_limit" in reply["error"], reply


# --------------------------------------------------------------------- restricted=False

def test_unrestricted_mode_runs_plain_python():
    result, out = ok("import os\nprint('pid')\nresult = os.getpid()", unrestricted=True)
    import os
    assert result == os.getpid()
    assert out == "pid\n"
    reply, _, _ = run("import os\nx = 1\nos.getpid()", unrestricted=True)
    assert reply["variables"] == ["x"]
    assert reply["result"] == os.getpid()


def test_unrestricted_mode_reports_errors_the_same_way():
    reply, _, _ = run("x = (", unrestricted=True)
    assert reply["error_type"] == "syntax_error"
    reply, _, _ = run("1/0", unrestricted=True)
    assert reply["error_type"] == "runtime_error" and reply["line"] == 1


# --------------------------------------------------------------------- results encoding

def test_to_jsonable_handles_hostile_values():
    loop = []
    loop.append(loop)
    deep = []
    for _ in range(100000):
        deep = [deep]
    value = to_jsonable({"loop": loop, "deep": deep, 1: (1, 2), "nan": float("nan"),
                         "inf": float("-inf"), "b": b"\x00ab", "big": 10**5000, "set": {3, 1, 2},
                         "obj": object(), "s": "x" * 200_000, "sur": "\ud800"})
    text = json.dumps(value)
    assert value["loop"] == ["<cycle: list>"]
    assert "max depth" in text
    assert value["1"] == [1, 2] and value["nan"] == "nan" and value["inf"] == "-inf"
    assert value["b"] == "b'\\x00ab'" and value["set"] == [1, 2, 3]
    assert value["big"].startswith("<int with")
    assert value["obj"].startswith("<object object at")
    assert len(value["s"]) <= 100_000 and "truncated" in value["s"]
    text.encode("utf-8")


def test_to_jsonable_caps_items_and_survives_bad_repr():
    class Bad:
        def __repr__(self):
            raise SystemExit
    assert to_jsonable([Bad()]) == ["<unrepresentable Bad: SystemExit>"]
    value = to_jsonable(list(range(5000)))
    assert len(value) == 1001 and value[-1] == "<4000 more items>"
    assert to_jsonable(range(10**12))[-1].startswith("<")
    assert to_jsonable({i: i for i in range(2000)})["<more>"] == "<1000 more items>"


def test_cap_text():
    assert cap_text("abc", 5) == ("abc", False)
    text, cut = cap_text("a" * 5000, 2000)
    assert cut and len(text) == 2000 and text.endswith("chars]")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* is new in Python 3.11")
def test_except_star_is_refused_and_says_what_to_write():
    reply = blocked("try:\n    pass\nexcept* ValueError:\n    pass")
    assert "except ExceptionGroup as group:" in reply["error"], reply


@pytest.mark.skipif(sys.version_info < (3, 12), reason="the generic syntax is new in Python 3.12")
@pytest.mark.parametrize("code, advice", [
    ("def first[T](xs: list[T]) -> T:\n    return xs[0]", "T = TypeVar('T')"),
    ("class Box[T, *Ts, **P]:\n    pass", "class C(Generic[T])"),
    ("class B[T: (lambda: print('ran'))()]:\n    pass", "T = TypeVar('T')"),
    ("type Pair = tuple[int, int]", "Alias = list[int]"),
])
def test_the_generic_syntax_is_refused_once_a_line_and_says_what_to_write(code, advice):
    reply = blocked(code)
    assert advice in reply["error"] and reply["error"].count("Line 1:") == 1, reply


@pytest.mark.parametrize("code, teaches", [
    ("from . import helpers", "import modules by their full name"),
    ("import json\nsetattr(json, 'indent', 2)", "keep your own value in a variable"),
    ("import json\njson.indent = 2", "keep your own value in a variable"),
    ("import dataclasses\ndataclasses.inspect", "use the names the module itself offers"),
    ("class C:\n    pass\nsetattr(C(), '__deepcopy__', 1)", "special methods are set on the snippet's own classes"),
    ("C = type('C', (), {'__module__': 'json'})", "write a class statement for anything else"),
])
def test_these_refusals_say_what_to_do(code, teaches):
    reply = blocked(code, error_types=("security_violation", "runtime_error"))
    assert teaches in reply["error"], reply["error"]

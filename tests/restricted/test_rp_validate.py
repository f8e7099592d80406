"""validate() under the RestrictedPython layer alone: what it refuses, with lines, and that
it refuses what execute() would and nothing that runs."""

from __future__ import annotations

import pytest

from rp_calls import PARSER_BOMBS, blocked, validate


# --------------------------------------------------------------------- validate

def test_validate_refuses_disallowed_import_with_line():
    report = validate("x = 1\nimport subprocess\n")
    assert report["validation"]["valid"] is False
    [error] = report["validation"]["errors"]
    assert error["line"] == 2 and "'subprocess'" in error["message"]
    assert "subprocess" in report["validation"]["message"]
    assert report["recommendations"]


@pytest.mark.parametrize("code,bad", [
    ("from json import tool", "json.tool"), ("from uuid import os", "uuid.os"),
    ("import xml.dom", "xml.dom"), ("from . import x", "."), ("import json.decoder", "json.decoder"),
])
def test_validate_import_forms(code, bad):
    report = validate(code)
    assert report["validation"]["valid"] is False
    assert any(bad in e["message"] for e in report["validation"]["errors"])


def test_validate_clean_code():
    report = validate("import json\nfrom collections import Counter\nimport xml.etree.ElementTree as ET\n"
                      "from xml.etree import ElementTree\nresult = json.dumps(Counter('ab'))")
    assert report["validation"] == {"valid": True, "errors": [], "message": "The code is valid"}
    assert report["analysis"]["line_count"] == 5
    assert report["analysis"]["estimated_complexity"] == "low"


def test_validate_syntax_and_policy_errors_have_lines():
    report = validate("x = 1\nif x:\nprint(x)\n")
    [error] = report["validation"]["errors"]
    assert error["line"] in (2, 3) and "Error" in error["message"]
    report = validate("x = 1\ny = ().__class__\n")
    assert report["validation"]["errors"][0]["line"] == 2
    report = validate("def f():\n    pass\nreturn 1\n")  # a compile-time error, past the parser
    assert report["validation"]["valid"] is False and report["validation"]["errors"][0]["line"] == 3


def test_validate_unrestricted_skips_the_import_policy():
    assert validate("import os", unrestricted=True)["validation"]["valid"] is True
    assert validate("x = (", unrestricted=True)["validation"]["valid"] is False


def test_validate_complexity_ordering():
    levels = {"low": 0, "medium": 1, "high": 2}
    low = validate("x = 1\nprint(x)")["analysis"]["estimated_complexity"]
    medium = validate("for i in range(3):\n    for j in range(3):\n        print(i, j)")["analysis"]["estimated_complexity"]
    high = validate("for i in range(3):\n    for j in range(3):\n        for k in range(3):\n"
                    "            print(i, j, k)")["analysis"]["estimated_complexity"]
    assert levels[low] < levels[medium] < levels[high]
    assert validate("x = 1\n" * 2000)["analysis"]["estimated_complexity"] == "high"


def test_validate_never_raises():
    for code in [None, b"x", "\x00", "x = '\ud800'", PARSER_BOMBS["unary_minus"], "# -*- coding: utf_7 -*-\n+AAo-"]:
        report = validate(code)
        assert report["validation"]["valid"] is False or code.startswith("#")


def test_validate_analysis_counts():
    report = validate("a = 1\nb = 2\n")
    assert report["analysis"]["line_count"] == 2
    assert report["analysis"]["character_count"] == 12


# --------------------------------------------------------------------- validate sees what execute refuses
@pytest.mark.parametrize("code,line,needle", [
    ("import sys\n\nsys.settrace(None)", 3, "sys.settrace"),
    ("import os as o\no.fork()", 2, "os.fork"),
    ("import typing\nref = typing.ForwardRef", 2, "ForwardRef"),
    ("x = 1\nnames = locals()", 2, "locals() is not available"),
    ("code = compile('1', 'x', 'eval')", 1, "compile() is not available"),
])
def test_validate_reports_refused_module_attributes_and_withheld_builtins(code, line, needle):
    errors = validate(code)["validation"]["errors"]
    assert [e["line"] for e in errors if needle in e["message"]] == [line], errors
    assert blocked(code)["error_type"] == "security_violation"


@pytest.mark.parametrize("code", [
    "import sys\nsys = {'modules': 1}\nsys['modules']",          # rebound: no longer the module
    "import sys\ndef f(sys):\n    return sys.modules\nf(type('S', (), {'modules': 1}))",
    "def locals():\n    return {}\nlocals()",                      # the snippet's own function
    "x = 1\nnames = sorted(globals())",
    "import os\nresult = os.path.join('a', 'b')",
])
def test_validate_does_not_refuse_what_runs(code):
    assert validate(code)["validation"]["valid"] is True, validate(code)

"""The subsets' wrapper classes cannot be subclassed by a snippet (sandbox/restricted/sealed.py),
however the class is made: a class statement, type(), or the enum functional API, whose
module= names the module the new class claims to come from (so the check
cannot rest on the name the class claims)."""

from __future__ import annotations

import io

import pytest

from sandbox import profiles
from sandbox.restricted import run
from sandbox.restricted import snippet_files

BASIC = frozenset(profiles.allowed_modules(["basic"]))

# (what the snippet imports, the class, a value its constructor takes, the module it is defined in)
SEALED = [
    ("import logging", "logging.Formatter", "'%(message)s'", "sandbox.restricted.subsets.snippet_logging"),
    ("import logging", "logging.StreamHandler", "None", "sandbox.restricted.subsets.snippet_logging"),
    ("import logging", "type(logging.getLogger('x'))", "None", "sandbox.restricted.subsets.snippet_logging"),
    ("from pathlib import Path", "Path", "'x'", "sandbox.restricted.subsets.snippet_pathlib"),
    ("import tempfile", "tempfile.TemporaryDirectory", "None", "sandbox.restricted.subsets.snippet_tempfiles"),
    ("import sqlite3", "sqlite3.Connection", "':memory:'", "sandbox.restricted.subsets.snippet_sqlite"),
    ("import sqlite3", "sqlite3.Cursor", "None", "sandbox.restricted.subsets.snippet_sqlite"),
]
WAYS = {
    "class statement": "Base = {cls}\nclass Mine(Base):\n    pass",
    "type()": "Mine = type('Mine', ({cls},), {{}})",
    "enum module=": "import enum\nMine = enum.Enum('Mine', [('A', {value})], module='{module}', type={cls})",
}


@pytest.mark.parametrize("way", list(WAYS))
@pytest.mark.parametrize("imports, cls, value, module", SEALED, ids=[entry[1] for entry in SEALED])
def test_a_subset_class_is_not_subclassed(imports, cls, value, module, way, tmp_path, monkeypatch):
    monkeypatch.setattr(snippet_files, "SCRATCH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    code = f"{imports}\n" + WAYS[way].format(cls=cls, value=value, module=module)
    reply = run.execute(code, restricted=True, allowed_modules=BASIC, stdout=io.StringIO(),
                               stderr=io.StringIO(), files=snippet_files.SCRATCH_FILES)
    assert not reply["success"], reply
    if way.startswith("enum") and "cannot be subclassed" not in reply["error"]:
        # (the members are made before the class is checked: a constructor may refuse the value first)
        assert reply["error_type"] == "runtime_error", reply
    else:
        assert "cannot be subclassed in the sandbox" in reply["error"], reply


def test_a_snippet_handler_still_subclasses_logging_handler():
    code = ("import logging\nclass Keep(logging.Handler):\n    def emit(self, record):\n"
            "        self.seen = record.getMessage()\nh = Keep()\nlog = logging.getLogger('t')\nlog.addHandler(h)\n"
            "log.warning('n=%d', 3)\nresult = h.seen")
    reply = run.execute(code, restricted=True, allowed_modules=BASIC, stdout=io.StringIO(),
                               stderr=io.StringIO())
    assert reply["success"] and reply["result"] == "n=3", reply

"""A guard's cached table cut part way by an exception the snippet can cause at any
bytecode (a session's KeyboardInterrupt at its time limit, a MemoryError): the next
use must rebuild it, never trust a table that is only half made. A session keeps the
process, so a half-made table would hold for every later call of that session."""

from __future__ import annotations

import io
import os.path
import pathlib

import pytest

from sandbox import profiles
from sandbox.restricted import imports, module_policy
from sandbox.restricted import run as restricted

BASIC = profiles.allowed_modules(["basic"])


class _CutAfterFirst(dict):
    """registry.SUBSETS whose walk is cut by `cut` after its first module."""

    def __init__(self, entries, cut):
        super().__init__(entries)
        self.cut = cut

    def items(self):
        for number, item in enumerate(super().items()):
            if number == 1:
                raise self.cut
            yield item


@pytest.mark.parametrize("cut", [KeyboardInterrupt, MemoryError])
def test_the_subset_originals_table_cut_part_way_is_made_again(monkeypatch, cut):
    subsets = {"os.path": imports.registry.SUBSETS["os.path"], "pathlib": imports.registry.SUBSETS["pathlib"]}
    assert "join" in subsets["os.path"] and "Path" in subsets["pathlib"]
    monkeypatch.setattr(imports, "_SUBSET_ORIGINALS", {})
    monkeypatch.setattr(imports, "_originals_made_with", -1)
    monkeypatch.setattr(imports.registry, "SUBSETS", _CutAfterFirst(subsets, cut))
    with pytest.raises(cut):
        imports.subset_original(os.path.join)
    monkeypatch.setattr(imports.registry, "SUBSETS", subsets)
    assert imports.subset_original(pathlib.Path) == ("pathlib", "Path")
    assert imports.needs_vet(pathlib.Path)


def test_an_import_interrupted_as_its_policy_begins_leaves_the_policy_pending(monkeypatch):
    """An interrupt can land at any bytecode of an import, the first of the policy's
    completion included: the next attribute read must still complete it (else what the
    import loaded is handed out before the library tables know it)."""
    real = module_policy.ModulePolicy.complete_policy
    calls = []

    def complete_policy(self):
        calls.append("interrupted" if len(calls) == 1 else "completed")
        if calls[-1] == "interrupted":
            raise KeyboardInterrupt   # (as the call of complete_policy begins)
        real(self)
    monkeypatch.setattr(module_policy.ModulePolicy, "complete_policy", complete_policy)
    code = ("import math\ntry:\n    import json\nexcept KeyboardInterrupt:\n    pass\n"
            "result = math.floor(2.5)")
    reply = restricted.execute(code, restricted=True, allowed_modules=BASIC, stdout=io.StringIO(),
                               stderr=io.StringIO())
    assert reply["success"] and reply["result"] == 2, reply
    assert calls[:2] == ["completed", "interrupted"] and "completed" in calls[2:], calls

"""A guard's cached table cut part way by an exception the snippet can cause at any
bytecode (a session's KeyboardInterrupt at its time limit, a MemoryError): the next
use must rebuild it, never trust a table that is only half made. A session keeps the
process, so a half-made table would hold for every later call of that session."""

from __future__ import annotations

import os.path
import pathlib

import pytest

from sandbox.restricted import imports


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

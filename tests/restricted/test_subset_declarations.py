"""Each subset is declared once, by the module that makes it (sandbox/restricted/subsets/):
what a subset hands out is exactly what its declaration names, and the declarations
point one way, from the snippet_* modules up to the registry that collects them."""

from __future__ import annotations

import json
import subprocess
import sys

import test_import_graph

# Made in a process of its own: the subsets keep the run's refusal and formatter in
# module state, which this test's arguments must not leave behind for other tests.
MADE = """
import importlib, json, sys
from sandbox.restricted import snippet_files
from sandbox.restricted.subsets import registry
made = {}
for files in (snippet_files.SCRATCH_FILES, None):
    for name, subset in registry.DECLARED.items():
        module = registry.make(name, files, PermissionError, None, open, dict)
        real = importlib.import_module(name)
        made[f"{name} {files}"] = {"names": registry.names(module),
                                   "declared": list(subset.names), "with_files": list(subset.with_files),
                                   "lacking": [attr for attr in subset.names + subset.with_files
                                               if not hasattr(real, attr)]}
print(json.dumps(made))
"""


def made_subsets() -> dict:
    done = subprocess.run([sys.executable, "-c", MADE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_subset_hands_out_exactly_its_declared_names():
    made = made_subsets()
    from sandbox.restricted.subsets import registry
    assert len(made) == 2 * len(registry.DECLARED)
    for key, subset in made.items():
        with_directory = not key.endswith(" None")
        expected = [attr for attr in subset["declared"] + (subset["with_files"] if with_directory else [])
                    if attr not in subset["lacking"]]
        assert subset["names"] == expected, key


def test_without_a_directory_no_subset_has_a_file_function():
    made = made_subsets()
    assert made["os None"]["with_files"] and made["os.path None"]["with_files"]
    for key, subset in made.items():
        if key.endswith(" None"):
            assert not set(subset["names"]) & set(subset["with_files"]), key


def test_the_registry_tables_are_the_declarations():
    from sandbox.restricted.subsets import registry
    assert list(registry.SUBSETS) == list(registry.WHY) == list(registry.DECLARED)
    for name, subset in registry.DECLARED.items():
        assert subset.name == name and registry.SUBSETS[name] == subset.names and registry.WHY[name] == subset.why
    assert registry.SHOWN == {"ast": registry.DECLARED["ast"].shown}
    assert registry.DENIED_TYPES == {"asyncio": ("asyncio.AbstractEventLoop",)}


def test_the_subsets_import_one_way():
    """No snippet_* module imports the registry back (nor any other cycle among the
    subsets' modules)."""
    subsets = {module: targets for module, targets in test_import_graph.GRAPH.items()
               if module.startswith("sandbox.restricted.subsets.")}
    assert "sandbox.restricted.subsets.registry" in subsets
    assert test_import_graph.cycles(subsets) == []
    assert not any("sandbox.restricted.subsets.registry" in targets for targets in subsets.values())

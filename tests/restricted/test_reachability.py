"""What a restricted snippet can reach, crawled through its own guards (reachability.py) in the
basic and data-science profiles: nothing in the denied set, and the crawl sees a door a guard
opens. The crawl prints how many objects it visited, in every run."""

from __future__ import annotations

import importlib.util

import pytest

import reachability

PROFILES = ["basic", pytest.param("data_science", marks=pytest.mark.skipif(
    importlib.util.find_spec("pandas") is None, reason="needs make install-datascience"))]


def up_a_class_hierarchy(finding: dict) -> bool:
    """Reached by a step up a class hierarchy (C.mro(), C.__mro__...)."""
    return any(step in finding["path"] for step in reachability.HIERARCHY_STEPS)


@pytest.fixture(scope="module", params=PROFILES)
def crawled(request):
    report = reachability.crawl(request.param)
    with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        print("\n" + reachability.summary(request.param, report).split("\n")[0])  # (the counts, in every run)
    return request.param, report


def test_the_crawl_walks_every_object_to_depth_four(crawled):
    profile, report = crawled
    assert report["complete"], f"{profile}: the object bound ended the crawl before its depth"
    assert max(map(int, report["per_depth"])) == reachability.QUICK.depth >= 4
    assert report["samples_failed"] == [], "a sample the crawl starts from failed to build"


def test_nothing_denied_is_reachable(crawled):
    profile, report = crawled
    assert not report["findings"], reachability.summary(profile, report)


def _mro_lists_every_class():
    """A guard opened on purpose: cls.mro() as the interpreter gives it, every base included."""
    from sandbox.restricted import guards as rp_guards
    rp_guards.ExecutionContext.mro_method = lambda self, cls: type.mro if cls is self.type or cls is type else cls.mro


def test_the_mro_family_is_found_when_mro_lists_every_class():
    """The family the crawler was built to find: a library class's mro() handing out the real
    class behind a subset's (unittest.TestLoader's) and a library's internal bases."""
    report = reachability.crawl("basic", reachability.Budget(depth=4, objects=20_000, per_type=10),
                                prepare=_mro_lists_every_class)
    found = [finding for finding in report["findings"] if up_a_class_hierarchy(finding)]
    assert found, reachability.summary("basic", report)


def _functions_give_their_globals():
    """Guards opened on purpose: `f.__globals__` read on any function, and what it holds
    not searched (the search of a dunder's data would refuse the namespace on its own)."""
    from sandbox.restricted import private_names
    from sandbox.restricted import module_policy
    private_names.SAFE_DUNDERS["__globals__"] = ("function",)
    search = module_policy.ModulePolicy.check_container

    def unsearched_globals(self, container, where, kind="attribute_blocked"):
        return container if where.endswith(".__globals__") else search(self, container, where, kind)
    module_policy.ModulePolicy.check_container = unsearched_globals


def test_a_guard_opened_on_purpose_is_found():
    report = reachability.crawl("basic", reachability.Budget(depth=2, objects=20_000, per_type=10),
                                prepare=_functions_give_their_globals)
    reached = {finding["what"] for finding in report["findings"] if finding["path"].endswith(".__globals__")}
    assert any(what.startswith("the namespace (a function's __globals__) of the module") for what in reached), \
        reachability.summary("basic", report)


def _subsets_stand_in_nowhere_else():
    """A guard opened on purpose: the object behind a subset's name, reached by another
    route (type() of the subset's object, a library's re-export), handed out as it is."""
    from sandbox.restricted import imports
    imports.subset_original = lambda value: None


def test_a_real_object_behind_a_subset_is_found_when_its_guard_is_off():
    report = reachability.crawl("basic", reachability.Budget(depth=2, objects=20_000, per_type=10),
                                prepare=_subsets_stand_in_nowhere_else)
    assert any(finding["what"].startswith("the real warnings.catch_warnings,") for finding in report["findings"]), \
        reachability.summary("basic", report)

"""Which pandas classes a snippet may subclass rests on one property: pandas' compiled code
does not trust what an overridden public method of that class returns. Arrays, indexes and
dtypes failed it (groupby wrote the heap at the codes an overridden factorize() returned,
reindex read it at the positions of get_indexer()), and are final in the sandbox
(pandas_table: final_classes). This fuzz checks DataFrame and Series, which stay open:
each public method below, overridden to return hostile values (positions far past the
data, negative ones, the wrong length, the wrong type), through sixty everyday operations,
each in a forked child; no child may die by a signal.

It runs plain pandas, not the sandbox: it tests the assumption the policy makes. `make fuzz`
runs it (marked slow); the default run checks only that it finds the index crash it must.
"""

from __future__ import annotations

import faulthandler
import importlib.util
import os
import signal
import warnings

import pytest
from forked import run_in_child

pytestmark = pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("pandas", "numpy")),
                                reason="the data-science libraries are not installed here (make install-datascience)")

OVERRIDDEN = ("__len__", "isna", "notna", "argsort", "take", "factorize", "duplicated", "searchsorted", "to_numpy",
              "copy", "unique", "nunique", "rank", "isin", "reindex", "align", "keys", "__iter__", "items",
              "get_indexer", "nlargest", "sort_values", "sort_index", "drop_duplicates", "value_counts", "where",
              "mask", "fillna", "astype", "groupby")


def _hostile_returns(np, pd):
    far = np.full(4, 50_000_000, dtype=np.intp)
    return {
        "far": lambda self, *a, **k: far,
        "negative": lambda self, *a, **k: -far,
        "series": lambda self, *a, **k: pd.Series(far),
        "pair": lambda self, *a, **k: (far, pd.Index([1])),
        "long mask": lambda self, *a, **k: np.ones(100_000, dtype=bool),
        "short": lambda self, *a, **k: np.zeros(1, dtype=np.intp),
    }


def _operations(pd, s, d):
    return {
        "groupby": lambda: s.groupby(s).sum(), "frame groupby": lambda: d.groupby("b").sum(),
        "groupby column": lambda: d.groupby(d["b"]).a.mean(), "sort": lambda: s.sort_values(),
        "frame sort": lambda: d.sort_values("a"), "sort index": lambda: s.sort_index(), "unique": lambda: s.unique(),
        "value counts": lambda: s.value_counts(), "drop duplicates": lambda: s.drop_duplicates(),
        "reindex": lambda: s.reindex([10, 40, 99]), "frame reindex": lambda: d.reindex([0, 3, 9]),
        "rank": lambda: s.rank(), "isin": lambda: s.isin([1.0]), "fillna": lambda: s.fillna(0),
        "where": lambda: s.where(s > 1), "dropna": lambda: s.dropna(), "cumsum": lambda: s.cumsum(),
        "diff": lambda: s.diff(), "shift": lambda: s.shift(1), "merge": lambda: d.merge(d, on="b"),
        "pivot table": lambda: d.pivot_table(index="b", values="a"), "concat": lambda: pd.concat([s, s]),
        "align": lambda: s.align(s[:2]), "loc": lambda: s.loc[[10, 20]], "iloc": lambda: s.iloc[[0, 1]],
        "take": lambda: s.take([0, 1]), "nlargest": lambda: s.nlargest(2), "describe": lambda: s.describe(),
        "mode": lambda: s.mode(), "corr": lambda: d.corr(), "stack": lambda: d.stack(),
        "set index": lambda: d.set_index("b"), "to numpy": lambda: s.to_numpy(), "add": lambda: s + s,
        "cut": lambda: pd.cut(s, 2), "factorize": lambda: pd.factorize(s),
        "searchsorted": lambda: s.sort_values().searchsorted(2.0), "rolling": lambda: s.rolling(2).sum(),
        "apply": lambda: s.apply(lambda v: v), "map": lambda: s.map({1.0: 2}), "filter rows": lambda: d[d["a"] > 1],
        "assign": lambda: d.assign(c=1), "frame apply": lambda: d.apply(sum), "transpose": lambda: d.T,
        "melt": lambda: d.melt(), "frame drop duplicates": lambda: d.drop_duplicates(),
        "join": lambda: d.join(d, rsuffix="r"), "qcut": lambda: pd.qcut(s, 2, duplicates="drop"),
        "crosstab": lambda: pd.crosstab(d["a"], d["b"]), "get dummies": lambda: pd.get_dummies(d["b"]),
        "unstack": lambda: d.set_index(["a", "b"]).unstack(), "interpolate": lambda: s.interpolate(),
        "idxmax": lambda: s.idxmax(), "clip": lambda: s.clip(0, 1), "round": lambda: s.round(),
        "compare": lambda: s == s, "duplicated index": lambda: s[s.index.duplicated()],
        "reset index": lambda: s.reset_index(), "agg": lambda: d.agg(["sum", "mean"]),
        "combine first": lambda: s.combine_first(s),
    }


def _died_by_signal(operation) -> str | None:
    pid = os.fork()
    if pid == 0:  # (the child: whatever happens, it leaves by _exit or by a signal)
        try:
            faulthandler.disable()  # (pytest's: a crash found is the answer, not a traceback in the log)
            signal.alarm(10)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            warnings.simplefilter("ignore")
            operation()
        except BaseException:
            pass
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else None


def _crashes(kind: str, methods, hostile_kinds=None, operations=None) -> list:
    """Run in a child of its own (run_in_child): this test process never imports pandas."""
    import numpy as np
    import pandas as pd
    found = []
    for method in methods:
        for how, hostile in _hostile_returns(np, pd).items():
            if hostile_kinds is not None and how not in hostile_kinds:
                continue
            namespace = {method: (lambda self: 10 ** 6) if method == "__len__" else hostile}
            if kind == "series":
                s = type("Mine", (pd.Series,), namespace)([3.0, 1.0, 2.0, 1.0], index=[10, 20, 30, 40])
                d = pd.DataFrame({"a": [3.0, 1.0, 2.0, 1.0], "b": [1, 1, 2, 2]})
            elif kind == "frame":
                s = pd.Series([3.0, 1.0, 2.0, 1.0], index=[10, 20, 30, 40])
                d = type("Mine", (pd.DataFrame,), namespace)({"a": [3.0, 1.0, 2.0, 1.0], "b": [1, 1, 2, 2]})
            else:  # (a RangeIndex subclass: the known crash, which the harness must find)
                index = type("Mine", (pd.RangeIndex,), namespace)(4)
                s = pd.Series([3.0, 1.0, 2.0, 1.0], index=index)
                d = pd.DataFrame({"a": [3.0, 1.0, 2.0, 1.0], "b": [1, 1, 2, 2]})
            for name, operation in _operations(pd, s, d).items():
                if operations is not None and name not in operations:
                    continue
                died = _died_by_signal(operation)
                if died:
                    found.append((kind, method, how, name, died))
    return found


def crashes(*args, timeout=1800.0):
    payload, status = run_in_child(lambda: _crashes(*args), timeout=timeout)
    assert payload is not None and "error" not in payload, (status, payload)
    return [tuple(found) for found in payload["value"]]


def test_the_fuzz_finds_the_known_crash_of_an_index_subclass():
    """The harness's own check: an index whose get_indexer() returns far positions crashes
    reindex (why pandas' indexes are final in the sandbox)."""
    assert crashes("range index", ["get_indexer"], ["far"], ["reindex"]), \
        "the fuzz no longer sees the crash it was built around: check the harness before trusting it"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["series", "frame"])
def test_no_overridden_method_of_a_dataframe_or_series_crashes_pandas(kind):
    assert crashes(kind, OVERRIDDEN) == []

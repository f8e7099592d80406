"""The snippet's `timeit` (a subset): timeit() and repeat() of a function, never of a
string (the real module compiles strings and runs them as unrestricted Python)."""

from __future__ import annotations

import time

from sandbox.restricted.subsets.subset import Subset

_STRINGS = ("timeit here times a function, not a string of code: timeit.timeit(lambda: f(x), number=1000), "
            "with any set-up done before the call")


def _callable(stmt, refuse, what: str):
    if stmt is None:
        return lambda: None
    if isinstance(stmt, str) or not callable(stmt):
        raise refuse(f"{what}: {_STRINGS}")
    return stmt


def values(refuse) -> dict:
    """The names SUBSET lists."""

    def timeit(stmt=None, setup=None, timer=time.perf_counter, number=1_000_000, globals=None):
        run = _callable(stmt, refuse, "timeit(stmt)")
        _callable(setup, refuse, "timeit(setup)")()
        clock = timer
        start = clock()
        for _ in range(int(number)):
            run()
        return clock() - start

    def repeat(stmt=None, setup=None, timer=time.perf_counter, repeat=5, number=1_000_000, globals=None):
        return [timeit(stmt, setup, timer, number) for _ in range(int(repeat))]

    return {"timeit": timeit, "repeat": repeat, "default_timer": time.perf_counter}


SUBSET = Subset(
    # timing a function, never a string of code
    "timeit", ("timeit", "repeat", "default_timer"),
    "the rest of timeit compiles strings and runs them as unrestricted Python: time a function",
    lambda execution: values(execution.refuse))

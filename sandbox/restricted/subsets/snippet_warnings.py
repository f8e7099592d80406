"""The snippet's `warnings` module (a subset): warn, the filters, catch_warnings.
Warnings are issued with warn_explicit at the snippet's own line, so the printed
warning names "<snippet>" and never reads a file (linecache gets no real path),
and the filters are the real ones, so that filterwarnings("ignore") also quiets
the libraries' warnings, as agents expect."""

from __future__ import annotations

import sys
import warnings

from sandbox.restricted.base import SNIPPET_FILENAME
from sandbox.restricted.subsets.subset import Subset

ACTIONS = ("default", "error", "ignore", "always", "all", "module", "once")
_registry: dict = {}  # the snippet's "once"/"default" bookkeeping


def _snippet_line() -> int:
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != SNIPPET_FILENAME:
        frame = frame.f_back
    return frame.f_lineno if frame is not None else 0


def _category(category):
    if category is None:
        return UserWarning
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise TypeError(f"category must be a Warning subclass, not {type(category).__name__}")
    return category


def warn(message, category=None, stacklevel=1, source=None):
    if isinstance(message, Warning):
        category = type(message)
    elif not isinstance(message, str):
        message = str(message)
    warnings.warn_explicit(message, _category(category), SNIPPET_FILENAME, _snippet_line(),
                           module="__main__", registry=_registry)


def _action(action) -> str:
    if action not in ACTIONS:
        raise ValueError(f"invalid action {action!r:.40}: one of {', '.join(ACTIONS)}")
    return action


def simplefilter(action, category=Warning, lineno=0, append=False):
    warnings.simplefilter(_action(action), _category(category), int(lineno), bool(append))


def filterwarnings(action, message="", category=Warning, module="", lineno=0, append=False):
    if not (isinstance(message, str) and isinstance(module, str)):
        raise TypeError("message and module must be strings (regular expressions)")
    warnings.filterwarnings(_action(action), message, _category(category), module, int(lineno), bool(append))


def resetwarnings():
    warnings.resetwarnings()


def catch_warnings(*, record=False):
    """The real context manager on the real module (no module= of the caller's)."""
    return warnings.catch_warnings(record=bool(record))


def values() -> dict:
    """The functions SUBSET names."""
    return {name: globals()[name] for name in SUBSET.names}


SUBSET = Subset(
    "warnings", ("warn", "simplefilter", "filterwarnings", "resetwarnings", "catch_warnings"),
    "the rest of warnings reads source files and replaces the interpreter's hooks",
    lambda execution: values())

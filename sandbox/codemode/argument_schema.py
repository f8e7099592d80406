"""Code mode: a call's arguments checked against the upstream tool's inputSchema,
in the server, at a cost that grows with the arguments' size and no faster.

The arguments come from the sandbox, so the checker must not let them stall
the server's event loop (every client and session waits on it):
- jsonschema's own uniqueItems compares unhashable items pair by pair: 128 KiB
  of mixed ints and strings for a `set[int]` parameter, a snippet's single
  call, kept the server busy for 24 s (measured, RestrictedPython on). Here
  the keyword sorts items by a canonical key instead (n log n), with
  jsonschema's notion of equality: 1 == 1.0, True != 1, key order ignored.
- a $ref to a URL would have jsonschema fetch it from the server (its
  deprecated automatic retrieval): references resolve within the schema only.
- every other keyword is linear, but with constants that add up: 64K items
  that each fail an anyOf, or an enum of 100 values, kept the loop 2-4 s per
  call (measured). So a check looks at the first MAX_ERRORS errors only, and
  stops after CHECK_SECONDS, between two keywords, refusing the call as too
  much to check; a legitimate 150 KB call takes under 0.1 s.
- a `pattern` (or patternProperties, propertyNames) is the upstream's own
  regular expression, run by `re` on the snippet's strings inside a single
  keyword: `^(a+)+$` on forty a's and a '!' runs for hours. In the main thread,
  where the server's loop runs, an alarm at the deadline interrupts it (`re`
  looks for signals while it matches, on every Python this supports).
- the schema is checked and its validator built once per tool, not per call.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import signal
import threading
import time

import jsonschema
import referencing
from jsonschema import validators

MAX_MESSAGE = 300
MAX_ERRORS = 20
CHECK_SECONDS = 1.0
_deadline = [math.inf]   # of the check under way (one at a time: it runs on the event loop)


class _OutOfTime(Exception):
    pass


def checker(schema: dict):
    """A validator for `schema`; jsonschema.SchemaError when the schema is invalid."""
    kind = validators.validator_for(schema)
    kind.check_schema(schema)
    keywords = {**kind.VALIDATORS, "uniqueItems": _unique_items}
    bounded = validators.extend(kind, {name: _timed(check) for name, check in keywords.items()})
    return bounded(schema, registry=referencing.Registry())  # no retrieval of remote references


def problem(validator, arguments) -> str | None:
    """What is wrong with `arguments` for this validator, or None."""
    if not isinstance(arguments, dict):
        return "arguments must be keyword arguments"
    _deadline[0] = time.monotonic() + CHECK_SECONDS
    try:
        with _alarm(CHECK_SECONDS):
            # the best of the first few errors: a refusal needs one, not one per item
            error = jsonschema.exceptions.best_match(itertools.islice(validator.iter_errors(arguments), MAX_ERRORS))
    except _OutOfTime:
        return (f"they take longer than {CHECK_SECONDS:g} s to check against the tool's inputSchema: "
                "send less per call")
    except RecursionError:
        return "the arguments nest too deeply to check"
    except Exception as exc:  # noqa: BLE001 - an unresolvable $ref, say: the schema's fault, said so
        return f"the tool's inputSchema cannot be checked ({type(exc).__name__})"
    finally:
        _deadline[0] = math.inf
    return None if error is None else error.message[:MAX_MESSAGE]


@contextlib.contextmanager
def _alarm(seconds: float):
    """Raise _OutOfTime in the main thread after `seconds`, even inside a regular
    expression; elsewhere (signals reach only the main thread) the clock between
    keywords is the only bound."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    armed = [True]

    def ring(signum, frame):
        if armed[0]:   # not once the check is over: the alarm may ring as it is disarmed
            raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, ring)
    try:   # the alarm may ring at any point from here on, and the handler is still put back
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-6))
        yield
    finally:
        try:
            armed[0] = False
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def _timed(check):
    """A keyword's check that first looks at the clock (each item of an array, each
    property, each branch of an anyOf goes through one)."""
    def timed(validator, value, instance, schema):
        if time.monotonic() > _deadline[0]:
            raise _OutOfTime
        return check(validator, value, instance, schema)
    return timed


def _unique_items(validator, unique, instance, schema):
    if not (unique and validator.is_type(instance, "array")):
        return
    seen = set()
    for item in instance:
        key = _canonical(item)
        if key in seen:
            yield jsonschema.ValidationError(f"has non-unique elements ({repr(item)[:80]} is repeated)")
            return
        seen.add(key)


def _canonical(value):
    """A hashable key equal for values JSON Schema calls equal."""
    if value is True or value is False:
        return ("bool", value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return ("nan", object())  # NaN equals nothing, itself included
        if isinstance(value, float) and value.is_integer():
            return ("number", int(value))
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, (list, tuple)):
        return ("array", tuple(_canonical(item) for item in value))
    if isinstance(value, dict):
        return ("object", frozenset((key, _canonical(item)) for key, item in value.items()))
    return ("other", repr(value))

"""Turn whatever a snippet left behind into JSON-safe data, without ever raising.

The value comes from untrusted code: it may be self-referential, nested 10**5 deep,
enormous, or an object whose __repr__ misbehaves. The encoder walks containers itself
(depth-limited, cycle-checked, item-capped, with a global budget) and falls back to a
capped repr for everything it does not know.
"""

from __future__ import annotations

import array
import collections
import dataclasses
import datetime
import decimal
import fractions
import itertools
import math
import uuid

_CONTAINERS = (dict, list, tuple, set, frozenset, collections.deque, array.array, range)
_SMALL_INT_BITS = 13_000  # ~4000 digits: stays under int<->str conversion limits on both sides


def cap_text(s, limit: int) -> tuple[str, bool]:
    """``s`` cut to at most ``limit`` characters (marker included), and whether it was cut."""
    if not isinstance(s, str):
        s = _safe_repr(s, limit)
    if len(s) <= limit:
        return s, False
    marker = f"... [truncated {len(s) - limit} chars]"
    if limit <= len(marker):
        return s[:max(limit, 0)], True
    return s[: limit - len(marker)] + marker, True


def _safe_repr(value, limit: int | None) -> str:
    try:
        text = repr(value)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned a non-string")
    except BaseException as exc:  # noqa: BLE001 - any failure becomes a placeholder
        return f"<unrepresentable {_type_name(value)}: {type(exc).__name__}>"
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"... [truncated {len(text) - limit} chars]"
    return _clean_str(text)


def _type_name(value) -> str:
    try:
        return type(value).__name__
    except BaseException:  # noqa: BLE001
        return "object"


def _clean_str(s: str) -> str:
    """Plain str, with lone surrogates escaped so that any JSON encoder accepts it."""
    s = str.__str__(s)  # drops str subclasses (and their methods) without calling them
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "backslashreplace").decode("utf-8")


class _Encoder:
    def __init__(self, max_depth: int, max_items: int, max_str: int):
        self.max_depth = max_depth
        self.max_items = max_items
        self.max_str = max_str
        self.budget = max_items * 10  # total values emitted: item caps alone multiply with depth
        self.active: set[int] = set()  # ids of the containers on the current path (cycle check)
        self.cut_string = False  # a string was cut: the copy is not the value's JSON form

    def encode(self, value, depth: int):
        try:
            return self._encode(value, depth)
        except BaseException as exc:  # noqa: BLE001 - one bad value must not sink the rest
            return f"<unserializable {_type_name(value)}: {type(exc).__name__}>"

    def _encode(self, value, depth: int):
        self.budget -= 1
        if self.budget < 0:
            return "<result too large: truncated>"
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            return self._int(value)
        if isinstance(value, float):
            return self._float(value)
        if isinstance(value, str):
            return self._str(value)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return self._bytes(value)
        simple = self._simple(value)
        if simple is not None:
            return simple
        if depth >= self.max_depth:
            return f"<max depth {self.max_depth} exceeded>"
        if isinstance(value, _CONTAINERS) or _is_dataclass_instance(value):
            key = id(value)
            if key in self.active:
                return f"<cycle: {_type_name(value)}>"
            self.active.add(key)
            try:
                return self._container(value, depth)
            finally:
                self.active.discard(key)
        return self._other(value, depth)

    def _int(self, value: int):
        value = int.__int__(value)  # plain int (IntEnum, bool subclasses of int...)
        if value.bit_length() > _SMALL_INT_BITS:
            return f"<int with {value.bit_length()} bits>"
        return value

    @staticmethod
    def _float(value: float):
        value = float.__float__(value)
        if math.isfinite(value):
            return value
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")

    def _str(self, value: str) -> str:
        text, cut = cap_text(str.__str__(value), self.max_str)
        self.cut_string |= cut
        return _clean_str(text)

    def _bytes(self, value) -> str:
        size = len(value)
        head = bytes(value[: self.max_str // 4])  # a byte's repr is up to 4 characters
        text = repr(head)
        if size > len(head):
            text += f"... [truncated {size - len(head)} bytes]"
        return text

    def _simple(self, value):
        """Well-known value types with an obvious text form."""
        if isinstance(value, (decimal.Decimal, fractions.Fraction, uuid.UUID, complex)):
            return self._str(str(value))
        if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
            return self._str(value.isoformat())
        if isinstance(value, datetime.timedelta):
            return self._str(str(value))
        return None

    def _container(self, value, depth: int):
        if isinstance(value, dict):
            return self._mapping(dict.items(value), len(value), depth)
        if _is_dataclass_instance(value):
            fields = dataclasses.fields(value)
            items = ((f.name, getattr(value, f.name)) for f in fields)
            return self._mapping(items, len(fields), depth)
        items = value
        if isinstance(value, (set, frozenset)):
            try:
                items = sorted(value)
            except BaseException:  # noqa: BLE001 - unorderable: keep iteration order
                items = value
        out = [self.encode(item, depth + 1) for item in itertools.islice(items, self.max_items)]
        if len(value) > self.max_items:
            out.append(f"<{len(value) - self.max_items} more items>")
        return out

    def _mapping(self, items, size: int, depth: int) -> dict:
        out = {}
        for key, item in itertools.islice(items, self.max_items):
            out[self._key(key)] = self.encode(item, depth + 1)
        if size > self.max_items:
            out["<more>"] = f"<{size - self.max_items} more items>"
        return out

    def _key(self, key) -> str:
        if isinstance(key, str):
            return self._str(key)
        if key is None or isinstance(key, (bool, int, float)):
            return self._str(str(self.encode(key, 0)))
        return _safe_repr(key, 200)

    def _other(self, value, depth: int):
        # numpy arrays and scalars: their own conversion, if small enough.
        module = getattr(type(value), "__module__", "") or ""
        if module.split(".")[0] == "numpy" and hasattr(value, "tolist"):
            size = getattr(value, "size", 1)
            if isinstance(size, int) and size <= self.max_items:
                return self.encode(value.tolist(), depth)
        return _safe_repr(value, self.max_str)


def _is_dataclass_instance(value) -> bool:
    try:
        return dataclasses.is_dataclass(value) and not isinstance(value, type)
    except BaseException:  # noqa: BLE001
        return False


def to_jsonable(value, *, max_depth: int = 50, max_items: int = 1000, max_str: int = 100_000):
    """A JSON-safe copy of ``value``: dict keys as str, tuples and sets as lists, non-finite
    floats and huge ints as strings, bytes and unknown objects as capped reprs, cycles and
    excessive depth as placeholder strings. Never raises."""
    try:
        return _Encoder(max_depth, max_items, max_str).encode(value, 0)
    except BaseException as exc:  # noqa: BLE001 - RecursionError, MemoryError, hostile __eq__...
        return f"<unserializable {_type_name(value)}: {type(exc).__name__}>"


def reported_value(value) -> dict:
    """The result as the child reports it: ``result``, its JSON-safe copy, and
    ``result_repr``, the value's repr, which is what the model reads. A copy that had to
    cut a string is not the value's JSON form: it comes as None with ``result_cut``, and
    the repr, cut once at the output cap where the frame is made, stands for it. Runs
    in the run, under its policy: a snippet's __repr__ runs as printing the value would
    run it. Never raises."""
    encoder = _Encoder(50, 1000, 100_000)
    try:
        copy = encoder.encode(value, 0)
    except BaseException as exc:  # noqa: BLE001 - RecursionError, MemoryError, hostile __eq__...
        copy = f"<unserializable {_type_name(value)}: {type(exc).__name__}>"
    return {"result": None if encoder.cut_string else copy, "result_cut": encoder.cut_string,
            "result_repr": _safe_repr(value, None)}

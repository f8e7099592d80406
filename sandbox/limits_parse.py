"""Parsing of human-written limits: sizes ("64m", "1g", "512k", "1048576"),
durations in seconds and booleans.

Shared by the start-up configuration and the tool arguments so that "128m" means
the same thing in `.env` and in an `execute_code` call. Every parser raises
`ValueError` with a message that says what is accepted; callers add the name of
the variable or argument.
"""

import math

# Binary multiples, as `ulimit` and Docker's --memory read them.
_SIZE_SUFFIXES = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tib": 1 << 40,
}

SIZE_SYNTAX = 'a number of bytes, or a number with a k/m/g suffix such as "512k", "64m" or "1g"'
_MAX_SIZE_TEXT = 32  # a size is never longer than this; refuse before doing any work on it

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def parse_size(value: object) -> int:
    """Return a byte count from an int or a string such as "64m"."""
    if isinstance(value, bool):
        raise ValueError(f"expected {SIZE_SYNTAX}, not a boolean")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"expected {SIZE_SYNTAX}, not a negative number")
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if not isinstance(value, str):
        raise ValueError(f"expected {SIZE_SYNTAX}")
    text = value.strip().lower()
    if not text or len(text) > _MAX_SIZE_TEXT:
        raise ValueError(f"expected {SIZE_SYNTAX}")
    digits_end = 0
    while digits_end < len(text) and (text[digits_end].isdigit() or text[digits_end] == "."):
        digits_end += 1
    number, suffix = text[:digits_end], text[digits_end:].strip()
    if not number or suffix not in _SIZE_SUFFIXES or not number.isascii():
        raise ValueError(f"expected {SIZE_SYNTAX}")
    try:
        amount = float(number) if "." in number else int(number)
    except ValueError:
        raise ValueError(f"expected {SIZE_SYNTAX}") from None
    return int(amount * _SIZE_SUFFIXES[suffix])


def format_size(size: int) -> str:
    """The shortest exact spelling of a byte count: 134217728 -> "128m"."""
    for suffix in ("t", "g", "m", "k"):
        unit = _SIZE_SUFFIXES[suffix]
        if size >= unit and size % unit == 0:
            return f"{size // unit}{suffix}"
    return str(size)


def parse_seconds(value: object) -> float:
    """Return a finite number of seconds from an int, a float or a numeric string."""
    if isinstance(value, bool):
        raise ValueError("expected a number of seconds, not a boolean")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str) and 0 < len(value) <= _MAX_SIZE_TEXT:
        try:
            seconds = float(value.strip())
        except ValueError:
            raise ValueError("expected a number of seconds") from None
    else:
        raise ValueError("expected a number of seconds")
    if not math.isfinite(seconds):
        raise ValueError("expected a finite number of seconds")
    return seconds


def parse_bool(value: str) -> bool:
    """Read a boolean the way people write it in environment files."""
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("expected true or false (also accepted: 1/0, yes/no, on/off)")

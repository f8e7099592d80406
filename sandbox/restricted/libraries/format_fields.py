"""Format strings that library code runs str.format on, with an argument the snippet may
choose: a field such as {x.__globals__} walks attributes past the guards. What the
matplotlib and pandas tables check them with."""

from __future__ import annotations

import string

FORMAT_FIELDS_ADVICE = ("format fields here are names or positions with a format spec, e.g. '{x:,.2f}', "
                        "never attributes or items ({x.attr}, {x[0]}): compute the value first")


def plain_format_fields(fmt) -> bool:
    """Every replacement field of `fmt` (nested ones in format specs too) is a bare name or index."""
    if not isinstance(fmt, str):
        return True  # not a format string: the class's own error
    try:
        fields = list(string.Formatter().parse(fmt))
    except ValueError:
        return True  # malformed: str.format refuses it itself
    return all((name is None or ("." not in name and "[" not in name)) and plain_format_fields(spec or "")
               for _text, name, spec, _conversion in fields)


def plain_fields(where):
    """A check that the format string `where` finds among a call's arguments has plain
    fields: library code runs str.format on it, and {x.__class__} would walk
    attributes past the guards."""
    def check(*args, **kwargs):
        try:
            fmt = where(*args, **kwargs)
        except (TypeError, AttributeError):
            return None   # called unlike `where` says: the original's own error
        return None if not isinstance(fmt, str) or plain_format_fields(fmt) else FORMAT_FIELDS_ADVICE
    return check

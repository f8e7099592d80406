"""A qualified name's object among the modules already imported: how every table entry
is found (no entry imports its library)."""

from __future__ import annotations

import sys


def lookup(qualified: str):
    """The object a qualified name names, if its module is already imported."""
    module_name, _, attr = qualified.rpartition(".")
    parts = module_name.split(".")
    for split in range(len(parts), 0, -1):
        module = sys.modules.get(".".join(parts[:split]))
        if module is None:
            continue
        value = module
        try:
            for name in parts[split:] + [attr]:
                value = getattr(value, name)
        except AttributeError:
            return None
        return value
    return None

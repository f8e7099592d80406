"""globals() as a snippet sees it.

The real namespace holds the guards (_getattr_, _write_, __builtins__...): handed out,
it would let a snippet replace them. The snippet gets a copy of its public names
instead (with its private names such as `_cache`, which it may assign too), so
`'df' in globals()`, `globals()[name]` and `sorted(globals())` work, and
the copy writes through for the names the snippet could assign itself
(`globals()['x'] = 1` is `x = 1`, `globals().update(config)` assigns each key); any
other key is refused. A copy kept in a variable does not see later assignments.
locals() stays withheld (guards.WITHHELD_BUILTINS): it would look into frames.
"""

from __future__ import annotations

import keyword

from RestrictedPython.transformer import FORBIDDEN_FUNC_NAMES

from sandbox.restricted.own_attributes import write_through
from sandbox.restricted.private_names import RESERVED_NAME_INSTEAD, private_name_allowed


def snippet_name(key) -> bool:
    """A name the snippet could assign with `key = ...`: RestrictedPython's rules (none
    ending in "__roles__", not its reserved print, printed, builtins) with our private
    names (`_cache`, never a guard's `_getattr_`, a dunder or RestrictedPython's `_print`:
    private_names.py)."""
    return (type(key) is str and key.isidentifier() and not keyword.iskeyword(key)
            and (not key.startswith("_") or private_name_allowed(key))
            and not key.endswith("__roles__") and key not in FORBIDDEN_FUNC_NAMES
            and key not in RESERVED_NAME_INSTEAD)


def globals_for(ctx):
    """The snippet's globals() builtin (ctx: the guards' ExecutionContext)."""

    def checked(key) -> str:
        if not snippet_name(key):
            raise ctx.refuse_call(f"globals() takes the names a snippet can assign, not {key!r:.80}: the "
                                  "sandbox's own names (such as _getattr_), dunders, reserved names and "
                                  "non-identifiers are not the snippet's")
        return key

    def set_name(namespace, key, value):
        namespace[checked(key)] = value

    def delete_name(namespace, key):
        del namespace[checked(key)]

    def globals():  # noqa: A001 - the snippet's globals()
        names = {key: value for key, value in ctx.globals.items() if snippet_name(key)}
        return write_through(names, ctx.globals, set_name, delete_name)

    return globals

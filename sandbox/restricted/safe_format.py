"""str.format, str.format_map and string.Formatter for snippets, with every
field lookup through the sandbox's guards.

A format string can walk attributes and items (`{0.__class__.__base__}`,
`{0[key].attr}`) from C code, outside the guards: CVE-2023-41039 escaped
RestrictedPython that way, and exception objects passed to a format string
escaped n8n's runner. Here `{0.attr}` is the getattr guard's read and `{0[k]}`
the getitem guard's, so a format string reaches exactly what the snippet could
reach by writing the same lookups as code.
"""

from __future__ import annotations

import _string
import string


class GuardedFormatter(string.Formatter):
    """string.Formatter whose field lookups go through the guards its class was
    bound to (bind()); a snippet's subclass inherits them and cannot replace them
    (they are not attributes of the class)."""

    def get_field(self, field_name, args, kwargs):
        getattr_, getitem = _guards_of(type(self))
        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = getattr_(obj, key) if is_attr else getitem(obj, key)
        return obj, first


_GUARDS: dict[type, tuple] = {}   # a bound Formatter class -> (getattr guard, getitem guard)


def _guards_of(cls: type) -> tuple:
    for base in cls.__mro__:
        if base in _GUARDS:
            return _GUARDS[base]
    raise TypeError("this Formatter is not bound to the sandbox's guards")


def bind(getattr_, getitem) -> type:
    """A Formatter class for one sandbox context."""
    cls = type("Formatter", (GuardedFormatter,), {"__module__": "string"})
    _GUARDS[cls] = (getattr_, getitem)
    return cls


def format_method(formatter_class: type, obj, name: str):
    """`template.format` / `template.format_map` / `str.format` as guarded callables."""
    formatter = formatter_class()
    if isinstance(obj, str):
        if name == "format":
            return lambda *args, **kwargs: formatter.vformat(obj, args, kwargs)
        return lambda mapping: formatter.vformat(obj, (), mapping)
    # the unbound methods of str: str.format(template, ...), str.format_map(template, mapping)
    if name == "format":
        return lambda template, *args, **kwargs: formatter.vformat(_text(template), args, kwargs)
    return lambda template, mapping: formatter.vformat(_text(template), (), mapping)


def _text(template) -> str:
    if not isinstance(template, str):
        raise TypeError(f"descriptor 'format' requires a 'str' object but received a {type(template).__name__!r}")
    return template

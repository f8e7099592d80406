"""Special methods set on a snippet's class after it is made: `cls.__repr__ = fn` in a
class decorator, `setattr(cls, "__eq__", fn)` in a loop. The interpreter calls them with
values no guard has seen, as it calls those of a class body, so they take the same
values a class body may give them: a def or lambda of the snippet's (whose parameters are
vetted on entry), as is or as a static or class method, or None; and only on the snippet's
own classes, with the class-body rules for the class they land on (guards/classes.py check_class)."""

from __future__ import annotations

import types

from sandbox.restricted.compiled_names import SUPER_METHODS


def advice(name: str) -> str:
    return (f"define it in the class body (def {name}(self, ...): ...), or set it on a class of the snippet's "
            f"own to a def or lambda of the snippet's (Cls.{name} = function, or None)")


def is_snippet_function(value, owns) -> bool:
    """None, or a function of the snippet's, as is or as a static or class method."""
    function = value.__func__ if type(value) in (staticmethod, classmethod) else value
    return function is None or (type(function) is types.FunctionType and owns(function))


class SpecialMethodWrite:
    """What `_write_special_(cls)` returns for a class of the snippet's: `.name = value`
    sets a special method that passes the class-body rules (ExecutionContext.set_special_method)."""

    __slots__ = ("_cls", "_ctx")

    def __init__(self, cls, ctx):
        object.__setattr__(self, "_cls", cls)
        object.__setattr__(self, "_ctx", ctx)

    def __setattr__(self, name, value):
        self._ctx.set_special_method(self._cls, name, value)

    def __delattr__(self, name):
        raise self._ctx.refuse("attribute_blocked", f"{name!s:.80} is not deleted from a class here: "
                                                    f"set it to None instead ({self._cls.__name__}.{name} = None)")


def settable(name) -> bool:
    return type(name) is str and name in SUPER_METHODS

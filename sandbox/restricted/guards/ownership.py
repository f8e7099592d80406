"""Whose object is it? The words every guard decides with, defined here once:

- owns(ob): the snippet made it: its function, one of its classes (or a class derived from
  one), an instance of such a class, or a class its class statement is making right now.
  Its attributes are the snippet's to write.
- being_built(cls): the class a class statement of the snippet's is making right now,
  before it is registered (Enum's metaclass makes members and runs their __init__ first).
- snippet_class(cls): one of the snippet's classes, registered or being built.
- snippet_side(base): a class in an MRO whose attributes are the snippet's: its own, a
  built-in class (none has a private attribute) or a marker base (private_names.MARKER_BASES).
- only_snippet_classes(ob): owns, all the way down: every class of its MRO is snippet_side,
  so private names too are the snippet's (a subclass of a library class is not).
- open_base_names(ob): for a class whose library bases are all open (unittest.TestCase),
  the private names those bases keep; the other private names are the snippet's.
- library_state(cls): the names a snippet class's library bases keep their state under.
"""

from __future__ import annotations

import types

from sandbox.restricted import private_names
from sandbox.restricted.base import SNIPPET_MODULE
from sandbox.restricted.imports import ALWAYS_WRITABLE_TYPES
from sandbox.restricted.libraries.policy import POLICY as library_policy

TYPE_QUALNAME = vars(type)["__qualname__"].__get__   # (a class's own, as type keeps it: no metaclass answers)


def snippet_class(ctx, cls) -> bool:
    return cls in ctx.classes or (isinstance(cls, type) and ctx.being_built(cls))


def owns(ctx, ob) -> bool:
    """Did the snippet create ``ob`` (its class, function or an instance of its class)?"""
    cls = type(ob)
    if cls in ctx.classes or cls in ALWAYS_WRITABLE_TYPES:  # the common case first
        return True
    if cls is types.FunctionType:
        return ob.__globals__ is ctx.globals
    if isinstance(ob, type):
        cls = ob
    return any(base in ctx.classes for base in cls.__mro__) or ctx.being_built(cls)


def being_built(ctx, cls: type) -> bool:
    """The class the snippet's class statement is making right now: Enum's metaclass
    makes its members (and runs their __init__, which sets their attributes) before
    the statement is done and the class is registered."""
    if not ctx.building or cls in ctx.defined:
        return False
    module = vars(cls).get("__module__")     # (read as type itself keeps them: no metaclass answers)
    return (type(module) is str and module == SNIPPET_MODULE
            and TYPE_QUALNAME(cls) == ctx.building[-1].__qualname__)


def only_snippet_classes(ctx, ob) -> bool:
    """The snippet's own object all the way down: its function, or a class (or an
    instance of one) whose bases are the snippet's classes, object or built-in
    exceptions. A subclass of a library class is not: the library's private
    attributes stay out of reach."""
    if type(ob) is types.FunctionType:
        return ob.__globals__ is ctx.globals
    cls = ob if isinstance(ob, type) else type(ob)
    return cls in ctx.classes and all(map(ctx.snippet_side, cls.__mro__))


def open_base_names(ctx, ob) -> frozenset | None:
    """For a class of the snippet's (or an instance of one) whose library bases all derive
    from library_policy.open_bases (a unittest.TestCase): the private names those keep
    to themselves; the others are the snippet's. None for any other object."""
    cls = ob if isinstance(ob, type) else type(ob)
    return open_base_names_of(ctx, cls) if cls in ctx.classes else None


def open_base_names_of(ctx, cls: type) -> frozenset | None:
    names = ctx.open_names.get(cls)
    if names is None:
        names = frozenset()
        for base in cls.__mro__:
            if ctx.snippet_side(base):
                continue
            kept = [library_policy.open_bases[a] for a in base.__mro__ if a in library_policy.open_bases]
            if not kept:
                names = False   # (a base that is not open: the usual rule)
                break
            names = names.union(*kept)
        ctx.open_names[cls] = names
    return names if names is not False else None


def snippet_side(ctx, base: type) -> bool:
    """One of the snippet's classes, a built-in class (object, dict, an exception: none
    has a private attribute) or a marker base (private_names.MARKER_BASES): its
    attributes are the snippet's."""
    return base in ctx.classes or base in private_names.MARKER_BASES or (
        base.__module__ == "builtins" and not issubclass(base, type))


def library_state(ctx, cls: type) -> frozenset:
    """The names a snippet class's library bases keep their state under (empty for
    a class that is the snippet's all the way down), once per class."""
    names = ctx.state_names.get(cls)
    if names is None:
        bases = [base for base in cls.__mro__ if not ctx.snippet_side(base)]
        names = ctx.state_names[cls] = library_policy.state_names(bases) if bases else frozenset()
    return names

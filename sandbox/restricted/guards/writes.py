"""The write guards: _write_, _write_private_, _write_special_ and the setattr and delattr
builtins. The snippet writes attributes of what it owns (ownership.py); a library's object
takes item writes only (ForeignWrite)."""

from __future__ import annotations

from sandbox.restricted import copy_memo
from sandbox.restricted import private_names
from sandbox.restricted import special_methods
from sandbox.restricted.guards.ownership import TYPE_QUALNAME
from sandbox.restricted.imports import ClassWrite, ForeignWrite, StateWrite, describe_value
from sandbox.restricted.libraries.policy import POLICY as library_policy

# Special methods every attribute write of an instance goes through (classes.check_class).
ATTRIBUTE_HOOKS = frozenset({"__setattr__", "__delattr__"})


def write_private(ctx, ob):
    """_write_private_: `obj._x = ...` only on the snippet's own objects."""
    if ctx.only_snippet_classes(ob):
        return ClassWrite(ob, ctx) if isinstance(ob, type) else ob
    library_names = ctx.open_base_names(ob)
    if library_names is not None:
        return ClassWrite(ob, ctx) if isinstance(ob, type) else StateWrite(ob, ctx, library_names)
    raise ctx.refuse("attribute_blocked", f"private attributes (names starting with _) of "
                                           f"{describe_value(ob)} cannot be written: only those of the "
                                           "snippet's own classes can")


def write_special(ctx, ob):
    """_write_special_: `cls.__repr__ = fn` only on the snippet's own classes (special_methods.py)."""
    if isinstance(ob, type) and ob in ctx.classes:
        return special_methods.SpecialMethodWrite(ob, ctx)
    what = f"the class {TYPE_QUALNAME(ob)}" if isinstance(ob, type) else f"a {describe_value(ob)} object"
    raise ctx.refuse("attribute_blocked", f"special methods are set on the snippet's own classes, not on "
                                           f"{what}: " + special_methods.advice("__repr__"))


def set_special_method(ctx, cls: type, name, value) -> None:
    """`cls.name = value` for a special method, under the class body's rules."""
    if not special_methods.settable(name):
        raise ctx.refuse("attribute_blocked", f"{name!r:.80} is not set on a class here: use an ordinary "
                                               "attribute name, or one of the special methods a class body "
                                               "may define")
    if not special_methods.is_snippet_function(value, ctx.owns):
        raise ctx.refuse("attribute_blocked", f"{cls.__name__}.{name} is set to a def or lambda of the "
                                               f"snippet's (or None), not {describe_value(value)}: "
                                               + special_methods.advice(name))
    affected = [cls, *(c for c in ctx.classes if c is not cls and cls in c.__mro__)]
    if name in ATTRIBUTE_HOOKS and not all(ctx.snippet_side(base) for c in affected for base in c.__mro__[1:]):
        raise ctx.refuse("attribute_blocked", f"class {cls.__name__}: {name} is for classes of the snippet's "
                                               "own all the way down (a library base sets its private "
                                               "attributes through it); validate in a method or a property "
                                               "instead")
    if name == "__deepcopy__" and value is not None:  # it gets a handle, never copy's memo (copy_memo.py)
        value = copy_memo.guarded_method(value, ctx.refuse_call)
    ctx.check_class_write(cls, name, value)
    ctx.defined.setdefault(cls, set()).add(name)   # (for the classes derived from it later)
    setattr(cls, name, value)


def write_guard(ctx, ob):
    """_write_: full_write_guard's pass-through for dict and list, plus the snippet's own
    objects; everything else gets item writes only (see ForeignWrite)."""
    cls = type(ob)
    if cls is dict or cls is list or cls in library_policy.writable_types:
        return ob
    if ctx.owns(ob):
        if isinstance(ob, type):
            return ClassWrite(ob, ctx)
        names = ctx.library_state(cls)
        return StateWrite(ob, ctx, names) if names else ob
    if issubclass(cls, library_policy.writable_families):
        return ob
    return ForeignWrite(ob, ctx)


def guarded_setattr(ctx, obj, name, value):
    setattr(settable(ctx, obj, name, "setattr"), name, value)


def guarded_delattr(ctx, obj, name):
    delattr(settable(ctx, obj, name, "delattr"), name)


def settable(ctx, obj, name, what: str):
    """The object to write `name` on: a private name only on the snippet's own
    objects (as `obj._x = ...` is), never a dunder or a guard-family name."""
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    if name.startswith("_"):
        if special_methods.settable(name):
            return ctx.write_special(obj)
        if not private_names.private_name_allowed(name):
            raise ctx.refuse("attribute_blocked", f"{what} of {name!r:.80} is not allowed: special names and "
                                                   "the sandbox's own (_x_) are not set by name; use an "
                                                   "ordinary attribute name")
        return ctx.write_private(obj)
    return ctx.write_guard(obj)


def setitem(ctx, obj, key, value):
    ctx.write_guard(obj)[key] = value


def delitem(ctx, obj, key):
    del ctx.write_guard(obj)[key]

"""What the snippet gets instead of the standard library's class factories and attribute
gadgets: dataclasses' make_dataclass and dataclass, functools' total_ordering,
update_wrapper and wraps, operator's attrgetter, methodcaller, setitem and delitem, and
the enum functional API's names, each under the class-body policy or the guards."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import sys
import types
import typing

from sandbox.restricted import private_names
from sandbox.restricted.base import SNIPPET_MODULE
from sandbox.restricted.imports import describe_value, is_plain_name, unproxied


def make_dataclass(ctx, cls_name, fields, **kwargs):
    if kwargs.get("namespace") is not None:
        kwargs["namespace"] = ctx.check_namespace(kwargs["namespace"], "make_dataclass()")
    for base in kwargs.get("bases") or ():
        ctx.check_field_names(base)
    fields = [plain_item(spec, "a dataclass field", ctx.refuse) for spec in fields]
    made = dataclasses.make_dataclass(cls_name, fields, **kwargs)
    ctx.check_class(made, [*(kwargs.get("namespace") or ()), *map(_field_name, fields)])
    return made


def dataclass(ctx, cls=None, /, **kwargs):
    """dataclasses.dataclass pastes field names into the source it exec()s (with real
    builtins): every field name it will use, its own and inherited, must be a plain
    identifier when it is used, not only when the snippet first wrote it."""
    def wrap(target):
        if target not in ctx.classes:  # (it writes __init__, __eq__, __repr__... onto the class)
            raise ctx.refuse("attribute_blocked", "dataclasses.dataclass decorates the snippet's own classes, "
                                                   f"not {describe_value(target)}")
        with ctx.snippet_module_registered():
            ctx.check_field_names(target)
            made = dataclasses.dataclass(target, **kwargs)
        if made is not target and isinstance(made, type):  # slots=True makes a new class of the same body
            ctx.check_class(made, ctx.defined.get(target, ()))
        return made
    return wrap if cls is None else wrap(cls)


@contextlib.contextmanager
def snippet_module_registered(ctx):
    """dataclasses reads a string annotation ('ClassVar[int]', every one under `from
    __future__ import annotations`) by looking its name up in sys.modules[cls.__module__]:
    for the snippet's classes, a module of the snippet's names that it looks for (typing
    and dataclasses, ClassVar, InitVar and KW_ONLY, under whatever name the snippet gave
    them), there only while dataclasses looks."""
    view = types.ModuleType(SNIPPET_MODULE)
    vars(view).update((name, unproxied(value)) for name, value in list(ctx.globals.items())
                      if type(name) is str and _dataclass_marker(unproxied(value)))
    before = sys.modules.get(SNIPPET_MODULE)   # (an in-process run of plain Python left its own)
    sys.modules[SNIPPET_MODULE] = view
    try:
        yield
    finally:
        if before is None:
            sys.modules.pop(SNIPPET_MODULE, None)
        else:
            sys.modules[SNIPPET_MODULE] = before


def total_ordering(ctx, cls):
    """functools.total_ordering sets the missing comparison methods on the class: the
    snippet's own classes only."""
    if cls not in ctx.classes:
        raise ctx.refuse("attribute_blocked", "functools.total_ordering decorates the snippet's own classes, "
                                               f"not {describe_value(cls)}")
    return functools.total_ordering(cls)


def check_field_names(ctx, target) -> None:
    if not isinstance(target, type):
        return
    # (the name annotated KW_ONLY, `_` by convention, is a marker dataclasses never pastes;
    # as text, "KW_ONLY", it is one when dataclasses' own reading of the text says so)
    names = [name for name, kind in target.__dict__.get("__annotations__", {}).items()
             if kind is not dataclasses.KW_ONLY and not _text_of_kw_only(kind, target)]
    for base in target.__mro__:
        fields = base.__dict__.get("__dataclass_fields__")
        if isinstance(fields, dict):
            names += list(fields) + [getattr(f, "name", None) for f in fields.values()]
    own = ctx.only_snippet_classes(target)  # private fields, as private attributes: on own classes only
    for name in names:
        if not (is_plain_name(name) or own and private_names.private_field_allowed(name)):
            raise ctx.refuse("attribute_blocked", f"dataclass field name {name!r:.80} is not allowed: "
                                                   "field names are identifiers; one starting with '_' only "
                                                   "in a class whose bases are all the snippet's own, and "
                                                   "never a special name, a guard's (_x_) or one dataclasses "
                                                   "uses itself (_dflt_*, _type_*): rename the field")


def check_enum_names(ctx, names):
    """The enum functional API (Enum('E', names)) defines a class attribute per name:
    dunder and sunder names would define methods and hooks. Returns the names as plain
    values, checked (an iterator is consumed here; a str or list subclass could answer
    enum otherwise than it answered the check)."""
    if isinstance(names, str):
        return [plain_item(name, "an enum member", ctx.refuse)
                for name in str.split(str.replace(str.__str__(names), ",", " "))]
    if isinstance(names, (dict, types.MappingProxyType)):
        items = dict(names)
        for name in items:
            plain_item(name, "an enum member", ctx.refuse)
        return items
    return [plain_item(item, "an enum member", ctx.refuse) for item in names]


def update_wrapper(ctx, wrapper, wrapped, assigned=functools.WRAPPER_ASSIGNMENTS,
                   updated=functools.WRAPPER_UPDATES):
    _default_copies_only(ctx, assigned, updated)
    if isinstance(wrapper, type) or not ctx.owns(wrapper):
        raise ctx.refuse("attribute_blocked", "functools.update_wrapper/wraps apply to the snippet's own "
                                               "functions (the wrapper a decorator of its returns), not "
                                               f"to {describe_value(wrapper)}")
    # a library function's __dict__ holds its private state: copied only from the snippet's own
    return functools.update_wrapper(wrapper, wrapped, updated=() if not ctx.owns(wrapped) else updated)


def wraps(ctx, wrapped, assigned=functools.WRAPPER_ASSIGNMENTS, updated=functools.WRAPPER_UPDATES):
    _default_copies_only(ctx, assigned, updated)
    return lambda wrapper: ctx.update_wrapper(wrapper, wrapped)


def _default_copies_only(ctx, assigned, updated) -> None:
    if tuple(assigned) != functools.WRAPPER_ASSIGNMENTS or tuple(updated) != functools.WRAPPER_UPDATES:
        raise ctx.refuse("attribute_blocked", "functools.update_wrapper/wraps copy only the default "
                                               "attributes in the sandbox")


def attrgetter(ctx, attr, *attrs):
    paths = []
    for name in (attr, *attrs):
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        paths.append(name.split("."))

    def get(obj):
        values = []
        for path in paths:
            value = obj
            for part in path:
                value = ctx.getattr(value, part)
            values.append(value)
        return values[0] if len(values) == 1 else tuple(values)
    return get


def methodcaller(ctx, name, /, *args, **kwargs):
    if type(name) is not str:
        raise TypeError("method name must be a string")
    return lambda obj: ctx.getattr(obj, name)(*args, **kwargs)


def _dataclass_marker(value) -> bool:
    """What dataclasses looks for behind a name of a string annotation."""
    return (value is typing or value is dataclasses
            or value is typing.ClassVar or value is dataclasses.InitVar or value is dataclasses.KW_ONLY
            or type(value) is dataclasses.InitVar
            or type(value) is getattr(typing, "_GenericAlias", None) and value.__origin__ is typing.ClassVar)


def _text_of_kw_only(annotation, cls) -> bool:
    """dataclasses' own test of a string annotation for KW_ONLY (sys.modules holds the
    snippet's names while it runs: snippet_module_registered)."""
    is_type, is_kw_only = getattr(dataclasses, "_is_type", None), getattr(dataclasses, "_is_kw_only", None)
    return (type(annotation) is str and is_type is not None and is_kw_only is not None
            and bool(is_type(annotation, cls, dataclasses, dataclasses.KW_ONLY, is_kw_only)))


def _field_name(spec):
    """A field spec plain_item made: a name, or (name, type[, field])."""
    return spec if type(spec) is str else spec[0]


def plain_item(item, what: str, refuse):
    """A name, or a (name, ...) tuple, as exact str and tuple, its name plain (is_plain_name):
    library code that pastes or defines the name then sees what was checked."""
    if type(item) in (tuple, list):
        item = tuple(item)
    elif type(item) is not str:
        raise refuse("attribute_blocked", f"{what} is given as a name or a (name, value) pair of plain values, "
                                          f"not a {type(item).__name__}")
    name = item if type(item) is str else (item[0] if item else None)
    if not is_plain_name(name):
        raise refuse("attribute_blocked", f"{what} named {name!r:.80} is not allowed: names are identifiers "
                                          "that do not start with '_'")
    return item

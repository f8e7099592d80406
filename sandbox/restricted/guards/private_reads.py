"""Reads of names that start with "_" (private_names.py says which, on what): may_read
decides, read hands the value out in the form the snippet gets it."""

from __future__ import annotations

import ast
import enum
import types
import typing

from RestrictedPython.Guards import raise_

from sandbox.restricted import private_names
from sandbox.restricted.base import SandboxAttributeError
from sandbox.restricted.compiled_names import SUPER_METHODS
from sandbox.restricted.imports import CONTAINER_TYPES, ModuleProxy, describe_value, needs_vet
from sandbox.restricted.own_attributes import own_attributes
from sandbox.restricted.subsets import snippet_traceback

_ANNOTATED_ALIAS = type(typing.Annotated[int, 0])


def may_read(ctx, obj, name: str):
    """True when this private or dunder attribute may be read on `obj`; None
    leaves the decision to the usual rules (which refuse it)."""
    kinds = private_names.SAFE_DUNDERS.get(name, ())
    if "own" in kinds or "own class" in kinds:
        # (a bound method's data is its function's: obj.method.__defaults__)
        target = obj.__func__ if type(obj) is types.MethodType and name != "__dict__" else obj
        own = ctx.only_snippet_classes(target) and ("own" in kinds or isinstance(obj, type))
        return True if own and hasattr(obj, name) else None
    if "enum class" in kinds:
        return True if isinstance(obj, enum.EnumMeta) else None
    if "annotated" in kinds:
        return True if type(obj) is _ANNOTATED_ALIAS else None
    if private_names.private_name_allowed(name):
        if ctx.only_snippet_classes(obj):
            return True
        if isinstance(obj, tuple) and hasattr(type(obj), "_fields") and name in private_names.PRIVATE_API["namedtuple"]:
            return True
        if isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields") \
                and name in private_names.PRIVATE_API["namedtuple"]:
            return True
        if name in private_names.PRIVATE_API["ast"] and issubclass(obj if isinstance(obj, type) else type(obj),
                                                                    ast.AST):
            return True
        library_names = ctx.open_base_names(obj)
        if library_names is not None and name not in library_names:
            return True
        return None
    if kinds and (kind_of(obj) in kinds or "any" in kinds):
        return True
    if name == "__new__" and ctx.only_snippet_classes(obj):
        # cls.__new__(cls) in an alternative constructor: object's (or a built-in base's),
        # handed out through checked_new, as object.__new__ is
        return True
    if name in SUPER_METHODS and ctx.owns(obj):
        # Base.__init__(self), self.__add__(other): a method the snippet defined, bound or not.
        # (An inherited library method is not: Base.__init__(foreign, ...) would write onto a
        # library object, a descriptor's __get__(foreign) into its __dict__.)
        method = getattr(obj, name, None)
        function = getattr(method, "__func__", method)
        if type(function) is types.FunctionType and function.__globals__ is ctx.globals:
            return True
    return None


def read(ctx, obj, name: str, default):
    """The value of a private or dunder attribute may_read allowed."""
    if type(obj) is ModuleProxy:
        # the module's own name, version, doc: strings only, from the real module
        value = getattr(object.__getattribute__(obj, "_ModuleProxy__module"), name, None)
        if isinstance(value, str) or (value is None and default is not raise_):
            return value if value is not None else default
        raise SandboxAttributeError(f"module {name} is not available here as a string")
    try:
        value = getattr(obj, name)
    except AttributeError:
        if default is raise_:
            raise
        return default
    if name == "__dict__" and type(value) is dict:
        return own_attributes(obj, ctx.setattr, ctx.delattr)
    if name == "__new__":
        return ctx.checked_new(value)
    if name == "__traceback__":
        return snippet_traceback.summary(value)
    if name == "__annotations__" and type(value) is dict:
        # a copy: dataclasses, NamedTuple and TypedDict make fields (and code)
        # from these names, which the class statement checked; and searched:
        # functools.wraps puts the wrapped library function's dict here
        return ctx.check_container(dict(value), f"{describe_value(obj)}.{name}")
    if type(value) in CONTAINER_TYPES:  # (defaults, slots, metadata: searched as any container)
        return ctx.check_container(value, f"{describe_value(obj)}.{name}")
    return ctx.vet(value, f"{describe_value(obj)}.{name}") if needs_vet(value) else value


def kind_of(obj) -> str:
    """The kind private_names.SAFE_DUNDERS speaks of."""
    if isinstance(obj, type):
        return "class"
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        return "function"
    if isinstance(obj, types.MethodType):
        return "method"
    if isinstance(obj, BaseException):
        return "exception"
    if type(obj) is ModuleProxy:
        return "module"
    return "other"

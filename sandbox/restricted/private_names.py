"""Which names that start with "_" a snippet may use: the tables behind
RestrictedPython's underscore rule, relaxed for ordinary code.

Names: `_helper`, `_cache`, `_`, a class's `__secret` (mangled as Python does)
are the snippet's own and reach nothing. Refused: every name of the guard
family (`_getattr_`, `_write_`, `_print_`, ...: they end with "_"), dunders,
RestrictedPython's temporaries (`_tmp0`) and this sandbox's own (`_sandbox_*`),
so no snippet name can shadow or reach a guard.

Attributes: a private attribute (`self._balance`, `obj._x`) is read or written
only on the snippet's own objects, those whose classes are all the snippet's
(or built-in classes such as object, dict and the exceptions, or MARKER_BASES):
a subclass of a library class must not reach that library's private state, nor
redefine it (guards/classes.py check_class). A few private attributes of other objects
are public API in all but name (PRIVATE_API). Dunder reads are allowed from
SAFE_DUNDERS only; everything else that starts with "_" stays refused.
"""

from __future__ import annotations

import abc
import collections.abc
import contextlib
import dataclasses
import keyword
import numbers
import re
import typing

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

_RESERVED = re.compile(r"^_.*_$|^_tmp\d+$|^_sandbox|^__.*__$")

# Dunder names a snippet may assign (they reach nothing): a module's export list, a class's
# slots, the attributes its positional class patterns read (read through _match_class_).
DUNDER_NAMES_STORED = frozenset({"__all__", "__slots__", "__match_args__"})

# enum's hooks, which an Enum class defines under these names in its body (`_missing_` for
# a lookup by another spelling, `_generate_next_value_` for auto()); none is a guard's name.
ENUM_HOOKS = frozenset({"_missing_", "_generate_next_value_", "_ignore_", "_order_"})

# Private attributes that are public API in all but name, by the kind of object.
PRIVATE_API = {
    "namedtuple": frozenset({"_asdict", "_replace", "_fields", "_make", "_field_defaults"}),
    # the names of a node's fields and location attributes, a tuple of str (read only)
    "ast": frozenset({"_fields", "_attributes"}),
}

# Dunder attributes that may be read (never written) on these kinds of objects; "own":
# on the snippet's own objects only (guards/private_reads.py may_read).
SAFE_DUNDERS = {
    "__name__": ("class", "function", "method", "module"),
    "__qualname__": ("class", "function", "method"),
    "__doc__": ("class", "function", "method", "module", "any"),
    "__module__": ("class", "function"),
    "__version__": ("module",),
    "__cause__": ("exception",),
    "__traceback__": ("exception",),    # a summary of the snippet's own lines (snippet_traceback), never frames
    "__context__": ("exception",),
    "__suppress_context__": ("exception",),
    "__notes__": ("exception",),        # (3.11: what e.add_note() added)
    "__dict__": ("own",),
    "__annotations__": ("own",),        # a copy (guards/private_reads.py read)
    "__wrapped__": ("own",),            # what functools.wraps stored: the function it was given
    # data the snippet wrote itself: its class's slots, its function's default values
    "__slots__": ("own",),
    "__defaults__": ("own",),
    "__kwdefaults__": ("own",),
    # an Enum class's members by name (any Enum's: they are what E[name] gives), the
    # values an Annotated[...] carries (read as its items would be)
    "__members__": ("enum class",),
    "__metadata__": ("annotated",),
    # a class hierarchy that is the snippet's all the way down (object, built-in exceptions
    # and marker bases aside), never a library class's. (Not __subclasses__: the first step
    # of the classic escapes stays refused where validate_code can see it, in the source.)
    "__mro__": ("own class",),
    "__bases__": ("own class",),
    "__base__": ("own class",),
    # a TypedDict of the snippet's: which of its keys are required (frozensets of str, a bool)
    "__required_keys__": ("own class",),
    "__optional_keys__": ("own class",),
    "__total__": ("own class",),
}


# Library classes a snippet's class may not derive from, with what to use instead: library
# code trusts their instances long after it made them (dataclasses reads a Field's `name`
# in fields(), asdict() and replace(), and getattr()s it on the snippet's object).
FINAL_CLASSES = {
    dataclasses.Field: "dataclasses.Field is not subclassed in the sandbox: describe a field with "
                       "dataclasses.field(default=..., metadata={...})",
}

# Library bases that only mark a class (an abstract base, a generic, a protocol) and keep
# no state of their own: a subclass of one of them is as much the snippet's as one of
# object, so `self._items` works in `class Stack(Generic[T])`, `class Shape(ABC)` and
# `class Registry(collections.abc.MutableMapping)`.
MARKER_BASES = frozenset({abc.ABC, typing.Generic, typing.Protocol, contextlib.AbstractContextManager,
                          contextlib.AbstractAsyncContextManager,
                          *(value for module in (collections.abc, numbers) for value in vars(module).values()
                            if isinstance(value, type) and isinstance(value, abc.ABCMeta))})

# What to write instead of reading a special name: the refusal of `x.__len__` says `len(x)`.
_USE = {
    "__class__": "type(x)", "__len__": "len(x)", "__str__": "str(x)", "__repr__": "repr(x)",
    "__format__": "format(x, spec)", "__iter__": "iter(x)",
    "__next__": "next(x) (as a callable, functools.partial(next, x))", "__reversed__": "reversed(x)",
    "__hash__": "hash(x)", "__bool__": "bool(x)", "__int__": "int(x)", "__float__": "float(x)", "__abs__": "abs(x)",
    "__round__": "round(x)", "__contains__": "`item in x`", "__getitem__": "x[key]",
    "__setitem__": "x[key] = value", "__delitem__": "del x[key]", "__call__": "x(...)",
    "__enter__": "a with statement", "__exit__": "a with statement", "__eq__": "x == y", "__ne__": "x != y",
    "__lt__": "x < y", "__le__": "x <= y", "__gt__": "x > y", "__ge__": "x >= y", "__add__": "x + y",
    "__sub__": "x - y", "__mul__": "x * y", "__truediv__": "x / y", "__floordiv__": "x // y",
    "__mod__": "x % y", "__pow__": "x ** y", "__neg__": "-x",
}
INSTEAD = {
    **{name: f"use {way} instead" for name, way in _USE.items()},
    "__dict__": "use dir(obj) and getattr(obj, name); vars(obj) works on the snippet's own objects",
    "__annotations__": "annotations are readable on the snippet's own functions and classes only",
    "__wrapped__": "__wrapped__ is readable on the snippet's own functions only (what its functools.wraps stored)",
    **dict.fromkeys(("__slots__", "__defaults__", "__kwdefaults__"),
                    "readable on the snippet's own classes and functions only; for a library's, "
                    "inspect.signature(f) shows its parameters and defaults"),
    **dict.fromkeys(("__mro__", "__bases__", "__base__"),
                    "a class's hierarchy is readable on the snippet's own classes only: use isinstance(x, C) "
                    "or issubclass(A, B)"),
    "__new__": "cls.__new__(cls) works on the snippet's own classes (all of whose bases are its own or built-in); "
               "for other classes call the class itself",
    "__file__": "module files are not readable in the sandbox",
    "__path__": "module files are not readable in the sandbox",
}


# Names a snippet may not use, with what to write instead.
RESERVED_NAME_INSTEAD = {
    "__import__": "use an import statement (import json, from math import sqrt)",
    "__builtins__": "the builtins are simply there: call them by name",
    "__file__": "the snippet runs from memory, not from a file; the working directory is os.getcwd()",
    "breakpoint": "there is no debugger in the sandbox: print() the values you want to see",
    **dict.fromkeys(("print", "printed", "builtins"), "the sandbox's own name: choose another name"),
    # RestrictedPython's print collector: its transformer assigns this name in every scope
    # that calls print(), so it is neither the snippet's to assign nor shown in globals()
    "_print": "the sandbox collects print() output under this name: choose another name",
}


def instead(name: str) -> str:
    """One line for a model whose code read `name` (a "_" name the sandbox refuses, or one of
    RestrictedPython's INSPECT_ATTRIBUTES: gi_frame, tb_frame, f_globals...)."""
    if name in INSTEAD:
        return INSTEAD[name]
    if name in INSPECT_ATTRIBUTES:
        return ("frames, code objects and tracebacks are the interpreter's internals here: traceback.format_exc() "
                "gives where an error came from, traceback.extract_tb(exc.__traceback__) its lines (a summary whose "
                "tb_lineno and tb_next are readable), next(g) or g.send(v) drives a generator")
    if name.startswith("__") and name.endswith("__"):
        return ("special names reach the interpreter's internals here: use the builtin or operator that "
                "calls it (len(x), str(x), x[k], x + y), or type(x), dir(x), isinstance(x, C)")
    return "private attributes of objects the snippet did not make are not available: use their public API"


def private_name_allowed(name: str) -> bool:
    """A variable, function, parameter or attribute name starting with "_"
    that the snippet may use (the caller checks the object for attributes)."""
    return name == "_" or (name.startswith("_") and not _RESERVED.match(name))


# dataclasses pastes field names into the __init__ it generates, next to names of its own
# (up to 3.11: _dflt_x, _type_x, _HAS_DEFAULT_FACTORY, _return_type; later __dataclass_*__).
_DATACLASS_OWN = re.compile(r"^_(dflt_|type_|HAS_DEFAULT_FACTORY$|return_type$)")


def is_identifier(name) -> bool:
    """An exact str that is a Python identifier and not a keyword (a str subclass could
    answer isidentifier() otherwise than the code generator reads it)."""
    return type(name) is str and name.isidentifier() and not keyword.iskeyword(name)


def private_field_allowed(name) -> bool:
    """A dataclass field `_balance` (or a mangled `__secret`): allowed on a class that is
    the snippet's all the way down (the caller checks the class), as `self._balance = b` is."""
    return (is_identifier(name) and name != "_" and private_name_allowed(name)
            and not _DATACLASS_OWN.match(name))


def mangle(name: str, class_name: str | None) -> str:
    """Python's private name mangling (`__x` in class C is `_C__x`), done by
    the transformer so that reads and writes agree."""
    if class_name is None or not name.startswith("__") or name.endswith("__"):
        return name
    stripped = class_name.lstrip("_")
    return f"_{stripped}{name}" if stripped else name

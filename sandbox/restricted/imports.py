"""The RestrictedPython layer's module side: the tables of objects no module hands out
and of values that need vetting (needs_vet), the read-only ModuleProxy a snippet gets
instead of a module, and the write wrappers the write guards hand out. The policy that
reads these tables is module_policy.ModulePolicy."""

from __future__ import annotations

import builtins
import collections
import contextlib
import contextvars
import dataclasses
import decimal
import enum
import functools
import importlib
import importlib.machinery
import operator
import string
import sys
import types
import typing

from sandbox.restricted.libraries.policy import POLICY as library_policy
from sandbox.restricted.subsets import registry
from sandbox.restricted import private_names
from sandbox.restricted import stand_ins
from sandbox.restricted.stdlib_stand_ins import STDLIB_STAND_INS
from sandbox.restricted.json_value import cap_text
from sandbox.restricted.base import MAX_EVENTS, MAX_EVENT_DETAIL, SandboxAttributeError


# Objects no module proxy hands out, wherever they are re-exported (dataclasses.FunctionType).
# They evaluate strings (ForwardRef), resolve
# attributes unguarded (string.Formatter), build code or frames (types.*), or leave the
# sandbox's view of the world (contextlib.chdir). Each with what to write instead.
_UNSAFE_STRINGS = "it evaluates annotations written as strings as unrestricted Python"
_BUILD_A_CLASS = "write a class statement (class Name(Base): ...)"
_INTERNALS = ("code objects, frames, tracebacks and cells stay out of reach: for an error's text use str(e) or "
              "traceback.format_exc()")
_IMPORT_SYSTEM = "the import system's finders and loaders read any file: import the allowed modules with import"
_GUARDED_BUILTIN = "the snippet has its own, guarded one: call it by its name"
DENIED_ADVICE = {
    typing: {
        "ForwardRef": f"{_UNSAFE_STRINGS}: use the class itself once it is defined, or keep its name as a string",
        "evaluate_forward_ref": f"{_UNSAFE_STRINGS}: use the class itself once it is defined",
    },
    string: {"Formatter": "it looks fields up unguarded: use str.format, format_map or f-strings"},
    contextlib: {"chdir": "the current directory is fixed for the run: join paths to it instead "
                          "(os.path.join(folder, name))"},
    # global_enum writes the members into sys.modules[cls.__module__]: into any module,
    # the sandbox's own guards included (module= is the caller's choice)
    enum: {"global_enum": "it writes into a module's namespace: use the members through their class "
                          "(Color.RED), or assign the names you need (RED = Color.RED)"},
    types: {
        "FunctionType": "to test for a function use callable(x); to make one, def or lambda",
        "LambdaType": "to test for a function use callable(x); to make one, def or lambda",
        "CodeType": _INTERNALS, "FrameType": _INTERNALS, "TracebackType": _INTERNALS, "CellType": _INTERNALS,
        "ModuleType": "for a namespace of values use types.SimpleNamespace(a=1) or a class; to use a module, "
                      "import it",
        "MethodType": "to bind a function to an object use functools.partial(function, obj), or define the "
                      "method in the class body",
        "new_class": _BUILD_A_CLASS, "prepare_class": _BUILD_A_CLASS,
    },
    # the import system's finders and loaders read any file and run any module (a loader's
    # get_data(path), load_module()), wherever one surfaces (a list of sys.meta_path)
    importlib.machinery: dict.fromkeys(
        ("BuiltinImporter", "FrozenImporter", "PathFinder", "FileFinder", "SourceFileLoader",
         "SourcelessFileLoader", "ExtensionFileLoader", "NamespaceLoader", "ModuleSpec", "WindowsRegistryFinder"),
        _IMPORT_SYSTEM),
    builtins: {
        **dict.fromkeys(("eval", "exec", "compile"), "code is not run from strings here: write it out (for data "
                                                     "in text: json.loads, int(), float())"),
        "__import__": "write an import statement (import json, from math import sqrt)",
        **dict.fromkeys(("getattr", "setattr", "delattr", "hasattr", "vars", "dir"), _GUARDED_BUILTIN),
        **dict.fromkeys(("globals", "locals"), "use the snippet's names directly, or a dict of your own"),
        # withheld as a builtin (guards.WITHHELD_BUILTINS), and so wherever else it surfaces:
        # sqlite3.Binary, numpy.ScalarType, type() of a buffer
        "memoryview": "use bytes or bytearray and slices (sqlite3 takes bytes for a BLOB)",
        **dict.fromkeys(("breakpoint", "input", "help"), "there is no terminal: pass data in the code, and show "
                                                        "what you need with print()"),
        **dict.fromkeys(("exit", "quit"), "to stop early, return from a function or raise an exception"),
    },
}
DENIED_OBJECTS: dict[int, str] = {}  # id -> "module.name: what to do instead"
OPEN_BY_NAME = "open: call open() by its name: the snippet's own reaches the files this profile allows"
for _mod, _advice in DENIED_ADVICE.items():
    for _name, _instead in _advice.items():
        if hasattr(_mod, _name):
            DENIED_OBJECTS[id(getattr(_mod, _name))] = f"{_mod.__name__}.{_name}: {_instead}"
del _mod, _advice, _name, _instead

# `types` is mostly a toolbox for building functions, code and classes: only these remain.
TYPES_ALLOWED = frozenset({
    "SimpleNamespace", "MappingProxyType", "GeneratorType", "NoneType", "EllipsisType",
    "NotImplementedType", "GenericAlias", "UnionType", "BuiltinFunctionType",
    "BuiltinMethodType",
})
REAL_BUILTINS = vars(builtins)  # (REAL_BUILTINS: the guards' fast paths check for it)
CONTEXT_TYPES = (contextvars.Context, contextvars.ContextVar, contextvars.Token)
INTERNAL_TYPES = (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType,
                   importlib.machinery.ModuleSpec, importlib.machinery.FileFinder,
                   importlib.machinery.SourceFileLoader, importlib.machinery.SourcelessFileLoader,
                   importlib.machinery.ExtensionFileLoader,
                   # decimal keeps its current context in a ContextVar and reads it back in C without a
                   # type check: set to another object, through a Context a task hands out
                   # (Task.get_context, 3.12+), it crashed the interpreter (ISV-058)
                   *CONTEXT_TYPES)
FORMAT_NAMES = frozenset({"format", "format_map"})


class MetaclassName:
    """abc.ABCMeta as the snippet sees it (one per execution, ModulePolicy.vet): a name for
    `class C(metaclass=ABCMeta)`, whose guard swaps the real one in
    (guards/classes.py metaclass), and for isinstance(); the metaclass itself
    would make classes from any namespace, past the class-body checks."""

    __slots__ = ("_real", "_refuse")

    def __init__(self, real: type, refuse):
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_refuse", refuse)

    def __instancecheck__(self, obj) -> bool:
        return isinstance(obj, self._real)

    def __subclasscheck__(self, cls) -> bool:
        return issubclass(cls, self._real)

    def __call__(self, *args, **kwargs):
        name = self._real.__name__
        raise self._refuse(f"{name} is a metaclass, which makes classes from any namespace: write a class "
                           f"statement, class C(metaclass={name}) (or derive from abc.ABC)")

    def __getattr__(self, name: str):
        # (only what the slots and methods above lack: the unbound ABCMeta.register(Base, C), say)
        raise AttributeError(f"the sandbox's abc.ABCMeta only names the metaclass, and has no {name!r}: "
                             f"call it on the abstract class itself, e.g. Sequence.register(C) or "
                             f"MyBase.register(C)")

    def __repr__(self) -> str:
        return f"<class '{self._real.__module__}.{self._real.__qualname__}'>"


# Values that getattr/getitem results are checked against (cheaply, by identity) before vet().
REAL_OPEN = builtins.open  # (io.open; while a snippet runs, builtins.open is library_policy's by-path version)
_VET_IDS = frozenset(DENIED_OBJECTS) | {id(REAL_BUILTINS), id(builtins.open), id(operator.attrgetter),
                                         id(operator.methodcaller), id(operator.setitem),
                                         id(operator.delitem), id(functools.update_wrapper),
                                         id(functools.wraps), id(dataclasses.make_dataclass),
                                         id(dataclasses.dataclass), id(functools.total_ordering)} | set(STDLIB_STAND_INS)


def deny_types_of(module_name: str) -> None:
    """The types registry.DENIED_TYPES lists for a module in use join the internal
    objects no guard hands out (the event loop, once asyncio runs)."""
    global INTERNAL_TYPES
    for qualified in registry.DENIED_TYPES.get(module_name, ()):
        cls = library_policy.lookup(qualified)
        if isinstance(cls, type) and cls not in INTERNAL_TYPES:
            INTERNAL_TYPES = (*INTERNAL_TYPES, cls)


def is_plain_name(name) -> bool:
    """A name library code may paste into source or define as an attribute."""
    return private_names.is_identifier(name) and not name.startswith("_")


def is_metaclass(value) -> bool:
    return isinstance(value, type) and issubclass(value, type)


# Where a value reaches the snippet without a guard of its own (a call's result, an item
# of iteration, a parameter of a snippet function that library code calls back), it is
# vetted like an attribute read; a plain container arriving from library code is searched
# (C-speed per level) so that no module, metaclass or denied object hides inside one,
# where C code (map, functools.partial, operator.call, starmap) could still use it.
SCALAR_TYPES = frozenset({int, float, complex, str, bytes, bool, type(None), range, bytearray})
CONTAINER_TYPES = frozenset({list, tuple, dict, set, frozenset})
# Values of these exact types never need vetting themselves.
PLAIN_TYPES = SCALAR_TYPES | CONTAINER_TYPES
# Iterating these yields only plain values: no per-item vetting.
PLAIN_ITERABLES = frozenset({range, str, bytes, bytearray})
# Mutable module-level containers are registries the stdlib may read back
# (copy.dispatch_table): a module hands out a read-only copy or view instead.
READ_ONLY_VIEWS = {dict: types.MappingProxyType, list: tuple, set: frozenset, bytearray: bytes}
for _cls in (collections.OrderedDict, collections.defaultdict, collections.Counter):
    READ_ONLY_VIEWS[_cls] = types.MappingProxyType
READ_ONLY_VIEWS[collections.deque] = tuple
del _cls


# The objects a subset stands in for (each name of registry.SUBSETS, as the real module
# has it), wherever a library re-exports one (matplotlib.Path is pathlib.Path): id -> (module,
# name). Made anew when modules were loaded since.
_SUBSET_ORIGINALS: dict[int, tuple[str, str]] = {}
_originals_made_with = -1   # len(sys.modules) then


def subset_original(value) -> tuple[str, str] | None:
    """(module, name) when `value` is the real module's object behind a subset's name."""
    global _originals_made_with
    if len(sys.modules) != _originals_made_with:
        loaded = len(sys.modules)
        for name, attrs in registry.SUBSETS.items():
            module = sys.modules.get(name)
            for attr in attrs if module is not None else ():
                original = getattr(module, attr, None)
                if type(original) not in PLAIN_TYPES and not isinstance(original, types.ModuleType):
                    _SUBSET_ORIGINALS.setdefault(id(original), (name, attr))
        # only now: a walk cut part way (a session's interrupt, a MemoryError) is done again
        _originals_made_with = loaded
    return _SUBSET_ORIGINALS.get(id(value))


def needs_vet(value) -> bool:
    if value is REAL_BUILTINS:
        return True  # (a dict, but the real builtins': library code's eval() hands it out)
    return type(value) not in PLAIN_TYPES and (
        id(value) in _VET_IDS or isinstance(value, INTERNAL_TYPES) or is_metaclass(value)
        or subset_original(value) is not None
        or id(value) in library_policy.refused_ids or id(value) in library_policy.keyword_guards
        or id(value) in library_policy.replaced_ids or id(value) in library_policy.by_path_ids
        or id(value) in library_policy.named_file_writers or id(value) in stand_ins.HIDDEN
        # list[X] and numpy.typing.NDArray call their class: X must pass too
        or (type(value) is types.GenericAlias and needs_vet(value.__origin__)))


def hidden_danger(container, handed_out_as_is):
    """The first value inside a plain container (at any depth) that would need vetting and
    that the vetting would not hand out as it is (`handed_out_as_is`: sys.version_info, which
    the sys subset gives as it is); None when there is none. Levels of scalars cost one
    C-level pass."""
    seen, stack = set(), [container]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        parts = (current.keys(), current.values()) if type(current) is dict else (current,)
        for part in parts:
            if set(map(type, part)) <= SCALAR_TYPES:
                continue
            for item in part:
                kind = type(item)
                if kind in CONTAINER_TYPES:
                    stack.append(item)
                elif kind not in SCALAR_TYPES and needs_vet(item) and not handed_out_as_is(item):
                    return item
    return None


def unproxied(value):
    """The module a ModuleProxy stands for (for the sandbox's own reads), else `value`."""
    return object.__getattribute__(value, "_ModuleProxy__module") if type(value) is ModuleProxy else value


class ModuleProxy:
    """A read-only view of an allowed module, handed to the snippet instead of the module.

    Attribute reads go through ``ExecutionContext.module_attribute``; writes always fail. The real
    module sits in a name-mangled slot that the guards never let a snippet name.
    """

    __slots__ = ("__name", "__module", "__ctx", "__package_only")

    def __init__(self, *args, **kwargs):
        raise TypeError("module proxies cannot be created by the snippet")

    @classmethod
    def _make(cls, name, module, ctx, package_only):
        proxy = object.__new__(cls)
        for slot, value in (("__name", name), ("__module", module), ("__ctx", ctx),
                            ("__package_only", package_only)):
            object.__setattr__(proxy, f"_ModuleProxy{slot}", value)
        return proxy

    def __getattr__(self, name):
        if type(name) is not str or name.startswith("_"):
            raise AttributeError(name)  # also keeps a slot miss from recursing
        return self.__ctx.module_attribute(self.__name, self.__module, name, self.__package_only)

    def __setattr__(self, name, value):
        raise self.__ctx.refuse("attribute_blocked",
                                f"cannot set {name!s:.80} on module {self.__name}: modules are read-only; "
                                "keep your own value in a variable of the snippet's",
                                SandboxAttributeError)

    def __delattr__(self, name):
        raise self.__ctx.refuse("attribute_blocked",
                                f"cannot delete {name!s:.80} from module {self.__name}: modules are read-only",
                                SandboxAttributeError)

    def __repr__(self):
        return f"<module {self.__name!r} (sandboxed)>"

    def __reduce_ex__(self, protocol):  # copy/pickle would reach the slots
        raise TypeError("module proxies cannot be copied or pickled")

    def __reduce__(self):
        raise TypeError("module proxies cannot be copied or pickled")


class ClassWrite:
    """What ``_write_`` returns for one of the snippet's classes: an attribute written to
    it is checked as its class body's were (ExecutionContext.check_class_write)."""

    __slots__ = ("_cls", "_ctx")

    def __init__(self, cls, ctx):
        object.__setattr__(self, "_cls", cls)
        object.__setattr__(self, "_ctx", ctx)

    def __setattr__(self, name, value):
        self._ctx.check_class_write(self._cls, name, value)
        setattr(self._cls, name, value)

    def __delattr__(self, name):
        delattr(self._cls, name)

    def __setitem__(self, key, value):
        self._cls[key] = value  # (a class takes no items: the usual TypeError)


class StateWrite:
    """What ``_write_`` returns for an instance of a snippet class derived from a library
    class whose compiled code trusts its state (library_policy.state_names): the names
    that library's code uses are not the snippet's to set or delete; its own are."""

    __slots__ = ("_ob", "_ctx", "_names")

    def __init__(self, ob, ctx, names):
        object.__setattr__(self, "_ob", ob)
        object.__setattr__(self, "_ctx", ctx)
        object.__setattr__(self, "_names", names)

    def _check(self, name):
        if name in self._names:
            raise self._ctx.refuse("attribute_blocked", state_refusal(type(self._ob), name), SandboxAttributeError)

    def __setattr__(self, name, value):
        self._check(name)
        setattr(self._ob, name, value)

    def __delattr__(self, name):
        self._check(name)
        delattr(self._ob, name)

    def __setitem__(self, key, value):
        self._ob[key] = value

    def __delitem__(self, key):
        del self._ob[key]


def state_refusal(cls: type, name: str) -> str:
    return (f"{cls.__name__}.{name!s:.80}: a library base of {cls.__name__} keeps its own state under this name, "
            "which its code (compiled code too) trusts: set it through the library's constructor or methods, "
            "and keep your own values under other names")


class ForeignWrite:
    """What ``_write_`` returns for an object the snippet does not own: item assignment goes
    to the object's own __setitem__ (numpy, pandas, defaultdict), attribute assignment fails."""

    __slots__ = ("_ob", "_ctx")

    def __init__(self, ob, ctx):
        object.__setattr__(self, "_ob", ob)
        object.__setattr__(self, "_ctx", ctx)

    def __setitem__(self, key, value):
        self._read_only_registry()
        self._ob[key] = value

    def __delitem__(self, key):
        self._read_only_registry()
        del self._ob[key]

    def _read_only_registry(self):
        if type(self._ob) is types.MappingProxyType:
            raise self._ctx.refuse("attribute_blocked", "module-level dictionaries are read-only in the "
                                   "sandbox (the library reads them back); work on a copy: d = dict(module.name)")

    def __setattr__(self, name, value):
        if library_policy.writable_attribute(self._ob, name) or type(self._ob) in (ModuleProxy,
                                                                                 registry.ModuleSubset):
            setattr(self._ob, name, value)  # (a module refuses it itself, saying why)
            return
        raise self._ctx.refuse("attribute_blocked",
                               f"cannot set attribute {name!s:.80} of a {describe_value(self._ob)} "
                               "object the snippet did not create: change a library's object through its "
                               "methods or constructor arguments, or make it of a class of your own "
                               "(class Mine(TheirClass): ...), whose instances take attributes",
                               SandboxAttributeError)

    def __delattr__(self, name):
        raise self._ctx.refuse("attribute_blocked",
                               f"cannot delete attribute {name!s:.80} of a {describe_value(self._ob)} "
                               "object the snippet did not create", SandboxAttributeError)


def callable_name(func) -> str:
    name = getattr(func, "__qualname__", None)
    return name[:80] if isinstance(name, str) else "a call"


def describe_value(obj) -> str:
    if type(obj) is ModuleProxy:
        return repr(obj)
    return type(obj).__name__


def policy_only(obj, name, *default):
    """Stands in for getattr so that safer_getattr checks its policy without looking up."""
    return None


class Events:
    def __init__(self):
        self.items: list[dict] = []

    def add(self, kind: str, detail: str) -> None:
        if len(self.items) < MAX_EVENTS:
            self.items.append({"kind": kind, "detail": cap_text(str(detail), MAX_EVENT_DETAIL)[0]})


class Printer:
    """RestrictedPython's print protocol (see PrintCollector) writing straight to a stream,
    so output is streamed as it is printed; ``printed`` still works (capped)."""

    _PRINTED_CAP = 1 << 20

    def __init__(self, stream, getattr_):
        self._stream = stream  # (sys.stdout while the snippet runs, unless it redirected it)
        self._getattr = getattr_
        self._text: list[str] = []
        self._size = 0

    def write(self, text):
        self._stream.write(text)
        if self._size < self._PRINTED_CAP:
            self._text.append(text)
            self._size += len(text)

    def flush(self):
        self._stream.flush()

    def __call__(self):
        return "".join(self._text)

    def _call_print(self, *objects, **kwargs):
        if kwargs.get("file") is None:
            kwargs["file"] = self if sys.stdout is self._stream else sys.stdout  # contextlib.redirect_stdout
        if kwargs["file"] is not self:
            self._getattr(kwargs["file"], "write")
        print(*objects, **kwargs)


_INPLACE = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow,
    "<<=": operator.ilshift, ">>=": operator.irshift, "&=": operator.iand,
    "|=": operator.ior, "^=": operator.ixor, "@=": operator.imatmul,
}


def inplacevar(op, target, value):
    return _INPLACE[op](target, value)


ALWAYS_WRITABLE_TYPES = frozenset({decimal.Context, types.SimpleNamespace})

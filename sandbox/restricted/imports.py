"""The RestrictedPython layer's module side: the tables of objects no module
hands out, the read-only ModuleProxy a snippet gets instead of a module, the
vetting of values, and the import policy (a mixin of the guards' context)."""

from __future__ import annotations

import abc
import builtins
import collections
import contextlib
import contextvars
import copy
import dataclasses
import decimal
import enum
import functools
import importlib
import importlib.machinery
import io
import operator
import os
import string
import sys
import types
import typing
import uuid
from xml.etree import ElementTree

from sandbox import profiles
from sandbox.restricted import copy_memo
from sandbox.restricted.libraries.policy import POLICY as library_policy
from sandbox.restricted.subsets import registry
from sandbox.restricted import private_names
from sandbox.restricted import snippet_files
from sandbox.restricted import stand_ins
from sandbox.restricted import type_hints
from sandbox.restricted.results import cap_text
from sandbox.restricted.base import MAX_EVENTS, SandboxAttributeError, SandboxImportError, SandboxRefused, MAX_EVENT_DETAIL


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
        # withheld as a builtin (rp_guards.WITHHELD_BUILTINS), and so wherever else it surfaces:
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
_TYPES_ALLOWED = frozenset({
    "SimpleNamespace", "MappingProxyType", "GeneratorType", "NoneType", "EllipsisType",
    "NotImplementedType", "GenericAlias", "UnionType", "BuiltinFunctionType",
    "BuiltinMethodType",
})
_BUILTINS_DICT = REAL_BUILTINS = vars(builtins)  # (REAL_BUILTINS: the guards' fast paths check for it)
_CONTEXT_TYPES = (contextvars.Context, contextvars.ContextVar, contextvars.Token)
_INTERNAL_TYPES = (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType,
                   importlib.machinery.ModuleSpec, importlib.machinery.FileFinder,
                   importlib.machinery.SourceFileLoader, importlib.machinery.SourcelessFileLoader,
                   importlib.machinery.ExtensionFileLoader,
                   # decimal keeps its current context in a ContextVar and reads it back in C without a
                   # type check: set to another object, through a Context a task hands out
                   # (Task.get_context, 3.12+), it crashed the interpreter (ISV-058)
                   *_CONTEXT_TYPES)
FORMAT_NAMES = frozenset({"format", "format_map"})


class MetaclassName:
    """abc.ABCMeta as the snippet sees it (one per execution, ModulePolicy.vet): a name for
    `class C(metaclass=ABCMeta)`, whose guard swaps the real one in
    (rp_guards.ExecutionContext.metaclass), and for isinstance(); the metaclass itself
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


def _simple_namespace(ctx):
    """types.SimpleNamespace(**names) sets attributes by name, past the setattr guard: a
    dunder among them (__reduce_ex__, __deepcopy__, numpy's __array_interface__) is read
    by library code as the object's own protocol. Only names not starting with "_"."""
    refuse = ctx.refuse_call

    def check_arguments(args, kwargs):
        names = list(kwargs)
        for arg in args:  # (3.13: a mapping as well)
            if type(arg) is not dict:
                raise refuse("types.SimpleNamespace(): pass the attributes as keyword arguments or a dict")
            names += list(arg)
        for name in names:
            if type(name) is not str or name.startswith("_"):
                raise refuse(f"types.SimpleNamespace(): the attribute name {name!r:.80} is not allowed: names "
                             "there do not start with '_' (keep other keys in a dict)")
    return stand_ins.stand_in(types.SimpleNamespace, check_arguments=check_arguments)


def _copy_replace(ctx):
    """copy.replace(obj, **changes) (3.13) calls obj's __replace__, and SimpleNamespace's
    sets every name it is given: the same names as SimpleNamespace() only. (Dataclasses
    and named tuples take only their fields, whose names never start with "_" here.)"""
    real, refuse = copy.replace, ctx.refuse_call

    def replace(obj, /, **changes):
        for name in changes:
            if type(name) is not str or name.startswith("_"):
                raise refuse(f"copy.replace(): the name {name!r:.80} is not allowed: the names of fields "
                             "and attributes here do not start with '_'")
        return real(obj, **changes)
    return replace


def _file_io(ctx):
    """io.FileIO (the filesystem profile's full io module) by path only, as open(): an
    integer would reach the fds the sandbox itself uses (the result and request pipes)."""
    def check_arguments(args, kwargs):
        file = args[0] if args else kwargs.get("file")
        if not isinstance(file, (str, bytes, os.PathLike)) or len(args) > 3 or "opener" in kwargs:
            raise ctx.refuse_call("io.FileIO(): files in the sandbox are named by path, not by file descriptor "
                         "(and without an opener): io.FileIO('data.bin', 'rb')")
    return stand_ins.stand_in(io.FileIO, check_arguments=check_arguments)


def _cached_property(ctx):
    """functools.cached_property stores its value in `instance.__dict__[self.attrname]`, and
    a subclass of the snippet's may set attrname itself: a dunder there (__reduce_ex__) is
    then the object's own protocol to copy. The stand-in reads the name once and stores
    under it only a name the snippet could assign itself."""
    real = functools.cached_property
    missing = object()

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        if not ctx.owns(instance):  # (it writes into the instance's __dict__)
            raise ctx.refuse_call("functools.cached_property caches on the snippet's own objects only")
        name = self.attrname
        if type(name) is not str or name.startswith("__") or (
                name.startswith("_") and not private_names.private_name_allowed(name)):
            raise ctx.refuse_call(f"functools.cached_property: the attribute name {name!r:.80} is not allowed: "
                                  "use it as a decorator on a method with an ordinary name")
        cache = instance.__dict__
        value = cache.get(name, missing)
        if value is missing:
            value = self.func(instance)
            cache[name] = value
        return value
    stand_in = stand_ins.stand_in(real)
    stand_in.__get__ = __get__
    return stand_in


def _singledispatch(ctx):
    """functools.singledispatch, whose register(func) reads the class from the first
    parameter's annotation with typing.get_type_hints, which eval()s a string annotation
    with the real builtins. Here the annotation must be a class (or a union of classes),
    or the text of a name of one (type_hints.named_class), handed to the real register as
    register(cls, func): nothing is evaluated."""
    real = functools.singledispatch

    def singledispatch(func):
        dispatcher = real(func)
        register = dispatcher.register

        def checked_register(cls, func=None):
            if func is None and callable(cls) and not isinstance(cls, (type, types.UnionType)) \
                    and typing.get_origin(cls) is not typing.Union:
                annotations = dict(getattr(cls, "__annotations__", None) or {})
                annotations.pop("return", None)
                first = next(iter(annotations.values()), None)
                if type(first) is str:
                    first = type_hints.named_class(first, cls, ctx) or first
                if not (isinstance(first, (type, types.UnionType)) or typing.get_origin(first) is typing.Union):
                    raise ctx.refuse_call(f"{dispatcher.__name__}.register: the first parameter's annotation "
                                          "must be a class, or the text of a class's name (def _(x: int), "
                                          f"x: 'ast.Name', x: int | str); it is {first!r:.60}, which is not "
                                          "evaluated here: use @f.register(int) instead")
                return register(first, cls)
            return register(cls, func)
        checked_register.__name__ = "register"
        dispatcher.register = checked_register
        return dispatcher
    singledispatch.__name__ = singledispatch.__qualname__ = "singledispatch"
    singledispatch.__doc__ = real.__doc__
    return singledispatch


def _singledispatchmethod(ctx):
    """functools.singledispatchmethod, whose dispatcher is functools' own singledispatch:
    here the checked one above, so register reads annotations the same way."""
    checked_singledispatch = _singledispatch(ctx)

    class singledispatchmethod(functools.singledispatchmethod):
        __doc__ = functools.singledispatchmethod.__doc__

        def __init__(self, func):
            super().__init__(func)
            self.dispatcher = checked_singledispatch(func)
    singledispatchmethod.__module__ = "functools"
    return singledispatchmethod


_NODE: int | None = None   # this process's uuid node (_random_node); never drawn in the fork server


def _random_node() -> int:
    """A random node, with the multicast bit set as RFC 4122 (4.5) asks of one, drawn once
    per sandbox process (a session keeps it, as a machine keeps its card)."""
    global _NODE
    if _NODE is None:
        _NODE = int.from_bytes(os.urandom(6), "big") | (1 << 40)
    return _NODE


def _uuid_getnode(ctx):
    """uuid.getnode() reads the network card's MAC address, and uuid1() has libuuid read it:
    where the network namespace is the host's (the namespaces layer off), the host's
    hardware address, which is not the snippet's to know (as platform.node() is not)."""
    def getnode():
        return _random_node()
    getnode.__doc__ = "A random node (this sandbox's own: the host's hardware address is not read)."
    return getnode


def _uuid1(ctx):
    real = uuid.uuid1

    def uuid1(node=None, clock_seq=None):
        return real(_random_node() if node is None else node, clock_seq)
    uuid1.__doc__ = real.__doc__
    return uuid1


def _opened_by_snippet(function, position: int, keyword: str):
    """`function`, whose path argument the execution's open() opens (snippet_files.OPENING_FUNCTIONS)."""
    return lambda ctx: snippet_files.through_open(function, function.__name__, position, keyword, ctx.open)


# Standard-library objects the snippet gets a stand-in for (a class: stand_ins.py), each
# made once per execution from the execution's context; the library tables' stand_ins
# holds the libraries' own.
STDLIB_STAND_INS = {
    id(types.SimpleNamespace): _simple_namespace,
    id(io.FileIO): _file_io,
    id(functools.cached_property): _cached_property,
    id(functools.singledispatch): _singledispatch,
    id(functools.singledispatchmethod): _singledispatchmethod,
    id(typing.get_type_hints): type_hints.get_type_hints,
    id(copy.deepcopy): lambda ctx: copy_memo.deepcopy(ctx.refuse_call),
    id(uuid.getnode): _uuid_getnode,
    id(uuid.uuid1): _uuid1,
    # files opened by path with the real open(): the snippet's open() instead
    id(ElementTree.ElementTree): lambda ctx: stand_ins.stand_in(
        ElementTree.ElementTree, check_arguments=snippet_files.element_tree_checks),
    **{id(function): _opened_by_snippet(function, *where)
       for function, where in snippet_files.OPENING_FUNCTIONS.items()},
}
if hasattr(copy, "replace"):
    STDLIB_STAND_INS[id(copy.replace)] = _copy_replace

# Values that getattr/getitem results are checked against (cheaply, by identity) before vet().
_REAL_OPEN = builtins.open  # (io.open; while a snippet runs, builtins.open is library_policy's by-path version)
_VET_IDS = frozenset(DENIED_OBJECTS) | {id(_BUILTINS_DICT), id(builtins.open), id(operator.attrgetter),
                                         id(operator.methodcaller), id(operator.setitem),
                                         id(operator.delitem), id(functools.update_wrapper),
                                         id(functools.wraps), id(dataclasses.make_dataclass),
                                         id(dataclasses.dataclass), id(functools.total_ordering)} | set(STDLIB_STAND_INS)


def deny_types_of(module_name: str) -> None:
    """The types registry.DENIED_TYPES lists for a module in use join the internal
    objects no guard hands out (the event loop, once asyncio runs)."""
    global _INTERNAL_TYPES
    for qualified in registry.DENIED_TYPES.get(module_name, ()):
        cls = library_policy.lookup(qualified)
        if isinstance(cls, type) and cls not in _INTERNAL_TYPES:
            _INTERNAL_TYPES = (*_INTERNAL_TYPES, cls)


def is_plain_name(name) -> bool:
    """A name library code may paste into source or define as an attribute."""
    return private_names.is_identifier(name) and not name.startswith("_")


def _is_metaclass(value) -> bool:
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
_READ_ONLY_VIEWS = {dict: types.MappingProxyType, list: tuple, set: frozenset, bytearray: bytes}
for _cls in (collections.OrderedDict, collections.defaultdict, collections.Counter):
    _READ_ONLY_VIEWS[_cls] = types.MappingProxyType
_READ_ONLY_VIEWS[collections.deque] = tuple
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
        _originals_made_with = len(sys.modules)
        for name, attrs in registry.SUBSETS.items():
            module = sys.modules.get(name)
            for attr in attrs if module is not None else ():
                original = getattr(module, attr, None)
                if type(original) not in PLAIN_TYPES and not isinstance(original, types.ModuleType):
                    _SUBSET_ORIGINALS.setdefault(id(original), (name, attr))
    return _SUBSET_ORIGINALS.get(id(value))


def needs_vet(value) -> bool:
    if value is _BUILTINS_DICT:
        return True  # (a dict, but the real builtins': library code's eval() hands it out)
    return type(value) not in PLAIN_TYPES and (
        id(value) in _VET_IDS or isinstance(value, _INTERNAL_TYPES) or _is_metaclass(value)
        or subset_original(value) is not None
        or id(value) in library_policy.refused_ids or id(value) in library_policy.keyword_guards
        or id(value) in library_policy.replaced_ids or id(value) in library_policy.by_path_ids
        or id(value) in library_policy.named_file_writers or id(value) in stand_ins.HIDDEN
        # list[X] and numpy.typing.NDArray call their class: X must pass too
        or (type(value) is types.GenericAlias and needs_vet(value.__origin__)))


def _hidden_danger(container, handed_out_as_is):
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


class ModulePolicy:
    """The import hook, module attributes and the vetting of values: the part of
    the guards' context (rp_guards.ExecutionContext) that decides what modules hand out."""

    # -- the import policy
    def permits(self, name: str) -> bool:
        return name == "__future__" or profiles.permits(name, self.allowed)

    def is_package_of_allowed(self, name: str) -> bool:
        return profiles.leads_to_allowed(name, self.allowed)

    def import_(self, name, globals=None, locals=None, fromlist=(), level=0):
        """__import__: the import policy, then the library tables for what it loaded."""
        try:
            return self._import(name, fromlist, level)
        finally:
            self.complete_policy()

    def complete_policy(self) -> None:
        """The library tables for the modules loaded so far, applied in full. Run at the
        end of an import; should it fail part way (a RecursionError when the snippet
        imports near the recursion limit, a MemoryError), every attribute read
        completes it before it hands anything out."""
        self.policy_pending = True
        library_policy.refresh()
        if self.switched_off is not None:
            self.switched_off.apply()
        self.policy_pending = False

    def _import(self, name, fromlist, level):
        if type(fromlist) is list and level == 0 and type(name) is str:
            # C code importing its own helpers (datetime.strptime -> _strptime) goes through
            # PyImport_Import, which calls this hook with a list and discards the result;
            # snippet import statements always pass None or a tuple.
            importlib.import_module(name)
            return None
        if level != 0:
            dots = "." * level if isinstance(level, int) and 0 < level < 10 else "."
            raise self.refuse("import_blocked", f"relative import from {dots}{name!s:.80} is not allowed: the "
                                                "snippet is not in a package; import modules by their full name",
                              SandboxImportError)
        if type(name) is not str or not name or (
                name != "__future__" and any(not p.isidentifier() or p.startswith("_")
                                             for p in name.split("."))):
            raise self.refuse("import_blocked", f"import of {name!r:.80} is not allowed: modules are imported "
                                                "by their public dotted name (import json, import os.path)",
                              SandboxImportError)
        if name in registry.SUBSETS and not self.permits(name):
            subset = self._subset_import(name, fromlist)
            # `import os.path` binds os
            return subset if fromlist or "." not in name else self._subset_import(name.split(".")[0], ())
        if not fromlist:
            if not self.permits(name):
                raise self._import_refusal(name)
            _load(name)
            top = name.split(".")[0]
            return self.proxy(top, sys.modules[top])
        # from NAME import a, b: NAME may be a package that only leads to allowed modules.
        if not (self.permits(name) or self.is_package_of_allowed(name)):
            raise self._import_refusal(name)
        module = _load(name)
        self.complete_policy()  # (the tables for what the import loaded decide about the names below)
        package_only = not self.permits(name)
        for item in fromlist:
            if type(item) is not str or item == "*" or item.startswith("_"):
                # (a private name may be the snippet's own, never a module's)
                raise self.refuse("import_blocked", f"from {name} import {item!r:.80} is not allowed: "
                                                    "import the module's public names",
                                  SandboxImportError)
            sub = f"{name}.{item}"
            if self.permits(sub) or self.is_package_of_allowed(sub):
                with contextlib.suppress(ImportError):  # may also be a plain attribute
                    importlib.import_module(sub)
                if sub in sys.modules:
                    continue
            # (an attribute: its refusal is said here, as an ImportError the snippet can read;
            # IMPORT_FROM would turn the guard's AttributeError into "cannot import name")
            self._check_from_item(name, module, item, package_only)
        return self.proxy(name, module)

    def import_star(self, name: str) -> None:
        """`from name import *`: every public name of the module (its __all__, else
        the names without "_") that the module policy hands out, into the snippet's
        globals; the names it refuses are left out, as if the module had none."""
        self.import_(name)  # the import policy decides, as for `import name`
        module = self.subsets.get(name) or self.proxy(name, sys.modules[name])
        real = (object.__getattribute__(module, "_ModuleProxy__module") if type(module) is ModuleProxy
                else None)
        if type(module) is registry.ModuleSubset:
            names = registry.names(module)
        else:
            exported = getattr(real, "__all__", None)
            names = list(exported) if isinstance(exported, (list, tuple)) else [n for n in dir(real)
                                                                                 if not n.startswith("_")]
        for attr in names:
            if type(attr) is not str or attr.startswith("_"):
                continue
            try:
                self.globals[attr] = self.getattr(module, attr)
            except (AttributeError, SandboxRefused):
                continue

    def _subset_import(self, name, fromlist):
        """`import sys` / `from io import StringIO` without the module's profile: the
        subset of registry.py, or a refusal that lists it."""
        subset = self.subsets.get(name)
        if subset is None:
            subset = self.subsets[name] = registry.make(name, self.files, self.refuse_call,
                                                                   self.Formatter, self.open, lambda: self.globals)
            deny_types_of(name)
            for value in registry.values(subset):   # a real class behind one of the subset's: the subset's
                real = stand_ins.real_behind(value)
                if real is not None:
                    self.replacements[id(real)] = value
        names = registry.names(subset)
        for item in fromlist or ():
            if item not in names:
                raise self.refuse("import_blocked", f"from {name} import {item!s:.80} is not available "
                                                    f"({registry.WHY[name]}); {name} here has: "
                                                    + ", ".join(sorted(names)), SandboxImportError)
        return subset

    def _check_from_item(self, name, module, item, package_only):
        """`from name import item` where item is not an allowed submodule: it must be an
        attribute that passes the module policy (which records the event if it does not)."""
        refused = None
        try:
            self.module_attribute(name, module, item, package_only, kind="import_blocked")
            return
        except SandboxAttributeError as exc:
            refused = str(exc)
        except AttributeError:
            pass
        if refused is not None:
            exc = SandboxImportError(f"from {name} import {item}: {refused}", name=name)
            exc._sandbox_refused = True
            raise exc
        if profiles.importable(f"{name}.{item}"):
            why = profiles.danger(f"{name}.{item}")
            raise self.refuse("import_blocked", f"from {name} import {item}: module {name}.{item} is not allowed"
                                                + (f" ({why})" if why else ""), SandboxImportError, name=name)
        raise ImportError(f"cannot import name {item!r} from {name!r}", name=name)

    def _import_refusal(self, name: str) -> SandboxImportError:
        detail = f"import of module {name!r} is not allowed: {profiles.import_advice(name, self.allowed)}"
        return self.refuse("import_blocked", detail, SandboxImportError, name=name)

    def proxy(self, name: str, module) -> ModuleProxy:
        key = (name, id(module))
        if key not in self.proxies:
            self.proxies[key] = ModuleProxy._make(name, module, self, not self.permits(name))
        return self.proxies[key]

    def module_attribute(self, modname, module, attr, package_only, kind="attribute_blocked"):
        """The policy for `module.attr` (attribute access and `from module import attr`)."""
        if type(attr) is not str or attr.startswith("_"):
            # Only the interpreter gets here (the guards refuse "_" names first): silent.
            raise AttributeError(attr)
        qual = f"{modname}.{attr}"
        if modname == "types" and attr not in _TYPES_ALLOWED:
            raise self.refuse(kind, f"{qual} is not available in the sandbox (functions, code and classes are "
                                    "made with def, lambda and class statements): to ask whether x is a function, "
                                    f"use callable(x); types here has {', '.join(sorted(_TYPES_ALLOWED))}")
        missing = False
        try:
            value = getattr(module, attr)
        except AttributeError:  # never re-raised: its .obj is the real module
            missing = True
        if missing:
            if not (self.permits(qual) or self.is_package_of_allowed(qual)):
                raise AttributeError(f"module {modname!r} has no attribute {attr!r}")
            try:
                value = importlib.import_module(qual)
            except ModuleNotFoundError as exc:
                if exc.name != qual:
                    raise  # (a submodule that is there, missing one of its own imports)
                # neither an attribute nor a submodule: missing, as hasattr() and getattr(m, name, default) expect
                raise AttributeError(f"module {modname!r} has no attribute {attr!r}") from None
        if isinstance(value, types.ModuleType):
            return self.module_value(value, qual, kind)
        if package_only:
            raise self.refuse(kind, f"{qual} is not available: only the allowed submodules of "
                                    f"{modname} are")
        view = _READ_ONLY_VIEWS.get(type(value))
        if view is not None:
            self.check_container(dict(value) if isinstance(value, dict) else list(value), qual, kind)
            return view(value)
        value = self.checked(value, qual, kind)
        if attr in library_policy.guarded_methods:
            # (here too: `from struct import pack_into` reaches the module without the guards' getattr)
            value = library_policy.guarded_method(module, attr, value, self.refuse_call)
        return value

    def module_value(self, module, qual, kind="attribute_blocked"):
        """A module reached as an attribute: a proxy if allowed, else refused."""
        real = getattr(module, "__name__", None)
        real = real if isinstance(real, str) else "?"
        if sys.modules.get(qual) is module and (self.permits(qual) or self.is_package_of_allowed(qual)):
            return self.proxy(qual, module)
        # Reached through another module (uuid.os): only a module allowed itself. A mere
        # parent package of an allowed module (os for os.path) is for import statements
        # and for walking down from that package, never a gadget's catch.
        if self.permits(real):
            return self.proxy(real, module)
        raise self.refuse(kind, f"{qual} is the module {real!r}, which is not allowed: use the names the "
                                "module itself offers (get_sandbox_info lists the modules that are on)")

    def checked(self, value, where, kind="attribute_blocked"):
        """vet() for a single value, a search for a plain container."""
        if type(value) in CONTAINER_TYPES:
            return self.check_container(value, where, kind)
        if type(value) in SCALAR_TYPES or not needs_vet(value):
            return value
        return self.vet(value, where, kind)

    def check_container(self, container, where, kind="attribute_blocked"):
        found = _hidden_danger(container, lambda item: self._handed_out_as_is(item, where, kind))
        if found is not None:
            self.vet(found, f"a value inside {where}", kind)  # raises, or...
            raise self.refuse(kind, f"{where} holds {describe_value(found)}, which is not available "
                                    "in the sandbox")  # ...a proxy is no excuse to hand out the container
        return container

    def _handed_out_as_is(self, value, where, kind) -> bool:
        """An object a subset hands out as it is (sys.version_info), found in a container."""
        if subset_original(value) is None:
            return False
        try:
            return self.vet(value, where, kind) is value
        except SandboxAttributeError:
            return False   # (the refusal is said again, with the container: check_container)

    def abc_meta_name(self) -> MetaclassName:
        """The execution's one name for abc.ABCMeta."""
        key = id(abc.ABCMeta)
        if key not in self.replacements:
            self.replacements[key] = MetaclassName(abc.ABCMeta, self.refuse_call)
        return self.replacements[key]

    def vet(self, value, where, kind="attribute_blocked"):
        """Refuse or replace values that must not reach the snippet, whoever hands them out."""
        if value is abc.ABCMeta:
            return self.abc_meta_name()
        if _is_metaclass(value):
            raise self.refuse(kind, f"{where} is a metaclass ({value.__name__}), which is not available: "
                                    "classes are made with class statements")
        if value is _BUILTINS_DICT:
            raise self.refuse(kind, f"{where} is the interpreter's own builtins dictionary (library code that "
                                    "evaluates strings puts it into the dict it is given as __builtins__), which "
                                    "is not available: use the builtins by name, and skip that key")
        if isinstance(value, _INTERNAL_TYPES):
            if isinstance(value, types.ModuleType):
                return self.module_value(value, where, kind)
            if isinstance(value, _CONTEXT_TYPES):
                raise self.refuse(kind, f"{where} is a {type(value).__name__} of contextvars, which is not "
                                        "available: the interpreter's context variables (decimal's current "
                                        "context is one) stay out of reach; keep state in a variable, or pass it "
                                        "as an argument")
            raise self.refuse(kind, f"{where} is a {type(value).__name__}, which is not available: frames, code "
                                    "objects, tracebacks and the import system's loaders stay out of reach (for "
                                    "an error's text: str(e) or traceback.format_exc(); for a module: import it)")
        key = id(value)
        if key in self.replacements:
            return self.replacements[key]
        is_open = value is _REAL_OPEN or key in library_policy.by_path_ids
        if is_open and self.permits("io"):
            return self.open  # io.open is open(): the profile's, by path only
        # made once per execution: the stand-in for a class keeps its identity
        if key in library_policy.replaced_ids:
            made = self.replacements[key] = library_policy.replaced_ids[key](self.refuse_call)
            return made
        if key in STDLIB_STAND_INS:
            made = self.replacements[key] = STDLIB_STAND_INS[key](self)
            return made
        if type(value) is types.GenericAlias:
            return types.GenericAlias(self.vet(value.__origin__, where, kind), value.__args__)
        if key in library_policy.refused_ids:
            raise self.refuse(kind, f"{where}: {library_policy.refused_ids[key]}")
        if key in library_policy.keyword_guards:
            return library_policy.keyword_guard(value, self.refuse_call)
        if key in library_policy.named_file_writers:
            return snippet_files.writing_through_open(value, *library_policy.named_file_writers[key], self.open)
        if key in stand_ins.HIDDEN:   # (the execution's stand-in for it is in self.replacements, when it made one)
            raise self.refuse(kind, f"{where} is the library class behind the sandbox's {value.__name__}, which is "
                                    "not available (its methods would run without the sandbox's checks): use "
                                    f"{value.__name__} as the module hands it out")
        if key in DENIED_OBJECTS or (is_open and not self.permits("io")):
            denied = DENIED_OBJECTS.get(key, OPEN_BY_NAME)
            name, instead = denied.split(": ", 1)
            label = where if where == name else f"{where} ({name})"
            raise self.refuse(kind, f"{label} is not available in the sandbox: {instead}")
        original = subset_original(value)
        if original is not None and not self.permits(original[0]):
            # the subset's object instead, as `import` gives it where the module's profile is off
            module, attr = original
            return getattr(self._subset_import(module, ()), attr)
        return value


def _load(name: str):
    """importlib.import_module for a name the policy allows; when that very module is
    missing, a ModuleNotFoundError (so `except ImportError:` fallbacks still work) that
    says so, rather than one that reads like a typo."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (name == exc.name or name.startswith(exc.name + ".")):
            raise  # a dependency of the module, missing: the library's own message says which
        raise ModuleNotFoundError(f"No module named {exc.name!r}: it is allowed here but not installed on this "
                                  "server, and the sandbox cannot install packages; use the modules that are "
                                  "(get_sandbox_info lists them)", name=exc.name) from None

"""Standard-library objects a snippet gets a stand-in for (stand_ins.py), each made once
per execution from the execution's guards (`ctx`): types.SimpleNamespace and copy.replace
by public names only, io.FileIO by path, functools' cached_property and singledispatch
without evaluated strings, uuid without the host's hardware address, and the functions
that open files by path through the execution's open()."""

from __future__ import annotations

import copy
import functools
import io
import os
import types
import typing
import uuid
from xml.etree import ElementTree

from sandbox.restricted import copy_memo
from sandbox.restricted import private_names
from sandbox.restricted import snippet_files
from sandbox.restricted import stand_ins
from sandbox.restricted import type_hints


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
# made once per execution from the execution's context; library_policy.STAND_INS
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

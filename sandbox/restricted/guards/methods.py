"""What the snippet reaches through a class: super()'s dunders, cls.mro(), __new__,
object's attribute hooks, and the methods a library class defines, each for the objects
they were made for."""

from __future__ import annotations

import collections
import sys

from sandbox.restricted import stand_ins
from sandbox.restricted.base import SandboxRefused
from sandbox.restricted.compiled_names import SUPER_METHODS
from sandbox.restricted.guards.ownership import TYPE_QUALNAME
from sandbox.restricted.guards.writes import settable
from sandbox.restricted.imports import describe_value

# descriptors of library classes written in C that check the type of the object they are
# given (a named tuple's fields): handed out from the class as they are
_SELF_CHECKING_DESCRIPTORS = (type(collections.namedtuple("_Pair", "a").a),)


def super_attr(ctx, sup, name):
    """`super().<dunder>` for the snippet's own objects only, and from one of its own
    classes: super(LibraryClass, obj) would skip past the checks a stand-in class
    (stand_ins.py) makes in its own __init__."""
    if (type(sup) is not super or name not in SUPER_METHODS or not ctx.owns(sup.__self__)
            or sup.__thisclass__ not in ctx.classes):
        raise ctx.refuse("attribute_blocked", f"super().{name!s:.80} is only available "
                                               "inside the snippet's own classes")
    value = getattr(sup, name)
    return ctx.checked_new(value) if name == "__new__" else value


def mro_method(ctx, cls: type):
    """cls.mro() (and type.mro(cls)): the classes of cls's MRO the snippet holds anyway,
    in order: cls itself, its own classes, the bases its class statements named, the
    built-in ones and those an allowed module names (enum.Enum, collections.abc's).
    Never the classes a library keeps behind its public one (pandas.core's mixins) nor
    the real class behind a sandbox's (stand_ins.HIDDEN): their methods run on the
    snippet's objects without what the public class checks or overrides."""
    def visible(klass) -> list:
        if not isinstance(klass, type) or issubclass(klass, type):
            raise TypeError("mro() takes a class")
        named = {base for k in klass.__mro__ if k in ctx.classes for base in k.__bases__}
        return [k for k in klass.__mro__ if k is klass or k in named or ctx.snippet_side(k)
                or (id(k) not in stand_ins.HIDDEN and ctx.named_by_allowed_module(k))]
    if cls is ctx.type or cls is type:
        return visible
    return lambda: visible(cls)


def named_by_allowed_module(ctx, cls: type) -> bool:
    module = vars(cls).get("__module__")
    return (type(module) is str and ctx.permits(module)
            and getattr(sys.modules.get(module), TYPE_QUALNAME(cls), None) is cls)


def checked_new(ctx, new):
    """A `__new__` the snippet reached (its class's, super()'s, object's), for the snippet's
    own classes only: object.__new__(LibraryClass) would make a library object whose
    __init__ never ran its checks."""
    def __new__(cls, *args, **kwargs):
        if not (isinstance(cls, type) and ctx.owns(cls)):
            what = cls.__name__ if isinstance(cls, type) else describe_value(cls)
            raise ctx.refuse("call_blocked", f"__new__ makes instances of the snippet's own classes, not of "
                                              f"{what!s:.80}: call that class itself", SandboxRefused)
        return new(cls, *args, **kwargs)
    return __new__


def library_method(ctx, cls: type, name, value):
    """`value`, read from the class `cls`: a method (or property) a library class
    defines takes an instance of that class as self. Library code trusts what it
    reads from self, and a stand-in self of the snippet's would choose it
    (csr_matrix.sort_indices(fake) hands fake.indptr and fake.indices to compiled
    code that writes where they say), also once it is placed in a class of the
    snippet's. Static and class methods, and the snippet's own, are as they are."""
    owner = next((klass for klass in cls.__mro__ if name in vars(klass)), None)
    if owner is None or vars(owner)[name] is not value or owner in ctx.classes:
        return value
    known = ctx.library_methods.get(id(value))
    if known is not None and known[0] is value:
        return known[1]
    refuse, classes = ctx.refuse_call, ctx.classes

    def for_instances(function):
        def method(*args, **kwargs):
            mro = type(args[0]).__mro__ if args else ()
            if args and owner not in mro:  # (not isinstance: ABCs take registrations)
                raise refuse(f"{owner.__name__}.{name} takes a {owner.__name__} as self, not "
                             f"{type(args[0]).__name__}: call it on one (obj.{name}), library methods do "
                             "not run on other objects")
            # the method self's own class uses, or one a class of the snippet's overrides: a
            # library class between them that overrides it (a subset refusing it) has the say
            used = next((klass for klass in mro if name in vars(klass)), owner)
            if used is not owner and used not in classes:
                raise refuse(f"{owner.__name__}.{name} is not the {name} of a {type(args[0]).__name__} "
                             f"({used.__name__} has its own): call obj.{name}(...) on the object itself")
            return function(*args, **kwargs)
        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):  # (as the library's reads)
            setattr(method, attr, getattr(function, attr, None))
        return method
    if isinstance(value, property):
        checked = property(*(for_instances(f) if f is not None else None
                             for f in (value.fget, value.fset, value.fdel)), value.__doc__)
    elif callable(value):  # a function as Cython or a decorator makes it: a method all the same
        checked = for_instances(value)
    elif type(value) in _SELF_CHECKING_DESCRIPTORS:
        return value
    else:  # (pandas' cache_readonly, functools.cached_property: they call a library function on self)
        raise refuse(f"{owner.__name__}.{name} is read on an instance (obj.{name}), where it gives its value; "
                     "read from the class it is the library's descriptor, which runs on its own objects only")
    ctx.library_methods[id(value)] = (value, checked)
    return checked


def object_method(ctx, name: str):
    """object.__setattr__ / object.__delattr__ (a frozen dataclass's __post_init__ sets its
    fields with them) on the snippet's own objects, with setattr's name rules."""
    real = getattr(object, name)

    def method(obj, attr, *value):
        if not ctx.owns(obj) or settable(ctx, obj, attr, f"object.{name}") is not obj:
            raise ctx.refuse("attribute_blocked", f"object.{name}() works on the snippet's own objects "
                                                   f"only, not on {describe_value(obj)}")
        return real(obj, attr, *value)
    method.__name__ = method.__qualname__ = name
    return method

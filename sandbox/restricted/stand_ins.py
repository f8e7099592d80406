"""A class handed to the snippet in place of a real one whose constructor is a door.

The stand-in is a subclass of the real class: `isinstance(x, StandIn)` and
`issubclass(c, StandIn)` answer as for the real class, a class statement may
derive from it, and constructing it runs `check` on the arguments and on what
was made before the snippet sees anything. Constructing the stand-in itself makes
an instance of the real class, so values look and behave as usual.

The real class is then a hidden base: its methods run without the stand-in's checks
(and without what the stand-in overrides), so no guard hands it out. `mro()` shows the
stand-in in its place (rp_guards), and wherever else the real class would come back (a
call's result, an item, an exception's argument, type() of an instance) the guards give
the stand-in the execution made, or refuse it (rp_modules.vet).
"""

from __future__ import annotations

import weakref

# id(real class) -> the real class (kept alive: its id stays its own), for every class a
# stand-in or a subset's class of the sandbox derives from in place of handing it out
HIDDEN: dict[int, type] = {}
# id(sandbox class) -> (a weak reference to it, the real class it stands in for): a
# subset's classes are made for each execution, and an id is only theirs while they live
_REAL_BEHIND: dict[int, tuple] = {}
# id(real class) -> its sandbox class, whose public names are what it checks or replaces:
# a library object of the real class, or of a library subclass of it, that does not go
# through the sandbox's class has them in their real form
_FACE: dict[int, type] = {}


def hide(real: type, face: type) -> None:
    """`face` (the sandbox's class) is handed out in place of `real` (its base, or the class it wraps)."""
    HIDDEN[id(real)] = real
    key = id(face)
    _REAL_BEHIND[key] = (weakref.ref(face, lambda _, key=key: _REAL_BEHIND.pop(key, None)), real)
    _FACE[id(real)] = face


def overridden_around(cls: type) -> frozenset:
    """The public names the sandbox's class overrides for a hidden class in cls's MRO
    that cls does not reach through the sandbox's class (unittest's _SubTest, a
    FunctionTestCase, a TestCase the stand-in made): refused on its instances."""
    names = frozenset()
    mro = cls.__mro__
    for klass in mro:
        face = _FACE.get(id(klass))
        if face is not None and not any(real_behind(k) is klass for k in mro):
            names |= {name for name in vars(face) if not name.startswith("_")}   # (read now: set after hide())
    return names


def real_behind(value):
    """The real class a sandbox class stands in for, or None."""
    entry = _REAL_BEHIND.get(id(value))
    return entry[1] if entry is not None and entry[0]() is value else None


def stand_in(real: type, *, check_arguments=None, check_made=None) -> type:
    """`check_arguments(args, kwargs)` and `check_made(value)` raise to refuse; the
    arguments are checked again in __init__, which a subclass reaches through super()."""

    class StandInMeta(type(real)):
        # (a subclass of the snippet's answers as the real class's metaclass would, ABCMeta's registry included)
        def __instancecheck__(cls, obj):
            return isinstance(obj, real) if cls is made_class else super().__instancecheck__(obj)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, real) if cls is made_class else super().__subclasscheck__(sub)

    def __new__(cls, *args, **kwargs):
        if check_arguments is not None:
            check_arguments(args, kwargs)
        if cls is made_class:
            made = real(*args, **kwargs)
        elif real.__new__ is object.__new__:
            made = object.__new__(cls)  # (it takes no arguments when __new__ is overridden)
        else:
            made = real.__new__(cls, *args, **kwargs)
        if check_made is not None:
            check_made(made)
        return made

    namespace = {"__new__": __new__, "__module__": real.__module__, "__qualname__": real.__qualname__,
                 "__doc__": real.__doc__}
    if check_arguments is not None and real.__init__ is not object.__init__:
        def __init__(self, *args, **kwargs):
            check_arguments(args, kwargs)
            real.__init__(self, *args, **kwargs)
        namespace["__init__"] = __init__
    made_class = StandInMeta(real.__name__, (real,), namespace)
    hide(real, made_class)
    return made_class

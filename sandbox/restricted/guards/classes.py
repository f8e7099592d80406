"""The snippet's classes: what a class statement (__build_class__, _metaclass_), type(name,
bases, namespace) and a match pattern's class (_match_class_) may make, and the checks
every class of the snippet's passes when it is made and when it is written to.

What library code trusts about its own classes: contextlib's redirect_stdout swaps
getattr(sys, self._stream); dataclasses pastes a Field's `name` into source it exec()s. A
snippet's class may add names and override a library base's methods, but not give it one of
the library's private names, nor put a descriptor that is not a method (a property, a slot)
where a library base has a name: a property answers each read anew, so a value checked once
is not the value used. Checked for the names the snippet gave (what a library's own hooks
set is theirs), when a class is made and when one is written to, over every snippet class
in its MRO."""

from __future__ import annotations

import abc
import builtins
import dis
import enum
import types

from sandbox.restricted import copy_memo
from sandbox.restricted import private_names
from sandbox.restricted.compiled_names import METACLASS_ADVICE, SUPER_METHODS
from sandbox.restricted.guards.ownership import open_base_names_of
from sandbox.restricted.guards.writes import ATTRIBUTE_HOOKS
from sandbox.restricted.imports import DENIED_OBJECTS, describe_value, is_plain_name, needs_vet, state_refusal
from sandbox.restricted.libraries.policy import POLICY as library_policy

_ENUM_PROPERTY = getattr(enum, "property", None)  # (3.11+)
# The built-in classes whose one positional pattern is the subject itself (`case int(n)`).
_MATCHING_ITSELF = (bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)
# What a class body defines as a method (check_override lets these override a library's).
METHOD_KINDS = (types.FunctionType, types.BuiltinFunctionType, classmethod, staticmethod)


def match_class(ctx, cls, names: tuple, positional: int):
    """_match_class_: what `case cls(a=..., b=...)` matches through. Its isinstance() is
    cls's, then reads each attribute the pattern will read (the keywords, and
    __match_args__ for the positional ones) through the guards: a refusal stops the
    match, and a value the guards would hand out otherwise (a wrapper, a stand-in, a
    fresh object on each read) is refused too, since the interpreter then reads the
    attribute itself, unguarded. Made once per class and names."""
    if not isinstance(cls, type):
        raise TypeError("called match pattern must be a class")
    key = (cls, names, positional)
    if key not in ctx.match_classes:
        namespace, bases = {}, ()
        if hasattr(cls, "__match_args__"):
            namespace["__match_args__"] = match_args = cls.__match_args__
            if type(match_args) is not tuple:
                raise ctx.refuse("attribute_blocked", f"{cls.__name__}.__match_args__ must be a tuple of "
                                                       "attribute names (__match_args__ = ('x', 'y'))")
            unread = [name for name in match_args[:positional] if not is_plain_name(name)]
            if unread:
                raise ctx.refuse("attribute_blocked", f"{cls.__name__}.__match_args__ names {unread[0]!r}, which "
                                                       "a pattern may not read: match fewer positions, or public "
                                                       f"attributes by keyword (case {cls.__name__}(name=...))")
        else:  # int(x), str(s)...: the subject itself, through a base that matches itself too
            match_args = ()
            bases = tuple(base for base in cls.__mro__ if base in _MATCHING_ITSELF)[:1]
        read = (*names, *match_args[:positional])
        
        class MatchedThroughGuards(type):
            def __instancecheck__(made, subject):
                if not isinstance(subject, cls):
                    return False
                for name in read:
                    try:
                        raw = getattr(subject, name)
                    except AttributeError:
                        return False  # (the interpreter's own read fails the pattern too)
                    if ctx.getattr(subject, name) is not raw:
                        raise ctx.refuse("attribute_blocked", f"case {cls.__name__}(...): its attribute {name!r} is "
                                                              "not read as it is in a pattern; test it in a guard "
                                                              f"(case {cls.__name__}() if ...)")
                return True

        ctx.match_classes[key] = MatchedThroughGuards(cls.__name__, bases, namespace)
    return ctx.match_classes[key]


def metaclass(ctx, value):
    """_metaclass_: `class C(metaclass=...)` takes abc.ABCMeta (as `class C(ABC)` has it)
    or type, never a metaclass of the snippet's or a library's other ones."""
    if value is ctx.abc_meta_name():
        return abc.ABCMeta
    if value is ctx.type:
        return type
    raise ctx.refuse("attribute_blocked", METACLASS_ADVICE)


def build_class(ctx, func, name, /, *bases, **kwargs):
    """__build_class__: remember the classes the snippet defines (they are writable)."""
    ctx.building.append(func)
    try:
        cls = builtins.__build_class__(func, name, *bases, **kwargs)
    finally:
        ctx.building.pop()
    if isinstance(cls, type):
        ctx.check_class(cls, class_body_names(func))
    return cls


def check_class(ctx, cls: type, names) -> None:
    """A class the snippet made, with the names its body (or namespace) defined."""
    final = next((base for base in cls.__mro__
                  if base in private_names.FINAL_CLASSES or base in library_policy.final_classes), None)
    if final is not None:
        why = private_names.FINAL_CLASSES.get(final) or library_policy.final_classes[final]
        raise ctx.refuse("attribute_blocked", f"class {cls.__name__}: {why}")
    names = set(names) | set(_slot_names(cls))
    hooks = ATTRIBUTE_HOOKS & set().union(names, *(ctx.defined.get(k, ()) for k in cls.__mro__[1:]))
    if hooks and not all(map(ctx.snippet_side, cls.__mro__[1:])):
        raise ctx.refuse("attribute_blocked", f"class {cls.__name__}: {', '.join(sorted(hooks))} is for classes "
                                               "of the snippet's own all the way down (a library base sets "
                                               "its private attributes through it); validate in a method or "
                                               "a property instead")
    own_deepcopy = vars(cls).get("__deepcopy__")
    if own_deepcopy is not None:  # it gets a handle, never copy's memo (copy_memo.py)
        type.__setattr__(cls, "__deepcopy__", copy_memo.guarded_method(own_deepcopy, ctx.refuse_call))
    for klass in cls.__mro__:
        for name in (names if klass is cls else ctx.defined.get(klass, ())):
            if name in vars(klass):
                ctx.check_override(cls, name, vars(klass)[name])
    kept = sorted(names & (open_base_names_of(ctx, cls) or frozenset()))
    if kept:   # (a test case's _testMethodName in the class body: unittest's own name)
        raise ctx.refuse("attribute_blocked", state_refusal(cls, kept[0]))
    ctx.defined[cls] = names
    ctx.classes.add(cls)
    ctx.check_state_shadows(cls)


def check_state_shadows(ctx, cls: type) -> None:
    """A value (not a method) in a snippet class under a name its library bases keep
    state under would answer for that state where an instance has none of its own
    (a property always: BSpline's methods would read the snippet's c)."""
    state = ctx.library_state(cls)
    if not state:
        return
    for klass in cls.__mro__:
        if klass in ctx.classes:
            for name, value in vars(klass).items():
                if name in state and not isinstance(value, METHOD_KINDS):
                    raise ctx.refuse("attribute_blocked", f"class {cls.__name__}: {state_refusal(cls, name)}")


def check_class_write(ctx, klass: type, name: str, value) -> None:
    """`klass.name = value`: checked for klass and every snippet class derived from it."""
    affected = [klass, *(c for c in ctx.classes if c is not klass and klass in c.__mro__)]
    for cls in affected:
        if name in (ctx.open_base_names(cls) or ()):   # (a test case's _classSetupFailed: unittest's)
            raise ctx.refuse("attribute_blocked", state_refusal(cls, name))
    if not isinstance(value, METHOD_KINDS):
        for cls in affected:
            if name in ctx.library_state(cls):
                raise ctx.refuse("attribute_blocked", state_refusal(cls, name))
    if not _may_override(klass, name, value) and not any(
            library_policy.c_attribute_owner(cls.__mro__[1:], name) for cls in affected):
        return  # a plain value or a method (the common case: Counter.count += 1)
    for cls in affected:
        ctx.check_override(cls, name, value)
    ctx.defined.setdefault(klass, set()).add(name)  # (for the classes derived from it later)


def check_override(ctx, cls: type, name: str, value) -> None:
    library_bases = [base for base in cls.__mro__[1:] if not ctx.snippet_side(base)]
    owner = library_policy.c_attribute_owner(library_bases, name)
    if owner is not None:
        raise ctx.refuse("attribute_blocked", f"class {cls.__name__}: {name!r:.80} is an attribute of "
                          f"{owner.__module__}.{owner.__qualname__}, which its compiled code and the "
                          "sandbox's checks read as it is: give your method or value another name")
    kind = _may_override(cls, name, value)
    if not kind:
        return
    private, descriptor = kind
    if private and descriptor:
        owner = library_bases[0] if library_bases else None
    else:
        owner = next((base for base in library_bases if name in vars(base)), None)
    if owner is not None and not descriptor and any(name in library_policy.override_hooks.get(base, ())
                                                    for base in library_bases):
        function = value.__func__ if type(value) in (staticmethod, classmethod) else value
        if type(function) is types.FunctionType and ctx.owns(function):
            return  # a hook the library documents for subclasses to define (rv_continuous._pdf)
    if owner is not None:
        what = "a private name" if private else "a property, slot or descriptor"
        raise ctx.refuse("attribute_blocked", f"class {cls.__name__}: {name!r:.80} cannot be {what} here: "
                          f"{owner.__module__}.{owner.__qualname__} relies on its own attributes; give "
                          "yours another name (methods may be overridden)")


def check_namespace(ctx, namespace, where: str) -> dict:
    """The namespace as a plain dict, checked: the copy is what the class is made from
    (a dict subclass's __iter__ could hide from the check what dict() copies)."""
    if not isinstance(namespace, dict):
        raise TypeError(f"{where}: the namespace must be a dict")
    namespace = dict(namespace)
    for key, value in namespace.items():
        if type(key) is not str or (key.startswith("_") and key not in SUPER_METHODS
                                    and key != "__doc__"):
            raise ctx.refuse("attribute_blocked", f"{where}: a class attribute named {key!r:.80} "
                                                   "is not allowed: a namespace takes ordinary names, __doc__ "
                                                   "and the special methods a class body may define; write a "
                                                   "class statement for anything else")
        # as in a class body (snippet_policy's alias rule): the interpreter calls a special
        # method with values no guard has seen (an __exit__ gets the traceback), so it is
        # None or a function the snippet wrote, as is or as a static or class method
        function = value.__func__ if type(value) in (staticmethod, classmethod) else value
        if key in SUPER_METHODS and function is not None and not (
                type(function) is types.FunctionType and ctx.owns(function)):
            raise ctx.refuse("attribute_blocked", f"{where}: the special method {key} is given as a "
                                                   "function of the snippet's (def or lambda) or None, "
                                                   f"not {describe_value(function)}")
    return namespace


def make_type(ctx):
    """The `type` builtin: type(x) as usual (never a metaclass: type(int) is refused),
    isinstance(x, type) as usual, and type(name, bases, namespace) under the
    class-body policy."""
    
    class TypeGuard(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, type)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, type)

        def __call__(cls, *args, **kwargs):
            if len(args) == 1 and not kwargs:
                result = type(args[0])
                if issubclass(result, type):
                    raise ctx.refuse("attribute_blocked", f"type() of a class is its metaclass "
                                                          f"({result.__name__}), which is not available")
                if id(result) in DENIED_OBJECTS or id(result) in library_policy.refused_ids:
                    raise ctx.refuse("attribute_blocked", f"type() of this value is "
                                                          f"{result.__name__}, which is not available; "
                                                          "use callable(x) or isinstance(x, ...)")
                if needs_vet(result):
                    return ctx.vet(result, "type() of this value")  # a class's stand-in
                return result
            if len(args) != 3:
                raise TypeError("type() takes 1 or 3 arguments")
            name, bases, namespace = args
            namespace = ctx.check_namespace(namespace, "type()")
            made = type(name, bases, namespace, **kwargs)
            ctx.check_class(made, namespace)
            return made

    return TypeGuard("type", (), {})


class MatchedValue:
    """What a value pattern (`case Color.RED:`) reads back: its dotted name's value, read
    through the guards before the match statement (snippet_policy.visit_MatchValue)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def class_body_names(body) -> set:
    """The names a class statement's body binds (its code's STORE_NAMEs), as the class
    namespace gets them: private names already mangled."""
    return {op.argval for op in dis.get_instructions(body.__code__) if op.opname == "STORE_NAME"}


def _slot_names(cls: type) -> list:
    """The attributes the class's `__slots__` made (read from the class: `__slots__` itself
    may have been an iterator, spent by then)."""
    return [name for name, value in vars(cls).items() if type(value) is types.MemberDescriptorType]



def _may_override(cls: type, name: str, value):
    """(private, descriptor) when `name = value` in a class could redefine what a library
    base trusts; None for a public plain value or method."""
    if type(value) is _ENUM_PROPERTY and isinstance(getattr(value, "member", None), cls):
        return None  # an enum member whose name a mixin type has: enum's own redirect to it
    private = name.startswith("_") and not name.startswith("__") and not name.endswith("_")
    # a descriptor that is not a method: a property, a slot, anything that answers each read anew
    descriptor = hasattr(type(value), "__get__") and not isinstance(value, METHOD_KINDS)
    return (private, descriptor) if private or descriptor else None

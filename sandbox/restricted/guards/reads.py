"""The attribute read guard (_getattr_ and the getattr builtin) as one table of named hooks.

Every attribute read the snippet makes walks READ_HOOKS in order (the hooks for its name):
each hook answers the read (a value, or a refusal it raises) or passes it on with NEXT; a read no hook takes is
the ordinary read (RestrictedPython's safer_getattr), whose value then walks VALUE_HOOKS,
each of which may hand out a checked form of it. A new special case is a new named entry
in one of the two tables, where its place in the order is visible."""

from __future__ import annotations

import collections
import types

from RestrictedPython.Guards import raise_, safer_getattr
from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from sandbox.restricted import private_names
from sandbox.restricted import safe_format
from sandbox.restricted import snippet_files
from sandbox.restricted import stand_ins
from sandbox.restricted.base import SandboxAttributeError
from sandbox.restricted.compiled_names import OBJECT_METHODS
from sandbox.restricted.guards import private_reads
from sandbox.restricted.imports import CONTAINER_TYPES, FORMAT_NAMES, ModuleProxy, describe_value, needs_vet, \
    policy_only
from sandbox.restricted.libraries import pandas_expressions
from sandbox.restricted.libraries.policy import POLICY as library_policy
from sandbox.restricted.subsets import registry
from sandbox.restricted.subsets import snippet_traceback

NEXT = object()   # a hook's answer when the read is not its case


def guarded_getattr(ctx, obj, name, default=raise_):
    """_getattr_ and the getattr builtin: the first hook that takes the read answers it."""
    if ctx.policy_pending:
        ctx.complete_policy()
    # (a name of exact type str skips the hooks that answer other names only; any other
    # name, a str subclass among them, walks the whole table)
    for hook in _HOOKS_BY_NAME.get(name, _HOOKS_FOR_ANY_NAME) if type(name) is str else _ALL_HOOKS:
        value = hook(ctx, obj, name, default)
        if value is not NEXT:
            return value
    return ordinary_read(ctx, obj, name, default)


def guarded_hasattr(ctx, obj, name):
    try:
        ctx.getattr(obj, name)
    except AttributeError:
        return False
    return True


# -- the read hooks, in the order READ_HOOKS walks them
def mro_of_a_class(ctx, obj, name, default):
    """cls.mro(): the classes of the MRO the snippet holds anyway (methods.mro_method)."""
    if name == "mro" and isinstance(obj, type):
        return ctx.mro_method(obj)
    return NEXT


def super_outside_own_classes(ctx, obj, name, default):
    """super() reaches past a library class's own checks: only inside the snippet's classes."""
    if type(obj) is super and not ctx.snippet_class(obj.__thisclass__):
        raise ctx.refuse("attribute_blocked", "super() is available inside the snippet's own classes "
                                              "(super().method() in a method, or super(MyClass, self)), not "
                                              f"from {getattr(obj.__thisclass__, '__name__', '?')!s:.80}: call "
                                              "the method on the object itself (obj.method())")
    return NEXT


def object_attribute_hooks(ctx, obj, name, default):
    """object.__setattr__ / __delattr__, on the snippet's own objects (methods.object_method)."""
    if obj is object and type(name) is str and name in OBJECT_METHODS:
        return ctx.object_method(name)
    return NEXT


def object_new(ctx, obj, name, default):
    """object.__new__, for the snippet's own classes (methods.checked_new)."""
    if obj is object and name == "__new__":
        return ctx.checked_new(object.__new__)
    return NEXT


def str_format(ctx, obj, name, default):
    """str.format and format_map look their fields up through the guards (safe_format.py)."""
    if type(name) is str and name in FORMAT_NAMES and (
            isinstance(obj, str) or (isinstance(obj, type) and issubclass(obj, str))):
        return safe_format.format_method(ctx.Formatter, obj, name)
    return NEXT


def subset_attribute(ctx, obj, name, default):
    """A public name of a module subset (subsets/registry.py), vetted as any value: sys's
    were read from the real sys, which library code could change."""
    if type(obj) is not registry.ModuleSubset or type(name) is not str or name.startswith("_"):
        return NEXT
    try:
        value = getattr(obj, name)
    except AttributeError as exc:  # a part of sys/io the subset leaves out: a refusal
        if default is not raise_:
            return default  # (what hasattr() answers, and a module proxy's getattr does)
        raise ctx.refuse("attribute_blocked", str(exc)) from None
    if type(value) in CONTAINER_TYPES:
        return ctx.check_container(value, f"{describe_value(obj)}.{name}")
    return ctx.vet(value, f"{describe_value(obj)}.{name}") if needs_vet(value) else value


def traceback_summary_links(ctx, obj, name, default):
    """A traceback summary's tb_next and tb_lineno are data (the real traceback's stay refused)."""
    if type(obj) is snippet_traceback.TracebackSummary and name in ("tb_next", "tb_lineno"):
        return getattr(obj, name)
    return NEXT


def guarded_formatter_methods(ctx, obj, name, default):
    """The snippet's string.Formatter: its lookups are guarded, so format, vformat,
    get_field... are safe."""
    if isinstance(obj, safe_format.GuardedFormatter) and type(name) is str and not name.startswith("_"):
        return getattr(obj, name)
    return NEXT


def private_name(ctx, obj, name, default):
    """A name starting with "_" that private_reads allows on this object; the others go on
    to the rules below, which refuse them."""
    if type(name) is str and name.startswith("_") and private_reads.may_read(ctx, obj, name):
        return private_reads.read(ctx, obj, name, default)
    return NEXT


def overridden_around_stand_in(ctx, obj, name, default):
    """A library method a stand-in class overrides, read past the stand-in (stand_ins.py)."""
    around = ctx.overridden_around.get(type(obj))
    if around is None:
        around = ctx.overridden_around[type(obj)] = stand_ins.overridden_around(type(obj))
    if around and name in around:
        raise ctx.refuse("attribute_blocked", f"{describe_value(obj)}.{name!s:.80} is the library's own, without "
                                              "the sandbox's checks: call it on an object of the class the "
                                              f"module hands out (for a test case: self.{name}(...) in a test "
                                              "method of your own unittest.TestCase class)")
    return NEXT


def refused_by_library_policy(ctx, obj, name, default):
    """An attribute a library table refuses on this object (library_policy.refused_attributes)."""
    if type(name) is str and name in library_policy.refused_attributes:
        why = library_policy.attribute_refusal(obj, name)
        if why is not None:
            raise ctx.refuse("attribute_blocked", why)
    return NEXT


def library_property_setter(ctx, obj, name, default):
    """A library property's setter, called on a library object, is the attribute write the
    write guard refuses (ForeignWrite), by another way."""
    if isinstance(obj, property) and name in ("fset", "fdel") and not ctx.owns(getattr(obj, name)):
        raise ctx.refuse("attribute_blocked", f"a library property's {name} is not available: set the "
                                              "attribute on the object itself (obj.name = value), where the "
                                              "sandbox allows that write")
    return NEXT


# The read hooks in order, each with the attribute names it answers (None: any name).
READ_HOOKS = (
    (mro_of_a_class, {"mro"}),
    (super_outside_own_classes, None),
    (object_attribute_hooks, OBJECT_METHODS),
    (object_new, {"__new__"}),
    (str_format, FORMAT_NAMES),
    (subset_attribute, None),
    (traceback_summary_links, {"tb_next", "tb_lineno"}),
    (guarded_formatter_methods, None),
    (private_name, None),
    (overridden_around_stand_in, None),
    (refused_by_library_policy, None),
    (library_property_setter, {"fset", "fdel"}),
)
_ALL_HOOKS = tuple(hook for hook, _ in READ_HOOKS)
_HOOKS_FOR_ANY_NAME = tuple(hook for hook, names in READ_HOOKS if names is None)
_HOOKS_BY_NAME = {name: tuple(hook for hook, names in READ_HOOKS if names is None or name in names)
                  for _, names in READ_HOOKS if names is not None for name in names}


# -- the ordinary read, and what its value becomes
def ordinary_read(ctx, obj, name, default):
    """safer_getattr, then the value vetted (a plain container searched) and passed
    through VALUE_HOOKS; a refusal says what to do instead."""
    refusal = format_around_str_check(obj) if type(name) is str and name in FORMAT_NAMES else None
    if refusal is None:
        try:
            value = safer_getattr(obj, name, default)
        except (AttributeError, NotImplementedError, TypeError) as exc:
            if _policy_refusal(obj, name) is None:
                raise
            refusal = (type(exc), str(exc))
        else:
            if type(name) is str and name in library_policy.copied_attributes:
                value = library_policy.copied_attribute(obj, name, value, ctx.refuse_call)
            if type(value) in CONTAINER_TYPES:
                if type(obj) is ModuleProxy or ctx.owns(obj):
                    return value  # a module's: checked by module_attribute; the snippet's own: clean
                return ctx.check_container(value, f"{describe_value(obj)}.{name}")
            if needs_vet(value):
                value = ctx.vet(value, f"{describe_value(obj)}.{name}")
            for hook in VALUE_HOOKS:
                value = hook(ctx, obj, name, value)
            return value
    exc_type, message = refusal
    if issubclass(exc_type, AttributeError):
        exc_type = SandboxAttributeError
    if type(name) is str and (name.startswith("_") or name in INSPECT_ATTRIBUTES):
        message = f"{message.rstrip('.')}: {private_names.instead(name)}"
    raise ctx.refuse("attribute_blocked", f"{describe_value(obj)}.{name!s:.80}: {message}", exc_type)


def format_around_str_check(obj):
    """str.format reached around safer_getattr's str check (super(), UserString)."""
    if (type(obj) is super or isinstance(obj, collections.UserString)
            or (isinstance(obj, type) and issubclass(obj, collections.UserString))):
        return NotImplementedError, "Using the format*() methods of `str` is not safe"
    return None


def _policy_refusal(obj, name):
    try:
        safer_getattr(obj, name, None, getattr=policy_only)
    except Exception as exc:  # noqa: BLE001 - any refusal by the policy
        return str(exc)
    return None


def method_of_a_library_class(ctx, obj, name, value):
    """A method, property or descriptor read from a library class runs on its own
    instances only (methods.library_method)."""
    if isinstance(obj, type) and (isinstance(value, (types.FunctionType, property)) or (
            hasattr(type(value), "__get__") and type(value).__module__ != "builtins")):
        return ctx.library_method(obj, name, value)
    return value


def library_guarded_method(ctx, obj, name, value):
    """A method a library table checks the arguments of (library_policy.guarded_methods)."""
    if type(name) is str and name in library_policy.guarded_methods:
        return library_policy.guarded_method(obj, name, value, ctx.refuse_call)
    return value


def pandas_expression_method(ctx, obj, name, value):
    """DataFrame.eval, query...: their expressions evaluated by the sandbox (pandas_expressions)."""
    if type(name) is str and name in pandas_expressions.METHODS:
        return pandas_expressions.evaluating_method(obj, name, value, ctx.refuse_call)
    return value


def file_opening_method(ctx, obj, name, value):
    """A method that opens a path (Path.read_text...): through the execution's open()."""
    if type(name) is str and name in snippet_files.OPENING_METHODS:
        return snippet_files.opening_method(obj, name, value, ctx.open)
    return value


def exception_with_traceback(ctx, obj, name, value):
    """e.with_traceback(tb) takes the snippet's traceback summaries (snippet_traceback)."""
    if name == "with_traceback" and isinstance(obj, BaseException):
        return snippet_traceback.with_traceback(value)
    return value


VALUE_HOOKS = (
    method_of_a_library_class,
    library_guarded_method,
    pandas_expression_method,
    file_opening_method,
    exception_with_traceback,
)

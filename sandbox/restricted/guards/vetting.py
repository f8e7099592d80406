"""The guards for values that arrive without an attribute read: items, call results,
iteration, the parameters of a snippet function library code calls back, what `with`
and `match` bind. Each is vetted (ModulePolicy.vet: refused, or replaced by what the
snippet gets instead); a plain container from library code is searched.

The vet family, defined here once:
- vet(value, where) (module_policy.ModulePolicy.vet): one value that needs it (needs_vet)
  is refused, or replaced by what the snippet gets instead (a proxy, a stand-in); `where`
  names it in the refusal. check_container(c, where) searches a plain container for such a
  value; checked(value, where) is either, by the value's type.
- vet_params(*values), vet_kwargs(kwargs), vet_one(value): a snippet function's parameters
  on entry (the compiler's _vet_params_, _vet_kwargs_, _vet_one_: tree_rewrites.py).
- vet_entered(value): what `with X as name` binds; vet_matched(*values): what a match
  pattern captured, which is refused rather than replaced (the interpreter bound it)."""

from __future__ import annotations

import sys
import types

from RestrictedPython.Eval import default_guarded_getitem
from RestrictedPython.Guards import guarded_unpack_sequence

from sandbox.restricted.base import SNIPPET_MODULE
from sandbox.restricted.guards.ownership import TYPE_QUALNAME
from sandbox.restricted.imports import CONTAINER_TYPES, PLAIN_ITERABLES, PLAIN_TYPES, REAL_BUILTINS, SCALAR_TYPES, \
    callable_name, describe_value, needs_vet

_GUARDS_PACKAGE = __name__.rpartition(".")[0] + "."


def made_in_the_guards(cls: type) -> bool:
    """A class type(), namedtuple(), NamedTuple() or TypedDict() made for the snippet: they
    name the caller's module as the class's, here one of the guards' (never the guards' own
    classes, which their module holds by name)."""
    module = vars(cls).get("__module__")
    return (type(module) is str and module.startswith(_GUARDS_PACKAGE)
            and getattr(sys.modules.get(module), TYPE_QUALNAME(cls), None) is not cls)


def getitem(ctx, obj, index):
    value = default_guarded_getitem(obj, index)
    if (type(value) not in PLAIN_TYPES or value is REAL_BUILTINS) and needs_vet(value):
        value = ctx.vet(value, f"{describe_value(obj)}[...]")
    return value


def call(ctx, func, /, *args, **kwargs):
    """_call_: the result of every call the snippet makes is vetted (and searched, when
    it is a plain container that library code made)."""
    if type(func) is types.MethodType:
        # (the function with its self: on 3.12 a bound method's call takes one more level of
        # the interpreter's C recursion limit, which a deep method recursion would reach first)
        value = func.__func__(func.__self__, *args, **kwargs)
    else:
        value = func(*args, **kwargs)
    kind = type(value)
    if kind in SCALAR_TYPES:
        return value
    if isinstance(value, type) and made_in_the_guards(value):
        # (the snippet's classes are __sandbox__'s)
        type.__setattr__(value, "__module__", SNIPPET_MODULE)
    if kind in CONTAINER_TYPES:
        if type(func) is types.FunctionType and func.__globals__ is ctx.globals:
            return value  # the snippet's own function: built from vetted values
        return ctx.check_container(value, f"the result of {callable_name(func)}()")
    if not needs_vet(value):
        return value
    return ctx.vet(value, f"the result of {callable_name(func)}()")


def apply(ctx, func, /, *args, **kwargs):
    """_apply_ (calls with *args or **kwargs): the unpacked arguments are vetted too,
    since library code may call what they hold."""
    return ctx.call(func, *ctx.vet_params(*args), **ctx.vet_kwargs(kwargs))


def vet_params(ctx, *values):
    """_vet_params_: the parameters of a snippet function on entry (library code
    calls snippet functions back with values no guard has seen)."""
    for value in values:
        if (type(value) not in PLAIN_TYPES or value is REAL_BUILTINS) and needs_vet(value):
            return tuple(_vet_argument(ctx, v) if (type(v) not in PLAIN_TYPES or v is REAL_BUILTINS)
                         and needs_vet(v) else v for v in values)
    return values


def _vet_argument(ctx, value):
    # __exit__(self, exc_type, exc, tb) and ExitStack callbacks get the traceback
    # whenever the body raised: None there, so that the snippet's own exception goes on
    # (traceback.format_exc() gives its text)
    return None if type(value) is types.TracebackType else ctx.vet(value, "an argument")


def vet_kwargs(ctx, kwargs):
    for value in kwargs.values():
        if (type(value) not in PLAIN_TYPES or value is REAL_BUILTINS) and needs_vet(value):
            return dict(zip(kwargs, ctx.vet_params(*kwargs.values())))
    return kwargs


def vet_one(ctx, value):
    return ctx.vet_params(value)[0]


def vet_matched(ctx, *values) -> bool:
    """_vet_matched_: the names a match pattern captured, before its guard and body
    run. A value the guards would hand out otherwise is refused (the interpreter
    already bound it); True otherwise, so the case goes on as written."""
    for value in values:
        if (type(value) not in PLAIN_TYPES or value is REAL_BUILTINS) and needs_vet(value) \
                and ctx.vet(value, "a value a match pattern captured") is not value:
            raise ctx.refuse("attribute_blocked", f"a match pattern captured {describe_value(value)}, which "
                                                   "the sandbox hands out only through its guards: read it "
                                                   "with an index or attribute instead")
    return True


def vet_entered(ctx, value):
    """_vet_entered_: what `with X as name` binds (X.__enter__'s result)."""
    if (type(value) not in PLAIN_TYPES or value is REAL_BUILTINS) and needs_vet(value):
        return ctx.vet(value, "the value of `with ... as`")
    return value


def getiter(ctx, ob):
    """_getiter_: iteration, comprehensions and unpacking; every item is vetted."""
    if type(ob) in PLAIN_ITERABLES:
        return ob
    return _vetted_items(ctx, ob)


async def aiter(ctx, ob, unpack_spec=None):
    """_getaiter_: `async for` and async comprehensions; every item is vetted. With
    `unpack_spec` (an async comprehension's tuple target), each item is unpacked
    by the guarded unpacking, which vets every element."""
    async for item in ob:
        if (type(item) not in PLAIN_TYPES or item is REAL_BUILTINS) and needs_vet(item):
            item = ctx.vet(item, "an item of async iteration")
        if unpack_spec is not None:
            item = guarded_unpack_sequence(item, unpack_spec, ctx.getiter)
        yield item


def _vetted_items(ctx, ob):
    for item in ob:
        if (type(item) not in PLAIN_TYPES or item is REAL_BUILTINS) and needs_vet(item):
            item = ctx.vet(item, "an item of iteration")
        yield item

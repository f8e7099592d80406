"""The builtins and globals a snippet runs with: RestrictedPython's safe builtins, what
ordinary code needs, the guarded getattr, vars, dir, help..., and the guards under the
names the compiled code calls (_getattr_, _write_, _vet_params_...)."""

from __future__ import annotations

import builtins
import types

from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence, safe_builtins
from RestrictedPython.Utilities import utility_builtins

from sandbox.restricted import snippet_globals
from sandbox.restricted.base import SNIPPET_MODULE, SandboxRefused
from sandbox.restricted.compiled_names import FALLBACK_GETATTR
from sandbox.restricted.guards.classes import MatchedValue
from sandbox.restricted.guards.private_reads import kind_of
from sandbox.restricted.imports import ModuleProxy, Printer, describe_value, inplacevar
from sandbox.restricted.own_attributes import own_attributes
from sandbox.restricted.subsets import registry


def guarded_vars(ctx, *args):
    """vars(obj): the attributes of the snippet's own objects, as obj.__dict__ gives
    them (own_attributes.py: writes reach the object through the setattr guard); the
    library's are not its to list. Without an argument, like locals(), it is not
    available: the namespace is the guards' too (globals() gives the snippet's names)."""
    if len(args) != 1:
        raise ctx.refuse("call_blocked", "vars() needs an object of the snippet's own (vars(obj)); "
                                          "globals() gives the snippet's own names", SandboxRefused)
    (obj,) = args
    if ctx.only_snippet_classes(obj) and hasattr(obj, "__dict__"):
        if type(vars(obj)) is dict:
            return own_attributes(obj, ctx.setattr, ctx.delattr)
        return {k: v for k, v in vars(obj).items() if not (k.startswith("__") and k.endswith("__"))}
    if type(obj) is types.SimpleNamespace:
        # its public attributes, as getattr() reads them (a copy: writes go to setattr)
        public = {k: v for k, v in vars(obj).items() if type(k) is str and not k.startswith("_")}
        return ctx.check_container(public, "vars() of a SimpleNamespace")
    raise ctx.refuse("call_blocked", f"vars() of {describe_value(obj)} is not available: it works on the "
                                      "snippet's own objects; use dir() and getattr() for others",
                      SandboxRefused)


def guarded_dir(ctx, *args):
    """dir(obj): the names that do not start with "_" (and the snippet's own
    objects' private ones). Without an argument: not available, as vars()."""
    if len(args) != 1:
        raise ctx.refuse("call_blocked", "dir() needs an object (dir(obj)); the snippet's own names: "
                                          "sorted(globals())", SandboxRefused)
    (obj,) = args
    own = ctx.only_snippet_classes(obj)
    if type(obj) is ModuleProxy:
        names = dir(object.__getattribute__(obj, "_ModuleProxy__module"))
    elif type(obj) is registry.ModuleSubset:
        names = registry.names(obj)
    else:
        names = dir(obj)
    return sorted(n for n in names if not n.startswith("_") or (own and not n.startswith("__")))


def guarded_help(ctx, *args):
    """help(obj): its name and docstring, printed (no pager, no source), both read
    through the guard as obj.__name__ and obj.__doc__ would be."""
    if len(args) != 1 or isinstance(args[0], str):
        print("help(obj) prints obj's docstring (help(json.dumps), help(df.pivot_table)); dir(obj) lists "
              "its names; a topic or module is not looked up by name here")
        return
    (obj,) = args
    named = kind_of(obj) in ("class", "function", "method", "module")  # (what has a __name__ here)
    name = ctx.getattr(obj, "__name__", None) if named else None
    title = name if isinstance(name, str) else f"an object of type {type(obj).__name__}"
    doc = ctx.getattr(obj, "__doc__", None)
    print(f"Help on {title}:\n\n{doc.strip() if isinstance(doc, str) and doc.strip() else '(no docstring)'}\n")


_EXCEPTIONS = {
    name: value for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException) and not name.startswith("_")
}

_PLAIN_BUILTINS = {
    name: getattr(builtins, name) for name in (
        "list", "tuple", "dict", "set", "frozenset", "bytes", "bytearray", "enumerate", "zip",
        "map", "filter", "reversed", "sorted", "min", "max", "sum", "any", "all", "iter",
        "next", "object", "property", "staticmethod", "classmethod", "super", "type", "format",
        "bin", "ascii", "NotImplemented", "Ellipsis")
}


def _base_builtins() -> dict:
    """safe_builtins + the harmless utility_builtins + what ordinary code needs.

    limited_builtins is left out: its range() refuses more than 1000 items and its list()
    refuses strings, which breaks ordinary code; size limits are the rlimits' job.
    """
    names = dict(safe_builtins)
    names.pop("_getattr_", None)  # safer_getattr with default None: ours raises instead
    names.update({k: v for k, v in utility_builtins.items()
                  if not isinstance(v, types.ModuleType) and k != "string"})
    names.update(_EXCEPTIONS)
    names.update(_PLAIN_BUILTINS)
    return names


_BASE_BUILTINS = _base_builtins()



def restricted_globals(ctx, stdout) -> dict:
    names = dict(_BASE_BUILTINS)
    names.update(
        getattr=ctx.getattr, hasattr=ctx.hasattr, setattr=ctx.setattr, delattr=ctx.delattr, type=ctx.type,
        __import__=ctx.import_, __build_class__=ctx.build_class, vars=ctx.vars, dir=ctx.dir,
        input=_no_input, open=ctx.open, exit=_exit, quit=_exit, help=ctx.help,
    )
    for name, advice in WITHHELD_BUILTINS.items():
        names[name] = _withheld(ctx, name, advice)
    names["globals"] = snippet_globals.globals_for(ctx)
    glb = {
        "__builtins__": names,
        "__name__": SNIPPET_MODULE,
        "__metaclass__": type,
        "_getattr_": ctx.getattr,
        "_getitem_": ctx.getitem,
        "_getiter_": ctx.getiter,
        "_getaiter_": ctx.aiter,
        "_call_": ctx.call,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": ctx.write_guard,
        "_write_private_": ctx.write_private,
        "_write_special_": ctx.write_special,
        "_import_star_": ctx.import_star,
        "_inplacevar_": inplacevar,
        "_apply_": ctx.apply,
        "_vet_params_": ctx.vet_params,
        "_vet_kwargs_": ctx.vet_kwargs,
        "_vet_one_": ctx.vet_one,
        "_vet_entered_": ctx.vet_entered,
        "_vet_matched_": ctx.vet_matched,
        "_print_": lambda getattr_: Printer(stdout, getattr_),
        "_super_attr_": ctx.super_attr,
        "_class_of_": ctx.type,  # x.__class__ (snippet_policy): what type(x) gives
        FALLBACK_GETATTR: public_getattr,
        "_metaclass_": ctx.metaclass,
        "_match_class_": ctx.match_class,
        "_match_value_": MatchedValue,
    }
    ctx.globals = glb
    return glb



def public_getattr(method):
    """A snippet class's __getattr__, asked only for public names: trusted code looks up
    protocols by dunder name (numpy's __array_interface__, copy's __deepcopy__) and
    libraries private markers (pandas' _typ), and a catch-all must not answer them."""
    def __getattr__(self, name):
        if type(name) is not str or name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!s:.80} object has no attribute {name!r:.80}")
        return method(self, name)
    return __getattr__


# Builtins a snippet does not get, and what to use instead (validate reports their use too).
WITHHELD_BUILTINS = {
    "locals": "the snippet's names are simply its variables; globals() lists the module's, and a function "
              "can return what it wants to show",
    "compile": "write the code directly: code is not built from strings here",
    "memoryview": "use bytes or bytearray and slices",
}


def _withheld(ctx, name: str, advice: str):
    def withheld(*args, **kwargs):
        raise ctx.refuse_call(f"{name}() is not available in the sandbox: {advice}")
    withheld.__name__ = withheld.__qualname__ = name
    return withheld


def _exit(code=None):
    """exit() / quit() as in a script: SystemExit (0 or None: the run went well)."""
    raise SystemExit(code)


def _no_input(*args, **kwargs):
    raise RuntimeError("input() has no stdin in the sandbox: put the data in the code (a string or a list), "
                       "or pass files with the filesystem profile")

"""The RestrictedPython layer: compile and run one snippet inside the hardened child.

This is the first wall, not the boundary: the kernel layers must hold even when this
layer is bypassed, and this layer must hold with the kernel layers off.

Contract (used by child.py):
    preload(modules)                                        warm imports in the zygote
    execute(code, *, restricted, allowed_modules, stdout, stderr) -> dict   never raises
    validate(code, *, restricted, allowed_modules) -> dict                  never raises

What the snippet gets in restricted mode:
- code compiled by RestrictedPython's own transformer (``_SnippetPolicy`` only adds what
  ordinary Python needs: ``+=`` on items and attributes, annotated assignments, a few more
  dunder methods, ``super().__init__``, ``nonlocal``) and run with RestrictedPython's guards;
- modules only through an import hook, and only as read-only ``ModuleProxy`` objects that
  never hand out another module the profile does not allow, nor a known gadget.
"""

from __future__ import annotations

import ast
import builtins
import collections
import contextlib
import dataclasses
import decimal
import dis
import enum
import functools
import importlib
import io
import keyword
import operator
import os
import re
import string
import sys
import traceback
import types
import typing
from collections.abc import Iterable

from RestrictedPython.Eval import default_guarded_getitem
from RestrictedPython.Guards import (
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    raise_,
    safe_builtins,
    safer_getattr,
)
from RestrictedPython.transformer import (
    ALLOWED_FUNC_NAMES,
    IOPERATOR_TO_STR,
    RestrictingNodeTransformer,
    copy_locations,
)
from RestrictedPython.Utilities import utility_builtins

from . import library_policy, module_subsets, private_names, profiles, safe_format
from .results import cap_text, to_jsonable

SNIPPET_FILENAME = "<snippet>"
SNIPPET_MODULE = "__sandbox__"  # the snippet's __name__; never a key of sys.modules
MAX_MESSAGE = 2000
MAX_EVENTS = 50
MAX_VARIABLES = 100
_MAX_EVENT_DETAIL = 300
_LAST_VALUE = "_sandbox_last_value_"  # underscore names cannot be written in a snippet
# Every call of a snippet function takes two frames under the guards (_call_ and the
# function): twice CPython's default limit keeps recursion as deep as in plain Python.
RESTRICTED_RECURSION_LIMIT = 2 * 1000 + 100


class SandboxImportError(ImportError):
    """An import the sandbox refused (not a missing module)."""


class SandboxAttributeError(AttributeError):
    """An attribute the sandbox refused (not a missing attribute)."""


class SandboxRefused(PermissionError):
    """A call the sandbox refused (a library door: pickle, string parsing)."""


# --------------------------------------------------------------------------- compile

# Dunder methods a snippet class may define on top of RestrictedPython's ALLOWED_FUNC_NAMES.
# They only run snippet code that is itself restricted, and every parameter the interpreter
# passes them is vetted on entry like any other (_vet_parameters_on_entry). Left out on
# purpose: attribute hooks (__getattr__, __getattribute__, __setattr__: library code asks
# them for names the snippet may not see), __del__ (runs at unknown times, in any frame),
# __reduce__* (pickle and copy gadgets), __new__.
EXTRA_MAGIC_METHODS = frozenset(
    ["__repr__", "__str__", "__len__", "__iter__", "__next__", "__reversed__", "__getitem__",
     "__setitem__", "__delitem__", "__missing__", "__hash__", "__bool__", "__call__",
     "__enter__", "__exit__", "__post_init__", "__neg__", "__pos__", "__abs__", "__invert__",
     "__round__", "__int__", "__float__", "__complex__",
     # class machinery that calls only the snippet's own code: a descriptor is no more than a
     # property; __set_name__ and __init_subclass__ see the snippet's classes
     "__init_subclass__", "__set_name__", "__get__", "__set__", "__delete__", "__class_getitem__",
     "__format__", "__index__", "__contains__", "__length_hint__"]
    + [f"__{prefix}{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv",
                                      "mod", "divmod", "pow", "lshift", "rshift", "and", "xor",
                                      "or")
       for prefix in ("", "r", "i")]
)
# `super().<name>` may reach these (the methods a snippet class may define or inherit).
SUPER_METHODS = ALLOWED_FUNC_NAMES | EXTRA_MAGIC_METHODS


class _SnippetPolicy(RestrictingNodeTransformer):
    """RestrictedPython's policy plus what ordinary snippets need; every addition keeps the
    guards in place (no name or attribute starting with "_" becomes reachable)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_names: list[str] = []   # the class bodies being visited, innermost last
        self.function_depth = 0            # functions being visited (import * is for module level)

    def check_name(self, node, name, allow_magic_methods=False):
        if (allow_magic_methods and name in EXTRA_MAGIC_METHODS
                and getattr(node, "col_offset", 0) != 0):
            return
        if name is not None and private_names.private_name_allowed(name):
            return  # `_cache`, `_helper`, `__secret` (private_names.py)
        if name in private_names.DUNDER_NAMES_STORED:
            return  # `__all__ = [...]`, a class's `__slots__`
        if (name is not None and name.startswith("_")
                and not (allow_magic_methods and name in ALLOWED_FUNC_NAMES and node.col_offset != 0)):
            if name.startswith("__") and name.endswith("__"):
                self.error(node, f'"{name}" is a reserved name: this special name is not available in the '
                                 'sandbox (attribute hooks, __new__, __del__ and pickling hooks are not); use '
                                 'an ordinary method or a property instead')
            else:
                self.error(node, f'"{name}" is a reserved name: names that start and end with "_" belong to '
                                 f'the sandbox\'s guards; choose another name (e.g. "{name.strip("_") or "value"}")')
            return
        super().check_name(node, name, allow_magic_methods)

    def visit_Name(self, node):
        if node.id == "__name__" and isinstance(node.ctx, ast.Load):
            # `if __name__ == "__main__":` runs, as in a script; the real module name stays
            new = ast.Constant("__main__")
            copy_locations(new, node)
            return new
        return super().visit_Name(node)

    def visit_ClassDef(self, node):
        self.class_names.append(node.name)
        try:
            return super().visit_ClassDef(node)
        finally:
            self.class_names.pop()

    def visit_FunctionDef(self, node):
        # a method's body mangles with its class's name; a nested function's too
        self.function_depth += 1
        try:
            node = super().visit_FunctionDef(node)
        finally:
            self.function_depth -= 1
        if isinstance(node, ast.FunctionDef):
            _vet_parameters_on_entry(node)
        return node

    def _private_attribute(self, node):
        """`obj._x`, `self.__x` (mangled here, so that reads and writes agree): read
        through `_getattr_` and written through `_write_private_`, which allow it on
        the snippet's own objects only."""
        attr = private_names.mangle(node.attr, self.class_names[-1] if self.class_names else None)
        value = self.visit(node.value)
        if isinstance(node.ctx, ast.Load):
            new = ast.Call(func=ast.Name("_getattr_", ast.Load()), args=[value, ast.Constant(attr)], keywords=[])
        else:
            guarded = ast.Call(func=ast.Name("_write_private_", ast.Load()), args=[value], keywords=[])
            copy_locations(guarded, node.value)
            new = ast.Attribute(value=guarded, attr=attr, ctx=node.ctx)
        copy_locations(new, node)
        return new

    def _safe_dunder_read(self, node):
        value = self.visit(node.value)
        new = ast.Call(func=ast.Name("_getattr_", ast.Load()), args=[value, ast.Constant(node.attr)], keywords=[])
        copy_locations(new, node)
        return new

    def visit_Attribute(self, node):
        if node.attr.startswith("_") and private_names.private_name_allowed(node.attr):
            return self._private_attribute(node)
        if node.attr in private_names.SAFE_DUNDERS and isinstance(node.ctx, ast.Load):
            return self._safe_dunder_read(node)
        # `super().__init__(...)`: the dunder is allowed only on a super() call and is looked
        # up at run time by _super_attr_, which checks the super object.
        if (isinstance(node.ctx, ast.Load) and node.attr in SUPER_METHODS
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "super"):
            new = ast.Call(func=ast.Name("_super_attr_", ast.Load()),
                           args=[self.visit(node.value), ast.Constant(node.attr)], keywords=[])
            copy_locations(new, node)
            return new
        return super().visit_Attribute(node)

    def visit_AugAssign(self, node):
        """`obj.attr += v` / `obj[k] += v` (RestrictedPython refuses both) become
        t0 = obj; [t1 = k;] _write_(t0).attr = _inplacevar_('+=', _getattr_(t0, 'attr'), v)
        which keeps Python's evaluation order and the read and write guards."""
        target = node.target
        if isinstance(target, ast.Name):
            return super().visit_AugAssign(node)
        if isinstance(target, ast.Attribute):
            load = ast.Attribute(value=target.value, attr=target.attr, ctx=ast.Load())
        else:
            load = ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
        copy_locations(load, target)
        getter = self.visit(load)  # _getattr_(obj, 'attr') or _getitem_(obj, key); names checked
        if not (isinstance(getter, ast.Call) and isinstance(getter.func, ast.Name)
                and getter.func.id in ("_getattr_", "_getitem_")):
            self.error(node, "Augmented assignment of this target is not allowed.")
            return node
        n_temps = 1 if isinstance(target, ast.Attribute) else 2
        temps = [self.gen_tmp_name() for _ in range(n_temps)]
        body = [ast.Assign(targets=[ast.Name(t, ast.Store())], value=expr)
                for t, expr in zip(temps, getter.args)]
        read = ast.Call(func=getter.func, args=[ast.Name(t, ast.Load()) for t in temps]
                        + getter.args[n_temps:], keywords=[])
        written = ast.Call(func=ast.Name("_write_", ast.Load()),
                           args=[ast.Name(temps[0], ast.Load())], keywords=[])
        if isinstance(target, ast.Attribute):
            store = ast.Attribute(value=written, attr=target.attr, ctx=ast.Store())
        else:
            store = ast.Subscript(value=written, slice=ast.Name(temps[1], ast.Load()),
                                  ctx=ast.Store())
        value = ast.Call(func=ast.Name("_inplacevar_", ast.Load()),
                         args=[ast.Constant(IOPERATOR_TO_STR[type(node.op)]), read,
                               self.visit(node.value)], keywords=[])
        body.append(ast.Assign(targets=[store], value=value))
        body.append(ast.Delete(targets=[ast.Name(t, ast.Del()) for t in temps]))
        for stmt in body:
            copy_locations(stmt, node)
        return body

    def visit_AnnAssign(self, node):
        """`x: int = 1` (dataclasses, typed code). Target, annotation and value are visited
        like any other store and expressions, so the usual guards apply."""
        return self.node_contents_visit(node)

    def visit_Nonlocal(self, node):
        """Closures with `nonlocal` counters; the names get the usual name check."""
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_ImportFrom(self, node):
        """`from math import *` becomes `_import_star_('math')`, which binds the
        module's public names that pass the module policy (Python allows it only
        at module level, so the globals are the place)."""
        if [alias.name for alias in node.names] == ["*"] and (self.function_depth or self.class_names):
            self.error(node, "import * is only allowed at module level")
            return node
        if [alias.name for alias in node.names] == ["*"] and node.level == 0 and node.module:
            new = ast.Expr(ast.Call(func=ast.Name("_import_star_", ast.Load()),
                                    args=[ast.Constant(node.module)], keywords=[]))
            copy_locations(new, node)
            copy_locations(new.value, node)
            copy_locations(new.value.func, node)
            return new
        return super().visit_ImportFrom(node)

    # -- match statements. A class pattern with keywords (`case P(x=0)`) reads attributes
    # outside the guards, so it is refused; the rest binds names that get the name check.
    def visit_Match(self, node):
        return self.node_contents_visit(node)

    def visit_match_case(self, node):
        return self.node_contents_visit(node)

    def visit_MatchValue(self, node):
        return self.node_contents_visit(node)

    def visit_MatchSingleton(self, node):
        return node

    def visit_MatchSequence(self, node):
        return self.node_contents_visit(node)

    def visit_MatchMapping(self, node):
        self.check_name(node, node.rest)
        return self.node_contents_visit(node)

    def visit_MatchStar(self, node):
        self.check_name(node, node.name)
        return node

    def visit_MatchAs(self, node):
        self.check_name(node, node.name)
        return self.node_contents_visit(node)

    def visit_MatchOr(self, node):
        return self.node_contents_visit(node)

    def visit_MatchClass(self, node):
        if node.kwd_patterns:
            self.error(node, "class patterns with keywords (case P(x=...)) are not available: match the class "
                             "(case P()) and test the attributes in a guard (if p.x == 0) or in the body")
            return node
        if not isinstance(node.cls, ast.Name):
            self.error(node, "a class pattern must name the class directly (case Point(...)): assign "
                             "it to a name first")
            return node
        self.check_name(node, node.cls.id)
        node.patterns = [self.visit(p) for p in node.patterns]
        return node

    def visit_Lambda(self, node):
        node = super().visit_Lambda(node)
        if isinstance(node, ast.Lambda):
            _vet_lambda_parameters(node)
        return node

    def visit_Call(self, node):
        """Every call's result is vetted like an attribute read: `f(...)` becomes
        `_call_(f, ...)` (RestrictedPython's own `_apply_` form for *args/**kwargs is
        vetted the same way). Zero-argument super() must stay a direct call."""
        node = super().visit_Call(node)
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("super", "_apply_"):
            return node
        new = ast.Call(func=ast.Name("_call_", ast.Load()), args=[func, *node.args], keywords=node.keywords)
        copy_locations(new, node)
        copy_locations(new.func, node)
        return new

    def visit_Module(self, node):
        node = super().visit_Module(node)
        _capture_last_value(node)
        return node


def _parameter_names(args: ast.arguments) -> tuple[list[str], str | None, list[str], str | None]:
    return ([a.arg for a in args.posonlyargs + args.args], args.vararg.arg if args.vararg else None,
            [a.arg for a in args.kwonlyargs], args.kwarg.arg if args.kwarg else None)


def _locate(tree: ast.AST, like: ast.AST) -> None:
    """Give every node of a generated tree the position of `like` (for tracebacks)."""
    for child in ast.walk(tree):
        if "lineno" in child._attributes:
            copy_locations(child, like)


def _vet_call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(func, ast.Load()), args=list(args), keywords=[])


def _vet_parameters_on_entry(node: ast.FunctionDef) -> None:
    """`def f(a, b, *c, d, **e)` starts with `a, b, d = _vet_params_(a, b, d)`,
    `c = _vet_params_(*c)` and `e = _vet_kwargs_(e)` (after a docstring)."""
    positional, vararg, kwonly, kwarg = _parameter_names(node.args)
    names = positional + kwonly
    body = []
    if names:
        target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
        body.append(ast.Assign([target], _vet_call("_vet_params_", *[ast.Name(n, ast.Load()) for n in names])))
    if vararg:
        body.append(ast.Assign([ast.Name(vararg, ast.Store())],
                               _vet_call("_vet_params_", ast.Starred(ast.Name(vararg, ast.Load()), ast.Load()))))
    if kwarg:
        body.append(ast.Assign([ast.Name(kwarg, ast.Store())], _vet_call("_vet_kwargs_", ast.Name(kwarg, ast.Load()))))
    if not body or not node.body:  # (a body the transformer emptied has already failed the compile)
        return
    first = node.body[0]
    at = 1 if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
        first.value.value, str) else 0
    for stmt in body:
        _locate(stmt, first)
    node.body[at:at] = body


def _vet_lambda_parameters(node: ast.Lambda) -> None:
    """`lambda a, *b, c, **d: body` becomes
    `lambda a, *b, c, **d: (lambda a, *b, c, **d: body)(*_vet_params_(a, *b), c=_vet_one_(c), **_vet_kwargs_(d))`."""
    positional, vararg, kwonly, kwarg = _parameter_names(node.args)
    if not (positional or vararg or kwonly or kwarg):
        return
    inner_args = ast.arguments(
        posonlyargs=[], args=[ast.arg(n) for n in positional],
        vararg=ast.arg(vararg) if vararg else None, kwonlyargs=[ast.arg(n) for n in kwonly],
        kw_defaults=[None] * len(kwonly), kwarg=ast.arg(kwarg) if kwarg else None, defaults=[])
    passed = [ast.Name(n, ast.Load()) for n in positional]
    if vararg:
        passed.append(ast.Starred(ast.Name(vararg, ast.Load()), ast.Load()))
    keywords = [ast.keyword(arg=n, value=_vet_call("_vet_one_", ast.Name(n, ast.Load()))) for n in kwonly]
    if kwarg:
        keywords.append(ast.keyword(arg=None, value=_vet_call("_vet_kwargs_", ast.Name(kwarg, ast.Load()))))
    call = ast.Call(func=ast.Lambda(args=inner_args, body=node.body),
                    args=[ast.Starred(_vet_call("_vet_params_", *passed), ast.Load())], keywords=keywords)
    _locate(call, node.body)
    node.body = call


def _capture_last_value(tree: ast.Module) -> None:
    """The value of a final expression statement goes to an internal name (the result)."""
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        assign = ast.Assign(targets=[ast.Name(_LAST_VALUE, ast.Store())], value=last.value)
        copy_locations(assign, last)
        tree.body[-1] = assign


class _CompileError(Exception):
    def __init__(self, error_type: str, message: str, line: int | None, rejected=()):
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.line = line
        self.rejected = list(rejected)


_TOO_COMPLEX = "SyntaxError: the source is too deeply nested or too complex to compile"
_LINE_PREFIX = re.compile(r"^Line (\d+):")
_UNPARSABLE = re.compile("[\x00\ud800-\udfff]")


def _line_at(code: str, index: int) -> int:
    return code.count("\n", 0, max(index, 0)) + 1


def _parse(code) -> ast.Module:
    if not isinstance(code, str):
        raise _CompileError("syntax_error", "SyntaxError: the source must be text", None)
    bad = _UNPARSABLE.search(code)
    if bad is not None:  # the parser's own errors for these differ between versions
        what = "a NUL byte" if bad.group() == "\x00" else "a lone surrogate"
        raise _CompileError("syntax_error", f"SyntaxError: the source contains {what}",
                            _line_at(code, bad.start()))
    try:
        return ast.parse(code, SNIPPET_FILENAME, "exec")  # a str: any coding cookie is ignored
    except SyntaxError as exc:
        raise _CompileError("syntax_error", f"{type(exc).__name__}: {exc.msg}", exc.lineno) from None
    except (MemoryError, RecursionError):
        raise _CompileError("syntax_error", _TOO_COMPLEX, None) from None
    except (ValueError, UnicodeError) as exc:
        raise _CompileError("syntax_error", f"SyntaxError: {exc}", None) from None


def _compile(code, restricted: bool) -> types.CodeType:
    tree = _parse(code)
    try:
        if restricted:
            errors: list[str] = []
            tree = _SnippetPolicy(errors, [], {}).visit(tree)
            if errors:
                match = _LINE_PREFIX.match(errors[0])
                raise _CompileError("security_violation", "\n".join(errors),
                                    int(match.group(1)) if match else None, rejected=errors)
        else:
            _capture_last_value(tree)
        # dont_inherit: this module's `from __future__ import annotations` is not the snippet's.
        return compile(tree, SNIPPET_FILENAME, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise _CompileError("syntax_error", f"{type(exc).__name__}: {exc.msg}", exc.lineno) from None
    except (MemoryError, RecursionError):
        raise _CompileError("syntax_error", _TOO_COMPLEX, None) from None
    except (ValueError, TypeError) as exc:
        raise _CompileError("syntax_error", f"SyntaxError: {exc}", None) from None


# --------------------------------------------------------------------------- modules

# Objects no module proxy hands out, wherever they are re-exported (dataclasses.FunctionType).
# They evaluate strings (get_type_hints, ForwardRef, singledispatch's register), resolve
# attributes unguarded (string.Formatter), build code or frames (types.*), or leave the
# sandbox's view of the world (contextlib.chdir).
_DENIED_OBJECTS: dict[int, str] = {}
for _mod, _names in {
    typing: ("get_type_hints", "ForwardRef", "evaluate_forward_ref"),
    functools: ("singledispatch", "singledispatchmethod"),
    string: ("Formatter",),
    contextlib: ("chdir",),
    # global_enum writes the members into sys.modules[cls.__module__]: into any module,
    # the sandbox's own guards included (module= is the caller's choice)
    enum: ("global_enum",),
    types: ("FunctionType", "LambdaType", "CodeType", "FrameType", "TracebackType",
            "ModuleType", "CellType", "MethodType", "new_class", "prepare_class"),
    builtins: ("eval", "exec", "compile", "__import__", "getattr", "setattr", "delattr",
               "hasattr", "vars", "globals", "locals", "dir", "breakpoint", "input", "help",
               "exit", "quit"),
}.items():
    for _name in _names:
        if hasattr(_mod, _name):
            _DENIED_OBJECTS[id(getattr(_mod, _name))] = f"{_mod.__name__}.{_name}"
del _mod, _names, _name

# `types` is mostly a toolbox for building functions, code and classes: only these remain.
_TYPES_ALLOWED = frozenset({
    "SimpleNamespace", "MappingProxyType", "GeneratorType", "NoneType", "EllipsisType",
    "NotImplementedType", "GenericAlias", "UnionType", "BuiltinFunctionType",
    "BuiltinMethodType",
})
_BUILTINS_DICT = vars(builtins)
_INTERNAL_TYPES = (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType)
_FORMAT_NAMES = frozenset({"format", "format_map"})
# Values that getattr/getitem results are checked against (cheaply, by identity) before vet().
_VET_IDS = frozenset(_DENIED_OBJECTS) | {id(_BUILTINS_DICT), id(builtins.open), id(operator.attrgetter),
                                         id(operator.methodcaller), id(operator.setitem),
                                         id(operator.delitem), id(functools.update_wrapper),
                                         id(functools.wraps), id(dataclasses.make_dataclass),
                                         id(dataclasses.dataclass)}


def _is_plain_name(name) -> bool:
    """A name library code may paste into source or define as an attribute."""
    return type(name) is str and name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")


def _is_metaclass(value) -> bool:
    return isinstance(value, type) and issubclass(value, type)


# Where a value reaches the snippet without a guard of its own (a call's result, an item
# of iteration, a parameter of a snippet function that library code calls back), it is
# vetted like an attribute read; a plain container arriving from library code is searched
# (C-speed per level) so that no module, metaclass or denied object hides inside one,
# where C code (map, functools.partial, operator.call, starmap) could still use it.
_SCALAR_TYPES = frozenset({int, float, complex, str, bytes, bool, type(None), range, bytearray})
_CONTAINER_TYPES = frozenset({list, tuple, dict, set, frozenset})
# Values of these exact types never need vetting themselves.
_PLAIN_TYPES = _SCALAR_TYPES | _CONTAINER_TYPES
# Iterating these yields only plain values: no per-item vetting.
_PLAIN_ITERABLES = frozenset({range, str, bytes, bytearray})
# Mutable module-level containers are registries the stdlib may read back
# (copy.dispatch_table): a module hands out a read-only copy or view instead.
_READ_ONLY_VIEWS = {dict: types.MappingProxyType, list: tuple, set: frozenset, bytearray: bytes}
for _cls in (collections.OrderedDict, collections.defaultdict, collections.Counter):
    _READ_ONLY_VIEWS[_cls] = types.MappingProxyType
_READ_ONLY_VIEWS[collections.deque] = tuple
del _cls


def _needs_vet(value) -> bool:
    return type(value) not in _PLAIN_TYPES and (
        id(value) in _VET_IDS or isinstance(value, _INTERNAL_TYPES) or _is_metaclass(value)
        or id(value) in library_policy.refused_ids or id(value) in library_policy.keyword_guards
        or id(value) in library_policy.replaced_ids)


def _hidden_danger(container):
    """The first value inside a plain container (at any depth) that would need vetting;
    None when there is none. Levels of scalars cost one C-level pass."""
    seen, stack = set(), [container]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        parts = (current.keys(), current.values()) if type(current) is dict else (current,)
        for part in parts:
            if set(map(type, part)) <= _SCALAR_TYPES:
                continue
            for item in part:
                kind = type(item)
                if kind in _CONTAINER_TYPES:
                    stack.append(item)
                elif kind not in _SCALAR_TYPES and _needs_vet(item):
                    return item
    return None


class ModuleProxy:
    """A read-only view of an allowed module, handed to the snippet instead of the module.

    Attribute reads go through ``_Context.module_attribute``; writes always fail. The real
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
                                f"cannot set {name!s:.80} on module {self.__name}: modules are read-only",
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


class _ForeignWrite:
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
        raise self._ctx.refuse("attribute_blocked",
                               f"cannot set attribute {name!s:.80} of a {_describe(self._ob)} "
                               "object the snippet did not create", SandboxAttributeError)

    def __delattr__(self, name):
        raise self._ctx.refuse("attribute_blocked",
                               f"cannot delete attribute {name!s:.80} of a {_describe(self._ob)} "
                               "object the snippet did not create", SandboxAttributeError)


def _callable_name(func) -> str:
    name = getattr(func, "__qualname__", None)
    return name[:80] if isinstance(name, str) else "a call"


def _describe(obj) -> str:
    if type(obj) is ModuleProxy:
        return repr(obj)
    return type(obj).__name__


def _policy_only(obj, name, *default):
    """Stands in for getattr so that safer_getattr checks its policy without looking up."""
    return None


class _Events:
    def __init__(self):
        self.items: list[dict] = []

    def add(self, kind: str, detail: str) -> None:
        if len(self.items) < MAX_EVENTS:
            self.items.append({"kind": kind, "detail": cap_text(str(detail), _MAX_EVENT_DETAIL)[0]})


class _Printer:
    """RestrictedPython's print protocol (see PrintCollector) writing straight to a stream,
    so output is streamed as it is printed; ``printed`` still works (capped)."""

    _PRINTED_CAP = 1 << 20

    def __init__(self, stream, getattr_):
        self._stream = stream
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
            kwargs["file"] = self
        else:
            self._getattr(kwargs["file"], "write")
        print(*objects, **kwargs)


_INPLACE = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow,
    "<<=": operator.ilshift, ">>=": operator.irshift, "&=": operator.iand,
    "|=": operator.ior, "^=": operator.ixor, "@=": operator.imatmul,
}


def _inplacevar(op, target, value):
    return _INPLACE[op](target, value)


class _Context:
    """Everything one execution's guards share: the allow-list, the proxies, the classes the
    snippet created, and the security events."""

    def __init__(self, allowed: frozenset[str], events: _Events):
        self.allowed = allowed
        self.events = events
        self.proxies: dict[tuple[str, int], ModuleProxy] = {}
        self.subsets: dict[str, module_subsets.ModuleSubset] = {}
        self.classes: set[type] = set()
        self.globals: dict = {}
        self.replacements = {
            id(operator.attrgetter): self.attrgetter,
            id(operator.methodcaller): self.methodcaller,
            id(operator.setitem): self.setitem,
            id(operator.delitem): self.delitem,
            id(functools.update_wrapper): self.update_wrapper,
            id(functools.wraps): self.wraps,
            id(dataclasses.make_dataclass): self.make_dataclass,
            id(dataclasses.dataclass): self.dataclass,
        }
        # string.Formatter, str.format and format_map look fields up through our guards
        self.Formatter = safe_format.bind(self.getattr, self.getitem)
        self.replacements[id(string.Formatter)] = self.Formatter
        self.type = self._make_type()
        self.parsers: library_policy.StringParsersOff | None = None  # set while the snippet runs

    # -- events and refusals
    def refuse(self, kind: str, detail: str, exc_type=SandboxAttributeError, **kwargs):
        """Record a security event and return the exception to raise."""
        self.events.add(kind, detail)
        exc = exc_type(detail, **kwargs)
        exc._sandbox_refused = True  # a snippet cannot write "_" attributes: unforgeable
        return exc

    def refuse_call(self, detail: str) -> SandboxRefused:
        return self.refuse("call_blocked", detail, SandboxRefused)

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
            library_policy.refresh()
            if self.parsers is not None:
                self.parsers.apply()

    def _import(self, name, fromlist, level):
        if type(fromlist) is list and level == 0 and type(name) is str:
            # C code importing its own helpers (datetime.strptime -> _strptime) goes through
            # PyImport_Import, which calls this hook with a list and discards the result;
            # snippet import statements always pass None or a tuple.
            importlib.import_module(name)
            return None
        if level != 0:
            dots = "." * level if isinstance(level, int) and 0 < level < 10 else "."
            raise self.refuse("import_blocked", f"relative import from {dots}{name!s:.80} is not allowed",
                              SandboxImportError)
        if type(name) is not str or not name or (
                name != "__future__" and any(not p.isidentifier() or p.startswith("_")
                                             for p in name.split("."))):
            raise self.refuse("import_blocked", f"import of {name!r:.80} is not allowed",
                              SandboxImportError)
        if name in module_subsets.SUBSETS and not self.permits(name):
            return self._subset_import(name, fromlist)
        if not fromlist:
            if not self.permits(name):
                raise self._import_refusal(name)
            importlib.import_module(name)
            top = name.split(".")[0]
            return self.proxy(top, sys.modules[top])
        # from NAME import a, b: NAME may be a package that only leads to allowed modules.
        if not (self.permits(name) or self.is_package_of_allowed(name)):
            raise self._import_refusal(name)
        module = importlib.import_module(name)
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
                continue
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
        if type(module) is module_subsets.ModuleSubset:
            names = list(object.__getattribute__(module, "_ModuleSubset__values"))
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
        subset of module_subsets.py, or a refusal that lists it."""
        subset = self.subsets.get(name)
        if subset is None:
            subset = self.subsets[name] = module_subsets.make(name)
        for item in fromlist or ():
            if item not in module_subsets.SUBSETS[name]:
                raise self.refuse("import_blocked", f"from {name} import {item!s:.80} is not available "
                                                    f"({module_subsets.WHY[name]}); {name} here has: "
                                                    + ", ".join(module_subsets.SUBSETS[name]), SandboxImportError)
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
            raise self.refuse("import_blocked", f"from {name} import {item}: module "
                                                f"{name}.{item} is not allowed", SandboxImportError, name=name)
        raise ImportError(f"cannot import name {item!r} from {name!r}", name=name)

    def _import_refusal(self, name: str) -> SandboxImportError:
        why = profiles.danger(name)
        detail = f"import of module {name!r} is not allowed" + (f" ({why})" if why else "")
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
            raise self.refuse(kind, f"{qual} is not available in the sandbox")
        missing = False
        try:
            value = getattr(module, attr)
        except AttributeError:  # never re-raised: its .obj is the real module
            missing = True
        if missing:
            if not (self.permits(qual) or self.is_package_of_allowed(qual)):
                raise AttributeError(f"module {modname!r} has no attribute {attr!r}")
            value = importlib.import_module(qual)
        if isinstance(value, types.ModuleType):
            return self.module_value(value, qual, kind)
        if package_only:
            raise self.refuse(kind, f"{qual} is not available: only the allowed submodules of "
                                    f"{modname} are")
        view = _READ_ONLY_VIEWS.get(type(value))
        if view is not None:
            self.check_container(dict(value) if isinstance(value, dict) else list(value), qual, kind)
            return view(value)
        return self.checked(value, qual, kind)

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
        raise self.refuse(kind, f"{qual} is the module {real!r}, which is not allowed")

    def checked(self, value, where, kind="attribute_blocked"):
        """vet() for a single value, a search for a plain container."""
        if type(value) in _CONTAINER_TYPES:
            return self.check_container(value, where, kind)
        if type(value) in _SCALAR_TYPES or not _needs_vet(value):
            return value
        return self.vet(value, where, kind)

    def check_container(self, container, where, kind="attribute_blocked"):
        found = _hidden_danger(container)
        if found is not None:
            self.vet(found, f"a value inside {where}", kind)  # raises, or...
            raise self.refuse(kind, f"{where} holds {_describe(found)}, which is not available "
                                    "in the sandbox")  # ...a proxy is no excuse to hand out the container
        return container

    def vet(self, value, where, kind="attribute_blocked"):
        """Refuse or replace values that must not reach the snippet, whoever hands them out."""
        if _is_metaclass(value):
            raise self.refuse(kind, f"{where} is a metaclass ({value.__name__}), which is not available: "
                                    "classes are made with class statements")
        if isinstance(value, _INTERNAL_TYPES) or value is _BUILTINS_DICT:
            if isinstance(value, types.ModuleType):
                return self.module_value(value, where, kind)
            raise self.refuse(kind, f"{where} is a {type(value).__name__}, which is not available")
        key = id(value)
        if key in self.replacements:
            return self.replacements[key]
        if key in library_policy.replaced_ids:
            return library_policy.replaced_ids[key]
        if key in library_policy.refused_ids:
            raise self.refuse(kind, f"{where}: {library_policy.refused_ids[key]}")
        if key in library_policy.keyword_guards:
            return library_policy.keyword_guard(value, self.refuse_call)
        if key in _DENIED_OBJECTS or (value is builtins.open and not self.permits("io")):
            raise self.refuse(kind, f"{where} ({_DENIED_OBJECTS.get(key, 'open')}) is not "
                                    "available in the sandbox")
        return value

    # -- attribute guards
    def getattr(self, obj, name, default=raise_):
        """_getattr_ and the getattr builtin: safer_getattr, plus value vetting."""
        if type(name) is str and name in _FORMAT_NAMES and (
                isinstance(obj, str) or (isinstance(obj, type) and issubclass(obj, str))):
            return safe_format.format_method(self.Formatter, obj, name)
        if type(obj) is module_subsets.ModuleSubset:
            try:
                return getattr(obj, name)
            except AttributeError as exc:  # a part of sys/io the subset leaves out: a refusal
                raise self.refuse("attribute_blocked", str(exc)) from None
        if isinstance(obj, safe_format.GuardedFormatter) and type(name) is str and not name.startswith("_"):
            return getattr(obj, name)  # its lookups are guarded: format, vformat, get_field... are safe
        if type(name) is str and name.startswith("_"):
            allowed = self._underscore_read(obj, name)
            if allowed is not None and type(obj) is ModuleProxy:
                # the module's own name, version, doc: strings only, from the real module
                value = getattr(object.__getattribute__(obj, "_ModuleProxy__module"), name, None)
                if isinstance(value, str) or (value is None and default is not raise_):
                    return value if value is not None else default
                raise SandboxAttributeError(f"module {name} is not available here as a string")
            if allowed is not None:
                try:
                    value = getattr(obj, name)
                except AttributeError:
                    if default is raise_:
                        raise
                    return default
                return self.vet(value, f"{_describe(obj)}.{name}") if _needs_vet(value) else value
        refusal = None
        if type(name) is str and name in _FORMAT_NAMES:
            refusal = self._extra_refusal(obj)
        if type(name) is str and name in library_policy.REFUSED_ATTRIBUTES:
            why = library_policy.attribute_refusal(obj, name)
            if why is not None:
                raise self.refuse("attribute_blocked", why)
        if refusal is None:
            try:
                value = safer_getattr(obj, name, default)
            except (AttributeError, NotImplementedError, TypeError) as exc:
                if self._policy_refusal(obj, name) is None:
                    raise
                refusal = (type(exc), str(exc))
            else:
                if type(value) in _CONTAINER_TYPES:
                    if type(obj) is ModuleProxy or self.owns(obj):
                        return value  # a module's: checked by module_attribute; the snippet's own: clean
                    return self.check_container(value, f"{_describe(obj)}.{name}")
                if _needs_vet(value):
                    value = self.vet(value, f"{_describe(obj)}.{name}")
                return value
        exc_type, message = refusal
        if issubclass(exc_type, AttributeError):
            exc_type = SandboxAttributeError
        raise self.refuse("attribute_blocked", f"{_describe(obj)}.{name!s:.80}: {message}", exc_type)

    @staticmethod
    def _extra_refusal(obj):
        """str.format reached around safer_getattr's str check (super(), UserString)."""
        if (type(obj) is super or isinstance(obj, collections.UserString)
                or (isinstance(obj, type) and issubclass(obj, collections.UserString))):
            return NotImplementedError, "Using the format*() methods of `str` is not safe"
        return None

    @staticmethod
    def _policy_refusal(obj, name):
        try:
            safer_getattr(obj, name, None, getattr=_policy_only)
        except Exception as exc:  # noqa: BLE001 - any refusal by the policy
            return str(exc)
        return None

    def getitem(self, obj, index):
        value = default_guarded_getitem(obj, index)
        if type(value) not in _PLAIN_TYPES and _needs_vet(value):
            value = self.vet(value, f"{_describe(obj)}[...]")
        return value

    def call(self, func, *args, **kwargs):
        """_call_: the result of every call the snippet makes is vetted (and searched, when
        it is a plain container that library code made)."""
        value = func(*args, **kwargs)
        kind = type(value)
        if kind in _SCALAR_TYPES:
            return value
        if kind in _CONTAINER_TYPES:
            if type(func) is types.FunctionType and func.__globals__ is self.globals:
                return value  # the snippet's own function: built from vetted values
            return self.check_container(value, f"the result of {_callable_name(func)}()")
        if not _needs_vet(value):
            return value
        return self.vet(value, f"the result of {_callable_name(func)}()")

    def apply(self, func, *args, **kwargs):
        """_apply_ (calls with *args or **kwargs): the unpacked arguments are vetted too,
        since library code may call what they hold."""
        return self.call(func, *self.vet_params(*args), **self.vet_kwargs(kwargs))

    def vet_params(self, *values):
        """_vet_params_: the parameters of a snippet function on entry (library code
        calls snippet functions back with values no guard has seen)."""
        for value in values:
            if type(value) not in _PLAIN_TYPES and _needs_vet(value):
                return tuple(self.vet(v, "an argument") if type(v) not in _PLAIN_TYPES and _needs_vet(v)
                             else v for v in values)
        return values

    def vet_kwargs(self, kwargs):
        for value in kwargs.values():
            if type(value) not in _PLAIN_TYPES and _needs_vet(value):
                return dict(zip(kwargs, self.vet_params(*kwargs.values())))
        return kwargs

    def vet_one(self, value):
        return self.vet_params(value)[0]

    def getiter(self, ob):
        """_getiter_: iteration, comprehensions and unpacking; every item is vetted."""
        if type(ob) in _PLAIN_ITERABLES:
            return ob
        return self._vetted_items(ob)

    def _vetted_items(self, ob):
        for item in ob:
            if type(item) not in _PLAIN_TYPES and _needs_vet(item):
                item = self.vet(item, "an item of iteration")
            yield item

    def hasattr(self, obj, name):
        try:
            self.getattr(obj, name)
        except AttributeError:
            return False
        return True

    def super_attr(self, sup, name):
        """`super().<dunder>` for the snippet's own objects only."""
        if type(sup) is not super or name not in SUPER_METHODS or not self.owns(sup.__self__):
            raise self.refuse("attribute_blocked", f"super().{name!s:.80} is only available "
                                                   "inside the snippet's own classes")
        return getattr(sup, name)

    # -- write guards
    def owns(self, ob) -> bool:
        """Did the snippet create ``ob`` (its class, function or an instance of its class)?"""
        cls = type(ob)
        if cls in self.classes or cls in _WRITABLE_TYPES:  # the common case first
            return True
        if cls is types.FunctionType:
            return ob.__globals__ is self.globals
        if isinstance(ob, type):
            cls = ob
        return any(base in self.classes for base in cls.__mro__)

    # -- names that start with "_" (private_names.py)
    def _underscore_read(self, obj, name: str):
        """True when this private or dunder attribute may be read on `obj`; None
        leaves the decision to the usual rules (which refuse it)."""
        if name == "__dict__":
            return True if self.only_snippet_classes(obj) and hasattr(obj, "__dict__") else None
        if private_names.private_name_allowed(name):
            if self.only_snippet_classes(obj):
                return True
            if isinstance(obj, tuple) and hasattr(type(obj), "_fields") and name in private_names.PRIVATE_API["namedtuple"]:
                return True
            if isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields") \
                    and name in private_names.PRIVATE_API["namedtuple"]:
                return True
            return None
        kinds = private_names.SAFE_DUNDERS.get(name)
        if kinds and (_kind_of(obj) in kinds or "any" in kinds):
            return True
        return None

    def only_snippet_classes(self, ob) -> bool:
        """The snippet's own object all the way down: its function, or a class (or an
        instance of one) whose bases are the snippet's classes, object or built-in
        exceptions. A subclass of a library class is not: the library's private
        attributes stay out of reach."""
        if type(ob) is types.FunctionType:
            return ob.__globals__ is self.globals
        cls = ob if isinstance(ob, type) else type(ob)
        return cls in self.classes and all(
            base in self.classes or base is object or (base.__module__ == "builtins"
                                                        and issubclass(base, BaseException))
            for base in cls.__mro__)

    def vars(self, *args):
        """vars(obj): a copy of the attributes of the snippet's own objects (the
        library's are not its to list). Without an argument, like globals() and
        locals(), it is not available: the namespace is the guards' too."""
        if len(args) != 1:
            raise self.refuse("call_blocked", "vars() needs an object of the snippet's own (vars(obj)); "
                                              "the snippet's names are simply its variables", SandboxRefused)
        (obj,) = args
        if self.only_snippet_classes(obj) and hasattr(obj, "__dict__"):
            return {k: v for k, v in vars(obj).items() if not (k.startswith("__") and k.endswith("__"))}
        raise self.refuse("call_blocked", f"vars() of {_describe(obj)} is not available: it works on the "
                                          "snippet's own objects; use dir() and getattr() for others",
                          SandboxRefused)

    def dir(self, *args):
        """dir(obj): the names that do not start with "_" (and the snippet's own
        objects' private ones). Without an argument: not available, as vars()."""
        if len(args) != 1:
            raise self.refuse("call_blocked", "dir() needs an object (dir(obj)); the snippet's names are "
                                              "simply its variables", SandboxRefused)
        (obj,) = args
        own = self.only_snippet_classes(obj)
        if type(obj) is ModuleProxy:
            names = dir(object.__getattribute__(obj, "_ModuleProxy__module"))
        elif type(obj) is module_subsets.ModuleSubset:
            names = list(object.__getattribute__(obj, "_ModuleSubset__values"))
        else:
            names = dir(obj)
        return sorted(n for n in names if not n.startswith("_") or (own and not n.startswith("__")))

    def write_private(self, ob):
        """_write_private_: `obj._x = ...` only on the snippet's own objects."""
        if self.only_snippet_classes(ob):
            return ob
        raise self.refuse("attribute_blocked", f"private attributes (names starting with _) of "
                                               f"{_describe(ob)} cannot be written: only those of the "
                                               "snippet's own classes can")

    def write_guard(self, ob):
        """_write_: full_write_guard's pass-through for dict and list, plus the snippet's own
        objects; everything else gets item writes only (see _ForeignWrite)."""
        cls = type(ob)
        if cls is dict or cls is list or self.owns(ob) or _is_pandas_options(ob):
            return ob
        return _ForeignWrite(ob, self)

    def setattr(self, obj, name, value):
        setattr(self._settable(obj, name, "setattr"), name, value)

    def delattr(self, obj, name):
        delattr(self._settable(obj, name, "delattr"), name)

    def _settable(self, obj, name, what: str):
        """The object to write `name` on: a private name only on the snippet's own
        objects (as `obj._x = ...` is), never a dunder or a guard-family name."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        if name.startswith("_"):
            if not private_names.private_name_allowed(name):
                raise self.refuse("attribute_blocked", f"{what} of {name!r:.80} is not allowed")
            return self.write_private(obj)
        return self.write_guard(obj)

    def build_class(self, func, name, *bases, **kwargs):
        """__build_class__: remember the classes the snippet defines (they are writable)."""
        cls = builtins.__build_class__(func, name, *bases, **kwargs)
        if isinstance(cls, type):
            self.classes.add(cls)
        return cls

    # -- classes made at run time: the class-body policy applies to their namespace too
    def check_namespace(self, namespace, where: str) -> None:
        if not isinstance(namespace, dict):
            raise TypeError(f"{where}: the namespace must be a dict")
        for key in namespace:
            if type(key) is not str or (key.startswith("_") and key not in SUPER_METHODS
                                        and key != "__doc__"):
                raise self.refuse("attribute_blocked", f"{where}: a class attribute named {key!r:.80} "
                                                       "is not allowed")

    def _make_type(self):
        """The `type` builtin: type(x) as usual (never a metaclass: type(int) is refused),
        isinstance(x, type) as usual, and type(name, bases, namespace) under the
        class-body policy."""
        ctx = self

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
                    if id(result) in _DENIED_OBJECTS or id(result) in library_policy.refused_ids:
                        raise ctx.refuse("attribute_blocked", f"type() of this value is "
                                                              f"{result.__name__}, which is not available; "
                                                              "use callable(x) or isinstance(x, ...)")
                    return result
                if len(args) != 3:
                    raise TypeError("type() takes 1 or 3 arguments")
                name, bases, namespace = args
                ctx.check_namespace(namespace, "type()")
                made = type(name, bases, dict(namespace), **kwargs)
                ctx.classes.add(made)
                return made

        return TypeGuard("type", (), {})

    def make_dataclass(self, cls_name, fields, **kwargs):
        if kwargs.get("namespace") is not None:
            self.check_namespace(kwargs["namespace"], "make_dataclass()")
        for base in kwargs.get("bases") or ():
            self.check_field_names(base)
        fields = list(fields)
        for spec in fields:
            name = spec if isinstance(spec, str) else (spec[0] if isinstance(spec, (tuple, list)) and spec else spec)
            if not _is_plain_name(name):
                raise self.refuse("attribute_blocked", f"dataclass field name {name!r:.80} is not allowed: "
                                                       "field names are identifiers that do not start with '_'")
        made = dataclasses.make_dataclass(cls_name, fields, **kwargs)
        self.classes.add(made)
        return made

    def dataclass(self, cls=None, /, **kwargs):
        """dataclasses.dataclass pastes field names into the source it exec()s (with real
        builtins): every field name it will use, its own and inherited, must be a plain
        identifier when it is used, not only when the snippet first wrote it."""
        def wrap(target):
            self.check_field_names(target)
            return dataclasses.dataclass(target, **kwargs)
        return wrap if cls is None else wrap(cls)

    def check_field_names(self, target) -> None:
        if not isinstance(target, type):
            return
        names = list(target.__dict__.get("__annotations__", {}))
        for base in target.__mro__:
            fields = base.__dict__.get("__dataclass_fields__")
            if isinstance(fields, dict):
                names += list(fields) + [getattr(f, "name", None) for f in fields.values()]
        for name in names:
            if not _is_plain_name(name):
                raise self.refuse("attribute_blocked", f"dataclass field name {name!r:.80} is not allowed: "
                                                       "field names are identifiers that do not start with '_'")

    def check_enum_names(self, names):
        """The enum functional API (Enum('E', names)) defines a class attribute per name:
        dunder and sunder names would define methods and hooks. Returns the names as a
        list (an iterator is consumed here)."""
        items = names.replace(",", " ").split() if isinstance(names, str) else names
        if not isinstance(items, (dict, types.MappingProxyType)):
            items = list(items)
        for item in items:
            name = item if isinstance(item, str) else (item[0] if isinstance(item, (tuple, list)) and item else item)
            if not _is_plain_name(name):
                raise self.refuse("attribute_blocked", f"enum member name {name!r:.80} is not allowed: "
                                                       "member names are identifiers that do not start with '_'")
        return names if isinstance(names, str) else items

    # -- functools' attribute copiers read and write caller-chosen names: defaults only,
    # and onto functions only (copying __annotations__ onto a class feeds dataclass())
    def update_wrapper(self, wrapper, wrapped, assigned=functools.WRAPPER_ASSIGNMENTS,
                       updated=functools.WRAPPER_UPDATES):
        self._default_copies_only(assigned, updated)
        if isinstance(wrapper, type):
            raise self.refuse("attribute_blocked", "functools.update_wrapper/wraps apply to functions, "
                                                   "not classes, in the sandbox")
        return functools.update_wrapper(wrapper, wrapped)

    def wraps(self, wrapped, assigned=functools.WRAPPER_ASSIGNMENTS, updated=functools.WRAPPER_UPDATES):
        self._default_copies_only(assigned, updated)
        return lambda wrapper: self.update_wrapper(wrapper, wrapped)

    def _default_copies_only(self, assigned, updated) -> None:
        if tuple(assigned) != functools.WRAPPER_ASSIGNMENTS or tuple(updated) != functools.WRAPPER_UPDATES:
            raise self.refuse("attribute_blocked", "functools.update_wrapper/wraps copy only the default "
                                                   "attributes in the sandbox")

    # -- safe replacements for operator's unguarded gadgets
    def attrgetter(self, attr, *attrs):
        paths = []
        for name in (attr, *attrs):
            if type(name) is not str:
                raise TypeError("attribute name must be a string")
            paths.append(name.split("."))

        def get(obj):
            values = []
            for path in paths:
                value = obj
                for part in path:
                    value = self.getattr(value, part)
                values.append(value)
            return values[0] if len(values) == 1 else tuple(values)
        return get

    def methodcaller(self, name, /, *args, **kwargs):
        if type(name) is not str:
            raise TypeError("method name must be a string")
        return lambda obj: self.getattr(obj, name)(*args, **kwargs)

    def setitem(self, obj, key, value):
        self.write_guard(obj)[key] = value

    def delitem(self, obj, key):
        del self.write_guard(obj)[key]


# Library types whose attributes are meant to be set by user code: getcontext().prec = 50.
_WRITABLE_TYPES = frozenset({decimal.Context, types.SimpleNamespace})


# --------------------------------------------------------------------------- builtins

_EXCEPTIONS = {
    name: value for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException) and not name.startswith("_")
    and name not in ("BaseExceptionGroup", "ExceptionGroup")  # except* is refused (CVE-2025-22153)
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


def _restricted_globals(ctx: _Context, stdout) -> dict:
    names = dict(_BASE_BUILTINS)
    names.update(
        getattr=ctx.getattr, hasattr=ctx.hasattr, setattr=ctx.setattr, delattr=ctx.delattr, type=ctx.type,
        __import__=ctx.import_, __build_class__=ctx.build_class, vars=ctx.vars, dir=ctx.dir,
        input=_no_input, open=_no_open,
    )
    glb = {
        "__builtins__": names,
        "__name__": SNIPPET_MODULE,
        "__metaclass__": type,
        "_getattr_": ctx.getattr,
        "_getitem_": ctx.getitem,
        "_getiter_": ctx.getiter,
        "_call_": ctx.call,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": ctx.write_guard,
        "_write_private_": ctx.write_private,
        "_import_star_": ctx.import_star,
        "_inplacevar_": _inplacevar,
        "_apply_": ctx.apply,
        "_vet_params_": ctx.vet_params,
        "_vet_kwargs_": ctx.vet_kwargs,
        "_vet_one_": ctx.vet_one,
        "_print_": lambda getattr_: _Printer(stdout, getattr_),
        "_super_attr_": ctx.super_attr,
    }
    ctx.globals = glb
    return glb


def _no_input(*args, **kwargs):
    raise RuntimeError("input() has no stdin in the sandbox: put the data in the code (a string or a list), "
                       "or pass files with the filesystem profile")


def _no_open(*args, **kwargs):
    raise PermissionError("open() needs the filesystem profile (SANDBOX_ENABLE_FILESYSTEM=true), which is off "
                          "here: keep data in memory instead, with io.StringIO or io.BytesIO")


def _path_open(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None):
    """open() by path only: an integer would reach the fds the sandbox itself uses
    (stdout, stderr, the result pipe), and a custom opener any fd at all."""
    if not isinstance(file, (str, bytes, os.PathLike)):
        raise TypeError("open() in the sandbox takes a path, not a file descriptor")
    return io.open(file, mode, buffering, encoding, errors, newline)


# --------------------------------------------------------------------------- execute

_ENUM_META = getattr(enum, "EnumType", None) or enum.EnumMeta


@contextlib.contextmanager
def _run_policy(ctx: "_Context"):
    """Checks placed inside library code generators while a restricted snippet runs:
    the enum functional API's names, the data-science libraries' string parsers.
    Undone afterwards (a pooled child pre-warms in restricted mode)."""
    original = _ENUM_META.__dict__["_create_"]

    def checked_create(cls, class_name, names, *args, **kwargs):
        return original(cls, class_name, ctx.check_enum_names(names), *args, **kwargs)

    _ENUM_META._create_ = checked_create
    try:
        with library_policy.StringParsersOff(ctx.refuse_call) as ctx.parsers:
            yield
    finally:
        ctx.parsers = None
        _ENUM_META._create_ = original


def preload(modules: Iterable[str]) -> None:
    """Import ``modules`` now (in the fork server, before any secret or snippet exists), so
    that each child gets them by fork instead of by import."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a missing or broken optional module is skipped
            pass
    library_policy.resolve()


def _base_result() -> dict:
    return {"success": False, "result": None, "variables": [], "error": None,
            "error_type": None, "line": None, "traceback": None, "security_events": []}


class SessionState:
    """What a session keeps from one call to the next: the globals, and with
    RestrictedPython the guards' context (the classes the snippet made, its
    module proxies). Each call gets its own security events."""

    def __init__(self):
        self.globals: dict | None = None
        self.context: _Context | None = None


def execute(code: str, *, restricted: bool, allowed_modules: frozenset[str], stdout, stderr,
            open_files: bool = False, session: SessionState | None = None, names: dict | None = None) -> dict:
    """Compile and run ``code``; return the result dict. Never raises. ``open_files``
    (the filesystem profile) gives the snippet an ``open`` builtin; which paths it
    reaches is decided by the kernel layers (mount namespace and Landlock). With a
    ``session``, the globals of earlier calls are this call's. ``names`` are put in
    the globals (code mode's `tools` and `ToolError`)."""
    events = _Events()
    try:
        return _execute(code, restricted, frozenset(allowed_modules or ()), stdout, stderr, events,
                        open_files, session, names)
    except BaseException as exc:  # noqa: BLE001 - last resort, e.g. MemoryError while reporting
        out = _base_result()
        out["error_type"] = "memory_limit" if isinstance(exc, MemoryError) else "runtime_error"
        out["error"] = cap_text(f"{type(exc).__name__} while reporting the result", MAX_MESSAGE)[0]
        out["security_events"] = events.items
        return out


def _execute(code, restricted, allowed, stdout, stderr, events, open_files=False, session=None,
             names=None) -> dict:
    out = _base_result()
    out["security_events"] = events.items
    try:
        code_obj = _compile(code, restricted)
    except _CompileError as exc:
        for message in exc.rejected:
            events.add("compile_rejected", message)
        out.update(error=cap_text(exc.message, MAX_MESSAGE)[0], error_type=exc.error_type,
                   line=exc.line)
        return out

    if session is not None and session.globals is not None:
        glb, ctx = session.globals, session.context
        if ctx is not None:
            ctx.allowed, ctx.events = allowed, events
    elif restricted:
        ctx = _Context(allowed, events)
        glb = _restricted_globals(ctx, stdout)
        if open_files:
            glb["__builtins__"]["open"] = _path_open
    else:
        ctx, glb = None, {"__name__": SNIPPET_MODULE, "__builtins__": builtins}
    if session is not None:
        session.globals, session.context = glb, ctx
    glb.update(names or {})
    policy = _run_policy(ctx) if ctx is not None else contextlib.nullcontext()
    # `result` is reported when this call sets it: a session's earlier one stays a variable
    earlier_result = "result" in glb
    glb.pop(_LAST_VALUE, None)

    failure = None
    # Reporting stays inside the redirect too: encoding the result may run the snippet's
    # __repr__/__str__, which may print.
    with policy, _recursion_limit(RESTRICTED_RECURSION_LIMIT if restricted else None), \
            contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            exec(code_obj, glb)
        except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt included
            failure = exc
        if failure is None:
            if "result" in glb and (not earlier_result or _stores_result(code_obj)):
                value = glb["result"]
            else:
                value = glb.get(_LAST_VALUE)
            out.update(success=True, result=to_jsonable(value))
        else:
            out.update(_describe_failure(failure, code))
            failure = None  # drop the frames it holds
        glb.pop(_LAST_VALUE, None)
        out["variables"] = _variables(glb)
        for stream in (stdout, stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
    return out


@contextlib.contextmanager
def _recursion_limit(limit: int | None):
    saved = sys.getrecursionlimit()
    if limit is not None:
        sys.setrecursionlimit(max(limit, saved))
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def _is_pandas_options(ob) -> bool:
    """pd.options.display.width = 120 is pd.set_option('display.width', 120), which the
    snippet may call: pandas' DictWrapper validates the key and the value itself."""
    cls = type(ob)
    return cls.__name__ == "DictWrapper" and cls.__module__ == "pandas._config.config"


def _kind_of(obj) -> str:
    """The kind private_names.SAFE_DUNDERS speaks of."""
    if isinstance(obj, type):
        return "class"
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        return "function"
    if isinstance(obj, types.MethodType):
        return "method"
    if isinstance(obj, BaseException):
        return "exception"
    if type(obj) is ModuleProxy:
        return "module"
    return "other"


def _stores_result(code_obj) -> bool:
    """Whether the snippet's top level assigns `result`."""
    return any(i.opname in ("STORE_NAME", "STORE_GLOBAL") and i.argval == "result"
               for i in dis.get_instructions(code_obj))


def _variables(glb: dict) -> list[str]:
    names = sorted(
        name for name, value in glb.items()
        if isinstance(name, str) and name.isidentifier() and not name.startswith("_")
        and not isinstance(value, (ModuleProxy, types.ModuleType))
    )
    return names[:MAX_VARIABLES]


def _describe_failure(exc: BaseException, code: str) -> dict:
    if isinstance(exc, MemoryError):
        error_type = "memory_limit"
    elif getattr(exc, "_sandbox_refused", False) is True:
        error_type = "security_violation"
    else:
        error_type = "runtime_error"
    frames = [(frame.f_code.co_name, lineno) for frame, lineno in traceback.walk_tb(exc.__traceback__)
              if frame.f_code.co_filename == SNIPPET_FILENAME]
    message = _exception_text(exc)
    return {
        "error": cap_text(message, MAX_MESSAGE)[0],
        "error_type": error_type,
        "line": frames[-1][1] if frames else None,
        "traceback": cap_text(_format_traceback(frames, message, code), MAX_MESSAGE)[0],
    }


def _exception_text(exc: BaseException) -> str:
    name = type(exc).__name__
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        text = "<unprintable message>"
    return f"{name}: {text}" if text else name


def _format_traceback(frames: list[tuple[str, int]], message: str, code: str) -> str:
    """Only the snippet's frames: never a host path (site-packages, the server's source)."""
    lines = code.splitlines()
    shown = frames if len(frames) <= 12 else frames[:4] + [None] + frames[-7:]
    out = ["Traceback (most recent call last):"]
    for item in shown:
        if item is None:
            out.append(f"  ... {len(frames) - 11} more frames ...")
            continue
        name, lineno = item
        out.append(f'  File "{SNIPPET_FILENAME}", line {lineno}, in {name}')
        if lineno and 0 < lineno <= len(lines) and lines[lineno - 1].strip():
            out.append("    " + cap_text(lines[lineno - 1].strip(), 200)[0])
    out.append(message)
    return "\n".join(out)


# --------------------------------------------------------------------------- validate

def _tool_errors(tree, tools: dict) -> list[dict]:
    """`tools.<server>.<tool>` references that no call could succeed with."""
    errors = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "tools"):
            continue
        server, tool = node.value.attr, node.attr
        if server not in tools:
            why = f"tools.{server} is not a tool server here (servers: {', '.join(sorted(tools)) or 'none'})"
        elif tool not in tools[server]:
            why = f"tools.{server} has no tool {tool!r} (tools: {', '.join(sorted(tools[server])) or 'none'})"
        elif str(tools[server][tool]).startswith("not allowed:"):
            why = f"tools.{server}.{tool} is {tools[server][tool]}"
        else:
            continue
        errors.append({"line": node.lineno, "message": cap_text(why, MAX_MESSAGE)[0]})
    return errors


def validate(code: str, *, restricted: bool, allowed_modules: frozenset[str], tools: dict | None = None) -> dict:
    """Check ``code`` without running it. Never raises. ``tools`` (code mode's
    listing) lets it report calls to tools that do not exist or are not allowed."""
    try:
        return _validate(code, restricted, frozenset(allowed_modules or ()), tools)
    except BaseException as exc:  # noqa: BLE001
        message = f"validation failed: {type(exc).__name__}"
        return {
            "validation": {"valid": False, "errors": [{"line": None, "message": message}],
                           "message": message},
            "analysis": {"line_count": 0, "character_count": 0, "estimated_complexity": "low"},
            "recommendations": [],
        }


def _validate(code, restricted: bool, allowed: frozenset[str], tools: dict | None = None) -> dict:
    text = code if isinstance(code, str) else ""
    analysis = {"line_count": len(text.splitlines()), "character_count": len(text),
                "estimated_complexity": _size_complexity(text)}
    errors: list[dict] = []
    tree = None
    try:
        tree = _parse(code)
    except _CompileError as exc:
        errors.append({"line": exc.line, "message": cap_text(exc.message, MAX_MESSAGE)[0]})
    if tree is not None:
        analysis["estimated_complexity"] = _complexity(tree)
        if restricted:
            errors.extend(_import_errors(tree, allowed))
        if tools is not None:
            errors.extend(_tool_errors(tree, tools))
        try:
            _compile(code, restricted)
        except _CompileError as exc:
            for message in exc.rejected or [exc.message]:
                match = _LINE_PREFIX.match(message)
                line = int(match.group(1)) if match else exc.line
                errors.append({"line": line, "message": cap_text(message, MAX_MESSAGE)[0]})
    errors.sort(key=lambda e: (e["line"] is None, e["line"] or 0))
    valid = not errors
    message = ("The code is valid" if valid else
               f"Found {len(errors)} problem{'s' if len(errors) != 1 else ''}: {errors[0]['message']}")
    return {
        "validation": {"valid": valid, "errors": errors[:MAX_EVENTS],
                       "message": cap_text(message, MAX_MESSAGE)[0]},
        "analysis": analysis,
        "recommendations": _recommendations(tree, errors, analysis),
    }


def _import_errors(tree: ast.Module, allowed: frozenset[str]) -> list[dict]:
    """Each import statement put through the import hook itself (which imports only allowed
    modules), so validate() and execute() never disagree."""
    ctx = _Context(allowed, _Events())
    errors = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            calls = [(alias.name, (), 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            calls = [(node.module or "", tuple(a.name for a in node.names), node.level)]
        else:
            continue
        for name, fromlist, level in calls:
            try:
                if fromlist == ("*",) and level == 0:
                    ctx.import_star(name)   # as execute() runs it
                    continue
                ctx.import_(name, fromlist=fromlist, level=level)
            except SandboxImportError as exc:
                errors.append({"line": node.lineno, "message": f"Line {node.lineno}: {exc}"})
            except ImportError as exc:
                errors.append({"line": node.lineno,
                               "message": f"Line {node.lineno}: {type(exc).__name__}: {exc}"})
    return errors


def _loop_depth(tree: ast.AST) -> int:
    """The deepest nesting of loops and comprehensions (iterative: trees can be deep)."""
    deepest = 0
    stack = [(tree, 0)]
    loops = (ast.For, ast.While, ast.comprehension)
    while stack:
        node, depth = stack.pop()
        if isinstance(node, loops):
            depth += 1
            deepest = max(deepest, depth)
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))
    return deepest


def _complexity(tree: ast.Module) -> str:
    nodes = sum(1 for _ in ast.walk(tree))
    depth = _loop_depth(tree)
    if nodes > 1500 or depth >= 3:
        return "high"
    if nodes > 300 or depth >= 2:
        return "medium"
    return "low"


def _size_complexity(text: str) -> str:
    lines = len(text.splitlines())
    return "high" if lines > 300 else "medium" if lines > 60 else "low"


def _recommendations(tree, errors: list[dict], analysis: dict) -> list[str]:
    tips = []
    if any("import" in e["message"] for e in errors):
        tips.append("Use only the modules of the enabled profiles; get_sandbox_info lists them.")
    if any("starts with \"_\"" in e["message"] for e in errors):
        tips.append("Names and attributes starting with '_' are not available in the sandbox.")
    if tree is not None:
        if any(isinstance(n, ast.While) and isinstance(n.test, ast.Constant) and n.test.value
               for n in ast.walk(tree)):
            tips.append("Make sure 'while True' loops end: execution has a time limit.")
        last = tree.body[-1] if tree.body else None
        assigns_result = any(isinstance(n, ast.Name) and n.id == "result" and isinstance(n.ctx, ast.Store)
                             for n in ast.walk(tree))
        if not assigns_result and not isinstance(last, ast.Expr):
            tips.append("Set a 'result' variable or end with an expression to return a value.")
    if analysis["estimated_complexity"] == "high":
        tips.append("Consider splitting the code into smaller steps.")
    return tips

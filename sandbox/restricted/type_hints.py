"""Annotations written as text, read without eval: the names, dotted attributes,
subscripts and `|` unions a type annotation is made of, each looked up as the snippet's
code would look it up (its globals, then its builtins; attributes and items through the
guards). What functools.singledispatch's register and typing.get_type_hints need of a
string annotation (`x: "int"`, every annotation under `from __future__ import
annotations`); any other text (a call, an operator, a lambda) is refused, never run."""

from __future__ import annotations

import ast
import functools
import operator
import types
import typing

MAX_TEXT = 1000   # an annotation's text (a longer one is refused rather than parsed)
_strip_annotations = getattr(typing, "_strip_annotations", lambda hint: hint)


class NotAName(Exception):
    """The text is not made of names only (resolve refuses it)."""


def resolve(text: str, ctx, scopes: list):
    """The value `text` names, looked up in `scopes` (dicts, first first); NameError for a
    name none has, NotAName for text that would need evaluating."""
    if len(text) > MAX_TEXT:
        raise NotAName(f"an annotation of {len(text)} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise NotAName(f"{text!r:.80} is not an expression ({type(exc).__name__})") from None
    return _value(tree, ctx, scopes)


def _value(node, ctx, scopes, literal=False):
    """`literal`: inside Literal[...] (or Annotated's metadata), where a constant is itself."""
    if literal and isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id.startswith("_"):
            raise NotAName(f"the name {node.id!r:.80}")
        for scope in scopes:
            if node.id in scope:
                return scope[node.id]
        raise NameError(f"name {node.id!r} is not defined")
    if isinstance(node, ast.Attribute):
        return ctx.getattr(_value(node.value, ctx, scopes), node.attr)
    if isinstance(node, ast.Subscript):
        base = _value(node.value, ctx, scopes)
        if base is typing.Annotated and isinstance(node.slice, ast.Tuple) and node.slice.elts:
            first, *metadata = node.slice.elts
            key = (_value(first, ctx, scopes), *(_value(item, ctx, scopes, True) for item in metadata))
        else:
            key = _value(node.slice, ctx, scopes, literal or base is typing.Literal)
        return ctx.getitem(base, key)
    if isinstance(node, ast.Tuple):   # Dict[str, int]
        return tuple(_value(item, ctx, scopes, literal) for item in node.elts)
    if isinstance(node, ast.List):    # Callable[[int], str]
        return [_value(item, ctx, scopes, literal) for item in node.elts]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _value(node.left, ctx, scopes) | _value(node.right, ctx, scopes)
    if isinstance(node, ast.Constant) and type(node.value) is str:   # x: "'Circle'", Literal["a"] stays below
        return resolve(node.value, ctx, scopes)
    if isinstance(node, ast.Constant) and (node.value is None or node.value is ... or type(node.value) in (int, bool)):
        return node.value
    raise NotAName(f"{type(node).__name__} in an annotation")


def named_class(text: str, func, ctx):
    """The class a string annotation of the snippet's function names (singledispatch's
    register); None for text that names nothing, or names something only by evaluating."""
    names = getattr(func, "__globals__", None)
    if names is not ctx.globals:
        return None
    try:
        return resolve(text, ctx, [names, names["__builtins__"]])
    except (NotAName, NameError, LookupError, TypeError, AttributeError):   # (a refused attribute is refused)
        return None


def get_type_hints(ctx):
    """typing.get_type_hints for the snippet: the annotations of its own functions and
    classes (and of library ones that hold no text), text resolved as above."""
    refuse = ctx.refuse_call

    def hint(value, scopes):
        if value is None:
            return type(None)
        if isinstance(value, str):
            try:
                return resolve(value, ctx, scopes)
            except NotAName as exc:
                raise refuse(f"typing.get_type_hints reads annotation text as names, dotted names, subscripts "
                             f"and | only, never evaluates it ({exc}): annotate with the class itself "
                             "(x: int, x: list[str], x: 'Node')") from None
        if isinstance(value, typing.ForwardRef):
            return hint(value.__forward_arg__, scopes)
        if isinstance(value, (typing._GenericAlias, types.GenericAlias, types.UnionType)):   # (as typing's _eval_type)
            args = tuple(hint(arg, scopes) for arg in value.__args__)
            if args == value.__args__:
                return value
            if isinstance(value, types.GenericAlias):
                return types.GenericAlias(value.__origin__, args)
            if isinstance(value, types.UnionType):
                return functools.reduce(operator.or_, args)
            return value.copy_with(args)
        return value

    def annotations_of(owner, own: bool) -> dict:
        found = owner.__dict__.get("__annotations__", {}) if isinstance(owner, type) else \
            getattr(owner, "__annotations__", None)
        if not isinstance(found, dict):
            return {}
        if not own and any(isinstance(v, (str, typing.ForwardRef)) for v in found.values()):
            raise refuse(f"typing.get_type_hints resolves annotation text for the snippet's own functions and "
                         f"classes only; {getattr(owner, '__qualname__', type(owner).__name__)!s:.80} is a "
                         "library's: inspect.signature(f) shows its annotations as written")
        return dict(found)

    def get_type_hints(obj, globalns=None, localns=None, include_extras=False):
        builtins = ctx.globals["__builtins__"]
        extra = [scope for scope in (localns, globalns) if scope is not None]
        for scope in extra:
            if type(scope) is not dict:
                raise TypeError("globalns and localns are dicts")
        hints = {}
        if isinstance(obj, type):
            for base in reversed(obj.__mro__):
                own = base in ctx.classes
                scopes = [*extra, dict(vars(base)), ctx.globals, builtins] if own else [*extra, builtins]
                for name, value in annotations_of(base, own).items():
                    hints[name] = hint(value, scopes)
        else:
            function = obj.__func__ if type(obj) is types.MethodType else obj
            own = type(function) is types.FunctionType and function.__globals__ is ctx.globals
            if getattr(function, "__annotations__", None) is None and not callable(function):
                raise TypeError(f"{obj!r:.80} is not a module, class, method, or function.")
            scopes = [*extra, ctx.globals, builtins] if own else [*extra, builtins]
            for name, value in annotations_of(function, own).items():
                hints[name] = hint(value, scopes)
        if not include_extras:
            hints = {name: _strip_annotations(value) for name, value in hints.items()}
        return ctx.check_container(hints, "typing.get_type_hints()")

    get_type_hints.__doc__ = typing.get_type_hints.__doc__
    return get_type_hints

"""pandas' expression strings (df.query, df.eval, pd.eval) in a restricted snippet.

pandas parses the string with `ast` and evaluates the tree itself, past the guards: an
attribute (`a.__class__`) is a getattr, a call calls what it found, a subscript indexes,
and a name after '@' is a variable of the frame `level=` picks or of the dicts
`local_dict=`/`global_dict=`/`resolvers=` give (a library's frame: its module's globals).
What the snippet gets instead, while it runs:

* every node pandas visits is one of EXPRESSION_NODES: column names, the snippet's
  variables (@name), constants, lists, comparisons (in, not in too), and/or/not,
  arithmetic and one assignment (df.eval('c = a + b')). No attribute, call or subscript,
  and no name that starts with '_'. Checked where pandas visits the node
  (BaseExprVisitor.visit, pandas_table's checked calls), whoever called pandas;
* query, eval and pandas.eval themselves take a plain str and the keywords of
  TAKEN_KEYWORDS, evaluate with the python engine (numexpr, when installed, compiles a
  string of its own), and see as @variables the public names of the snippet's frame that
  called them: none when a library's code called them (df.pipe(pd.DataFrame.query, ...)).
  By name (df.agg('query')) pandas would call them unwrapped: that is refused
  (pandas_table._public_function_names).
"""

from __future__ import annotations

import ast
import functools
import os
import sys

import sandbox
from sandbox.restricted.libraries.compiled_inputs import signature_of
from sandbox.restricted.libraries.lookup import lookup
from sandbox.restricted.base import SNIPPET_FILENAME

EXPRESSION_NODES = frozenset((
    ast.Module, ast.Expr, ast.Assign, ast.Name, ast.Constant, ast.List, ast.Tuple,
    ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.Invert, ast.UAdd, ast.USub,
    ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
    ast.BitAnd, ast.BitOr, ast.BitXor,
    ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn,
    ast.Load, ast.Store,
))
CONSTANT_TYPES = (int, float, complex, str, bool, type(None))
LOCAL_TAG = "__pd_eval_local_"          # pandas' spelling of '@name' (pandas.core.computation.ops)
TAKEN_KEYWORDS = {"query": ("inplace", "engine", "parser"), "eval": ("inplace", "engine", "parser"),
                  "pandas.eval": ("parser", "engine")}
METHODS = {"query": "pandas.DataFrame", "eval": "pandas.DataFrame"}   # method name -> the class it is wrapped on

ADVICE = ("pandas expressions here take column names, @variables, constants, lists, comparisons "
          "(== != < <= > >= in, not in), and/or/not and arithmetic; for a method, a function or an index "
          "(.str.contains(), .isna(), sqrt(), x[0]) filter with a mask or compute the column first: "
          "df[df['name'].str.contains('x')], df.assign(r=np.sqrt(df['a']))")


def node_refusal(visitor=None, node=None, *args, **kwargs) -> str | None:
    """The check of BaseExprVisitor.visit(node): why pandas may not evaluate this node, or None."""
    kind = type(node)
    if kind is str:
        return None  # (the string itself: pandas parses it, then visits what it parsed)
    if kind not in EXPRESSION_NODES:
        what = kind.__name__ if issubclass(kind, ast.AST) else f"a {kind.__name__} object"
        return f"{what} is not taken: {ADVICE}"
    if kind is ast.Name:
        name = node.id[len(LOCAL_TAG):] if node.id.startswith(LOCAL_TAG) else node.id
        if type(name) is not str or name.startswith("_"):
            return f"the name {name!s:.40} starts with '_': {ADVICE}"
    if kind is ast.Constant and type(node.value) not in CONSTANT_TYPES:
        return f"a {type(node.value).__name__} constant is not taken: {ADVICE}"
    return None


def evaluator(function, refuse, *, label: str = "pandas.eval", wrapped_on: type | None = None):
    """`function` (pandas.eval, or DataFrame.query/eval bound or read from the class) as the
    snippet gets it. `wrapped_on`: the class whose method it is, when read from the class
    (its first argument must then be one, and the signature is the class's function's)."""
    if getattr(function, "sandbox_guarded", False):
        return function
    signature = signature_of(getattr(wrapped_on, label.rpartition(".")[2]) if wrapped_on is not None else function)
    taken = TAKEN_KEYWORDS[label if label == "pandas.eval" else label.rpartition(".")[2]]

    @functools.wraps(function)
    def checked(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{label}(): {exc}") from None
        arguments = dict(bound.arguments)
        arguments.update(arguments.pop("kwargs", {}))
        if wrapped_on is not None:
            self = arguments.pop("self", None)
            if wrapped_on not in type(self).__mro__:
                raise refuse(f"{label} takes a {wrapped_on.__name__} as self, not {type(self).__name__}")
        expr = arguments.pop("expr", None)
        extra = sorted(set(arguments) - set(taken))
        if extra:
            raise refuse(f"{label}(): the keyword {extra[0]!r} is not taken here (only the expression and "
                         f"{', '.join(taken)}): name your variables in the expression as @name")
        if type(expr) is not str:
            raise refuse(f"{label}(): the expression must be a str, not {type(expr).__name__}")
        engine, parser = arguments.get("engine"), arguments.get("parser", "pandas")
        if engine is not None and not (type(engine) is str and engine == "python"):
            raise refuse(f"{label}(): expressions are evaluated with engine='python' here (leave engine= out)")
        if not (type(parser) is str and parser in ("pandas", "python")):
            raise refuse(f"{label}(): parser is 'pandas' or 'python'")
        names = _public_names(_caller(sys._getframe(1)))
        call = dict(engine="python", parser=parser, local_dict=names, global_dict={})
        if "inplace" in arguments:
            call["inplace"] = arguments["inplace"]
        return function(*((self,) if wrapped_on is not None else ()), expr, **call)
    checked.sandbox_guarded = True
    return checked


def evaluating_method(obj, name: str, method, refuse):
    """obj.query / obj.eval (already looked up) wrapped, when obj is a DataFrame, a
    subclass of one, or the class (unbound: DataFrame.query(df, ...))."""
    owner = lookup(METHODS[name])
    if type(obj) is super and obj.__self__ is not None:
        obj = obj.__self__   # super().query in a subclass: the same method
    cls = obj if isinstance(obj, type) else type(obj)
    if not isinstance(owner, type) or owner not in cls.__mro__ or not callable(method):
        return method
    if next(klass for klass in cls.__mro__ if name in vars(klass)) is not owner:
        return method   # a subclass's own query (the snippet's): pandas' is reached only through its code
    unbound = isinstance(obj, type) and getattr(method, "__self__", None) is None
    return evaluator(method, refuse, label=f"{owner.__name__}.{name}", wrapped_on=owner if unbound else None)


_OWN_FILES = os.path.dirname(sandbox.__file__) + os.sep   # (the whole package; as code objects name their files)


def _caller(frame):
    """The first frame that is not the sandbox's own (the call guard, a library method's
    self check): the snippet's, or a library's that called the method."""
    while frame is not None and frame.f_code.co_filename.startswith(_OWN_FILES):
        frame = frame.f_back
    return frame


def _public_names(frame) -> dict:
    """The @variables: the public names of the snippet's frame (its locals over its
    globals), or none when the caller is not the snippet's code."""
    if frame is None or frame.f_code.co_filename != SNIPPET_FILENAME:
        return {}
    names = {}
    for scope in (frame.f_globals, frame.f_locals):
        names.update((key, value) for key, value in scope.items() if type(key) is str and not key.startswith("_"))
    return names

"""What a formula term may be when patsy evaluates it (statsmodels' "y ~ np.log(x) + C(g)").

patsy evaluates each term of a formula as Python, with eval() and the real builtins, in
the namespace of the caller's frame: `__import__('os')` in a formula is the real import.
A term is checked before it is evaluated: it is an expression built of names (columns or
the snippet's variables, none private, no builtin), numbers and strings, operators, and calls
of the functions below only. What a term can then reach is the snippet's own values and
the data's, which patsy turns into columns.
"""

from __future__ import annotations

import ast
import builtins
import re

# patsy's own formula functions, and numpy's element-wise functions as np.<name>
FUNCTIONS = frozenset({"C", "I", "Q", "center", "standardize", "scale", "bs", "cr", "cc", "te",
                       "Treatment", "Sum", "Diff", "Helmert", "Poly", "log", "exp", "sqrt", "abs"})
NUMPY_FUNCTIONS = frozenset({"log", "log1p", "log2", "log10", "exp", "expm1", "sqrt", "abs", "square", "power",
                             "sin", "cos", "tan", "arctan", "sign", "floor", "ceil", "round", "clip",
                             "maximum", "minimum"})
NUMPY_NAMES = frozenset({"np", "numpy"})
# the names patsy gives the stateful transforms it rewrote (center(x) -> _patsy_stobj0__center__.transform(x))
_STATEFUL = re.compile(r"_patsy_stobj\d+__[A-Za-z]\w*__\Z")
_STATEFUL_METHODS = frozenset({"transform", "memorize_chunk", "memorize_finish"})
# builtins a term may name when nothing of the snippet's has the name: eval() falls back on the
# real builtins, and a term like C(eval) would hand the real eval to the snippet as a level
_BUILTINS = frozenset(vars(builtins)) - {"abs"}
_LITERALS = (int, float, complex, str, bool, type(None))
_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Tuple, ast.List, ast.Load,
          ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.keyword)
MAX_TERM = 2000

ADVICE = ("a formula term is a column or a variable, a number, operators, and calls of patsy's functions (C, I, "
          "Q('name'), center, standardize, bs...) or numpy's element-wise ones (np.log, np.exp, np.sqrt...): "
          "compute anything else into a column first, e.g. df['z'] = f(df['x']), then 'y ~ z'")


def refusal(term, defined=None) -> str | None:
    """Why patsy may not evaluate `term`, or None. `defined(name)`: does the namespace it is
    evaluated in have `name` (else a builtin's name is refused)?"""
    if type(term) is not str:
        return f"a formula term is a plain str ({ADVICE})"
    if len(term) > MAX_TERM:
        return f"a formula term of more than {MAX_TERM} characters"
    try:
        tree = ast.parse(term.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None  # (patsy's own error: it cannot compile it either)
    for node in ast.walk(tree):
        why = _node_refusal(node)
        if why is None and isinstance(node, ast.Name) and node.id in _BUILTINS and not (defined and defined(node.id)):
            why = f"the builtin {node.id}"
        if why is not None:
            return f"{why} in a formula term: {ADVICE}"   # (the term is the snippet's own text: not echoed)
    return None


def _node_refusal(node) -> str | None:
    if isinstance(node, _NODES):
        if isinstance(node, ast.keyword) and node.arg is None:
            return "** in a call"
        return None
    if isinstance(node, ast.Name):
        private = node.id.startswith("_") and not _STATEFUL.match(node.id)
        return f"the private name {node.id}" if private else None
    if isinstance(node, ast.Constant):
        return None if type(node.value) in _LITERALS else "a literal of another kind"
    if isinstance(node, ast.Call):
        return _call_refusal(node)
    if isinstance(node, ast.Attribute):
        return None if _known_function(node) else f"the attribute .{node.attr}"
    return f"{type(node).__name__.lower()} syntax"


def _call_refusal(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        if func.id not in FUNCTIONS:
            return f"a call of {func.id}()"
        if func.id == "Q" and not (len(node.args) == 1 and not node.keywords and _plain_name(node.args[0])):
            return "Q() of anything but a column's name as a string"
        return None
    if _known_function(func):
        return None
    return "a call of anything but a named function"


def _known_function(node) -> bool:
    """np.log, numpy.sqrt, or a stateful transform's own method (patsy's rewrite)."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return False
    owner, attr = node.value.id, node.attr
    return (owner in NUMPY_NAMES and attr in NUMPY_FUNCTIONS) or (
        _STATEFUL.match(owner) is not None and attr in _STATEFUL_METHODS)


def _plain_name(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is str and not node.value.startswith("_")

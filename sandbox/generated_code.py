"""Python source that a library generates from the snippet's objects (or is
handed) and then runs with the real builtins, checked before it is compiled.

sympy's lambdify (behind nsolve, plot, evalf of sums, random sampling) prints
an expression to the source of a function: a Function or Symbol named
"(lambda a: __import__('os').getcwd())" is printed as it is, and runs outside
every RestrictedPython guard. What lambdify legitimately generates is plain
arithmetic: one function whose body assigns and returns expressions made of
numbers, its own names, calls and module attributes (numpy.sin, mpmath.mpf,
builtins.sum). Anything else, such as an underscore name or attribute, a
builtin that is not arithmetic, a string (other than an einsum subscript),
an f-string or a walrus, means a name was code, and the source is refused.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import tokenize

# builtins that arithmetic code calls (lambdify prints builtins.sum(... for i in range(...)))
ARITHMETIC_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "complex", "divmod", "enumerate", "float", "int", "len", "list",
    "map", "max", "min", "pow", "range", "reversed", "round", "slice", "sorted", "sum", "tuple", "zip",
    "True", "False", "None",
})
_GENERATED_NAMES = re.compile(r"_lambdifygenerated|_Dummy_\d+")
_EINSUM_SUBSCRIPTS = re.compile(r"[A-Za-z,.\->]*")
_NODES = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Return, ast.Assign, ast.Delete, ast.Expr,
    ast.Name, ast.Load, ast.Store, ast.Del, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare,
    ast.IfExp, ast.Call, ast.keyword, ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple, ast.List,
    ast.Dict, ast.Starred, ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.comprehension,
    ast.operator, ast.unaryop, ast.cmpop, ast.boolop,
)


def refusal(source: str) -> str | None:
    """Why `source` is not plain generated arithmetic, else None."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None   # compile() refuses it on its own: nothing runs
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].decorator_list:
        return "it is not one plain function"
    function = tree.body[0]
    # its parameters and variables: a symbol named like a builtin (input, id) is one of
    # these, never the builtin, wherever the function names it
    bound = {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}
    bound |= {target.id for statement in function.body if isinstance(statement, ast.Assign)
              for target in statement.targets if isinstance(target, ast.Name)}
    einsum_subscripts = {id(call.args[0]) for call in ast.walk(tree) if isinstance(call, ast.Call) and call.args
                         and _called_name(call.func).endswith("einsum")}
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            return f"it contains {type(node).__name__}"
        if isinstance(node, ast.Name) and not _plain_name(node.id, bound):
            return f"it names {node.id!r}"
        if isinstance(node, ast.arg) and not _plain_name(node.arg, bound):
            return f"it names {node.arg!r}"
        if isinstance(node, ast.keyword) and node.arg is not None and node.arg.startswith("_"):
            return f"it names {node.arg!r}"
        if isinstance(node, ast.Attribute) and not _plain_attribute(node):
            return f"it reads .{node.attr}"
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and not (
                id(node) in einsum_subscripts and isinstance(node.value, str)
                and _EINSUM_SUBSCRIPTS.fullmatch(node.value)):
            return "it contains a string"
    return None


def _plain_name(name: str, bound: set) -> bool:
    if name.startswith("_"):
        return bool(_GENERATED_NAMES.fullmatch(name))
    return name in bound or not hasattr(builtins, name) or name in ARITHMETIC_BUILTINS


def _plain_attribute(node: ast.Attribute) -> bool:
    """module.function (numpy.sin, scipy.special.gamma, builtins.sum): never
    private, read off names only, and only arithmetic off builtins."""
    if node.attr.startswith("_"):
        return False
    root = node.value
    while isinstance(root, ast.Attribute):
        if root.attr.startswith("_"):
            return False
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    return root.id != "builtins" or (node.value is root and node.attr in ARITHMETIC_BUILTINS)


def _called_name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


# sympy parses text with eval (sympify, S, parse_expr). Inside the library it parses
# numbers it wrote itself: nsimplify the fractions and constants mpmath.identify found
# ('(3*pi)/2'), integrate its lookup table of Meijer G-functions ('3/2'). Such text is
# arithmetic on numbers and a few constants and functions, nothing else.
MATH_NAMES = frozenset({"pi", "E", "I", "oo", "sqrt", "log", "exp"})
_MATH_OPERATORS = frozenset({"+", "-", "*", "/", "**", "(", ")"})
_LAYOUT = frozenset({tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER})


def is_plain_math(text) -> bool:
    """`text` is numbers, + - * / ** and parentheses, and MATH_NAMES only."""
    if type(text) is not str or len(text) > 2000:
        return False
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    return all(token.type in _LAYOUT or token.type == tokenize.NUMBER
               or (token.type == tokenize.OP and token.string in _MATH_OPERATORS)
               or (token.type == tokenize.NAME and token.string in MATH_NAMES)
               for token in tokens)

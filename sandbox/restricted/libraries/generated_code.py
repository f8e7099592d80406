"""Python source that a library generates from the snippet's objects (or is
handed) and then runs with the real builtins, checked before it is compiled.

sympy's lambdify (behind nsolve, plot, evalf of sums, random sampling) prints
an expression to the source of a function: a Function or Symbol named
"(lambda a: __import__('os').getcwd())" or "numpy.lib.stride_tricks.as_strided"
is printed as it is, and runs outside every RestrictedPython guard. What
lambdify legitimately generates is arithmetic: one function whose body assigns
and returns expressions made of numbers, its own names, the expression's free
symbols and implemented functions, and functions of the math modules lambdify
prints (numpy.sin, scipy.special.gamma, builtins.sum; sin when it prints them
bare). Anything else (another module or attribute, what the sandbox's policy
refuses in those modules, an underscore name, a builtin that is not arithmetic,
a string other than an einsum subscript or float('nan'), an f-string, a walrus)
means a name was code, and the source is refused. (What the printer records of
its own choices is not evidence: a snippet's class may print itself, and is
handed the printer to do it.)
"""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import re
import tokenize

# builtins that arithmetic code calls (lambdify prints builtins.sum(... for i in range(...)))
ARITHMETIC_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "complex", "divmod", "enumerate", "float", "int", "len", "list",
    "map", "max", "min", "pow", "range", "reversed", "round", "slice", "sorted", "sum", "tuple", "zip",
    "True", "False", "None",
})
_ARITHMETIC_OF_BUILTINS = frozenset(f"builtins.{name}" for name in ARITHMETIC_BUILTINS)
_GENERATED_NAMES = re.compile(r"_lambdifygenerated|_Dummy_\d+")
_STRING_ARGUMENTS = {"einsum": re.compile(r"[A-Za-z,.\->]*"), "float": re.compile(r"-?(nan|inf)")}
_NODES = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Return, ast.Assign, ast.Delete, ast.Expr,
    ast.Name, ast.Load, ast.Store, ast.Del, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare,
    ast.IfExp, ast.Call, ast.keyword, ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple, ast.List,
    ast.Dict, ast.Starred, ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.comprehension,
    ast.operator, ast.unaryop, ast.cmpop, ast.boolop,
)


def refusal(source: str, names: frozenset = frozenset(), is_door=lambda name: True) -> str | None:
    """Why `source` is not plain generated arithmetic, else None. `names`: the bare
    names the expression brings (its free symbols, its implemented functions);
    `is_door(name)`: whether a bare name ("sin") or a dotted one ("numpy.linalg.inv")
    would reach anything but a math function of the modules lambdify takes its
    names from (a module, numpy's ndarray or load)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None   # compile() refuses it on its own: nothing runs
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].decorator_list:
        return "it is not one plain function"
    function = tree.body[0]
    # its parameters and variables: a symbol named like a builtin (input, id) is one of
    # these wherever the function names it, never the builtin
    parameters = function.args
    bound = {arg.arg for arg in (*parameters.posonlyargs, *parameters.args, *parameters.kwonlyargs,
                                 parameters.vararg, parameters.kwarg) if arg is not None}
    bound |= {node.id for statement in function.body if isinstance(statement, ast.Assign)
              for target in statement.targets for node in ast.walk(target) if isinstance(node, ast.Name)}
    # the names of its lambdas and comprehensions (a sum's index) hold inside them only:
    # never a builtin's name, which outside them would be the builtin
    bound |= {name for node in ast.walk(function) for name in _inner_names(node) if not hasattr(builtins, name)}
    known = bound | names | ARITHMETIC_BUILTINS
    strings = {id(call.args[0]): pattern for call in ast.walk(tree) if isinstance(call, ast.Call) and call.args
               for called, pattern in _STRING_ARGUMENTS.items() if _called_name(call.func) == called}
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            return f"it contains {type(node).__name__}"
        if isinstance(node, ast.Name) and id(node) in inner:
            continue   # the module of numpy.sin: the whole chain is checked below
        if isinstance(node, (ast.Name, ast.arg)):
            name = node.id if isinstance(node, ast.Name) else node.arg
            if name.startswith("_") and not _GENERATED_NAMES.fullmatch(name) or (
                    name not in known and not name.startswith("_")
                    and (hasattr(builtins, name) or is_door(name))):
                return f"it names {name!r}"
        if isinstance(node, ast.keyword) and node.arg is not None and node.arg.startswith("_"):
            return f"it names {node.arg!r}"
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            dotted = _dotted(node)
            if dotted is None or dotted.split(".")[0] in bound | names or (
                    dotted not in _ARITHMETIC_OF_BUILTINS and is_door(dotted)):
                return f"it reads {dotted or '.' + node.attr}"
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and not (
                id(node) in strings and isinstance(node.value, str) and strings[id(node)].fullmatch(node.value)):
            return "it contains a string"
    return None


def _inner_names(node: ast.AST) -> list:
    if isinstance(node, ast.Lambda):
        return [arg.arg for arg in ast.walk(node.args) if isinstance(arg, ast.arg)]
    if isinstance(node, ast.comprehension):
        return [name.id for name in ast.walk(node.target) if isinstance(name, ast.Name)]
    return []


def _dotted(node: ast.Attribute) -> str | None:
    """numpy.linalg.inv for that chain of attributes off a name, else None."""
    parts = [node.attr]
    while isinstance(node.value, ast.Attribute):
        node = node.value
        parts.append(node.attr)
    if not isinstance(node.value, ast.Name):
        return None
    return ".".join([node.value.id, *reversed(parts)])


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


# What agents give sympify: 'x**2 + 2*x + 1', 'sin(t)*exp(-t/5)', 'a*b >= c'. Names that
# neither sympy nor the builtins define become symbols (called: undefined functions) in
# sympy's parser, as text it writes into the code it runs ("Symbol('x')"); a name they
# define stays code, so it is one of these math ones.
MATH_CONSTANTS = frozenset({"pi", "E", "I", "oo", "zoo", "nan", "EulerGamma", "GoldenRatio", "Catalan"})
MATH_FUNCTIONS = frozenset({
    "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot", "asec", "acsc", "atan2",
    "sinh", "cosh", "tanh", "coth", "asinh", "acosh", "atanh", "acoth", "exp", "log", "ln", "sqrt", "cbrt",
    "root", "Abs", "abs", "sign", "floor", "ceiling", "frac", "factorial", "binomial", "gamma", "loggamma",
    "beta", "erf", "erfc", "re", "im", "conjugate", "arg", "Min", "Max", "min", "max", "Mod", "gcd", "lcm",
    "Rational", "Integer", "Float", "diff", "integrate", "limit", "Derivative", "Integral", "Sum", "Product",
    "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "simplify", "expand", "factor", "sinc", "zeta", "besselj", "bessely",
    "Heaviside", "DiracDelta",
})
_MATH_TEXT_OPERATORS = _MATH_OPERATORS | {",", "%", "^", "<", ">", "<=", ">="}


def math_text_refusal(text, *, known, local_names=frozenset(), local_callables=frozenset()) -> str | None:
    """Why sympy's parser (with its standard transformations) may not take `text`, else
    None. Numbers, + - * / ** % ^ < > <= >=, parentheses and commas, and names: ASCII
    identifiers (compile() would read a full-width "ｅｖａｌ" that no check saw as eval)
    that are not keywords and do not start with '_'. A name `known(name)` says sympy or
    the builtins define must be one of MATH_CONSTANTS or MATH_FUNCTIONS, and called, one
    of MATH_FUNCTIONS; `local_names` (the caller's local_dict) are its own values, and
    only `local_callables` of them (sympy function classes) are called."""
    if type(text) is not str or len(text) > 5000 or any(c in text for c in "\n\r;\\"):
        return "it is not one line of math"
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in _LAYOUT]
    except (tokenize.TokenError, SyntaxError):
        return "it does not read as math"
    for index, token in enumerate(tokens):
        if token.string == "(" and index and tokens[index - 1].string == ")":
            return "it calls the value of an expression: (f)(x)"   # (a local value, called past the rule below)
        if token.type == tokenize.NUMBER or token.type == tokenize.OP and token.string in _MATH_TEXT_OPERATORS:
            continue
        name = token.string
        if token.type != tokenize.NAME or not name.isascii() or keyword.iskeyword(name) or name.startswith("_"):
            return f"it contains {name[:20]!r}"
        called = index + 1 < len(tokens) and tokens[index + 1].string == "("
        if name in local_names:
            if called and name not in local_callables:
                return f"it calls {name!r}, which local_dict gives as a value"
        elif known(name) and name not in (MATH_FUNCTIONS if called else MATH_FUNCTIONS | MATH_CONSTANTS):
            return f"it names {name!r}, which is not a math function here"
    return None

"""sympy's (and mpmath's) doors: its string parser, the Python source lambdify generates
and runs, functions that write into the caller's globals or import modules by name, and
mpmath's identify(), which evaluates its constants' names."""

from __future__ import annotations

import builtins
import functools
import importlib
import sys
import types

from sandbox.restricted.libraries import generated_code
from sandbox.restricted.libraries.compiled_inputs import signature_of
from sandbox.restricted.libraries.table import TEST_RUNNER_ADVICE, Table

# sympy.lambdify as the snippet calls it. What it generates is checked wherever it is made
# (checked_source: the source is arithmetic, and what the printer imports); the snippet's
# call also names the modules, by their names only (a str lambdify knows, or a dict of its
# own functions: a module object's __dict__ would be the namespace), and no printer or cse
# function of its own.
LAMBDIFY_MODULE_NAMES = ("numpy", "scipy", "mpmath", "math", "sympy")
_LAMBDIFY_ADVICE = (f"pass modules as one of {', '.join(map(repr, LAMBDIFY_MODULE_NAMES))} or a dict of your own "
                    "functions (or a list of those), and leave printer= and cse= as they are (cse=True is taken)")


def _lambdify_modules_refusal(modules, nested: bool = False) -> str | None:
    if modules is None or type(modules) is str and modules in LAMBDIFY_MODULE_NAMES:
        return None
    if type(modules) is dict:
        bad = [key for key in modules if type(key) is not str or not key.isidentifier() or key.startswith("_")]
        return f"the name {str(bad[0])[:40]!r} in modules is not a public identifier" if bad else None
    if type(modules) in (list, tuple) and not nested:
        return next(filter(None, (_lambdify_modules_refusal(m, nested=True) for m in modules)), None)
    return f"modules={str(modules)[:60]!r} is not taken"


class _TextInExpression(ValueError):
    pass


def _without_text(value, depth: int = 0):
    """`args` or `expr` of lambdify, with its lists and tuples copied (the snippet's code
    can run while lambdify works, and change its own list between this look and lambdify's):
    lambdify pastes a str it finds there into the source as it is, where a symbol is printed."""
    if type(value) is str:
        raise _TextInExpression
    if type(value) in (list, tuple) and depth < 20:
        return type(value)(_without_text(item, depth + 1) for item in value)
    if isinstance(value, (list, tuple)):
        raise _TextInExpression   # (a subclass's iteration could answer differently the second time)
    return value


def _checked_lambdify(function, refuse):
    signature = signature_of(function)
    kinds = {"printer": (type(None),), "cse": (bool,), "dummify": (bool,), "use_imps": (bool,),
             "docstring_limit": (int, type(None))}

    @functools.wraps(function)
    def checked(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)   # (a mismatch is the call's own TypeError)
        arguments = bound.arguments
        why = _lambdify_modules_refusal(arguments.get("modules"))
        for name, taken in kinds.items():
            if why is None and name in arguments and type(arguments[name]) not in taken:
                why = f"{name}= of type {type(arguments[name]).__name__} is not taken"
        if why is not None:
            raise refuse(f"sympy.lambdify: {why}: {_LAMBDIFY_ADVICE}")
        try:
            for name in ("args", "expr"):
                if name in arguments:
                    arguments[name] = _without_text(arguments[name])
        except _TextInExpression:
            raise refuse("sympy.lambdify: arguments and expressions are sympy objects (in plain lists or tuples) "
                         "here, not strings: x = sympy.symbols('x'); f = sympy.lambdify(x, x**2 + 1)") from None
        return function(*bound.args, **bound.kwargs)
    return checked


# the top-level names sympy's own code imports through sympy.external.import_module
_SYMPY_OPTIONAL_LIBRARIES = frozenset({
    "numpy", "scipy", "matplotlib", "mpl_toolkits", "sympy", "mpmath", "gmpy2", "gmpy", "flint", "pycosat", "pysat",
    "z3", "pymc", "pymc3", "jax", "tensorflow", "torch", "cupy", "aesara", "theano", "numexpr", "numba",
    "llvmlite", "lark", "antlr4", "matchpy", "pyglet", "lfortran", "clang", "lxml", "IPython"})

_NO_PARSING = ("sympy parses math text here: numbers, operators, symbol names and math functions (sin, exp, sqrt...), "
               "no attributes, strings, indexing or other functions; or build expressions from sympy.symbols('x') "
               "and operators")
# sympify's own transformations: names become symbols (the rest, 'all' and 'implicit', split
# names into letters and apply known names: there, plain arithmetic only)
_NAMING_TRANSFORMATIONS = ("lambda_notation", "auto_symbol", "repeated_decimals", "auto_number", "factorial_notation",
                           "convert_xor", "rationalize")


def _math_text_only(s=None, local_dict=None, transformations=(), global_dict=None, *args, **kwargs):
    """sympy's parser, reached by sympify, S, parse_expr and the library's own numbers:
    math text (generated_code.math_text_refusal) with sympify's own transformations and
    no global_dict; else plain arithmetic only (generated_code.is_plain_math). Only sympy's
    own token transformations: a function of the snippet's could emit any code. (Not given:
    parse_expr's default, the standard ones; none at all keeps every name a name, which
    the same check has seen.)"""
    parser = sys.modules.get("sympy.parsing.sympy_parser")
    own = {id(value) for value in vars(parser).values()} if parser is not None else set()
    if not isinstance(transformations, str) and (
            type(transformations) not in (tuple, list) or not all(id(t) in own for t in transformations)):
        return "only sympy's own parser transformations are used in the sandbox"
    naming = {id(getattr(parser, name, None)) for name in _NAMING_TRANSFORMATIONS}
    if global_dict is None and type(local_dict) in (dict, type(None)) and not isinstance(transformations, str) \
            and all(id(t) in naming for t in transformations):
        why = generated_code.math_text_refusal(s, known=_sympy_knows, **_local_names(local_dict))
        return f"{_NO_PARSING} ({why})" if why else None
    return None if generated_code.is_plain_math(s) else _NO_PARSING


def _sympy_knows(name: str) -> bool:
    """A name sympy's parser keeps as code: sympy's namespace, or the builtins'."""
    return hasattr(sys.modules.get("sympy"), name) or hasattr(builtins, name)


def _local_names(local_dict) -> dict:
    if not local_dict:
        return {}
    function_class = getattr(sys.modules.get("sympy.core.function"), "FunctionClass", ())
    names = {key for key in local_dict if type(key) is str}
    return {"local_names": names,
            "local_callables": {key for key in names if isinstance(dict.get(local_dict, key), function_class)}}


def _expression_names(evaluator=None, funcname=None, args=None, expr=None, *rest, **kwargs):
    """For lambdify's _EvaluatorPrinter.doprint(funcname, args, expr): the bare names
    lambdify binds for the expression (its symbols, its implemented functions)."""
    from sympy import Symbol
    from sympy.core.function import AppliedUndef
    names = set()
    todo = [expr, *kwargs.get("cses", ())]
    while todo:
        item = todo.pop()
        if type(item) in (list, tuple):
            todo.extend(item)
        elif hasattr(item, "atoms"):
            names |= {str(symbol) for symbol in item.atoms(Symbol)}
            names |= {str(call.func) for call in item.atoms(AppliedUndef) if hasattr(call, "_imp_")}
    return frozenset(names)


_LAMBDIFY_MODULES = ("numpy", "scipy.special", "scipy", "mpmath", "math", "cmath", "sympy")
# the modules whose functions lambdify's printers name in full (numpy.linalg.inv)
_LAMBDIFY_MATH_MODULES = frozenset({"numpy", "numpy.linalg", "numpy.fft", "scipy.special", "scipy.integrate",
                                    "scipy.constants", "mpmath", "math", "cmath", "sympy"})
_CHECKED_SOURCE_ADVICE = ("name symbols and functions with plain identifiers (x, y1, f) that are not Python "
                          "builtins, and build expressions from them with operators")


class _GeneratedSource:
    """The check of lambdify's generated source (the code it then runs with the real
    builtins): arithmetic of the expression's names, no name that reaches a module or an
    object the policy refuses, stands in for or guards, and printer imports of math
    functions only."""

    def __init__(self, policy):
        self.policy = policy

    def __call__(self, source, args, kwargs) -> str | None:
        why = generated_code.refusal(source, _expression_names(*args, **kwargs), is_door=self._lambdify_door) \
            if isinstance(source, str) else None
        return why or self._printer_imports_refusal(args[0] if args else None)

    def _lambdify_door(self, name: str) -> bool:
        """A name in lambdify's source that would reach a module or a door: bare, in the
        modules lambdify's namespace is made of (numpy's ndarray, load, lib); dotted,
        anything but a function of the math modules (numpy.lib.stride_tricks.as_strided)."""
        if "." in name:
            module_name, _, attr = name.rpartition(".")
            module = sys.modules.get(module_name) if module_name in _LAMBDIFY_MATH_MODULES else None
            return module is None or self._door_object(getattr(module, attr, None))
        return any(self._door_object(getattr(sys.modules.get(module_name), name, None))
                   for module_name in _LAMBDIFY_MODULES)

    def _printer_imports_refusal(self, evaluator) -> str | None:
        """After printing, lambdify runs "from %s import %s" for each module and name its
        printer recorded (printer.module_imports). The printer is handed to whatever prints
        itself, which can write there: every entry must be a plain name that a math module
        (or sympy's own module of a function it printed) gives, and no door. Why one is
        refused, else None."""
        printer = getattr(getattr(evaluator, "_exprrepr", None), "__self__", None)
        imports = getattr(printer, "module_imports", None)
        if imports is None:
            return None
        if not isinstance(imports, dict):
            return "its printer's module imports are not a dict"
        for module, names in dict.items(imports):
            if type(module) is not str or type(names) not in (set, frozenset):
                return "its printer's module imports are not names"
            for name in names:
                if type(name) is not str or not name.isidentifier() or name.startswith("_") or \
                        not self._printer_import_allowed(module, name):
                    return f"it imports {str(name)[:60]!r} from {module[:60]!r}"
        return None

    def _printer_import_allowed(self, module: str, name: str) -> bool:
        if module == "functools":
            return name == "reduce"    # (the numpy printer's Max and Min)
        if module not in _LAMBDIFY_MATH_MODULES and not (module.startswith("sympy.") and module in sys.modules):
            return False
        try:
            loaded = sys.modules.get(module) or importlib.import_module(module)  # (a fixed math module's name)
        except ImportError:
            return True   # (lambdify's own import fails the same way)
        return not self._door_object(getattr(loaded, name, None))

    def _door_object(self, found) -> bool:
        policy = self.policy
        return found is not None and (isinstance(found, types.ModuleType) or id(found) in policy.refused_ids
                                      or id(found) in policy.replaced_ids or id(found) in policy.keyword_guards)


_NOT_GIVEN = object()


def _assumptions_only(mcl=None, name=None, bases=_NOT_GIVEN, __dict__=_NOT_GIVEN, **kwargs):
    """sympy.Function('f', **kwargs) (sympy's UndefinedFunction) puts every keyword, and
    a __dict__ given, into the namespace of the class it makes: a dunder such as
    __reduce_ex__ there skips the rules of the snippet's own class statements. Public
    names (assumptions such as real=True, nargs) are what sympy documents."""
    if bases is not _NOT_GIVEN or __dict__ is not _NOT_GIVEN:
        return ("bases and __dict__ are not taken in the sandbox: subclass sympy.Function in a class "
                "statement instead")
    for key in kwargs:
        if type(key) is not str or key.startswith("_"):
            return (f"the keyword {str(key)[:40]!r} would become an attribute of the class it makes: pass "
                    "assumptions (real=True) and public names only, or subclass sympy.Function in a class statement")
    return None


def _constants_by_value(ctx=None, x=None, constants=None, *args, **kwargs):
    """mpmath's identify() (reached as sympy's mp context: sympy.core.evalf.mp) evaluates
    each constant given as a string with eval() and the real builtins; a dict of values
    (what sympy's nsimplify passes) is never evaluated. An empty list or tuple is no
    constant at all; anything else could turn truthy between this check and the call."""
    if constants is None or isinstance(constants, dict) or (type(constants) in (list, tuple) and not constants):
        return None
    return ("identify() evaluates the names of its constants as Python: pass them as a dict of values, "
            "e.g. identify(x, {'pi': mp.pi, 'e': mp.e})")


def table(policy) -> Table:
    return Table(
        refused_objects={
            # functions that import any module by name (past the import allow-list)
            "sympy.core.cache.lazy_function": "lazy_function imports a module by name and calls its function: "
                                              "import an allowed module yourself and call the function",
            # the libraries' test runners import test files, conftest.py and pytest.ini from the working
            # directory with the real builtins: sympy.test(path) ran the snippet's own file
            **dict.fromkeys(("sympy.test", "sympy.doctest", "mpmath.runtests", "mpmath.doctests"),
                            TEST_RUNNER_ADVICE),
            "sympy.var": "var() writes into the caller's globals; use x, y = sympy.symbols('x y')",
            "sympy.utilities.magic.pollute": "pollute() writes into the caller's globals (the guards' names too); "
                                             "assign your names yourself: x, y = sympy.symbols('x y')",
            "sympy.init_session": "not available in the sandbox; import what you need from sympy",
            "sympy.init_printing": "not available in the sandbox; print(expr) or sympy.pretty(expr)",
        },
        stand_ins={"sympy.lambdify": _checked_lambdify},
        # (sympy's string parser: sympify("..."), S("..."), expr.subs("x", 1), Matrix("...") reach parse_expr)
        switched_off={
            "sympy.plotting.experimental_lambdify.Lambdifier.__init__":
                "experimental_lambdify generates code from the expression's names; evaluate with "
                "expr.subs(x, value), or draw with sympy.plot or matplotlib",
        },
        # (sympy.simplify imports sympy.physics.units, which sympifies its prefix names)
        imported_with={"sympy": ("sympy.physics.units",)},
        # lambdify is behind nsolve and plot
        checked_source={"sympy.utilities.lambdify._EvaluatorPrinter.doprint":
                        (_GeneratedSource(policy), _CHECKED_SOURCE_ADVICE)},
        checked_calls={
            "sympy.parsing.sympy_parser.parse_expr": _math_text_only,
            **dict.fromkeys(("mpmath.identification.identify",
                             "mpmath.identification.IdentificationMethods.identify"), _constants_by_value),
            "mpmath.identify": lambda x=None, constants=None, *args, **kwargs: _constants_by_value(None, x, constants),
            "sympy.core.function.UndefinedFunction.__new__": _assumptions_only,
            # sympy imports its optional libraries by name through one function, and some of its
            # callers pass the snippet's string: sympy.stats.sample(X, library='this') imported it
            "sympy.external.importtools.import_module": lambda module=None, *args, **kwargs: (
                None if type(module) is str and module.split(".")[0] in _SYMPY_OPTIONAL_LIBRARIES else
                f"sympy imports the optional libraries it knows by name, and {str(module)[:40]!r} is not one of "
                "them: pass one of numpy, scipy or matplotlib (library='numpy')"),
        },
    )

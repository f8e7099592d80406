"""generated_code: the source sympy's lambdify prints (behind nsolve, plot, the
evalf of sums) passes when it is arithmetic, and is refused when a name of the
snippet's choosing turned into code. The sandbox runs of both are in
test_datascience.py. lambdify runs in a forked child, so that this test process
never imports sympy or numpy (they would change what other tests see)."""

from __future__ import annotations

import importlib.util

import pytest
from forked import child_value

from sandbox.restricted.libraries.generated_code import refusal

needs_sympy = pytest.mark.skipif(importlib.util.find_spec("sympy") is None or importlib.util.find_spec("numpy") is None,
                                 reason="needs the data-science extra (make install-datascience)")


def checked_lambdify(build: str, modules: str, cse: bool = False):
    """In a forked child: `build` (Python that sets `args` and `expr` with sympy, x, y,
    n and alpha at hand) lambdified with the check a restricted run puts on its
    printer. The refusal's message, or None when the function was made."""
    def run():
        import numpy  # noqa: F401 - loaded before the policy is resolved, as in the fork server
        import sympy

        from sandbox.restricted.libraries.policy import POLICY as library_policy

        class Refused(Exception):
            pass
        x, y, n = sympy.symbols("x y n")
        scope = {"sympy": sympy, "x": x, "y": y, "n": n, "alpha": sympy.Symbol("α")}
        exec(build, scope)
        library_policy.resolve()
        with library_policy.switched_off(Refused):
            try:
                sympy.lambdify(scope["args"], scope["expr"], modules=modules, cse=cse)
            except Refused as refused:
                return str(refused)
        return None
    return child_value(run)


@needs_sympy
@pytest.mark.parametrize("modules", ["numpy", "mpmath", "math", "scipy", "sympy"])
@pytest.mark.parametrize("expr", [
    "sympy.sin(x) * sympy.exp(-x / 5) + sympy.Rational(1, 3) * sympy.pi",
    "sympy.Piecewise((x ** 2, x < 1), (2 - x, True))",
    "sympy.Sum(x ** n / sympy.factorial(n), (n, 0, 5))",
    "[x + y, x * y, sympy.sqrt(alpha)]",
    "sympy.Matrix([[x, 1], [0, y]]) * sympy.Matrix([[1], [x]])",
    "sympy.besselj(0, x) + sympy.gamma(x) + sympy.Abs(x) + sympy.Max(x, y)",
    "sympy.nan + sympy.oo * x + sympy.zoo",
])
def test_what_lambdify_prints_for_arithmetic_passes(modules, expr):
    if modules == "scipy" and importlib.util.find_spec("scipy") is None:
        pytest.skip("scipy is not installed")
    assert checked_lambdify(f"args = [x, y, alpha]\nexpr = {expr}", modules, cse=modules == "numpy") is None


@needs_sympy
def test_free_symbols_implemented_functions_tuple_arguments_and_einsum_pass():
    assert checked_lambdify("from sympy.utilities.lambdify import implemented_function\n"
                            "g = implemented_function('g', lambda v: v + 1)\n"
                            "args = [(x, y), n]\nexpr = x * y + n + sympy.Symbol('free') + g(x)", "numpy") is None
    assert refusal("def _lambdifygenerated(a, b):\n    return numpy.einsum('ij,jk->ik', a, b)\n",
                   is_door=lambda name: name != "numpy.einsum") is None


@needs_sympy
def test_symbols_named_like_builtins_are_the_functions_own_names():
    symbols = "inp, ident, typ = sympy.symbols('input id type')\n"
    assert checked_lambdify(symbols + "args = [inp, ident]\nexpr = inp * ident + sympy.sin(inp)", "numpy",
                            cse=True) is None
    # a free one is lambdify's Symbol in the namespace, not the builtin
    assert checked_lambdify(symbols + "args = [inp]\nexpr = inp + typ", "numpy") is None
    # but a function named like one is the builtin, whatever the parameters are called
    assert "open" in checked_lambdify(symbols + "args = [inp]\nexpr = sympy.Function('open')(inp)", "numpy")


@needs_sympy
@pytest.mark.parametrize("name", [
    "(lambda a: __import__('os').getcwd())",           # the builtins' import, by name
    "(lambda a: open('passwd').read())",               # a builtin that is not arithmetic
    "(lambda a: exec(bytes([112, 97, 115, 115])))",    # code from numbers
    "(lambda a: getattr(a, chr(95) * 2 + 'class'))",
    "(lambda a: a.real.__class__)",                    # a private attribute
    "(lambda a: builtins.open)",                       # builtins' non-arithmetic, through the module
    "(lambda a: builtins.__dict__)",
    "(lambda a: (1).bit_length.__self__)",
    "(lambda a: numpy.loadtxt(f'{a}'))",               # an f-string
    "(lambda a: (b := 1))",                            # a walrus
    "(lambda a: [c for c in ().__class__.__mro__])",
    "(lambda a: numpy.loadtxt('passwd'))",             # a file name, as a string
    "(lambda a: sum.__call__)",
    "(lambda a: _Dummy_1.__init__)",
    "numpy.lib.stride_tricks.as_strided",              # a module function the printer did not choose
    "numpy.ctypeslib.as_array",
    "numpy.ndarray",
    "ndarray", "load", "frombuffer", "memmap", "lib", "ctypeslib",   # bare, from numpy's namespace
    "(lambda open: 0)(0) + open",                      # a lambda's name does not hide a builtin outside it
    "[open for open in (1,)][0] + open",
])
def test_a_function_name_that_is_code_is_refused(name):
    for modules in ("numpy", "mpmath"):
        assert checked_lambdify(f"args = [x]\nexpr = sympy.Function({name!r})(x) + sympy.sin(x)",
                                modules) is not None, (name, modules)


@needs_sympy
def test_a_free_symbol_named_like_a_module_attribute_is_refused():
    """lambdify replaces unsafe argument names with dummies, but prints a free
    symbol that is not an argument as it is."""
    for name in ("__import__('os').getcwd()", "numpy.load", "numpy.lib.stride_tricks.as_strided"):
        assert checked_lambdify(f"args = [x]\nexpr = x + sympy.Symbol({name!r})", "numpy") is not None, name


def printer_imports(entries: list) -> list:
    """In a forked child: for each (module, name) written into the printer's
    module_imports while an object prints itself (what a snippet's object passed to
    lambdify can do), the check's refusal, or None when lambdify made the function."""
    def run():
        import numpy  # noqa: F401
        import sympy

        from sandbox.restricted.libraries.policy import POLICY as library_policy

        class Refused(Exception):
            pass
        x = sympy.Symbol("x")
        answers = []
        library_policy.resolve()
        for module, name in entries:
            class PrintsItself(sympy.Function):   # (a class a restricted snippet cannot make today)
                def _numpycode(self, printer, _module=module, _name=name):
                    printer.module_imports[_module].add(_name)
                    return "numpy.sin(x)"
            with library_policy.switched_off(Refused):
                try:
                    sympy.lambdify([x], PrintsItself(x), modules="numpy")
                    answers.append(None)
                except Refused as refused:
                    answers.append(str(refused))
        return answers
    return child_value(run)


@needs_sympy
def test_what_the_printer_imports_is_checked_before_lambdify_runs_it():
    """lambdify runs "from <module> import <name>" for what its printer recorded, after
    the source check: a module name that is code, or a name that is a door, is refused."""
    refused = [("os import getcwd as g; print(g()); from math", "sin"), ("os", "system"),
               ("numpy", "lib"), ("numpy", "load"), ("numpy.lib.stride_tricks", "as_strided"),
               ("math", "sin; import os"), ("numpy", "_core"), ("functools", "partial"),
               ("builtins", "open"), ("sympy.core.cache", "lazy_function")]
    allowed = [("numpy", "sin"), ("numpy", "cos"), ("functools", "reduce"), ("numpy.linalg", "norm"),
               ("mpmath", "besselj")]
    answers = printer_imports(refused + allowed)
    for entry, answer in zip(refused, answers):
        assert answer is not None and "it imports" in answer, (entry, answer)
    assert answers[len(refused):] == [None] * len(allowed), answers[len(refused):]


@pytest.mark.parametrize("source", [
    "import os\ndef _lambdifygenerated(x):\n    return x\n",            # more than one function
    "@decorate\ndef _lambdifygenerated(x):\n    return x\n",
    "def _lambdifygenerated(x, _secret):\n    return x\n",
    "def _lambdifygenerated(x):\n    return f(__x=1)\n",
    "def _lambdifygenerated(x):\n    return x.__class__\n",
    "def _lambdifygenerated(x):\n    return numpy.sin(x)[0].real\n",     # an attribute off a call
    "def _lambdifygenerated(x):\n    return numpy.linalg.inv(x)\n",      # (a door, as is_door says here)
    "def _lambdifygenerated(x):\n    yield x\n",
    "def _lambdifygenerated(x):\n    return b'bytes'\n",
    "def _lambdifygenerated(x):\n    return float('1e999') + float('x')\n",
])
def test_source_that_is_not_plain_arithmetic_is_refused(source):
    assert refusal(source, is_door=lambda name: name not in ("numpy.sin", "sin")) is not None, source


@pytest.mark.parametrize("text", ["1/2", "(3*pi)/2", " 2*sqrt(2) + E**-1", "1e-5 * I", "0x10", "log(2)/exp(1)",
                                  "1_000", "-oo", "((1))"])
def test_plain_math_is_what_sympy_may_parse(text):
    from sandbox.restricted.libraries.generated_code import is_plain_math
    assert is_plain_math(text)


@pytest.mark.parametrize("text", ["x", "eval(chr(95))", "(1).real", "[1][0]", "'1'", "sqrt(1, 2)", "1; 2",
                                  "1\nimport os", "lambda: 1", "a := 1", "1 if 1 else 2", "1 @ 2", "f'{1}'",
                                  "(", "1" * 3000, b"1", None, "pi.evalf", "Rational(1, 2)", "sqrt(x)"])
def test_anything_else_is_not(text):
    from sandbox.restricted.libraries.generated_code import is_plain_math
    assert not is_plain_math(text)


@needs_sympy
def test_a_function_class_named_like_a_builtin_is_the_builtin():
    """A sympy function class prints by its own name: the snippet's class named open
    would call the real open()."""
    assert "open" in checked_lambdify("args = [x]\nexpr = type('open', (sympy.Function,), {})(x) + 1", "numpy")


@needs_sympy
def test_a_class_that_prints_itself_cannot_vouch_for_its_code():
    """The printer hands itself to a class's own print method; what it records of
    its choices (module_imports) is then the snippet's to write."""
    build = ("class Evil(sympy.Function):\n"
             "    def _numpycode(self, printer):\n"
             "        printer.module_imports['numpy.lib.stride_tricks'].add('as_strided')\n"
             "        return 'numpy.lib.stride_tricks.as_strided(numpy.zeros(1), (10 ** 9,), (8,))'\n"
             "    _mpmathcode = _lambdacode = _pythoncode = _numpycode\n"
             "args = [x]\nexpr = Evil(x) + x")
    for modules in ("numpy", "mpmath"):
        assert "as_strided" in checked_lambdify(build, modules)


# (in place of sympy's namespace, which this process never imports: what the check asks)
SYMPY_LIKE = {"sin", "exp", "Abs", "var", "S", "lambdify", "sympify", "Symbol", "Matrix", "pi", "E", "N", "test"}


def _known(name):
    import builtins
    return name in SYMPY_LIKE or hasattr(builtins, name)


@pytest.mark.parametrize("text", ["x**2 + 2*x + 1", "sin(t)*exp(-t/5)", "a*b >= c", "f(x) + g(y, z)", "2^3 % 5",
                                  "Abs(x) + max(x, 2)", "1.5e-3*alpha + pi", "(x - 1)/(x + 1)", "  y  "])
def test_math_text_is_what_sympify_may_parse(text):
    from sandbox.restricted.libraries.generated_code import math_text_refusal
    assert math_text_refusal(text, known=_known) is None


@pytest.mark.parametrize("text", ["eval(x)", "x.real", "'x'", "x[0]", "ｅｖａｌ(x)", "_x", "lambda: 1", "x; y",
                                  "x\ny", "var(x)", "S(x)", "N", "sin(x, evaluate=0)", "(x := 1)", "x if y else z",
                                  "x @ y", "x!", "`x`", "{x}", "x" * 6000, None, b"x", "open", "Symbol(x)",
                                  "x == y", "x & y", "~x"])
def test_anything_else_is_not_math_text(text):
    from sandbox.restricted.libraries.generated_code import math_text_refusal
    assert math_text_refusal(text, known=_known) is not None, text


def test_a_local_value_is_called_only_when_it_is_a_function_class():
    from sandbox.restricted.libraries.generated_code import math_text_refusal
    assert math_text_refusal("g(1) + h", known=_known, local_names={"g", "h"}) is not None
    assert math_text_refusal("g(1) + h", known=_known, local_names={"g", "h"}, local_callables={"g"}) is None
    assert math_text_refusal("S + 1", known=_known, local_names={"S"}) is None   # (the caller's own S)
    assert math_text_refusal("(g)(1)", known=_known, local_names={"g"}) is not None
    assert math_text_refusal("(sin)(x) + (x)(1)", known=_known) is not None

"""pandas' expression strings in a restricted snippet (sandbox/restricted/libraries/pandas_expressions.py):
df.query, df.eval and pd.eval run what agents write with CPython's values, and every way
past the guards that pandas' evaluator offers (attributes, calls, subscripts, the
frame that level= picks, local_dict=, target=, a library's frame, numexpr, a str
subclass, the unbound method on another object) is refused with a way forward."""

from __future__ import annotations

import ast

import pytest

pytest.importorskip("pandas")

from runner_harness import MiB, SyncRunner  # noqa: E402

from sandbox import profiles
from sandbox.restricted.libraries import pandas_expressions

ALLOWED = profiles.allowed_modules(["basic", "data_science"])
FRAME = "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3, 4], 'b': [4, 3, 2, 1], 'city': list('xyxz')})\n"


@pytest.fixture(scope="module")
def ds():
    runner = SyncRunner(preload=("pandas",), max_memory=1024 * MiB)
    yield runner
    runner.close()


# (code after FRAME, the value `result` must have: plain CPython's)
IDIOMS = {
    "and_compare": ("result = df.query(\"a > 1 and city == 'x'\")['a'].tolist()", [3]),
    "ampersand_or": ("result = df.query('(a > 3) | (b > 3)').index.tolist()", [0, 3]),
    "in_list": ("result = df.query(\"city in ['x', 'z']\")['a'].tolist()", [1, 3, 4]),
    "not_in_variable": ("keep = ['x']\nresult = df.query('city not in @keep')['a'].tolist()", [2, 4]),
    "at_variable": ("limit = 2\nresult = df.query('a > @limit and b < @limit + 1')['a'].tolist()", [3, 4]),
    "at_variable_in_function": ("def above(frame, cut):\n    return frame.query('a > @cut')['a'].tolist()\n"
                                "result = above(df, 3)", [4]),
    "backticks": ("df2 = df.rename(columns={'a': 'unit price'})\n"
                  "result = df2.query('`unit price` >= 3')['b'].tolist()", [2, 1]),
    "chained_compare": ("result = df.query('1 < a <= 3').index.tolist()", [1, 2]),
    "inplace": ("d = df.copy()\nd.query('a % 2 == 0', inplace=True)\nresult = d['a'].tolist()", [2, 4]),
    "eval_column": ("result = df.eval('a * b - 1').tolist()", [3, 5, 5, 3]),
    "eval_assign": ("result = df.eval('c = a + b')['c'].tolist()", [5, 5, 5, 5]),
    "eval_multiline": ("out = df.eval('''\nc = a * 2\nd = c + @offset\n''')\nresult = out['d'].tolist()",
                       [12, 14, 16, 18]),
    "eval_inplace": ("d = df.copy()\nd.eval('ratio = a / b', inplace=True)\nresult = d['ratio'].round(2).tolist()",
                     [0.25, 0.67, 1.5, 4.0]),
    "pd_eval_names": ("x, y = 2, 5\nresult = int(pd.eval('x * y + 1'))", 11),
    "pd_eval_constants": ("result = int(pd.eval('1 + 2 * 3'))", 7),
    "python_parser": ("result = df.query('(a > 1) & (b > 1)', parser='python')['a'].tolist()", [2, 3]),
    "engine_python": ("result = df.query('a > 3', engine='python')['a'].tolist()", [4]),
    "unary_and_not": ("result = df.query('not (a > 2) and -a < -1')['a'].tolist()", [2]),
    "comprehension_local": ("result = [len(df.query('a > @n')) for n in range(3)]", [4, 3, 2]),
}
IDIOMS["eval_multiline"] = ("offset = 10\n" + IDIOMS["eval_multiline"][0], IDIOMS["eval_multiline"][1])


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_what_agents_write_runs_with_cpythons_value(ds, name):
    code, expected = IDIOMS[name]
    r = ds.run(FRAME + code, allowed=ALLOWED, timeout=30)
    assert r["success"], (name, r["error"])
    assert r["result"] == expected, (name, r["result"])
    plain = {}
    exec(FRAME + code, plain)   # (the same code in plain CPython, in this process)
    assert plain["result"] == expected, name


# (code after FRAME, a piece of the refusal: each names what to write instead)
DOORS = {
    "attribute": ("df.query('a.__class__ > 1')", "filter with a mask"),
    "attribute_of_variable": ("x = 1\ndf.eval('@x.real')", "filter with a mask"),
    "call": ("df.query('a.isna()', engine='python')", "filter with a mask"),
    "call_by_name": ("df.eval('abs(a)')", "filter with a mask"),
    "subscript": ("x = [1]\ndf.eval('@x[0]')", "filter with a mask"),
    "pd_eval_attribute": ("pd.eval('(1).__class__')", "filter with a mask"),
    "unbound_attribute": ("pd.DataFrame.query(df, 'a.real > 1')", "filter with a mask"),
    "super_attribute": ("class D(pd.DataFrame):\n    def q(self):\n        return super().query('a.real > 1')\n"
                        "D(df).q()", "filter with a mask"),
    "lambda": ("df.eval('(lambda: 1)')", "filter with a mask"),
    "private_variable": ("df.eval('c = @_getattr_')", "starts with '_'"),
    "builtins": ("df.eval('@__builtins__')", "starts with '_'"),
    "level": ("df.query('a > 1', level=3)", "@name"),
    "level_eval": ("df.eval('a', level=-2)", "@name"),
    "local_dict": ("df.query('a > @y', local_dict={'y': 1})", "@name"),
    "global_dict": ("pd.eval('y', global_dict={'y': 1})", "@name"),
    "resolvers": ("df.eval('y', resolvers=[{'y': 1}])", "@name"),
    "target": ("pd.eval('c = 1', target={'x': 1})", "@name"),
    "target_method": ("df.eval('c = 1', target={})", "@name"),
    "numexpr": ("df.query('a > 1', engine='numexpr')", "engine='python'"),
    "str_subclass": ("class S(str):\n    def splitlines(self):\n        return ['a.__class__']\n"
                     "df.eval(S('a'))", "must be a str"),
    "not_a_frame": ("class Fake:\n    columns = None\npd.DataFrame.query(Fake(), 'a > 1')", "as self"),
    "by_name": ("df.agg('eval', 0, 'a + 1')", "itself"),
    "by_name_apply": ("df.apply('query', args=('a > 1',))", "itself"),
}


@pytest.mark.parametrize("name", sorted(DOORS))
def test_every_way_past_the_guards_is_refused_with_a_way_forward(ds, name):
    code, advice = DOORS[name]
    r = ds.run(FRAME + code + "\nresult = 'ran'", allowed=ALLOWED, timeout=30)
    assert not r["success"] and r["error_type"] == "security_violation", (name, r)
    assert advice in r["error"], (name, r["error"])
    assert r["security_events"], (name, r)


def test_a_library_that_calls_query_gives_it_no_variables(ds):
    """df.pipe(pd.DataFrame.eval, ...) calls eval from pandas' own frame: its module's
    globals (sys, inspect...) would be the @variables; the snippet's are not either."""
    for expression in ("c = @sys", "c = @secret", "c = @pd"):
        r = ds.run(FRAME + f"secret = 5\nresult = str(df.pipe(pd.DataFrame.eval, {expression!r}))",
                   allowed=ALLOWED, timeout=30)
        assert not r["success"] and "is not defined" in r["error"], (expression, r)
    r = ds.run(FRAME + "result = df.pipe(pd.DataFrame.query, 'a > 2')['a'].tolist()", allowed=ALLOWED, timeout=30)
    assert r["success"] and r["result"] == [3, 4], r


def test_the_expressions_are_real_python_without_restricted_python(ds):
    """The refusals above are the layer's doing: plain Python evaluates them."""
    r = ds.run(FRAME + "result = [df.query('a.abs() > 3')['a'].tolist(), str(pd.eval('(1).__class__'))]",
               restricted=False, allowed=ALLOWED, timeout=30)
    assert r["success"] and r["result"] == [[4], "<class 'int'>"], r


@pytest.mark.parametrize("source, refused", [
    ("a > 1 and b in [1, 'x', None, 2.5, 1j, True]", False),
    ("c = -a ** 2 // 3 % 2 & 1 | 0 ^ 1", False),
    ("a.b", True), ("f(a)", True), ("a[0]", True), ("a if b else c", True), ("_x", True),
    ("__pd_eval_local__x", True), ("__pd_eval_local_x", False), ("b'x'", True), ("{1: 2}", True),
    ("a is b", True), ("(y := 1)", True), ("[x for x in a]", True), ("f'{a}'", True), ("...", True),
])
def test_the_node_check_alone(source, refused):
    """node_refusal over every node of a parsed expression, as pandas visits them."""
    tree = ast.parse(source)
    answers = [pandas_expressions.node_refusal(None, node) for node in ast.walk(tree)]
    assert any(answers) is refused, (source, answers)


def test_the_node_check_refuses_what_is_not_a_node():
    """A snippet's object where pandas expects a node (its visitors read its fields)."""
    class Attribute:
        value, attr = None, "__class__"
    assert "Attribute object is not taken" in pandas_expressions.node_refusal(None, Attribute())
    assert pandas_expressions.node_refusal(None, "a > 1") is None


def test_a_subclass_of_the_snippets_keeps_its_own_query(ds):
    """Only pandas' method is wrapped: a subclass's own query takes its own arguments, and
    its super().query is pandas' again, checked."""
    r = ds.run(FRAME + "class D(pd.DataFrame):\n    def query(self, condition, flag=False):\n"
                       "        return [flag, len(super().query(condition))]\n"
                       "result = D(df).query('a > 1', flag=True)", allowed=ALLOWED, timeout=30)
    assert r["success"] and r["result"] == [True, 3], r
    r = ds.run(FRAME + "class D(pd.DataFrame):\n    def query(self, condition):\n"
                       "        return super().query(condition)\n"
                       "result = D(df).query('a.real > 1')", allowed=ALLOWED, timeout=30)
    assert not r["success"] and "filter with a mask" in r["error"], r

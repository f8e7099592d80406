"""scikit-learn, seaborn and statsmodels in the data-science profile: imported on demand
by the snippet, their doors refused with what to do instead (sklearn_table, seaborn_table,
statsmodels_table), and statsmodels' formula terms checked before patsy evaluates them
(formula_terms). Needs the data-science extra; skipped without it."""

from __future__ import annotations

import base64

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("seaborn")
pytest.importorskip("statsmodels")

from runner_harness import MiB, SyncRunner  # noqa: E402

from sandbox import profiles  # noqa: E402
from sandbox.restricted.libraries import formula_terms  # noqa: E402

ALLOWED = profiles.allowed_modules(["basic", "data_science"])
WARMED = tuple(m for m in profiles.profile_modules_available("data_science")
               if m.split(".")[0] not in profiles.IMPORTED_ON_DEMAND)


@pytest.fixture(scope="module")
def ds():
    runner = SyncRunner(preload=WARMED, max_memory=1024 * MiB)
    yield runner
    runner.close()


@pytest.mark.parametrize("term", [
    "x", "np.log(x)", "C(g)", "C(g, Treatment('b'))", "I(x ** 2)", "center(x)", "Q('x y')", "x:z", "x * z - 1",
    "_patsy_stobj0__center__.transform(x)", "I(x > 2)", "max",   # (a column named like a builtin: defined)
])
def test_ordinary_formula_terms_pass(term):
    assert formula_terms.refusal(term, defined=lambda name: name == "max") is None


@pytest.mark.parametrize("term,why", [
    ("__import__('os').system('id')", "anything but a named function"),
    ("I(eval('1'))", "call of eval"),
    ("C(eval)", "builtin eval"),
    ("I(open)", "builtin open"),
    ("x.__class__", "attribute"),
    ("_getattr_", "private name"),
    ("Q('__builtins__')", "Q()"),
    ("Q('x' + 'y')", "Q()"),
    ("np.load('f')", "anything but a named function"),
    ("I(np.load)", "attribute .load"),
    ("(lambda: 1)()", "anything but a named function"),
    ("[c for c in x]", "syntax"),
    ("x[0]", "subscript"),
    ("f(x)", "call of f"),
    ("I(**d)", "**"),
])
def test_formula_terms_that_reach_further_are_refused(term, why):
    message = formula_terms.refusal(term)
    assert message is not None and why in message and "df['z'] = f(df['x'])" in message, message


def test_a_formula_term_of_another_type_is_refused():
    class Shifty(str):
        pass
    assert "plain str" in formula_terms.refusal(Shifty("x"))


def test_the_libraries_are_imported_on_demand_not_in_the_fork_server():
    assert profiles.IMPORTED_ON_DEMAND <= profiles.DATA_SCIENCE
    assert not any(m.split(".")[0] in profiles.IMPORTED_ON_DEMAND for m in WARMED)


DOORS = """
import io
import numpy as np
import pandas as pd
import seaborn as sns
import statsmodels.api as sm
import statsmodels.formula
import statsmodels.formula.api as smf
import sklearn.datasets
from sklearn.utils.parallel import Parallel, delayed
df = pd.DataFrame({'x': [1.0, 2, 3, 4, 5, 6], 'y': [2.1, 3.9, 6.2, 8.1, 9.8, 12.0]})
res = sm.OLS(df['y'], sm.add_constant(df[['x']])).fit()
class Liar:   # data that claims every name, so that a builtin's name would pass as a column
    def __contains__(self, name):
        return True
    def __getitem__(self, name):
        return df[name]
attempts = {
    'formula_import': lambda: smf.ols("y ~ I(__import__('os').getpid() + 0 * x)", data=df),
    'formula_builtin': lambda: smf.ols('y ~ x + C(eval)', data=df),
    'formula_lying_data': lambda: smf.ols('y ~ x + C(eval)', data=Liar()),
    'formula_engine': lambda: setattr(statsmodels.formula.options, 'formula_engine', 'formulaic'),
    'results_save': lambda: res.save('r.pkl'),
    'load_pickle': lambda: sm.load_pickle('r.pkl'),
    'rdataset': lambda: sm.datasets.get_rdataset('mtcars'),
    'seaborn_download': lambda: sns.load_dataset('iris'),
    'fetch_openml': lambda: sklearn.datasets.fetch_openml('iris'),
    'clear_data_home': lambda: sklearn.datasets.clear_data_home(),
}
result = {}
for name, attempt in attempts.items():
    try:
        attempt()
        result[name] = 'allowed'
    except Exception as e:
        result[name] = str(e)
pool = Parallel(n_jobs=4)
result['n_jobs'] = [pool.n_jobs, pool(delayed(abs)(-i) for i in range(3))]
"""

ADVICE = {
    "formula_import": "compute anything else into a column first",
    "formula_builtin": "the builtin eval",
    "formula_lying_data": "the builtin eval",
    "formula_engine": "cannot set attribute",
    "results_save": "keep the results in the snippet",
    "load_pickle": "keep the results in the snippet",
    "rdataset": "use the ones statsmodels ships",
    "seaborn_download": "build the DataFrame with pandas",
    "fetch_openml": "use the bundled ones",
    "clear_data_home": "deletes a directory",
}


def test_the_libraries_doors_are_refused_with_what_to_do_instead(ds):
    r = ds.run(DOORS, allowed=ALLOWED, timeout=120, memory=1024 * MiB)
    assert r["success"], r
    got = r["result"]
    for name, advice in ADVICE.items():
        assert advice in got[name], (name, got[name])
    assert got["n_jobs"] == [1, [0, 1, 2]]   # joblib's pool: its tasks one after the other


def test_formulas_see_the_snippets_names_inside_its_functions(ds):
    code = ("import statsmodels.formula.api as smf\nimport pandas as pd\n"
            "df = pd.DataFrame({'x': [1.0, 2, 3, 4, 5, 6], 'y': [0, 0, 1, 0, 1, 1], 'max': [1.0, 0, 2, 1, 3, 1]})\n"
            "def fit():\n    k = 2\n    return smf.logit('y ~ I(x * k) + max', data=df).fit(disp=0)\n"
            "result = sorted(fit().params.index)")
    r = ds.run(code, allowed=ALLOWED, timeout=120, memory=1024 * MiB)
    assert r["success"], r
    assert r["result"] == ["I(x * k)", "Intercept", "max"]


def test_a_seaborn_plot_comes_back_as_png(ds):
    code = ("import pandas as pd\nimport seaborn as sns\n"
            "df = pd.DataFrame({'g': list('aabb'), 'y': [1.0, 2, 3, 5]})\n"
            "ax = sns.barplot(data=df, x='g', y='y')\nresult = ax.get_ylabel()")
    r = ds.run(code, allowed=ALLOWED, timeout=120, memory=1024 * MiB)
    assert r["success"] and r["result"] == "y", r
    assert len(r["images"]) == 1 and r["images"][0]["mime_type"] == "image/png", r["images"]
    assert base64.b64decode(r["images"][0]["base64"]).startswith(b"\x89PNG\r\n\x1a\n")

"""statsmodels' doors: formula strings, whose terms patsy (or formulaic) evaluates as Python
with the real builtins; results saved and loaded as pickles; datasets it downloads and the
directory it caches them in; the X-13 program it runs; its documentation opened in a browser."""

from __future__ import annotations

import sys

from sandbox.restricted.libraries import formula_terms
from sandbox.restricted.libraries.table import TEST_RUNNER_ADVICE, Table

_NO_DOWNLOAD = ("datasets are not downloaded in the sandbox: use the ones statsmodels ships "
                "(sm.datasets.longley.load_pandas().data, sm.datasets.macrodata.load_pandas().data), "
                "or a DataFrame of your own")
_NO_PICKLE = ("statsmodels saves and loads results as pickles, and loading one runs whatever callables it names: "
              "keep the results in the snippet (a session keeps them across calls), or write what you need "
              "with json (res.params.to_dict(), res.summary().as_text())")
_RESULTS = ("statsmodels.base.model.Results", "statsmodels.base.wrapper.ResultsWrapper")


def _patsy_only(self, engine=None, *args, **kwargs):
    """The formula engine is patsy, whose terms are checked before they are evaluated."""
    chosen = engine
    if chosen is None:
        formula = sys.modules.get("statsmodels.formula")
        chosen = getattr(getattr(formula, "options", None), "formula_engine", "patsy")
    return None if type(chosen) is str and chosen == "patsy" else (
        "formulas are read with patsy in the sandbox: leave the engine out, or set it to 'patsy'")


def table(policy) -> Table:
    return Table(
        refused_objects={
            **dict.fromkeys(("statsmodels.datasets.get_rdataset", "statsmodels.datasets.webuse",
                             "statsmodels.datasets.check_internet", "statsmodels.datasets.utils.get_rdataset",
                             "statsmodels.datasets.utils.webuse", "statsmodels.datasets.utils.check_internet"),
                            _NO_DOWNLOAD),
            **dict.fromkeys(("statsmodels.datasets.get_data_home", "statsmodels.datasets.clear_data_home",
                             "statsmodels.datasets.utils.get_data_home", "statsmodels.datasets.utils.clear_data_home"),
                            f"statsmodels' data directory is not in the sandbox (clear_data_home deletes it): "
                            f"{_NO_DOWNLOAD}"),
            **dict.fromkeys(("statsmodels.iolib.smpickle.save_pickle", "statsmodels.iolib.smpickle.load_pickle"),
                            _NO_PICKLE),
            "statsmodels.tools.web.webdoc": "it opens a web browser (a program): the documentation is at "
                                            "https://www.statsmodels.org",
            **dict.fromkeys(("statsmodels.tsa.x13.x13_arima_analysis", "statsmodels.tsa.x13.x13_arima_select_order"),
                            "it runs the X-13ARIMA-SEATS program, and no program runs in the sandbox: use "
                            "statsmodels.tsa.seasonal.STL or seasonal_decompose"),
        },
        refused_attributes={
            "save": (_RESULTS, _NO_PICKLE),
            "load": (_RESULTS, _NO_PICKLE),
        },
        checked_calls={
            # every term of a formula reaches eval() here (statsmodels' formulas, patsy's dmatrices)
            "patsy.eval.EvalEnvironment.eval": lambda self, expr, *args, **kwargs: formula_terms.refusal(expr),
            "formulaic.utils.stateful_transforms.stateful_eval": lambda expr, *args, **kwargs:
                formula_terms.refusal(expr),
            "statsmodels.formula._manager.FormulaManager.__init__": _patsy_only,
            "statsmodels.tools._test_runner.PytestTester.__call__": lambda *args, **kwargs: TEST_RUNNER_ADVICE,
        },
    )

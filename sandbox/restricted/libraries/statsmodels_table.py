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


def _term_refusal(env, expr, source_name="<string>", inner_namespace=None, *args, **kwargs):
    """patsy evaluates `expr` in `inner_namespace` and then `env`'s namespaces."""
    namespaces = (inner_namespace, env.namespace) if inner_namespace is not None else (env.namespace,)

    def defined(name):
        return any(_has(namespace, name) for namespace in namespaces)
    return formula_terms.refusal(expr, defined=defined)


def _has(namespace, name) -> bool:
    try:
        return name in namespace
    except Exception:  # noqa: BLE001 - a namespace that cannot answer has nothing of that name
        return False


def _is_sandbox_frame(frame) -> bool:
    name = frame.f_globals.get("__name__")
    return type(name) is str and (name == "sandbox" or name.startswith("sandbox."))


def _snippets_frame(original, refuse):
    """EvalEnvironment.capture(depth): the namespace `depth` frames above its caller, as in plain
    Python: the sandbox's own frames (the guards' wrappers around the snippet's calls) are not
    counted, and never captured (their modules' globals are the sandbox's)."""
    def capture(eval_env=0, reference=0):
        if not isinstance(eval_env, int) or isinstance(eval_env, bool):
            return original(eval_env, reference)   # (an EvalEnvironment is its own; else patsy's TypeError)
        frame = sys._getframe(1)
        for _step in range(eval_env + reference):
            frame = frame.f_back
            while frame is not None and _is_sandbox_frame(frame):
                frame = frame.f_back
            if frame is None:
                raise ValueError("call-stack is not that deep!")
        while frame is not None and _is_sandbox_frame(frame):
            frame = frame.f_back
        if frame is None:
            raise ValueError("call-stack is not that deep!")
        future_flags = getattr(sys.modules["patsy.eval"], "_ALL_FUTURE_FLAGS", 0)
        return original.__self__([frame.f_locals, frame.f_globals], frame.f_code.co_flags & future_flags)
    return capture


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
        wrapped_while_running={"patsy.eval.EvalEnvironment.capture": _snippets_frame},
        checked_calls={
            # every term of a formula reaches eval() here (statsmodels' formulas, patsy's dmatrices)
            "patsy.eval.EvalEnvironment.eval": _term_refusal,
            "formulaic.utils.stateful_transforms.stateful_eval": lambda expr, *args, **kwargs:
                formula_terms.refusal(expr),
            "statsmodels.formula._manager.FormulaManager.__init__": _patsy_only,
            "statsmodels.tools._test_runner.PytestTester.__call__": lambda *args, **kwargs: TEST_RUNNER_ADVICE,
        },
    )

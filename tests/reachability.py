"""A crawler of what a restricted snippet can reach, walked through the snippet's own guards.

A real snippet, compiled and run by restricted.execute in a forked child (the same
globals, guards, run policy and redirects as any execution), imports every module its
profile allows and every subset, makes the objects common calls return, and hands them
to `crawl`, which the run put in its globals. From there the crawler takes, for each
object, the steps a snippet can take, each through the very function placed in the
snippet's globals: `_getattr_` (which is also the `getattr` builtin) for public names
and for every other name the object has, `_getitem_` for items, `_getiter_` for
iteration, `_call_` for zero-argument methods (mro, copy, keys...), the `type` builtin
and `_class_of_` (x.__class__). Every object reached is checked against the denied set
(`denial`); the walk is bounded by depth and by a number of objects, never by time.

`python tests/reachability.py` runs the deeper crawl (`make crawl`) and prints its report.
"""

from __future__ import annotations

import builtins
import collections
import dataclasses
import io
import pathlib
import sys
import types

# Names of methods that are called with no argument (a zero-argument step).
ZERO_ARGUMENT_METHODS = (
    "mro", "copy", "keys", "values", "items", "tolist", "to_dict", "getLogger", "getcontext", "cursor",
    "exc_info", "exception", "default_timer", "getcwd", "globals", "fetchall", "getEffectiveLevel",
    "get_current_fig_manager", "gcf", "gca", "get_children", "get_figure", "get_axes", "free_symbols",
    "as_dict", "get_state", "bit_generator", "current_task", "_asdict", "parse_args", "getroot", "iter",
    "defaultTestLoader", "TestCase", "TestLoader", "TestSuite", "defaultTestResult", "TextTestRunner", "TestResult", "Formatter", "Handler",
    "StreamHandler", "NullHandler", "catch_warnings", "StringIO", "BytesIO",
)
# Dunder names a snippet may ask getattr for, beyond the names dir() gives: those the guards
# hand out on some objects (private_names.SAFE_DUNDERS), and the first steps of the classic escapes.
PROBED_NAMES = (
    "__name__", "__qualname__", "__doc__", "__module__", "__version__", "__cause__", "__context__",
    "__notes__", "__dict__", "__annotations__", "__wrapped__", "__mro__", "__bases__", "__base__",
    "__globals__", "__builtins__", "__code__", "__func__", "__self__", "__subclasses__", "__traceback__",
    "__init__", "__new__",
)
# More of them, for the deep crawl.
MORE_PROBED_NAMES = (
    "__closure__", "__objclass__", "__call__", "__getattribute__", "__reduce_ex__", "__class__", "__loader__",
    "__spec__", "__file__", "gi_frame", "gi_code", "cr_frame", "ag_frame", "tb_frame", "f_globals", "f_back",
    "f_locals", "func_globals", "im_func",
)
# Blocking or process-ending calls a deep crawl never makes (it calls every zero-argument method).
NEVER_CALLED = frozenset({
    "get", "get_nowait", "wait", "join", "acquire", "serve_forever", "run_forever", "run_until_complete",
    "recv", "read", "readline", "readlines", "input", "pause", "sleep", "mainloop", "show", "interact",
    "exit", "quit", "abort", "kill", "terminate", "close", "shutdown", "clear", "popitem", "pop", "reset",
    "test", "doctest", "runtests", "show_versions", "show_config", "main", "setUpClass", "tearDownClass",
    "run", "debug", "disable", "resetwarnings", "simplefilter", "setrecursionlimit", "breakpoint", "help",
    # matplotlib's interactive waits: with the Agg backend they sleep until the run's time limit
    "waitforbuttonpress", "ginput", "start_event_loop",
})
SCALARS = (int, float, complex, str, bytes, bool, type(None), bytearray, range)
CONTAINERS = (list, tuple, dict, set, frozenset)
SANDBOX_DIRECTORY = str(pathlib.Path(__file__).resolve().parent.parent / "sandbox")
# Steps up a class hierarchy: what they reach is not public API (a library class's bases).
HIERARCHY_STEPS = frozenset({".mro()", ".__mro__", ".__bases__", ".__base__"})


@dataclasses.dataclass
class Budget:
    """How far the crawl goes: steps from a root, objects walked, items per container."""

    depth: int
    objects: int
    items: int = 8
    every_zero_argument_method: bool = False  # deep: call every callable that takes no argument
    every_name: bool = False  # also try the names dir() leaves out (private ones) and MORE_PROBED_NAMES
    per_type: int | None = None  # objects of one type walked at most (classes, modules, containers: each)


# `make test`: every object to depth 4, but at most 10 of one type (the ten-thousandth numpy
# function leads where the first ten did); the object bound is a safety net, never reached.
QUICK = Budget(depth=4, objects=60_000, per_type=10)
# `make crawl`: deeper, more objects of a type, every name and every zero-argument method.
DEEP = Budget(depth=5, objects=400_000, items=20, per_type=200, every_zero_argument_method=True, every_name=True)

# What each profile's snippet imports besides its modules, and the objects common calls return.
SAMPLES = {
    "basic": {
        "number": "3", "text": "'abc'", "a_list": "[1, 'a', None]", "a_dict": "{'k': [1]}",
        "a_set": "{1, 2}", "a_generator": "(i for i in range(3))", "a_lambda": "lambda: 1",
        "an_object": "object()", "a_class": "Point", "an_instance": "Point()",
        "a_caught_error": "caught()", "a_chained_error": "chained()",
        "json_decoder": "json.JSONDecoder()", "pattern": "re.compile('a(b)')", "match": "re.match('a(b)', 'ab')",
        "counter": "collections.Counter('abca')", "ordered": "collections.OrderedDict(a=1)",
        "deque": "collections.deque([1])", "a_partial": "functools.partial(max, 1)",
        "decimal": "decimal.Decimal('1.5')", "decimal_context": "decimal.getcontext()",
        "fraction": "fractions.Fraction(1, 3)", "rng": "random.Random(1)",
        "now": "datetime.datetime(2024, 1, 2)", "delta": "datetime.timedelta(1)",
        "uuid": "uuid.UUID(int=1)", "enum_member": "Colour.RED", "a_dataclass": "Pair(1, 2)",
        "element": "xml.etree.ElementTree.fromstring('<a><b/></a>')",
        "string_io": "io.StringIO('x')", "bytes_io": "io.BytesIO(b'x')",
        "logger": "logging.getLogger('crawl')", "root_logger": "logging.getLogger()",
        "handler": "logging.StreamHandler()", "log_formatter": "logging.Formatter('%(message)s')",
        "loader": "unittest.TestLoader()", "suite": "unittest.TestSuite()",
        "runner": "unittest.TextTestRunner()", "test_case": "Case('test_one')", "test_result": "unittest.TestResult()",
        "connection": "sqlite3.connect(':memory:')", "cursor": "sqlite3.connect(':memory:').cursor()",
        "zone": "zoneinfo.ZoneInfo('UTC')", "warning_catcher": "warnings.catch_warnings()",
        "tree": "ast.parse('x = 1')", "path": "pathlib.Path('a/b.txt')",
        "async_queue": "asyncio.Queue()", "async_lock": "asyncio.Lock()",
        "timer": "timeit.default_timer", "formatted": "traceback.format_exc()",
        "named_tuple": "collections.namedtuple('Pt', 'x y')(1, 2)", "mapping_proxy": "types.MappingProxyType({})",
        "namespace": "types.SimpleNamespace(a=1)", "heap": "heapq.nsmallest(1, [3, 1])",
        "csv_reader": "csv.reader(['a,b'])", "struct": "struct.Struct('i')", "hash": "hashlib.sha256(b'x')",
        "text_wrapper": "textwrap.TextWrapper()", "html_parser": "html.parser.HTMLParser()",
        "pretty_printer": "pprint.PrettyPrinter()", "sequence_matcher": "difflib.SequenceMatcher(None, 'a', 'b')",
        "address": "ipaddress.ip_address('10.0.0.1')", "sorter": "graphlib.TopologicalSorter({})",
        "queue": "queue.Queue()", "array": "array.array('i', [1])", "typed_dict": "typing.TypedDict",
        "generic_alias": "list[int]", "exit_stack": "contextlib.ExitStack()",
        "os_environ": "os.environ", "stdout": "sys.stdout", "gzip_data": "gzip.compress(b'x')",
    },
    "data_science": {
        "array": "np.arange(6).reshape(2, 3)", "scalar": "np.float64(1.5)", "generator": "np.random.default_rng(0)",
        "legacy_random": "np.random.RandomState(0)", "dtype": "np.dtype('f8')", "masked": "np.ma.masked_array([1, 2])",
        "frame": "pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})", "series": "pd.Series([1, 2], name='s')",
        "grouped": "pd.DataFrame({'a': [1, 2]}).groupby('a')", "rolling": "pd.Series([1, 2]).rolling(2)",
        "categorical": "pd.Categorical(['a', 'b'])", "index": "pd.Index([1, 2])", "timestamp": "pd.Timestamp(0)",
        "multi_index": "pd.MultiIndex.from_tuples([(1, 2)])", "sparse": "scipy.sparse.csr_matrix(np.eye(2))",
        "distribution": "scipy.stats.norm(0, 1)", "fit": "scipy.optimize.minimize(lambda v: (v[0] - 1) ** 2, [0.0])",
        "interpolator": "scipy.interpolate.interp1d([0, 1], [0, 1])", "kd_tree": "scipy.spatial.cKDTree([[0, 0], [1, 1]])",
        "symbol": "sympy.Symbol('x')", "expression": "sympy.sin(sympy.Symbol('x')) + 1",
        "matrix": "sympy.Matrix([[1, 2]])", "figure": "plt.figure()", "axes": "plt.subplots()[1]",
        "line": "plt.plot([1, 2])[0]",
    },
}
PRELUDE = {
    "basic": '''
import ast, asyncio, gzip, logging, os, sqlite3, sys, timeit, traceback, unittest, warnings, zoneinfo
import io, pathlib
import xml.etree.ElementTree
import html.parser
from dataclasses import dataclass
from enum import Enum

class Point:
    def __init__(self):
        self.x = 1

class Colour(Enum):
    RED = 1

@dataclass
class Pair:
    a: int
    b: int

class Case(unittest.TestCase):
    def test_one(self):
        pass

def caught():
    try:
        1 / 0
    except ZeroDivisionError as error:
        return error

def chained():
    try:
        try:
            {}['missing']
        except KeyError as inner:
            raise ValueError('outer') from inner
    except ValueError as error:
        return error
''',
    "data_science": '''
import numpy as np
import pandas as pd
import scipy.sparse, scipy.stats, scipy.optimize, scipy.interpolate, scipy.spatial
import sympy
import matplotlib.pyplot as plt
''',
}
# the data-science profile with scikit-learn, seaborn and statsmodels imported and used
# (imported on demand in the sandbox; crawled by `make crawl`, not in make test)
PRELUDE["analysis"] = PRELUDE["data_science"] + '''
import sklearn.linear_model, sklearn.ensemble, sklearn.model_selection, sklearn.datasets, sklearn.utils.parallel
import seaborn as sns
import statsmodels.api as sm
import statsmodels.formula.api as smf
frame6 = pd.DataFrame({'x': [1.0, 2, 3, 4, 5, 6], 'y': [2.1, 3.9, 6.2, 8.1, 9.8, 12.0], 'g': list('ababab')})
'''
SAMPLES["analysis"] = {
    **SAMPLES["data_science"],
    "linear_regression": "sklearn.linear_model.LinearRegression().fit(np.arange(6.0).reshape(-1, 1), np.arange(6.0))",
    "forest": "sklearn.ensemble.RandomForestRegressor(n_estimators=2).fit(np.arange(6.0).reshape(-1, 1), np.arange(6.0))",
    "iris": "sklearn.datasets.load_iris()", "parallel": "sklearn.utils.parallel.Parallel(n_jobs=2)",
    "ols_results": "sm.OLS(frame6['y'], sm.add_constant(frame6[['x']])).fit()",
    "formula_model": "smf.ols('y ~ x + C(g)', data=frame6)",
    "formula_results": "smf.ols('y ~ x + C(g)', data=frame6).fit()",
    "seaborn_axes": "sns.barplot(data=frame6, x='g', y='y')",
    "facet_grid": "sns.FacetGrid(frame6, col='g')",
}
PROFILE_NAMES = {"basic": ("basic",), "data_science": ("basic", "data_science"),
                 "analysis": ("basic", "data_science")}


def crawl_snippet(profile: str, modules, subsets) -> str:
    """The snippet that imports what `profile` allows, and every subset, and hands them to crawl()."""
    lines = [PRELUDE["basic"]] + ([PRELUDE[profile]] if profile != "basic" else []) + ["roots = {}"]
    for name in modules:
        alias = "module_" + name.replace(".", "_")
        lines.append(f"import {name}\nimport {name} as {alias}\nroots[{name!r}] = {alias}")
    for name in subsets:
        alias = "subset_" + name.replace(".", "_")
        lines.append(f"try:\n    import {name} as {alias}\n    roots[{name!r}] = {alias}\nexcept ImportError:\n    pass")
    samples = {**SAMPLES["basic"], **(SAMPLES[profile] if profile != "basic" else {})}
    lines.append("samples = {}")
    for label, expression in samples.items():
        lines.append(f"try:\n    samples[{label!r}] = {expression}\nexcept Exception as error:\n"
                     f"    samples[{label + ' (its error)'!r}] = error")
    lines.append("crawl(roots, samples)")
    return "\n".join(lines)


@dataclasses.dataclass
class Finding:
    path: str
    what: str


class Denial:
    """The denied set: what no object a snippet holds may be. Built from the run's own
    tables (the guards' vetting, the import policy, the subsets the run made)."""

    def __init__(self, ctx, snippet_builtins: dict):
        from sandbox import profiles
        from sandbox.restricted import guards as rp_guards
        from sandbox.restricted import imports as rp_modules
        self.ctx, self.rp_modules, self.profiles = ctx, rp_modules, profiles
        # a context of its own asks the guards' vetting without touching the run's
        self.oracle = rp_guards.ExecutionContext(ctx.allowed, rp_modules.Events(), ctx.files)
        real_functions = ("eval", "exec", "compile", "open", "__import__", "getattr", "setattr", "delattr",
                          "hasattr", "vars", "dir", "globals", "locals", "breakpoint", "input", "help", "exit",
                          "quit", "memoryview")
        self.real_builtins = {id(getattr(builtins, name)): f"the real builtins.{name}"
                              for name in real_functions if snippet_builtins.get(name) is not getattr(builtins, name)}
        self.real_builtins[id(io.open)] = "the real io.open"
        self.module_count = -1
        self.module_dicts: dict[int, tuple[str, dict]] = {}
        self.exported: set[int] = set()
        self.behind_subsets: dict[int, str] = {}

    def refresh(self) -> None:
        """The tables that depend on what is loaded (a crawl step may import a module)."""
        if len(sys.modules) == self.module_count:
            return
        self.module_count = len(sys.modules)
        # (the dict itself is kept: a module whose vars() is made afresh, as a cffi lib's is,
        # would leave an id that another dict takes once the first is freed)
        self.module_dicts = {id(namespace): (name, namespace) for name, m in list(sys.modules.items())
                             if isinstance(m, types.ModuleType) for namespace in [vars(m)]}
        self.exported = set()
        for name, module in list(sys.modules.items()):
            if isinstance(module, types.ModuleType) and self.ctx.permits(name):
                self.exported.update(id(v) for k, v in list(vars(module).items()) if not k.startswith("_"))
        for name, subset in list(self.ctx.subsets.items()):
            self.exported.update(id(v) for v in self.subset_values(subset).values())
        self.behind_subsets = self.subset_bases()

    def subset_values(self, subset) -> dict:
        return object.__getattribute__(subset, "_ModuleSubset__values")

    def subset_bases(self) -> dict:
        """The real objects a subset stands in for (the module's own object of the same
        name), and the library classes a subset's class derives from: none may be reached."""
        hidden = {}
        for name, subset in list(self.ctx.subsets.items()):
            real = sys.modules.get(name)
            for attr, value in self.subset_values(subset).items():
                original = getattr(real, attr, None) if real is not None else None
                if original is not None and original is not value and not isinstance(original, SCALARS):
                    hidden[id(original)] = f"the real {name}.{attr}, which the subset's {attr} stands in for"
                if isinstance(value, type) and original is not value:
                    for base in value.__mro__[1:]:
                        if base.__module__ != "builtins" and not base.__module__.startswith("sandbox") \
                                and id(base) not in self.exported:
                            hidden.setdefault(id(base), f"{base.__module__}.{base.__qualname__}, a library base "
                                                        f"of the subset's {name}.{attr}")
        return hidden

    def __call__(self, value) -> str | None:
        """What is denied about `value`, else None."""
        if isinstance(value, SCALARS):
            return None
        if isinstance(value, types.ModuleType):
            return f"the real module {getattr(value, '__name__', '?')}"
        key = id(value)
        if key in self.real_builtins:
            return self.real_builtins[key]
        if type(value) is dict and key in self.module_dicts and self.module_dicts[key][1] is value:
            return f"the namespace (a function's __globals__) of the module {self.module_dicts[key][0]}"
        if isinstance(value, (types.FrameType, types.CodeType, types.TracebackType, types.CellType)):
            return f"a {type(value).__name__}"
        if key in self.behind_subsets:
            return self.behind_subsets[key]
        refusal = self.vetting_refusal(value)
        if refusal is not None:
            return refusal
        return None

    def refused_origin(self, value, source: str) -> str | None:
        """Why `value`, a function or class read from the module `source`, is of another
        package's module that no setting allows (profiles.DANGEROUS: os, sys, inspect,
        threading, warnings...), and neither a subset nor an allowed module hands it out as
        it is: a library's re-export of it (from warnings import warn) is that module's
        object all the same. (A library's own namespace handing out its own internals is
        its policy table's to judge; the class of an object the snippet holds is forgiven,
        as its type(): Crawler.run decides at the end.)"""
        if not isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
            return None
        module = getattr(value, "__module__", None)
        if (type(module) is not str or module == "builtins" or id(value) in self.exported
                or self.ctx.permits(module) or module.split(".")[0] == source.split(".")[0]):
            return None  # (the real builtins the snippet does not get: real_builtins)
        code = getattr(value, "__code__", None)
        if code is not None and code.co_filename.startswith(SANDBOX_DIRECTORY):
            return None  # the guards' own wrapper of a library function
        parts = module.split(".")
        listed = next((".".join(parts[:i]) for i in range(1, len(parts) + 1)
                       if ".".join(parts[:i]) in self.profiles.DANGEROUS), None)
        if listed is None:
            return None
        return (f"{module}.{getattr(value, '__qualname__', '?')}, of {listed}, which no setting allows "
                f"({self.profiles.DANGEROUS[listed][:80]})")

    def internal_class(self, value) -> str | None:
        """Why the class `value` is internal: defined in a module the import policy refuses,
        and handed out by no allowed module nor subset. Reached up a class hierarchy only
        (never by a public attribute, item, call or type() of an object held), it is a
        finding (Crawler.run decides at the end)."""
        if not isinstance(value, type):
            return None
        module = vars(value).get("__module__")
        if (type(module) is str and not module.startswith("sandbox") and module not in ("builtins", "__sandbox__")
                and not self.ctx.permits(module) and id(value) not in self.exported):
            return (f"the class {module}.{getattr(value, '__qualname__', '?')} (a module the import policy refuses), "
                "a base no public route reaches")
        return None

    def vetting_refusal(self, value) -> str | None:
        """The guards' own verdict: a value they refuse or replace must never be held as it is."""
        from sandbox.restricted import imports as rp_modules
        if type(value) is types.GenericAlias or not rp_modules.needs_vet(value):
            return None
        try:
            vetted = self.oracle.vet(value, "it")
        except Exception as exc:  # noqa: BLE001 - a refusal
            return f"a value the guards refuse ({str(exc)[:160]})"
        if vetted is not value:
            return f"a value the guards replace before handing it out ({type(value).__name__})"
        return None


class Crawler:
    """Breadth-first over what a snippet can reach from `roots`, through its globals' guards."""

    def __init__(self, glb: dict, budget: Budget):
        from sandbox.restricted.subsets import registry
        from sandbox.restricted import imports as rp_modules
        self.snippet_builtins = glb["__builtins__"]
        self.getattr = glb["_getattr_"]
        self.getitem = glb["_getitem_"]
        self.getiter = glb["_getiter_"]
        self.call = glb["_call_"]
        self.class_of = glb["_class_of_"]
        self.type = self.snippet_builtins["type"]
        self.dir = self.snippet_builtins["dir"]
        self.iter = self.snippet_builtins["iter"]
        self.budget = budget
        self.unproxied = rp_modules.unproxied
        self.proxy_types = (rp_modules.ModuleProxy, registry.ModuleSubset)
        self.denial = Denial(glb["_getattr_"].__self__, self.snippet_builtins)
        self.seen: dict[int, object] = {}     # id -> object (kept alive, so that ids stay unique)
        self.public: set[int] = set()         # reached by a public route (no step up a class hierarchy)
        self.held_classes: set[type] = set()  # the classes of objects reached by a public route
        self.internal: dict[int, Finding] = {}  # internal classes reached only up a hierarchy (so far)
        self.refused_origins: dict[int, tuple] = {}  # functions and classes of refused modules: (it, Finding)
        self.denied: dict[int, object] = {}
        self.findings: list[Finding] = []
        self.visited = 0
        self.steps = 0
        self.per_depth: collections.Counter = collections.Counter()
        self.per_type: collections.Counter = collections.Counter()

    def run(self, roots: dict) -> None:
        queue = collections.deque()
        for label, value in roots.items():
            self.reach(queue, value, label, 0, True)
        self.queue = queue
        while queue and self.visited < self.budget.objects:
            value, path, depth, public = queue.popleft()
            self.visited += 1
            self.per_depth[depth] += 1
            if depth < self.budget.depth:
                module = self.module_name(value)
                for step, reached in self.steps_from(value, path):
                    self.reach(queue, reached, path + step, depth + 1, public and step not in HIERARCHY_STEPS,
                               None if step.endswith(" raised") else module)
        self.findings += [finding for key, finding in self.internal.items()
                          if key not in self.public and self.seen[key] not in self.held_classes]
        self.findings += [finding for value, finding in self.refused_origins.values()
                          if value not in self.held_classes]

    def module_name(self, value) -> str | None:
        """The name of the module a proxy or subset stands for; None for any other object."""
        for kind in self.proxy_types:
            if type(value) is kind:
                return object.__getattribute__(value, f"_{kind.__name__}__name")
        return None

    def reach(self, queue, value, path: str, depth: int, public: bool, module: str | None = None) -> None:
        """`value`, reached by `path`: checked, and queued to be walked when it is new.
        `module`: the module it was read from (where a re-export would be)."""
        self.denial.refresh()
        why = self.denial(value)
        if why is not None:
            if id(value) not in self.denied:  # (each denied object once, by the first path that reached it)
                self.denied[id(value)] = value
                self.findings.append(Finding(path, why))
            return  # (what lies beyond a door is not the wall's to judge)
        if isinstance(value, SCALARS):
            return
        key = id(value)
        if public:
            self.held_classes.add(type(value))
        if module is not None and key not in self.refused_origins:
            origin = self.denial.refused_origin(value, module)
            if origin is not None:
                self.refused_origins[key] = (value, Finding(path, origin))
        if key in self.seen and (key in self.public or not public):
            return
        if public:
            self.public.add(key)
        elif key not in self.internal:
            internal = self.denial.internal_class(value)
            if internal is not None:
                self.internal[key] = Finding(path, internal)
        if key not in self.seen and self.budget.per_type is not None and not isinstance(
                value, (type, *self.proxy_types, *CONTAINERS)):
            self.per_type[type(value)] += 1
            if self.per_type[type(value)] > self.budget.per_type:
                return
        self.seen[key] = value
        queue.append((value, path, depth, public))

    def steps_from(self, value, path: str):
        """(step, value reached) for each step a snippet can take from `value`; a step that
        raises reaches its exception (a snippet catches it with `except BaseException as e`)."""
        names = self.names_of(value)
        for name in names:
            yield from self.attempt(f".{name}", lambda: self.getattr(value, name))
        yield from self.attempt("type()", lambda: self.type(value))
        yield from self.attempt(".__class__", lambda: self.class_of(value))
        yield from self.items_of(value)
        if hasattr(type(value), "__iter__") and not isinstance(value, type):
            yield from self.attempt("iter()", lambda: self.call(self.iter, value))
        for name in self.zero_argument_names(value, names):
            try:
                method = self.getattr(value, name)
            except BaseException:  # noqa: BLE001 - (reached above, by its name)
                continue
            if callable(method):
                yield from self.attempt(f".{name}()", lambda: self.call(method))
        if callable(value) and path.rsplit(".", 1)[-1] in ZERO_ARGUMENT_METHODS:
            yield from self.attempt("()", lambda: self.call(value))

    def names_of(self, value) -> list:
        try:
            names = list(self.dir(value))
        except Exception:  # noqa: BLE001 - dir() refused or failed: the probed names remain
            names = []
        if self.budget.every_name:
            try:
                real = dir(self.unproxied(value))
            except Exception:  # noqa: BLE001 - an object whose __dir__ fails
                real = []
            names += [n for n in real if type(n) is str]
            names += MORE_PROBED_NAMES
        names += PROBED_NAMES
        return list(dict.fromkeys(names))

    def zero_argument_names(self, value, names) -> list:
        chosen = [n for n in ZERO_ARGUMENT_METHODS if n in names or hasattr(type(value), n)]
        if self.budget.every_zero_argument_method:
            chosen += [n for n in names if not n.startswith("_") and n not in NEVER_CALLED]
        return list(dict.fromkeys(chosen))

    def items_of(self, value):
        """Items by iteration (through _getiter_) and by index or key (through _getitem_)."""
        if isinstance(value, (type, *self.proxy_types)) or not hasattr(type(value), "__iter__"):
            keys = [0, -1] if hasattr(type(value), "__getitem__") and not isinstance(value, type) else []
        else:
            items = []
            for step, iterator in self.attempt("[iteration]", lambda: iter(self.getiter(value))):
                if step.endswith(" raised"):
                    yield step, iterator
                    break
                for position in range(self.budget.items):
                    found = list(self.attempt(f"[iteration {position}]", lambda: next(iterator)))
                    yield from found
                    if not found or found[0][0].endswith(" raised"):
                        break
                    items.append(found[0][1])
            mapping = hasattr(type(value), "keys")
            keys = [k for k in items if isinstance(k, (str, int, tuple))] if mapping else [0, -1]
        for key in keys[: self.budget.items]:
            yield from self.attempt(f"[{key!r:.40}]", lambda: self.getitem(value, key))

    def attempt(self, step: str, make):
        """[(step, what it reached)], or [(step + " raised", the exception)]; [] when the
        iteration is over."""
        self.steps += 1
        try:
            return [(step, make())]
        except StopIteration:
            return []
        except BaseException as exc:  # noqa: BLE001 - a refusal, an error, a SystemExit
            return [(f"{step} raised", exc)]


def crawl_in_this_process(profile: str, budget: Budget, prepare=None) -> dict:
    """Run the crawl snippet here (in a process of its own: see crawl) and return its report.
    `prepare()`, when given, runs first, once the modules are loaded (a test opens a guard there)."""
    from sandbox import profiles
    from sandbox.restricted.subsets import registry
    from sandbox.restricted import run as restricted
    from sandbox.restricted.base import SNIPPET_FILENAME
    allowed = profiles.allowed_modules(PROFILE_NAMES[profile])
    restricted.preload(sorted(allowed) + list(registry.PRELOADED))
    if prepare is not None:
        prepare()
    modules = sorted(name for name in allowed if profiles.importable(name))
    report: dict = {}

    def crawl(roots, samples):
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != SNIPPET_FILENAME:
            frame = frame.f_back
        glb = frame.f_globals
        del frame
        glb.pop("crawl", None)  # the crawler is not the snippet's
        crawler = Crawler(glb, budget)
        builtin_roots = {f"builtins.{name}": value for name, value in glb["__builtins__"].items()}
        crawler.run({**builtin_roots, **{f"import {k}": v for k, v in roots.items()},
                     **{f"samples[{k!r}]": v for k, v in samples.items()}, "globals()": glb["__builtins__"]["globals"]})
        report.update(visited=crawler.visited, steps=crawler.steps, complete=not crawler.queue,
                      per_depth=dict(sorted(crawler.per_depth.items())),
                      findings=[dataclasses.asdict(f) for f in crawler.findings],
                      samples_failed=sorted(k for k, v in samples.items() if k.endswith("(its error)")))

    sink = io.StringIO()
    subsets = sorted(name for name in registry.SUBSETS if not profiles.permits(name, allowed))
    reply = restricted.execute(crawl_snippet(profile, modules, subsets), restricted=True, allowed_modules=allowed,
                               stdout=sink, stderr=sink, names={"crawl": crawl})
    if not reply["success"]:
        raise RuntimeError(f"the crawl snippet failed: {reply['error']}")
    return report


def crawl(profile: str, budget: Budget = QUICK, prepare=None, timeout: float = 1800.0) -> dict:
    """The crawl of `profile` in a forked child (the calls it makes change no state of ours).
    The timeout is a safety net for a step that never returns, not part of the verdict."""
    from forked import child_value
    return child_value(lambda: crawl_in_this_process(profile, budget, prepare), timeout=timeout)


def summary(profile: str, report: dict) -> str:
    depths = ", ".join(f"{count} at depth {depth}" for depth, count in report["per_depth"].items())
    lines = [f"{profile}: {report['visited']} objects visited ({depths}), {report['steps']} guarded steps, "
             f"{len(report['findings'])} findings"]
    lines += [f"  {f['path']}  ->  {f['what']}" for f in report["findings"]]
    return "\n".join(lines)


if __name__ == "__main__":
    import importlib.util
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    failed = False
    for name in ("basic", "data_science", "analysis"):
        if name != "basic" and importlib.util.find_spec("pandas") is None:
            print(f"{name}: skipped (make install-datascience)")
            continue
        if name == "analysis" and importlib.util.find_spec("statsmodels") is None:
            print("analysis: skipped (make install-datascience)")
            continue
        result = crawl(name, DEEP, timeout=3600.0)
        print(summary(name, result), flush=True)
        failed |= bool(result["findings"])
    sys.exit(1 if failed else 0)

"""pandas' doors: unpickling (read_pickle), expression strings (query, eval: see
pandas_expressions.py), functions looked up by name (df.agg('...')), accessors and plotting
backends registered by name, index arrays its compiled code trusts, format strings, and
database URIs."""

from __future__ import annotations

import sys

from sandbox.restricted.libraries import pandas_expressions
from sandbox.restricted.libraries.format_fields import plain_fields
from sandbox.restricted.libraries.table import TEST_RUNNER_ADVICE, Table

# (a pandas SparseArray's sp_index: where its values sit, and in blocks of what length; its
# operations read its values at these positions, so the snippet reads them as copies)
_PANDAS_SPARSE_INDEX = ("pandas._libs.sparse.IntIndex", "pandas._libs.sparse.BlockIndex")


def _sys_info_without_the_host() -> dict:
    """What pd.show_versions() prints of the system, without the host's kernel release and
    version (the platform subset does not give them either)."""
    import platform
    hidden = "(the host's is not shown in the sandbox)"
    return {"commit": None, "python": platform.python_version(), "python-bits": sys.maxsize.bit_length() + 1,
            "OS": platform.system(), "OS-release": hidden, "Version": hidden, "machine": platform.machine(),
            "processor": "", "byteorder": sys.byteorder, "LC_ALL": None, "LANG": None,
            "LOCALE": {"language-code": None, "encoding": None}}


def _public_function_names(policy, func, depth: int = 0, obj=None):
    """pandas looks a function given by name up on the object (df.agg('sum'),
    df.apply('__getattribute__', args=('_mgr',))): a name that starts with '_'
    reaches its internals, and a method the sandbox refuses on the object
    (df.apply('query', args=(...,))) would run all the same. `func` as pandas takes
    it: a name, a callable, or a list or dict of them (of (column, name) pairs in a
    named aggregation); `obj`: the object pandas looks the name up on, when known
    (else any method the refused attributes name is refused by its name)."""
    if isinstance(func, str):
        name = str.__str__(func)
        if name.startswith("_"):
            return (f"pandas looks {name[:40]!r} up on the object by name, and names that start with '_' "
                    "are its internals: pass a public name ('sum', 'mean') or the function itself")
        refused = policy.attribute_refusal(obj, name) if obj is not None else (
            f"{name} is refused: {policy.refused_attributes[name][1]}" if name in policy.attribute_types else None)
        if refused is not None:
            return f"pandas would look {name!r} up on the object by name and call it: {refused}"
        if name in pandas_expressions.METHODS:
            return (f"pandas would look {name!r} up on the object by name and call it without the sandbox's "
                    f"checks of its expression: call df.{name}(...) itself")
        numpy = sys.modules.get("numpy")
        found = getattr(numpy, name, None) if numpy is not None else None
        if found is not None and (id(found) in policy.refused_ids or id(found) in policy.replaced_ids):
            # (when the object has no method of that name, pandas calls numpy's: numpy.ndarray
            # over a buffer would skip the checks the snippet's own numpy.ndarray makes)
            return (f"pandas would call numpy.{name[:40]} on the object, which the sandbox refuses or checks: "
                    f"call numpy.{name[:40]} yourself")
        return None
    # (a list or dict is looked into for an early answer; pandas looks each name up on
    # its own later, and every lookup is checked then, however the container iterates)
    if depth < 3 and type(func) in (list, tuple, dict):
        for item in (func.values() if type(func) is dict else func):
            why = _public_function_names(policy, item, depth + 1, obj)
            if why is not None:
                return why
    return None


def table(policy) -> Table:
    def function_argument(self, func=None, *args, **kwargs):
        return _public_function_names(policy, [func, *kwargs.values()])

    return Table(
        refused_objects={
            "pandas.read_pickle": "unpickling runs code; use pandas.read_csv, read_json or read_parquet",
            "pandas.test": TEST_RUNNER_ADVICE,
            # (pandas 3.0: an Expression defers every attribute, call and operator to the frame it is
            # evaluated on, by name and past the guards: pd.col('a').to_frame().query(...) ran query)
            **dict.fromkeys(("pandas.col", "pandas.api.typing.Expression"),
                            "deferred column expressions evaluate their attributes and calls on the frame past "
                            "the sandbox's checks; write a function of the frame: "
                            "df.assign(c=lambda d: d['a'] + d['b']), df.loc[lambda d: d['a'] > 0]"),
            "pandas.api.extensions.register_dataframe_accessor":
                "accessors write onto pandas' classes; write a function that takes the DataFrame",
            "pandas.api.extensions.register_series_accessor":
                "accessors write onto pandas' classes; write a function that takes the Series",
            "pandas.api.extensions.register_index_accessor":
                "accessors write onto pandas' classes; write a function that takes the Index",
        },
        # (DataFrame.query and eval: pandas_expressions.METHODS, wrapped where they are read)
        stand_ins={"pandas.eval": pandas_expressions.evaluator},
        # groupby's compiled aggregations write out[code] for each code an array's factorize()
        # returns, and reindex takes the positions an index's get_indexer() returns: an
        # override's code or position past the data wrote or read the heap
        final_classes=dict.fromkeys(
            ("pandas.core.arrays.base.ExtensionArray", "pandas.core.dtypes.base.ExtensionDtype",
             "pandas.core.indexes.base.Index"),
            "pandas' compiled code trusts what the methods of its arrays, indexes and dtypes return (codes, "
            "positions): use them as they are, and keep your own logic in functions or a class that holds "
            "a Series"),
        forced_keywords={
            # MultiIndex(..., verify_integrity=False) with a code past its level: .values reads out of bounds
            **dict.fromkeys(("pandas.MultiIndex.__new__", "pandas.MultiIndex.set_codes",
                             "pandas.MultiIndex.set_levels"), {"verify_integrity": True}),
            # "invalid codes can lead to severe problems, such as segfaults" (pandas' own docstring)
            "pandas.Categorical.from_codes": {"validate": True},
        },
        copied_attributes={"indices": _PANDAS_SPARSE_INDEX,
                           **dict.fromkeys(("blocs", "blengths"), _PANDAS_SPARSE_INDEX[1:])},
        writable_types={
            "pandas._config.config.DictWrapper": "pd.options.display.width = 120 is pd.set_option(...)",
        },
        writable_attributes={
            "pandas.DataFrame": ({"columns", "index"}, "df.columns = [...] is df.set_axis([...], axis=1)"),
            "pandas.Series": ({"name", "index"}, "s.name = 'x' is s.rename('x')"),
            "pandas.Index": ({"name", "names"}, "df.index.name = 'day' is index.rename('day')"),
        },
        refused_attributes={
            "style": (("pandas.DataFrame", "pandas.Series"), "the Styler renders jinja2 templates and formats "
                                                            "with strings that reach attributes unguarded; use "
                                                            "df.to_string(), df.to_html() or df.to_markdown()"),
        },
        neutral_while_running={
            "pandas.util._print_versions._get_sys_info": lambda: _sys_info_without_the_host(),
        },
        checked_calls={
            "pandas.io.formats.format.DataFrameFormatter._validate_float_format":
                plain_fields(lambda self, fmt, *args, **kwargs: fmt),
            # (with jinja2 installed: to_latex formats through the Styler)
            "pandas.io.formats.style_render._maybe_wrap_formatter":
                plain_fields(lambda formatter=None, *args, **kwargs: formatter),
            # every node of a pandas expression (df.query, df.eval, pd.eval), as pandas visits it
            "pandas.core.computation.expr.BaseExprVisitor.visit": pandas_expressions.node_refusal,
            # pandas' lookups of a function by name (agg, apply, transform; pivot_table's aggfunc
            # on the way): where each calls getattr(obj, name). The groupby classes bind agg twice.
            "pandas.core.apply.Apply.apply_str": lambda self, *args, **kwargs: _public_function_names(
                policy, self.func, obj=getattr(self, "obj", None)),
            "pandas.core.apply.Apply._apply_str": lambda self, obj=None, func=None, *args, **kwargs: (
                _public_function_names(policy, func, obj=obj)),
            **dict.fromkeys((f"pandas.core.groupby.{klass}.{method}"
                             for klass in ("generic.SeriesGroupBy", "generic.DataFrameGroupBy")
                             for method in ("aggregate", "agg")), function_argument),
            **dict.fromkeys((f"pandas.core.groupby.groupby.GroupBy.{method}"
                             for method in ("apply", "_transform", "_reduction_kernel_transform")),
                            function_argument),
            # (a URI string: with SQLAlchemy installed, pandas opens any database through it, none of
            # snippet_sqlite's checks applied)
            "pandas.io.sql.pandasSQL_builder": lambda con=None, *args, **kwargs: (
                "a database URI is not opened in the sandbox: pass a connection, "
                "e.g. pd.read_sql(query, sqlite3.connect('data.db'))" if isinstance(con, (str, bytes)) else None),
            # pandas imports its plotting backend by name (any module, past the import allow-list:
            # `antigravity` opens a browser) and calls the module's plot() with the frame
            "pandas.plotting._core._load_backend": lambda backend=None, *args, **kwargs: (
                None if type(backend) is str and backend == "matplotlib" else
                f"pandas plots with matplotlib in the sandbox, not with {str(backend)[:40]!r}: leave "
                "pd.options.plotting.backend as 'matplotlib' (pass no backend=)"),
        },
    )

"""The data-science profile: numpy, pandas and matplotlib under
RestrictedPython's guards and the memory limit, figures returned as PNG.
Needs the optional extra (`make install-datascience`); skipped without it."""

from __future__ import annotations

import base64
import importlib.util

import pytest

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from runner_harness import MiB, SyncRunner  # noqa: E402

from sandbox import profiles  # noqa: E402

ALLOWED = profiles.allowed_modules(["basic", "data_science"])


@pytest.fixture(scope="module")
def ds():
    preload = tuple(m for m in profiles.profile_modules_available("data_science")
                    if m.split(".")[0] not in profiles.IMPORTED_ON_DEMAND)   # (as the server warms them)
    runner = SyncRunner(preload=preload, max_memory=1024 * MiB)
    yield runner
    runner.close()


def test_the_object_memory_check_reads_numpys_own_base_and_dtype():
    """mixes_objects_and_bytes alone (without the class rule that refuses such a class in a
    snippet): a subclass's own `base` and `dtype` do not hide an object array's pointers."""
    import numpy as np
    from sandbox.restricted.libraries.numpy_table import mixes_objects_and_bytes

    class Hiding(np.ndarray):
        base = None

        def dtype(self):
            return np.dtype(np.int64)

    pointers = np.array([1, 2], dtype=object)
    assert mixes_objects_and_bytes(Hiding((2,), dtype=np.int64, buffer=pointers))
    assert not mixes_objects_and_bytes(np.arange(3).view(Hiding))


def test_children_start_with_the_library_tables_resolved(ds):
    """As in the basic profile (test_runner), and with the lazy submodules that the
    tables' lookups import (scipy.cluster) already imported by the fork server: without
    library_policy.settle each child would import them in its first run and resolve the
    tables again at its first import, some 50 ms of copied memory per execution."""
    from test_runner import RESOLVED_STATE
    r = ds.run(RESOLVED_STATE + "\nresult.append('scipy.cluster' in sys.modules)", restricted=False)
    assert r["success"], r
    resolved_with, loaded, lazy_imported = r["result"]
    assert resolved_with == loaded
    assert lazy_imported


def test_the_libraries_are_shared_with_the_children_in_huge_pages(ds):
    """What numpy, pandas, scipy, sympy and matplotlib put in the fork server's memory
    (some 150 MB) is shared with the cloner in 2 MB pages (kernel.collapse_to_huge_pages):
    each clone then copies far fewer page-table entries, and each child's exit frees
    fewer. (The basic profile's heap is small and written by both: it gains nothing.)"""
    from test_cloner import can_collapse, the_cloner
    if not can_collapse():
        pytest.skip("MADV_COLLAPSE needs Linux 6.1 and THP not 'never'")
    assert ds.run("result = 1", allowed=ALLOWED)["success"]
    rollup = open(f"/proc/{the_cloner(ds.runner.fork_server_pid())}/smaps_rollup").read()
    assert int(rollup.split("AnonHugePages:")[1].split()[0]) >= 32 << 10, rollup


def test_pandas_numpy_idioms_under_the_guards(ds):
    r = ds.run("import pandas as pd\nimport numpy as np\n"
               "df = pd.DataFrame({'x': np.arange(5), 'y': np.arange(5) ** 2})\n"
               "df['z'] = df['x'] + df['y']\n"
               "arr = np.arange(3)\narr += 1\n"
               "sub = df[df['z'] > 2].loc[:, ['x', 'z']].reset_index(drop=True)\n"
               "result = {'z': df['z'].tolist(), 'arr': arr.tolist(), 'sub': sub.to_dict('list'),"
               " 'mean': float(df['y'].mean())}", allowed=ALLOWED, timeout=30)
    assert r["success"], r
    assert r["result"] == {"z": [0, 2, 6, 12, 20], "arr": [1, 2, 3],
                           "sub": {"x": [2, 3, 4], "z": [6, 12, 20]}, "mean": 6.0}


def test_a_frames_axes_and_names_are_set_as_in_pandas(ds):
    r = ds.run("import pandas as pd\ndf = pd.DataFrame({'A b': [1, 2], 'C': [3, 4]})\n"
               "df.columns = [c.lower().replace(' ', '_') for c in df.columns]\n"
               "df.index = ['x', 'y']\ndf.index.name = 'key'\ns = df['c']\ns.name = 'total'\n"
               "result = [df.columns.tolist(), df.reset_index().columns.tolist(), s.name]", allowed=ALLOWED, timeout=30)
    assert r["success"], r
    assert r["result"] == [["a_b", "c"], ["key", "a_b", "c"], "total"], r


@pytest.mark.parametrize("code", [
    "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf.to_csv = print",        # a method, not an axis
    "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf.columns = ['a', 'b']",   # pandas' own check
    "import numpy as np\na = np.arange(6)\na.shape = (2, 3)",                      # not numpy's layout
    "import numpy as np\na = np.arange(6)\na.dtype = np.float64",
    "import pandas as pd\ns = pd.Series([1])\ns.values.shape = (1, 1)",
])
def test_only_the_axes_and_names_of_library_objects_are_writable(ds, code):
    r = ds.run(code, allowed=ALLOWED, timeout=30)
    assert not r["success"] and r["error_type"] in ("security_violation", "runtime_error"), r


# Bytes that name a function: pickle calls it with the real builtins. np.save/np.load and
# pd.read_pickle were refused; NpzFile(allow_pickle=True) and pandas' pickle_compat were not.
NPZ_WITH_A_PICKLE = """
import numpy as np, io, struct, zlib
payload = b"cposix\\ngetpid\\n(tR."
header = "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"
header = (header + " " * ((64 - (11 + len(header)) % 64) % 64) + "\\n").encode()
npy = b"\\x93NUMPY\\x01\\x00" + struct.pack("<H", len(header)) + header + payload
crc, name = zlib.crc32(npy), b"a.npy"
local = struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 0, 0, 0, crc, len(npy), len(npy), len(name), 0) + name + npy
central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, 0, 0, 0, crc, len(npy), len(npy), len(name),
                      0, 0, 0, 0, 0, 0) + name
archive = io.BytesIO(local + central + struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 1, 1, len(central), len(local), 0))
"""


@pytest.mark.parametrize("code", [
    "import sympy\nfrom sympy.utilities.autowrap import ufuncify\nx = sympy.symbols('x')\nf = ufuncify([x], x + 1)",
    "import sympy\nfrom sympy.utilities.autowrap import autowrap\nx = sympy.symbols('x')\nf = autowrap(x + 1)",
])
def test_no_library_starts_a_program(ds, code):
    """ufuncify compiled the C code it generated and loaded it (with the kernel layers off,
    it did): the module is refused by name (autowrap also imports the module it writes), and
    while a snippet runs every way to start a program refuses as the kernel would."""
    r = ds.run(code, allowed=ALLOWED, timeout=60)
    assert not r["success"] and ("no program can run in the sandbox" in r["error"]
                                 or "sympy.utilities.autowrap" in r["error"]), r
    assert r["error_type"] == "security_violation" and r["security_events"], r


@pytest.mark.parametrize("unpickle", [
    "np.lib.npyio.NpzFile(archive, allow_pickle=True)['a']",
    "import pandas as pd\npd.compat.pickle_compat.loads(payload)",
    "import pandas as pd\npd.compat.pickle_compat.Unpickler(io.BytesIO(payload)).load()",
])
def test_no_library_unpickles_the_snippets_bytes(ds, unpickle):
    r = ds.run(NPZ_WITH_A_PICKLE + unpickle + "\nprint('ESCAPED:unpickled')", allowed=ALLOWED, timeout=30)
    assert not r["success"] and "unpickling runs code" in r["error"] and "ESCAPED" not in r["stdout"], r


# Drawing the snippet's figures calls its code: a tick formatter, a draw-event handler.
FIGURE_CALLING_BACK = NPZ_WITH_A_PICKLE + """
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter
def unpickle(*args):
    print('called back')
    np.lib.npyio.NpzFile(io.BytesIO(archive.getvalue()), allow_pickle=True)['a']
    print('ESCAPED:unpickled after the run')
fig, ax = plt.subplots()
ax.plot([1, 2, 3])
"""


@pytest.mark.parametrize("hook", ["ax.xaxis.set_major_formatter(FuncFormatter(unpickle))",
                                  "fig.canvas.mpl_connect('draw_event', unpickle)"])
def test_drawing_the_snippets_figures_runs_its_code_under_the_runs_policy(ds, hook):
    """Figures are drawn (and closed) after the snippet's last line: its callbacks then
    ran with every library switch-off put back (NpzFile unpickled, ufuncify compiled)."""
    r = ds.run(FIGURE_CALLING_BACK + hook, allowed=ALLOWED, timeout=30)
    assert r["success"] and "ESCAPED" not in r["stdout"], r
    assert "called back" in r["stdout"], r   # (the callback's output is the snippet's, too)
    assert "unpickling runs code" in r["artifacts_error"] and r["security_events"], r


@pytest.mark.parametrize("code", [
    "import scipy.sparse as sp, numpy as np\nm = sp.csr_matrix(np.eye(2))\nsp.csr_matrix.has_sorted_indices.fset(m, False)",
    "import pandas as pd\ns = pd.Series([1])\ntype(s).name.fset(s, 'x')",
    "import operator, pandas as pd\noperator.attrgetter('fset')(pd.Series.name)",
])
def test_a_library_propertys_setter_is_not_handed_out(ds, code):
    """prop.fset(obj, value) would be the attribute write the write guard refuses."""
    r = ds.run(code, allowed=ALLOWED, timeout=30)
    assert not r["success"] and "a library property's" in r["error"], r


@pytest.mark.parametrize("code", [
    "import numpy as np\na = np.empty(1, dtype=object)\na[0] = ()\nnp.frompyfunc(getattr, 2, 1)(a, '__class__')",
    "import numpy as np\nnp.vectorize(getattr, otypes=[object])(np.array([1], dtype=object), '__class__')",
    "import pandas as pd\npd.Series([1]).apply(getattr, args=('__class__',))",
    "import pandas as pd\npd.DataFrame({'a': [1]}).pipe(getattr, '__class__')",
])
def test_getattr_handed_to_a_library_mapper_is_still_the_guarded_one(ds, code):
    """The libraries call back what the snippet gives them: getattr there is the sandbox's."""
    r = ds.run(code, allowed=ALLOWED, timeout=30)
    assert not r["success"] and r["error_type"] == "security_violation" and "__class__" in r["error"], r


def test_a_table_as_markdown(ds):
    """df.to_markdown() is how a model shows a table, and what the DataFrame.style refusal
    advises: it needs tabulate, which the data-science extra installs."""
    r = ds.run("import pandas as pd\nresult = pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']}).to_markdown(index=False)",
               allowed=ALLOWED, timeout=30)
    assert r["success"], r
    assert r["result"].splitlines() == ["|   a | b   |", "|----:|:----|", "|   1 | x   |", "|   2 | y   |"], r


def test_a_figure_comes_back_as_png(ds):
    r = ds.run("import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2, 3], [1, 4, 9])\n"
               "fig2 = plt.figure()\nresult = 'plotted'", allowed=ALLOWED, timeout=30)
    assert r["success"], r
    assert len(r["images"]) == 2
    for image in r["images"]:
        assert image["mime_type"] == "image/png"
        assert base64.b64decode(image["base64"]).startswith(b"\x89PNG\r\n\x1a\n")


def test_a_figure_too_large_for_a_client_is_not_rendered_and_says_why(ds):
    """figsize=(150, 150) would be a 15,000 x 15,000 PNG (a decompression bomb for the
    client that decodes it): not rendered at all, the answer says why, the rest stands."""
    r = ds.run("import matplotlib.pyplot as plt\nplt.figure(figsize=(150, 150))\nplt.figure()\n"
               "result = 'plotted'", allowed=ALLOWED, timeout=30)
    assert r["success"] and r["result"] == "plotted", r
    assert len(r["images"]) == 1
    assert "figure 1 not returned: 15000 x 15000 pixels" in r["artifacts_error"] and "figsize" in r["artifacts_error"]


def test_100_mb_array_fits_the_default_limit_and_not_a_small_one(ds):
    code = "import numpy as np\na = np.ones(100 * 1024 * 1024 // 8)\nresult = int(a.nbytes)"
    r = ds.run(code, allowed=ALLOWED, memory=128 * MiB, timeout=30)
    assert r["success"] and r["result"] == 100 * MiB, r
    r = ds.run(code, allowed=ALLOWED, memory=32 * MiB, timeout=30)
    assert r["error_type"] == "memory_limit", r


def test_data_science_modules_are_no_door_to_os(ds):
    for code in ("import numpy as np\nresult = np.os.getpid()",
                 "import pandas as pd\nresult = pd.io.common.os.getcwd()",
                 "import numpy as np\nresult = np.ctypeslib.ctypes",
                 "import matplotlib\nresult = matplotlib.os.environ"):
        r = ds.run(code, allowed=ALLOWED, timeout=30)
        assert not r["success"] and r["error_type"] in ("security_violation", "runtime_error"), (code, r)


# ---- the libraries' doors: refused under RestrictedPython, each with what to do instead.
# Every case is a real door: the same code without RestrictedPython
# reaches eval, unpickling, raw memory or a write onto a library class.

EVIL_FUNCTION = ("import sympy\nx = sympy.Symbol('x')\n"
                 "evil = sympy.Function(\"(lambda a: __import__('os').getpid() and a)\")\n")
DOORS = {
    # sympy parses math text (test_sympy_parses_math_text): nothing else
    **{f"parse_{name}": (f"import sympy\nresult = str(sympy.S({text!r}))", "sympy.symbols")
       for name, text in (("builtin_words", "eval(chr(95) + chr(95))"), ("attribute", "(1).real"),
                          ("dunder", "(1).__class__"), ("item", "[1][0]"), ("call_of_name", "open(1)"),
                          ("lambda", "(lambda: 1)()"), ("string", "'x'"), ("walrus", "(a := 1)"),
                          ("semicolon", "1; 2"), ("newline_code", "1\nimport os"), ("full_width", "ｅｖａｌ(x)"),
                          ("sympy_function", "lambdify(x, x)"), ("sympify_itself", "S(x)"), ("private", "_x + 1"),
                          ("sympy_name", "var(x)"), ("builtin_value", "globals"), ("keyword_argument", "sin(x, evaluate=0)"))},
    "parse_local_value_called": ("import sympy\ndef g(v):\n    return v\n"
                                 "result = str(sympy.parse_expr('g(1)', local_dict={'g': g}))", "sympy.symbols"),
    "parse_global_dict": ("import sympy\nresult = str(sympy.parse_expr('x + 1', global_dict={}))", "sympy.symbols"),
    "parse_implicit_names": ("import sympy\nresult = str(sympy.parse_expr('x y', transformations='all'))",
                             "sympy.symbols"),
    "parse_transformations": ("import sympy\ndef evil(tokens, local_dict, global_dict):\n    return tokens\n"
                              "result = str(sympy.parse_expr('1 + 1', transformations=(evil,)))", "transformations"),
    "parse_transformations_positional": ("import sympy\ndef evil(tokens, local_dict, global_dict):\n"
                                         "    return tokens\nresult = str(sympy.parse_expr('1', None, [evil]))",
                                         "transformations"),
    "parse_expr": ("from sympy.parsing.sympy_parser import parse_expr\nresult = str(parse_expr('1+1'))",
                   "not allowed"),
    # lambdify runs (test_lambdify_runs_what_agents_write); what it would paste or import is refused
    "lambdify_string": ("import sympy\nf = sympy.lambdify('x', 'x + 1')\nresult = f(1)", "not strings"),
    "lambdify_string_in_list": ("import sympy\nx = sympy.Symbol('x')\n"
                                "f = sympy.lambdify(x, [x, \"(lambda a: __import__('os'))(x)\"])\nresult = str(f(1))",
                                "not strings"),
    "lambdify_list_subclass": ("import sympy\nx = sympy.Symbol('x')\nclass L(list):\n    pass\n"
                               "result = str(sympy.lambdify(x, L([x]))(1))", "plain lists"),
    "lambdify_modules_name": ("import sympy\nx = sympy.Symbol('x')\nresult = str(sympy.lambdify(x, x, modules='os'))",
                              "pass modules as one of"),
    "lambdify_modules_object": ("import sympy, numpy\nx = sympy.Symbol('x')\n"
                                "result = str(sympy.lambdify(x, x, modules=numpy))", "pass modules as one of"),
    "lambdify_modules_dunder": ("import sympy\nx = sympy.Symbol('x')\n"
                                "result = str(sympy.lambdify(x, x, modules=[{'__builtins__': {}}, 'numpy']))",
                                "public identifier"),
    "lambdify_printer": ("import sympy\nfrom sympy.printing.lambdarepr import LambdaPrinter\nx = sympy.Symbol('x')\n"
                         "result = str(sympy.lambdify(x, x, printer=LambdaPrinter))", "leave printer="),
    "lambdify_cse_function": ("import sympy\nx = sympy.Symbol('x')\n"
                              "result = str(sympy.lambdify(x, x, cse=lambda e: ([], e)))", "leave printer="),
    "lambdify_function_name": ("import sympy\nx = sympy.Symbol('x')\n"
                               "evil = sympy.Function(\"(lambda a: __import__('os').getcwd())\")\n"
                               "result = sympy.lambdify(x, evil(x))(1)", "plain identifiers"),
    "parse_expr_reexported": ("import sympy\nresult = str(sympy.parse_expr(\"__import__('os').getpid()\"))",
                              "sympy.symbols"),
    # lambdify inside nsolve and plot prints a Function's name as it is: code
    "nsolve_function_name": (f"{EVIL_FUNCTION}result = float(sympy.nsolve(evil(x) - 1, x, 1))", "plain identifiers"),
    "nsolve_module_path": ("import sympy\nx = sympy.Symbol('x')\n"
                           "evil = sympy.Function('numpy.lib.stride_tricks.as_strided')\n"
                           "result = float(sympy.nsolve(evil(x) - 1, x, 1))", "plain identifiers"),
    "nsolve_open": ("import sympy\nx = sympy.Symbol('x')\nevil = sympy.Function(\"(lambda a: open('p') and a)\")\n"
                    "result = float(sympy.nsolve(evil(x) - 1, x, 1))", "plain identifiers"),
    "experimental_lambdify": ("from sympy.plotting.experimental_lambdify import experimental_lambdify\n"
                              "import sympy\nx = sympy.Symbol('x')\nresult = experimental_lambdify([x], x)(1)",
                              "matplotlib"),
    "var": ("import sympy\nsympy.var('y')\nresult = 1", "symbols"),
    # str.format run inside the libraries on a format string of the snippet's: {0.__class__}
    # would walk attributes past the guards (the text of anything reachable)
    **{f"format_{name}": (code.replace("FIELD", "{0.__class__.__base__.__subclasses__}")
                          .replace("XFIELD", "{x.__class__.__base__.__subclasses__}"), "names or positions")
       for name, code in {
           "to_string": "import pandas as pd\nresult = pd.DataFrame({'a': [1.5]}).to_string(float_format='FIELD')",
           "to_csv": "import pandas as pd\nresult = pd.DataFrame({'a': [1.5]}).to_csv(float_format='FIELD')",
           "to_html": "import pandas as pd\nresult = pd.DataFrame({'a': [1.5]}).to_html(float_format='FIELD')",
           "bar_label": "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
                        "result = [t.get_text() for t in ax.bar_label(ax.bar([1], [2]), fmt='FIELD')]",
           "axis_formatter": "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2])\n"
                             "ax.yaxis.set_major_formatter('XFIELD')\nfig.canvas.draw()\n"
                             "result = [t.get_text() for t in ax.get_yticklabels()]",
           "colorbar": "import matplotlib.pyplot as plt\nimport numpy as np\nfig, ax = plt.subplots()\n"
                       "cb = fig.colorbar(ax.imshow(np.eye(3)), format='XFIELD')\nfig.canvas.draw()\n"
                       "result = [t.get_text() for t in cb.ax.get_yticklabels()]",
           "legend_elements": "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
                              "result = ax.scatter([1, 2], [1, 2], c=[1, 2]).legend_elements(fmt='XFIELD')[1]",
       }.items()},
    # matplotlib imports modules by name from rcParams, past plt.switch_backend's refusal
    "rc_backend": ("import matplotlib\nimport matplotlib.pyplot as plt\nmatplotlib.rcParams['backend'] = 'module://os'\n"
                   "plt.figure()\nresult = 1", "Agg"),
    "rc_backend_dict_update": ("import matplotlib\nimport matplotlib.pyplot as plt\n"
                               "dict.update(matplotlib.rcParams, {'backend': 'module://os'})\n"
                               "plt.close('all')\nplt.figure()\nresult = 1", "Agg"),
    "figure_hooks": ("import matplotlib.pyplot as plt\nplt.rcParams['figure.hooks'] = ['os:getpid']\n"
                     "plt.figure()\nresult = 1", "call your function"),
    "figure_hooks_falsy_list": ("import matplotlib.pyplot as plt\nclass Hooks(list):\n    def __bool__(self):\n"
                                "        return False\ndict.update(plt.rcParams, {'figure.hooks': Hooks(['os:getpid'])})\n"
                                "plt.figure()\nresult = 1", "call your function"),
    "figure_hooks_dict_update": ("import matplotlib.pyplot as plt\n"
                                 "dict.update(plt.rcParams, {'figure.hooks': ['os:getpid']})\n"
                                 "fig, ax = plt.subplots()\nresult = 1", "call your function"),
    "register_backend": ("from matplotlib import backend_bases\nbackend_bases.register_backend('xyz', 'os')\n"
                         "result = 1", "savefig writes"),
    # pandas looks functions given by name up on the object, or on numpy
    **{f"by_name_{name}": (f"import pandas as pd\ndf = pd.DataFrame({{'a': [1, 1], 'b': [2.0, 3.0]}})\n"
                           f"s = df['b']\nresult = str({call})", advice)
       for name, call, advice in (
           ("apply_getattribute", "df.apply('__getattribute__', args=('_mgr',))", "internals"),
           ("agg_getattribute", "s.agg('__getattribute__', 0, '_mgr')", "internals"),
           ("agg_list", "s.agg(['sum', '__class__'])", "internals"),
           ("groupby_agg", "df.groupby('a').agg('__class__')", "internals"),
           ("groupby_named", "df.groupby('a').agg(x=('b', '__class__'))", "internals"),
           ("groupby_transform", "df.groupby('a')['b'].transform('__class__')", "internals"),
           ("pivot_table", "df.pivot_table(index='a', values='b', aggfunc='__class__')", "internals"),
           ("rolling", "s.rolling(1).agg('__class__')", "internals"),
           ("numpy_ndarray", "s.agg('ndarray', 0, 'O', bytearray(8))", "numpy.ndarray yourself"),
           # a list of the snippet's own that names another function when pandas reads it again
           ("list_subclass", "s.agg(type('L', (list,), {'__iter__': lambda self: iter(['__class__'])})(['sum']))",
            "internals"),
           ("nested_deep", "s.agg([[['__class__']]])", "internals"),
           ("numpy_ndarray_apply", "s.apply('ndarray', args=('O', bytearray(8)))", "numpy.ndarray yourself"),
       )},
    # LAPACK and BLAS as they are trust pivot arrays: an index out of range writes out of bounds
    "lapack": ("from scipy.linalg import lapack\nimport numpy as np\n"
               "result = str(lapack.dlaswp(np.eye(2), np.array([10**7, 1], dtype=np.int32)))", "not allowed"),
    "lapack_attribute": ("import scipy.linalg\nimport numpy as np\n"
                         "result = str(scipy.linalg.lapack.dlaswp(np.eye(2), np.array([10**7, 1], dtype=np.int32)))",
                         "not allowed"),
    "blas": ("from scipy.linalg import blas\nresult = 1", "not allowed"),
    "cython_lapack": ("import scipy.linalg.cython_lapack\nresult = 1", "not allowed"),
    "get_lapack_funcs": ("import scipy.linalg\nresult = str(scipy.linalg.get_lapack_funcs)", "lu_factor"),
    "get_blas_funcs_from": ("from scipy.linalg import get_blas_funcs\nresult = 1", "numpy"),
    "lu_solve_pivots": ("import numpy as np\nfrom scipy.linalg import lu_solve\n"
                        "result = str(lu_solve((np.eye(2), np.array([10**7, 1])), np.ones(2)))", "lu_factor's pivots"),
    # a subclass of the snippet's answered the check's min() and max() itself: the far pivot
    # then wrote past b (the result held a number the snippet never wrote)
    # a subclass's own `base` (a method or a value) hid an object array under a numeric one from the
    # check that objects and raw bytes never share memory: the int64 view read (and could write)
    # the object pointers
    **{f"c_attribute_{how}": ("import numpy as np\n" + define + "o = np.array([1, 2], dtype=object)\n"
                              "result = [int(x) for x in A((2,), dtype=np.int64, buffer=o)]",
                              "give your method or value another name")
       for how, define in (("method", "class A(np.ndarray):\n    def base(self):\n        return None\n"),
                           ("value", "class A(np.ndarray):\n    base = None\n"),
                           ("written_later", "class A(np.ndarray):\n    pass\nA.base = None\n"),
                           ("from_a_mixin", "class M:\n    def base(self):\n        return None\n"
                                            "class A(M, np.ndarray):\n    pass\n"))},
    "lu_solve_pivots_subclass": ("import numpy as np\nfrom scipy.linalg import lu_factor, lu_solve\n"
                                 "class P(np.ndarray):\n    def min(self, *a, **k):\n        return 0\n"
                                 "    def max(self, *a, **k):\n        return 0\n"
                                 "lu, piv = lu_factor(np.eye(3))\n"
                                 "far = np.array([0, 1, 10**6], dtype=np.int32).view(P)\n"
                                 "result = str(lu_solve((lu, far), np.ones(3)))", "lu_factor's pivots"),
    # pandas' internals trust their callers' index arrays (take_nd past the end: SIGSEGV)
    "pandas_core": ("import numpy as np\nimport pandas as pd\n"
                    "result = str(pd.core.algorithms.take_nd(np.arange(3), np.array([10**7]), allow_fill=False))",
                    "not allowed"),
    "pandas_core_import": ("from pandas.core.array_algos.take import take_nd\nresult = 1", "pandas namespace"),
    "lapack_lite": ("from numpy.linalg import lapack_lite\nresult = 1", "numpy.linalg's functions"),
    "interpolative": ("import numpy as np\nimport scipy.linalg.interpolative as sli\n"
                      "result = str(sli.id_to_svd(np.ones((3, 2)), np.array([10**7, 1, 0]), np.ones((2, 1))))",
                      "svd"),
    "numpy_core_from": ("from numpy.core import multiarray\nresult = str(multiarray)", "numpy namespace"),
    "styler": ("import pandas as pd\nresult = pd.DataFrame({'a': [1]}).style.format('{0.real}').to_html()",
               "to_string"),
    "import_module": ("from sympy.external import import_module\nresult = str(import_module('os'))", "not allowed"),
    "ndarray_ctypes_super": ("import numpy as np\nclass A(np.ndarray):\n    def c(self):\n"
                             "        return super().ctypes.data\nresult = np.zeros(2).view(A).c()", "methods"),
    "read_pickle": ("import pandas as pd\nresult = pd.read_pickle('x.pkl')", "read_csv"),
    "accessor": ("import pandas as pd\n@pd.api.extensions.register_dataframe_accessor('geo')\n"
                 "class G:\n    def __init__(self, df):\n        self.df = df\nresult = 1", "not allowed"),
    "np_load_pickle": ("import numpy as np\nimport io\nresult = np.load(io.BytesIO(b''), allow_pickle=True)",
                       "numpy.save"),
    "np_load_pickle_positional": ("import numpy as np\nimport io\nresult = np.load(io.BytesIO(b''), None, True)",
                                  "numpy.save"),
    "read_array_pickle": ("import numpy as np\nimport io\nresult = np.lib.format.read_array(io.BytesIO(b''), True)",
                          "numpy.save"),
    "as_strided": ("import numpy as np\na = np.zeros(2)\n"
                   "b = np.lib.stride_tricks.as_strided(a, shape=(10**6,), strides=(8,))\nresult = float(b[-1])",
                   "sliding_window_view"),
    "ndarray_ctypes": ("import numpy as np\nresult = np.zeros(2).ctypes.data", "methods"),
    "low_level_callable": ("import scipy\nresult = str(scipy.LowLevelCallable)", "Python function"),
    "mpl_use": ("import matplotlib\nmatplotlib.use('module://os')\nresult = 1", "Agg"),
    "switch_backend": ("import matplotlib.pyplot as plt\nplt.switch_backend('module://os')\nresult = 1", "Agg"),
    # (with SQLAlchemy installed, a URI opens any database without snippet_sqlite's checks)
    "read_sql_uri": ("import pandas as pd\nresult = pd.read_sql('SELECT 1', 'sqlite:////etc/x.db')", "sqlite3.connect"),
    "to_sql_uri": ("import pandas as pd\npd.DataFrame({'a': [1]}).to_sql('t', 'sqlite:///x.db')", "sqlite3.connect"),
    "read_sql_table_uri": ("import pandas as pd\npd.read_sql_table('t', 'sqlite:///x.db')", "sqlite3.connect"),
    # a str subclass answers scipy's check of a distribution's shape names with a name and
    # its paste into exec()'d source with code (ISV-060)
    "rv_shapes_str_subclass": (
        "import scipy.stats as st\nclass Twice:\n    n = 0\n    def __len__(self):\n        return 1\n"
        "    def __iter__(self):\n        Twice.n += 1\n"
        "        return iter(['a'] if Twice.n == 1 else ['a=0):\\n    pass\\nprint(\"ESCAPED\")\\nx = dict(\"\"\"'])\n"
        "class R:\n    def split(self):\n        return Twice()\nclass S(str):\n    def replace(self, *args):\n"
        "        return R()\nclass D(st.rv_continuous):\n    def _pdf(self, x, a):\n        return 1.0\n"
        "result = str(D(shapes=S('a'), a=0, b=1))", "plain str of parameter names"),
    # the libraries' test runners import the snippet's own test file or conftest.py with the real
    # builtins (ISV-062)
    "sympy_test_own_file": ("with open('test_mine.py', 'w') as f:\n    f.write('def test_x():\\n    pass\\n')\n"
                            "import sympy, os\nresult = sympy.test(os.path.abspath('test_mine.py'))", "tests do not run"),
    "sympy_test_conftest": ("with open('conftest.py', 'w') as f:\n    f.write('print(1)\\n')\n"
                            "import sympy\nresult = sympy.test('nothing')", "tests do not run"),
    "sympy_doctest": ("import sympy\nresult = sympy.doctest('nothing')", "tests do not run"),
    "numpy_test": ("import numpy as np\nresult = np.test('fast')", "tests do not run"),
    "scipy_test": ("import scipy.stats\nresult = scipy.stats.test()", "tests do not run"),
    "pandas_test": ("import pandas as pd\nresult = pd.test()", "tests do not run"),
    "sympy_testing_module": ("from sympy.testing import runtests\nresult = 1", "runs test files"),
    # functions that import any module by name (ISV-063)
    "lazy_function": ("import sympy\nresult = str(sympy.lazy_function('os', 'getcwd')())",
                      "import an allowed module yourself"),
    "add_newdoc": ("import numpy as np\nnp.lib.add_newdoc('this', 'x', 'y')\nresult = 1", "keep notes"),
    "add_docstring": ("import numpy as np\nnp.lib.add_docstring(np.ndim, 'x')\nresult = 1", "keep notes"),
    "sympy_stats_library": ("from sympy.stats import Normal, sample\nresult = str(sample(Normal('X', 0, 1), "
                            "library='this'))", "library='numpy'"),
    "np_info_toplevel": ("import numpy as np\nnp.info('zzz', toplevel='this')\nresult = 1",
                         "looks names up in numpy only"),
    # pandas imports its plotting backend by name, past the import allow-list (ISV-061)
    "plotting_backend_option": ("import pandas as pd\npd.options.plotting.backend = 'this'\n"
                                "result = str(pd.DataFrame({'a': [1]}).plot())", "leave pd.options.plotting.backend"),
    "plot_backend_keyword": ("import pandas as pd\nresult = str(pd.Series([1]).plot(backend='sympy'))",
                             "leave pd.options.plotting.backend"),
    # a method the sandbox refuses or checks, named as a string for pandas to look up and call unchecked (ISV-059)
    **{f"{how}_by_name": ("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2], 'g': [1, 1]})\n"
                          f"result = str({call})", advice)
       for how, call, advice in (
           ("apply_query", "df.apply('query', args=('a > 1',))", "call df.query(...) itself"),
           ("agg_eval", "df.agg('eval', 0, 'a + 1')", "call df.eval(...) itself"),
           ("groupby_apply", "df.groupby('g').apply('query', 'a > 1')", "call df.query(...) itself"))},
}

# pandas 3.0's deferred expressions: every attribute, call and operator applied to the
# frame later, by name, past the guards (ISV-059)
DEFERRED_DOORS = {
    "col_query": "df.assign(x=pd.col('a').to_frame().query('a > 1'))",
    "col_ctypes": "df.assign(x=pd.col('a').to_numpy().ctypes)",
    "expression_class": "pd.api.typing.Expression(lambda d: d, 'x')",
}


# scipy.sparse's compiled routines trust the index arrays: an index out of bounds is a
# write anywhere in memory. Refused by scipy's own full check and numpy's read-only
# arrays (ValueError), or by the policy (no subclass).
SPARSE_DOORS = {
    name: ("import numpy as np\nimport scipy.sparse as sp\n" + code + "\nresult = str(m.toarray())", advice)
    for name, code, advice in (
        ("csr_constructed", "m = sp.csr_matrix((np.ones(1), np.array([10**7]), np.array([0, 1])), shape=(1, 2))",
         "indices must be"),
        ("csc_array_constructed", "m = sp.csc_array((np.ones(1), np.array([10**7]), np.array([0, 1])), "
                                  "shape=(2, 1))", "indices must be"),
        ("bsr_constructed", "m = sp.bsr_matrix((np.ones((1, 1, 1)), np.array([10**7]), np.array([0, 1])), "
                            "shape=(1, 2))", "index values must be"),
        ("indices_written", "m = sp.csr_matrix(np.eye(2))\nm.indices[0] = 10**7", "read-only"),
        ("indptr_copied_to", "m = sp.csr_matrix(np.eye(2))\nnp.copyto(m.indptr, np.array([0, 5, 9]))",
         "read-only"),
        ("coo_row_written", "m = sp.coo_matrix(np.eye(2))\nm.row[0] = 10**7\nm = m.tocsr()", "read-only"),
        ("coords_written", "m = sp.coo_array(np.eye(2))\nm.coords[1][0] = 10**7", "read-only"),
        ("shared_by_tocoo", "m = sp.csr_matrix(np.eye(2))\nm.tocoo(copy=False).col[0] = 10**7", "read-only"),
        # the property read from the class: its fget gave the live array
        ("property_fget", "m = sp.coo_matrix(np.eye(2))\nsp.coo_matrix.row.fget(m)[0] = 10**7",
         "is read on the object"),
        ("type_property_fget", "m = sp.coo_array(np.eye(2))\ntype(m).col.fget(m)[0] = 10**7", "is read on the object"),
        ("super_property", "m = sp.coo_matrix(np.eye(2))\nsuper(sp.coo_matrix, m).row[0] = 10**7",
         "super() is available inside the snippet's own classes"),
        ("lil_rows", "m = sp.lil_matrix((2, 2))\nm[0, 0] = 1\nm.rows[0][0] = 10**7\nm = m.tocsr()",
         "indices must be"),
        ("subclass", "class M(sp.csr_matrix):\n    pass\nm = M(np.eye(2))", "subclass"),
        ("subclass_coo", "class M(sp.coo_array):\n    pass\nm = M(np.eye(2))", "subclass"),
        ("subclass_bsr", "M = type('M', (sp.bsr_matrix,), {})\nm = M(np.eye(2))", "subclass"),
)}


@pytest.mark.parametrize("name", sorted(SPARSE_DOORS))
def test_scipy_sparse_index_arrays_stay_in_bounds(ds, name):
    code, advice = SPARSE_DOORS[name]
    r = ds.run(code, allowed=ALLOWED, timeout=30)
    assert not r["success"] and advice in r["error"] and r.get("signal") is None, (name, r)


@pytest.mark.parametrize("write, advice", [
    ("t.indices[0] = 10**6", "read-only"),
    ("t.tree.indices[0] = 10**6", "read-only"),
    ("t.tree.lesser.indices[0] = 10**6 if t.tree.lesser is not None else 10**6", "read-only"),
    ("np.copyto(t.indices, np.full(40, 10**6))", "read-only"),
    ("type(t).indices.__get__(t)[0] = 10**6", "is read on the object"),
    ("spatial.cKDTree.indices.fget(t)[0] = 10**6", "is read on the object"),
])
def test_a_kd_trees_index_array_is_handed_out_read_only(ds, write, advice):
    """A k-d tree's queries read its points at the positions its indices array holds,
    which the tree handed out as a writable view: a far position read the heap."""
    r = ds.run("import numpy as np\nfrom scipy import spatial\nt = spatial.cKDTree(np.random.default_rng(0).random((40, 3)))\n"
               + write + "\nresult = str(t.query([0.5, 0.5, 0.5], k=40))", allowed=ALLOWED, timeout=30)
    assert not r["success"] and advice in r["error"] and r.get("signal") is None, r


TRIANGULATIONS = ("import numpy as np\nfrom scipy import spatial, interpolate\nimport matplotlib.tri as mtri\n"
                  "P = np.random.default_rng(0).random((30, 2))\nd = spatial.Delaunay(P)\n"
                  "tr = mtri.Triangulation(P[:, 0], P[:, 1])\nprobe = np.full((5, 2), 0.3)\n")


@pytest.mark.parametrize("write, advice", [
    ("d.neighbors[:, 0] = 10**6\nresult = str(d.find_simplex(probe))", "read-only"),
    ("d.simplices[:, 0] = 10**6\nresult = str(d.find_simplex(probe, bruteforce=True))", "read-only"),
    ("f = interpolate.LinearNDInterpolator(P, np.zeros(30))\nf.tri.simplices[:] = 10**6\nresult = str(f(probe))",
     "read-only"),
    ("tr.get_cpp_triangulation()\ntr.triangles[0, 0] = 10**6\nresult = str(tr.get_trifinder()(probe[:, 0], probe[:, 1]))",
     "read-only"),
    ("tr.neighbors[:] = 10**6\nresult = str(mtri.LinearTriInterpolator(tr, np.zeros(30))(probe[:, 0], probe[:, 1]))",
     "read-only"),
    # compiled classes whose state sits in the instance's __dict__, where a subclass could set it
    ("class D(spatial.Delaunay):\n    pass\nresult = str(D(P).simplices)", "its compiled code reads positions"),
    ("class F(interpolate.CloughTocher2DInterpolator):\n    pass\nresult = str(F(P, np.zeros(30)))",
     "its compiled code reads positions"),
])
def test_a_triangulations_index_arrays_are_handed_out_read_only(ds, write, advice):
    """A Delaunay triangulation (and the interpolators on one) and matplotlib's
    triangulation handed out the simplices their compiled code walks as writable views: a
    far position read the heap (SIGSEGV)."""
    r = ds.run(TRIANGULATIONS + write, allowed=ALLOWED, timeout=30)
    assert not r["success"] and advice in r["error"] and r.get("signal") is None, r


def test_triangulations_answer_as_before(ds):
    r = ds.run(TRIANGULATIONS + "tr.set_mask(np.zeros(len(tr.triangles), bool))\nresult = [len(d.simplices), "
               "bool(d.find_simplex([[0.5, 0.5]])[0] >= 0), len(d.neighbors), len(tr.triangles), int(tr.mask.sum()), "
               "bool(tr.get_trifinder()(0.5, 0.5) >= 0), "
               "round(float(interpolate.LinearNDInterpolator(P, P[:, 0])([[0.5, 0.5]])[0]), 6)]",
               allowed=ALLOWED, timeout=30)
    assert r["success"] and r["result"] == [49, True, 49, 49, 0, True, 0.5], r


@pytest.mark.parametrize("write", [
    "a.sp_index.indices[0] = 10**8\nresult = str(a + a)",
    "b.sp_index.blengths[...] = 10**8\nresult = str(b == b)",
    "b.sp_index.blocs[...] = 10**8\nresult = str(b[1:3])",
])
def test_a_sparse_arrays_index_is_handed_out_read_only(ds, write):
    """pandas' SparseArray operations read its values at the positions its sp_index holds,
    which it handed out as writable arrays: a far block length crashed b == b (SIGSEGV)."""
    r = ds.run("import pandas as pd\na = pd.arrays.SparseArray([0, 1.0, 0, 2.0], fill_value=0)\n"
               "b = pd.arrays.SparseArray([0, 1.0, 0, 2.0, 0, 3.0], kind='block', fill_value=0)\n" + write,
               allowed=ALLOWED, timeout=30)
    assert not r["success"] and "read-only" in r["error"] and r.get("signal") is None, r


@pytest.mark.parametrize("write", ["lu.perm_r[:] = 10**6", "lu.perm_c[:] = 10**6"])
def test_a_sparse_factorisations_permutations_are_handed_out_read_only(ds, write):
    """SuperLU.solve applies the permutations it handed out as writable arrays: a far
    row crashed it (SIGSEGV)."""
    r = ds.run("import numpy as np\nfrom scipy import sparse\nfrom scipy.sparse import linalg\n"
               "lu = linalg.splu(sparse.csc_matrix(np.eye(3) * 2))\n" + write + "\nresult = str(lu.solve(np.ones(3)))",
               allowed=ALLOWED, timeout=30)
    assert not r["success"] and "read-only" in r["error"] and r.get("signal") is None, r
    r = ds.run("import numpy as np\nfrom scipy import sparse\nfrom scipy.sparse import linalg\n"
               "lu = linalg.splu(sparse.csc_matrix(np.diag([2.0, 4.0, 8.0])))\n"
               "result = [lu.solve(np.ones(3)).tolist(), sorted(lu.perm_r.tolist())]", allowed=ALLOWED, timeout=30)
    assert r["success"] and r["result"] == [[0.5, 0.25, 0.125], [0, 1, 2]], r


def test_a_kd_tree_answers_as_before(ds):
    r = ds.run("import numpy as np\nfrom scipy import spatial\npoints = np.array([[0.0, 0], [1, 0], [0, 2], [5, 5]])\n"
               "t = spatial.KDTree(points)\nd, i = t.query([[0.1, 0.1], [4, 4]], k=2)\n"
               "result = [i.tolist(), sorted(t.indices.tolist()), t.query_ball_point([0, 0], 1.5), "
               "spatial.cKDTree(points).count_neighbors(spatial.cKDTree(points), 1.5)]", allowed=ALLOWED, timeout=30)
    assert r["success"] and r["result"] == [[[0, 1], [3, 2]], [0, 1, 2, 3], [0, 1], 6], r


@pytest.mark.parametrize("code", [
    "mi = pd.MultiIndex(levels=[['a', 'b']], codes=[[100, 0]], verify_integrity=False)",
    "mi = pd.MultiIndex.from_arrays([['a', 'b']]).set_codes([[100, 0]], verify_integrity=False)",
    "mi = pd.MultiIndex([['a', 'b']], [[100, 0]], None, None, False, None, False)",   # positionally
])
def test_a_multiindex_is_always_checked(ds, code):
    """Built without its integrity check, a code past its level reads out of bounds
    (SIGSEGV) in .values: while a restricted snippet runs the check is always made."""
    r = ds.run("import pandas as pd\n" + code + "\nresult = str(list(mi.values))", allowed=ALLOWED, timeout=30)
    assert not r["success"] and "code max" in r["error"] and r.get("signal") is None, r


def test_the_sparse_door_is_real_without_restricted_python(ds):
    code, _ = SPARSE_DOORS["csr_constructed"]
    r = ds.run(code, restricted=False, allowed=ALLOWED, timeout=30)
    assert not r["success"] and r.get("signal") == "SIGSEGV", r   # (the kernel layers contain the crash)


@pytest.fixture(scope="module")
def ds_io():
    allowed = profiles.allowed_modules(["basic", "data_science", "filesystem"])
    preload = tuple(m for m in profiles.profile_modules_available("data_science")
                    if m.split(".")[0] not in profiles.IMPORTED_ON_DEMAND)   # (as the server warms them)
    runner = SyncRunner(preload=preload, max_memory=1024 * MiB)
    yield runner, allowed
    runner.close()


@pytest.mark.parametrize("name", sorted(DOORS))
def test_library_doors_are_refused_with_an_alternative(ds_io, name):
    runner, allowed = ds_io
    code, advice = DOORS[name]
    r = runner.run(code, allowed=allowed, timeout=30)
    assert not r["success"] and r["error_type"] == "security_violation", (name, r)
    assert advice in r["error"], (name, r["error"])
    assert r["security_events"], r


@pytest.mark.parametrize("name", sorted(DEFERRED_DOORS))
def test_deferred_column_expressions_are_refused_with_an_alternative(ds_io, name):
    import pandas
    if not hasattr(pandas, "col"):
        pytest.skip("pandas before 3.0 has no pd.col")
    runner, allowed = ds_io
    call = DEFERRED_DOORS[name]
    code = f"import pandas as pd\ndf = pd.DataFrame({{'a': [1, 2]}})\nresult = str({call})"
    r = runner.run(code, allowed=allowed, timeout=30)
    assert not r["success"] and r["error_type"] == "security_violation", (name, r)
    assert "lambda d: d['a'] + d['b']" in r["error"] and r["security_events"], (name, r["error"])


def test_show_versions_runs_and_tells_no_host_kernel(ds):
    """pd.show_versions() printed the host's kernel release and version, which the platform
    subset does not give; np.info still finds numpy's own names."""
    import platform
    r = ds.run("import pandas as pd, numpy as np\npd.show_versions()\nnp.info('mean')\nresult = 1",
               allowed=ALLOWED, timeout=30)
    assert r["success"], r
    assert "INSTALLED VERSIONS" in r["stdout"] and "arithmetic mean" in r["stdout"], r["stdout"][:300]
    assert platform.release() not in r["stdout"] and platform.version() not in r["stdout"], r["stdout"][:600]


def test_the_doors_are_real_without_restricted_python(ds):
    """The same calls with real Python: the refusals above are the layer's doing."""
    r = ds.run("import sympy, pandas as pd, numpy as np\n"
               "result = [str(sympy.sympify('x**2')), int(pd.eval('1 + 2')), "
               "np.zeros(2).ctypes.data > 0, str(sympy.lambdify('x', 'x + 1')(1))]",
               restricted=False, allowed=ALLOWED, timeout=30)
    assert r["success"] and r["result"] == ["x**2", 3, True, "2"], {k: r.get(k) for k in ("error", "traceback")}
    r = ds.run(EVIL_FUNCTION.replace("getpid() and a", "getpid() and a + 1") +
               "result = [float(sympy.nsolve(evil(x) - 1, x, 1)), str(sympy.parse_expr('1 + 1'))]",
               restricted=False, allowed=ALLOWED, timeout=30)
    assert r["success"] and r["result"] == [0.0, "2"], {k: r.get(k) for k in ("error", "traceback")}


def test_format_strings_with_plain_fields_still_work(ds):
    r = ds.run("import pandas as pd\nimport matplotlib.pyplot as plt\nimport numpy as np\n"
               "df = pd.DataFrame({'a': [1234.5]})\n"
               "fig, ax = plt.subplots()\nax.plot([1000, 2000])\n"
               "ax.yaxis.set_major_formatter('{x:,.0f} km')\n"
               "labels = ax.bar_label(ax.bar([1], [2.25]), fmt='{:.1f}')\n"
               "cb = fig.colorbar(ax.imshow(np.eye(2)), format='{x:.1f}')\nfig.canvas.draw()\n"
               "result = [df.to_string(float_format='{:,.1f}'), df.to_csv(float_format='%.2f'),\n"
               "          [t.get_text() for t in ax.get_yticklabels()][1], labels[0].get_text(),\n"
               "          [t.get_text() for t in cb.ax.get_yticklabels()][0]]",
               allowed=ALLOWED, timeout=60)
    assert r["success"], r
    assert r["result"][0].split()[-1] == "1,234.5" and "1234.50" in r["result"][1], r["result"]
    assert r["result"][2].endswith(" km") and r["result"][3] == "2.2" and r["result"][4] == "0.0", r["result"]


def test_sympy_parses_the_numbers_it_writes_itself(ds):
    """nsimplify and integrate (its Meijer G table) parse text inside the library; the
    snippet may parse plain arithmetic too."""
    r = ds.run("import sympy as sp\nx = sp.Symbol('x')\n"
               "result = [str(sp.nsimplify(0.5)), str(sp.nsimplify(4.71238898038469, [sp.pi])),\n"
               "          str(sp.integrate(sp.exp(-x), (x, 0, sp.oo))), str(sp.S('1/3') + sp.S('2*sqrt(2)')),\n"
               "          str((x + 1).subs(x, '2')), str(sp.parse_expr('2**10', transformations='all'))]",
               allowed=ALLOWED, timeout=60)
    assert r["success"] and r["result"] == ["1/2", "3*pi/2", "1", "1/3 + 2*sqrt(2)", "3", "1024"], r


def test_sympy_parses_math_text(ds):
    """What agents give sympify, S, simplify, solve and parse_expr: names become symbols,
    and math functions, comparisons, ^ as a power and a local_dict of symbols work."""
    r = ds.run("import sympy as sp\nf = sp.Function('f')\n"
               "result = [str(sp.sympify('x**2 + 2*x + 1')), str(sp.simplify('sin(x)**2 + cos(x)**2')),\n"
               "          str(sp.S('a*b >= c')), str(sp.parse_expr('exp(-t/5)*sin(t)')), str(sp.solve('x**2 - 4')),\n"
               "          str(sp.sympify('f(x) + g(y, z)')), str(sp.sympify('2^3')),\n"
               "          sp.sympify('x', locals={'x': sp.Symbol('x', positive=True)}).is_positive,\n"
               "          str(sp.parse_expr('f(x) + 1', local_dict={'f': f})), str(sp.sympify('max(x, 2) + Abs(y) + pi')),\n"
               "          str(sp.integrate('x*exp(-x)', ('x', 0, 'oo'))), str((sp.Symbol('x') + 1).subs('x', 'y'))]",
               allowed=ALLOWED, timeout=60)
    assert r["success"], r["error"]
    assert r["result"] == ["x**2 + 2*x + 1", "1", "a*b >= c", "exp(-t/5)*sin(t)", "[-2, 2]", "f(x) + g(y, z)", "8",
                           True, "f(x) + 1", "Abs(y) + Max(2, x) + pi", "1", "y + 1"], r["result"]


def test_pandas_functions_by_public_name_still_work(ds):
    r = ds.run("import pandas as pd\ndf = pd.DataFrame({'a': [1, 1, 2], 'b': [1.0, 4.0, 9.0]})\n"
               "s = df['b']\n"
               "result = [s.agg('sum'), s.agg(['min', 'max']).tolist(), s.apply('sqrt').tolist(),\n"
               "          s.transform('cumsum').tolist(), df.groupby('a').agg(total=('b', 'sum'))['total'].tolist(),\n"
               "          df.groupby('a')['b'].transform('mean').tolist(),\n"
               "          df.pivot_table(index='a', values='b', aggfunc='mean')['b'].tolist(),\n"
               "          s.rolling(2).agg('mean').tolist()[1:],\n"
               "          df.groupby('a').agg(n=pd.NamedAgg(column='b', aggfunc='count'))['n'].tolist(),\n"
               "          df.agg({'b': ['min', 'max']})['b'].tolist()]", allowed=ALLOWED, timeout=60)
    assert r["success"], r
    assert r["result"] == [14.0, [1.0, 9.0], [1.0, 2.0, 3.0], [1.0, 5.0, 14.0], [5.0, 9.0], [2.5, 2.5, 9.0],
                           [2.5, 9.0], [2.5, 6.5], [2, 1], [1.0, 9.0]], r["result"]


def test_scipy_sparse_as_agents_use_it_still_works(ds):
    r = ds.run("import numpy as np\nimport scipy.sparse as sp\nfrom scipy.sparse.linalg import spsolve\n"
               "m = sp.csr_matrix(np.array([[2., 0.], [1., 3.]]))\nl = sp.lil_matrix((2, 2))\nl[1, 0] = 5\n"
               "result = [m.toarray().tolist(), m.indices.tolist(), m.indptr.tolist(), m.tocoo().row.tolist(),\n"
               "          (m @ m).nnz, spsolve(m.tocsc(), np.array([2., 4.])).round(3).tolist(),\n"
               "          float(sp.eye(3).sum()), l.tocsr().toarray().tolist(), isinstance(m, sp.csr_matrix)]",
               allowed=ALLOWED, timeout=60)
    assert r["success"] and r["result"] == [[[2.0, 0.0], [1.0, 3.0]], [0, 0, 1], [0, 1, 3], [0, 1, 1], 3,
                                            [1.0, 1.0], 3.0, [[0.0, 0.0], [5.0, 0.0]], True], r


def test_scipy_linalg_as_agents_use_it_still_works(ds):
    r = ds.run("import numpy as np\nfrom scipy.linalg import lu_factor, lu_solve, solve, inv, eig, svd, det, expm\n"
               "a = np.array([[4., 3.], [6., 3.]])\nlu, piv = lu_factor(a)\n"
               "result = [lu_solve((lu, piv), np.array([1., 2.])).round(3).tolist(), solve(a, [1, 2]).round(3).tolist(),\n"
               "          round(float(det(a)), 3), inv(a).round(3).tolist(), sorted(np.round(eig(a)[0].real, 3).tolist()),\n"
               "          svd(a)[1].round(3).tolist(), expm(np.zeros((2, 2))).tolist()]", allowed=ALLOWED, timeout=60)
    assert r["success"] and r["result"] == [[0.5, -0.333], [0.5, -0.333], -6.0, [[-0.5, 0.5], [1.0, -0.667]],
                                            [-0.772, 7.772], [8.336, 0.72], [[1.0, 0.0], [0.0, 1.0]]], r


def test_multiindexes_as_agents_use_them_still_work(ds):
    r = ds.run("import pandas as pd\ndf = pd.DataFrame({'a': [1, 1, 2], 'b': ['x', 'y', 'x'], 'v': [1., 2., 3.]})\n"
               "g = df.groupby(['a', 'b'])['v'].sum()\nmi = pd.MultiIndex.from_product([[1, 2], ['x', 'y']])\n"
               "result = [g.to_dict(), g.unstack().shape, df.set_index(['a', 'b']).index.nlevels, len(mi),\n"
               "          df.pivot_table(index=['a', 'b'], values='v').shape, g.reset_index().shape]",
               allowed=ALLOWED, timeout=60)
    assert r["success"] and r["result"] == [{"(1, 'x')": 1.0, "(1, 'y')": 2.0, "(2, 'x')": 3.0}, [2, 2], 2, 4,
                                            [3, 1], [3, 3]], r


def test_rcparams_and_the_agg_backend_still_work(ds):
    r = ds.run("import matplotlib\nimport matplotlib.pyplot as plt\nplt.rcdefaults()\n"
               "plt.rcParams['figure.figsize'] = (4, 3)\nmatplotlib.use('Agg')\nplt.switch_backend('agg')\n"
               "with plt.rc_context({'lines.linewidth': 2}):\n    plt.plot([1, 2])\n"
               "result = matplotlib.get_backend()", allowed=ALLOWED, timeout=60)
    assert r["success"] and r["result"].lower() == "agg" and len(r["images"]) == 1, r


def test_lambdify_runs_what_agents_write(ds):
    """sympy.lambdify called by the snippet: the source it generates is checked to be
    arithmetic (as inside nsolve and plot), and the modules are named by name."""
    r = ds.run("import sympy as sp\nimport numpy as np\nx, y = sp.symbols('x y')\n"
               "f = sp.lambdify(x, x**2 + 1, 'numpy')\ng = sp.lambdify((x, y), sp.sin(x) * y)\n"
               "h = sp.lambdify([x], [x, x**2], modules='math')\n"
               "k = sp.lambdify(x, sp.exp(-x) * sp.cos(x) + sp.sqrt(x), cse=True)\n"
               "def tenfold(v):\n    return v * 10\n"
               "m = sp.lambdify(x, sp.Function('tenfold')(x) + 1, modules=[{'tenfold': tenfold}, 'numpy'])\n"
               "d = sp.lambdify(x, sp.diff(sp.sin(x) * x, x), 'mpmath')\n"
               "result = [int(f(3)), g(np.array([0.0, 1.0]), 2).round(3).tolist(), h(2), round(float(k(1.0)), 4), "
               "int(m(2)), round(float(d(0.5)), 4), f.__name__]",
               allowed=ALLOWED, timeout=60)
    assert r["success"], r["error"]
    assert r["result"] == [10, [0.0, 1.683], [2, 4], 1.1988, 21, 0.9182, "_lambdifygenerated"], r["result"]


def test_what_lambdify_does_for_arithmetic_still_works(ds):
    """nsolve, plot, the evalf of a sum and simplify use lambdify or sympify inside:
    with plain names they run, and nothing of the check stays after the run."""
    r = ds.run("import sympy\nx, n = sympy.symbols('x n')\nalpha = sympy.Symbol('α')\n"
               "p = sympy.plot(sympy.Piecewise((x**2, x < 1), (2 - x, True)), (x, -2, 3), show=False)\np.show()\n"
               "result = [round(float(sympy.nsolve(sympy.sin(x) - 0.5, x, 0.5)), 6),\n"
               "          round(float(sympy.nsolve(alpha**2 - 2, alpha, 1)), 6),\n"
               "          round(float(sympy.Sum(1 / n**2, (n, 1, sympy.oo)).evalf()), 6),\n"
               "          str(sympy.simplify(sympy.sin(x)**2 + sympy.cos(x)**2))]",
               allowed=ALLOWED, timeout=60)
    assert r["success"] and r["result"] == [0.523599, 1.414214, 1.644934, "1"], r
    assert len(r["images"]) == 1


def test_safe_library_idioms_still_run(ds):
    r = ds.run("import sympy, numpy as np, pandas as pd\n"
               "x = sympy.symbols('x')\nexpr = x**2 + 2*x\n"
               "w = np.lib.stride_tricks.sliding_window_view(np.arange(5), 3)\n"
               "df = pd.DataFrame({'a': [1, 2, 3]})\n"
               "result = [str(expr.subs(x, 3)), str(sympy.diff(expr, x)), w.shape[0], "
               "int(df[df['a'] > 1]['a'].sum()), str(sympy.S.Half), float(expr.evalf(subs={x: 1}))]",
               allowed=ALLOWED, timeout=30)
    assert r["success"] and r["result"] == ["15", "2*x + 2", 3, 5, "1/2", 3.0], r


@pytest.mark.skipif(importlib.util.find_spec("statsmodels") is None, reason="statsmodels is not installed")
@pytest.mark.parametrize("code,refusal", [
    ("import statsmodels.formula.api as smf\nimport pandas as pd\n"
     "smf.ols(\"y ~ I(print('ESCAPED') or x)\", data=pd.DataFrame({'x': [1.0, 2.0], 'y': [1.0, 2.0]}))",
     "a call of print() in a formula term"),
    ("import statsmodels.api as sm\nsm.OLS.from_formula(\"y ~ I(print('ESCAPED') or x)\", {'x': [1.0], 'y': [1.0]})",
     "a call of print() in a formula term"),
    ("import patsy\npatsy.dmatrix(\"I(print('ESCAPED') or 1)\", {})", "formula strings are Python code"),
])
def test_statsmodels_formula_strings_never_run_their_python(code, refusal, ds):
    """Formula strings are Python that patsy or formulaic evaluate with the real builtins:
    statsmodels' terms are checked before patsy evaluates them, and patsy is never imported."""
    reply = ds.run(code, allowed=ALLOWED, timeout=120)
    assert not reply["success"] and reply["error_type"] in ("security_violation", "runtime_error"), reply
    assert "ESCAPED" not in (reply.get("stdout") or "") and refusal in reply["error"], reply
    assert reply["security_events"], reply


def test_mro_hands_out_no_class_a_library_keeps_behind_its_public_one(ds):
    """pandas.core's mixins, scipy.sparse's index-trusting bases: mro() lists the public class,
    the snippet's own classes and the bases they named, and built-in classes."""
    r = ds.run("import pandas as pd, scipy.sparse as sp\nclass F(pd.DataFrame):\n    pass\n"
               "print(pd.DataFrame.mro(), pd.Categorical.mro(), type.mro(sp.csr_matrix))\n"
               "print([c.__name__ for c in F.mro()])", allowed=ALLOWED, timeout=60)
    assert r["success"], r
    assert "pandas.core" not in r["stdout"] and "_cs_matrix" not in r["stdout"], r["stdout"]
    assert r["stdout"].splitlines()[-1] == "['F', 'DataFrame', 'object']", r["stdout"]

"""The doors of the data-science libraries, as tables the RestrictedPython layer
applies: objects it refuses, keyword values it refuses, attributes it refuses on
the libraries' own types, and the string parser it switches off.

numpy, pandas, scipy, sympy and matplotlib evaluate strings, unpickle, import
modules by name, hand out raw memory and write onto their own classes. These
tables close the known doors; they cannot prove there is no other. With the
data-science profile on, the kernel layers are the boundary and this layer is
defence in depth (profiles.python_layer_claim says so wherever it is shown).

Every entry names what to do instead. `resolve()` runs in the fork server after
the profile's libraries are imported, so children look entries up by id; it runs
again (`refresh()`) whenever a snippet's import brought in new modules, and the
functions SWITCHED_OFF names that such an import loaded are switched off for the rest of the run
(every module binding of each, re-exports included); the source lambdify generates is
checked (generated_code.py).
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import dis
import functools
import importlib
import string
import sys
import types

from sandbox import profiles
from sandbox.restricted.libraries import generated_code
from sandbox.restricted.libraries import pandas_expressions
from sandbox.restricted import stand_ins
from sandbox.restricted.libraries.compiled_inputs import CHECKED_BEFORE_THE_CALL, WRAPPED_WHILE_RUNNING, signature_of

_SQLITE_OWN = ("the real class would open a database without the sandbox's checks: use sqlite3.connect('data.db') "
               "or sqlite3.connect(':memory:'), and conn.cursor()")
_TEST_RUNNER = ("tests do not run in the sandbox: a test runner imports the test files it is given, and the "
                "conftest.py it finds, as unrestricted Python; check results with plain assert statements")
# qualified name -> what to do instead. Re-exports are covered: the check is by object.
REFUSED_OBJECTS = {
    "numpy.lib.stride_tricks.as_strided":
        "as_strided reads and writes memory outside the array; use "
        "numpy.lib.stride_tricks.sliding_window_view, which checks its bounds",
    "pandas.read_pickle": "unpickling runs code; use pandas.read_csv, read_json or read_parquet",
    # functions that import any module by name (past the import allow-list) (ISV-063)
    "sympy.core.cache.lazy_function": "lazy_function imports a module by name and calls its function: import an "
                                      "allowed module yourself and call the function",
    **dict.fromkeys(("numpy.lib.add_newdoc", "numpy.lib.add_docstring"),
                    "it imports a module by name and writes docstrings onto the library's objects: keep notes in "
                    "your own docstrings and comments"),
    # the libraries' test runners import test files, conftest.py and pytest.ini from the working
    # directory with the real builtins: sympy.test(path) ran the snippet's own file (ISV-062)
    **dict.fromkeys(("sympy.test", "sympy.doctest", "pandas.test", "mpmath.runtests", "mpmath.doctests"),
                    _TEST_RUNNER),
    # (pandas 3.0: an Expression defers every attribute, call and operator to the frame it is
    # evaluated on, by name and past the guards: pd.col('a').to_frame().query(...) ran query)
    **dict.fromkeys(("pandas.col", "pandas.api.typing.Expression"),
                    "deferred column expressions evaluate their attributes and calls on the frame past the "
                    "sandbox's checks; write a function of the frame: df.assign(c=lambda d: d['a'] + d['b']), "
                    "df.loc[lambda d: d['a'] > 0]"),
    "pandas.api.extensions.register_dataframe_accessor":
        "accessors write onto pandas' classes; write a function that takes the DataFrame",
    "pandas.api.extensions.register_series_accessor":
        "accessors write onto pandas' classes; write a function that takes the Series",
    "pandas.api.extensions.register_index_accessor":
        "accessors write onto pandas' classes; write a function that takes the Index",
    "scipy.LowLevelCallable": "a LowLevelCallable calls raw function pointers; pass a Python function",
    "sympy.var": "var() writes into the caller's globals; use x, y = sympy.symbols('x y')",
    "sympy.utilities.magic.pollute": "pollute() writes into the caller's globals (the guards' names too); "
                                     "assign your names yourself: x, y = sympy.symbols('x y')",
    "sympy.init_session": "not available in the sandbox; import what you need from sympy",
    "sympy.init_printing": "not available in the sandbox; print(expr) or sympy.pretty(expr)",
    "matplotlib.ft2font.FT2Image": "FT2Image (deprecated) took a negative size and then wrote past its buffer: draw "
                                   "glyphs into a 2D uint8 array, np.zeros((height, width), np.uint8)",
    "matplotlib.backend_bases.register_backend":
        "it makes savefig import a module by name; savefig writes png, pdf, svg, ps and eps as it is",
    "scipy.linalg.get_lapack_funcs": "raw LAPACK calls trust index arrays; use scipy.linalg's functions "
                                     "(solve, lu_factor, lu_solve, inv, eig...)",
    "scipy.linalg.get_blas_funcs": "raw BLAS calls; use scipy.linalg's functions or numpy (a @ b)",
    # (the subset's own Connection and Cursor are what a snippet opens and holds: snippet_sqlite)
    "sqlite3.connect": _SQLITE_OWN,
    "sqlite3.Connection": _SQLITE_OWN,
    "sqlite3.Cursor": _SQLITE_OWN,
}


_AGG_ONLY = ("the sandbox draws with matplotlib's Agg backend, and figures come back as images (plt.show() and "
             "savefig() work as they are)")


def _agg_only(refuse):
    """matplotlib.use / pyplot.switch_backend: Agg is already set, so asking for it
    is a no-op (scripts written for headless runs do); any other backend is refused."""
    def use(backend, *args, **kwargs):
        if isinstance(backend, str) and backend.lower() == "agg":
            return None
        raise refuse(f"the matplotlib backend {backend!r} is not available: {_AGG_ONLY}")
    return use


# qualified name -> a factory of the function handed out instead (behaviour the sandbox can
# allow), given the guards' refusal (which records the security event).
REPLACED_OBJECTS = {
    "matplotlib.use": _agg_only,
    "matplotlib.pyplot.switch_backend": _agg_only,
}

# Library classes that run str.format on a format string the snippet gives, with an
# argument it may choose: a field such as {x.__globals__} walks attributes past the
# guards. Their stand-in takes format strings whose fields are names or positions only.
_FORMAT_FIELDS_ADVICE = ("format fields here are names or positions with a format spec, e.g. '{x:,.2f}', "
                         "never attributes or items ({x.attr}, {x[0]}): compute the value first")


def plain_format_fields(fmt) -> bool:
    """Every replacement field of `fmt` (nested ones in format specs too) is a bare name or index."""
    if not isinstance(fmt, str):
        return True  # not a format string: the class's own error
    try:
        fields = list(string.Formatter().parse(fmt))
    except ValueError:
        return True  # malformed: str.format refuses it itself
    return all((name is None or ("." not in name and "[" not in name)) and plain_format_fields(spec or "")
               for _text, name, spec, _conversion in fields)


def _checked_format_type(real, refuse):
    def check(fmt):
        if not plain_format_fields(fmt):
            raise refuse(f"{real.__module__}.{real.__name__}: {_FORMAT_FIELDS_ADVICE}")

    def check_arguments(args, kwargs):
        check(args[0] if args else kwargs.get("fmt"))
    stand_in = stand_ins.stand_in(real, check_arguments=check_arguments)

    def __call__(self, *args, **kwargs):
        # (a subclass of the snippet's may set self.fmt later, or answer it anew on each read:
        # read once, checked, and formatted by a plain formatter of the real class)
        fmt = self.fmt
        check(fmt)
        return real.__call__(real(str.__str__(fmt) if isinstance(fmt, str) else fmt), *args, **kwargs)
    stand_in.__call__ = __call__
    return stand_in


# sympy.lambdify as the snippet calls it. What it generates is checked wherever it is made
# (CHECKED_SOURCE: the source is arithmetic; _printer_imports_refusal: what the printer
# imports); the snippet's call also names the modules, by their names only (a str lambdify
# knows, or a dict of its own functions: a module object's __dict__ would be the namespace),
# and no printer or cse function of its own.
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


# Classes and functions that lay an array over memory (a buffer, a file) with a dtype the
# caller names. Object pointers read from bytes the snippet wrote are a forged object, and
# through a forged bytearray all of the interpreter's memory; numbers laid over an object
# array's pointers forge them the other way round. The snippet gets stand-ins that refuse
# both (the classes: a subclass that isinstance and class statements treat as the real
# one; the functions: a wrapper).
_RAW_OBJECTS_ADVICE = ("Python objects and raw bytes never share memory in the sandbox (object pointers read from "
                       "bytes, or bytes laid over an object array, forge references): build object arrays from "
                       "values, e.g. numpy.array([...], dtype=object), and read buffers with numeric dtypes")


def mixes_objects_and_bytes(value) -> bool:
    """An array whose items and the memory under them disagree about Python objects:
    object pointers over memory numpy did not fill with objects (bytes, a file, a numeric
    array), or numbers over an object array's pointers."""
    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(value, numpy.ndarray):
        return False
    # (read through ndarray's own descriptors: never a subclass's idea of its dtype or base)
    dtype_of, base_of = vars(numpy.ndarray)["dtype"].__get__, vars(numpy.ndarray)["base"].__get__
    objects = dtype_of(value).hasobject
    memory = value
    while True:
        if isinstance(memory, memoryview):
            memory = memory.obj
        elif isinstance(memory, numpy.ndarray):
            if dtype_of(memory).hasobject != objects:
                return True
            if base_of(memory) is None:
                return False  # it owns its memory: numpy put there what its dtype says
            memory = base_of(memory)
        else:
            return objects  # bytes, a bytearray, a memory map: numbers only


def holds_objects(value) -> bool:
    """An object array, or a memoryview of one: its buffer is its object pointers."""
    numpy = sys.modules.get("numpy")
    if isinstance(value, memoryview):
        value = value.obj
    return numpy is not None and isinstance(value, numpy.ndarray) and value.dtype.hasobject


def _checked_array_type(real, refuse):
    """The snippet's `real` (numpy.ndarray, ...): a stand-in that refuses such arrays."""
    def check_made(made):
        if mixes_objects_and_bytes(made):
            raise refuse(f"{real.__module__}.{real.__name__}(): {_RAW_OBJECTS_ADVICE}")
    return stand_ins.stand_in(real, check_made=check_made)


def _checked_array_function(function, refuse):
    @functools.wraps(function)
    def checked(*args, **kwargs):
        made = function(*args, **kwargs)
        if mixes_objects_and_bytes(made):
            raise refuse(f"{function.__module__}.{function.__name__}(): {_RAW_OBJECTS_ADVICE}")
        return made
    return checked


# qualified name -> a factory of the stand-in the snippet gets, given the real object
# and the guards' refusal.
STAND_INS = {
    **dict.fromkeys(("numpy.ndarray", "numpy.recarray", "numpy.memmap", "numpy.char.chararray",
                     "numpy.ma.mrecords.MaskedRecords"), _checked_array_type),
    **dict.fromkeys(("numpy.frombuffer", "numpy.rec.fromstring", "numpy.rec.fromfile", "numpy.rec.array"),
                    _checked_array_function),
    "matplotlib.ticker.StrMethodFormatter": _checked_format_type,
    "pandas.eval": pandas_expressions.evaluator,   # (DataFrame.query and eval: pandas_expressions.METHODS)
    "sympy.lambdify": _checked_lambdify,
}


def _no_object_buffer(args, kwargs):
    if any(holds_objects(value) for value in (*args, *kwargs.values())):
        return ("an object array's buffer is its object pointers, and writing bytes into it forges references: "
                "use a bytearray, then build arrays from it with a numeric dtype")
    return None


def _no_unchecked_resize(args, kwargs):
    if kwargs.get("refcheck", True) is not True:
        return ("resize(refcheck=False) frees memory that other views of the array still use: use "
                "numpy.resize(a, shape), which copies, or a.reshape(shape)")
    return None


def _state_position_in_range(generator, call):
    """RandomState.set_state takes any position in the Mersenne Twister's key: MT19937 then
    reads the memory past the key's 624 words (and hands it out as random numbers). Read
    back from the generator after the call (so no argument can answer one way to a check
    and another to numpy), and put back as it was when out of range."""
    before = generator.get_state(legacy=False)
    call()
    state = generator.get_state(legacy=False)
    position = state.get("state", {}).get("pos", 0) if state.get("bit_generator") == "MT19937" else 0
    if 0 <= position <= 624:
        return None
    type(generator).set_state(generator, before)
    return (f"the Mersenne Twister's position is 0 to 624, not {position}: pass a state get_state() "
            "gave, or seed the generator (np.random.seed(n), np.random.default_rng(n))")


# method name -> (types it is guarded on, None for any; a check of the call's arguments
# that returns why it is refused, or None[; a check that makes the call itself, given the
# object and the call, and undoes it when it refuses]): the snippet gets the method wrapped.
GUARDED_METHODS = {
    # (`read` too: ssl.SSLSocket.read(len, buffer) and SSLObject's fill a buffer they are given;
    # and struct's pack_into, module function and method, for an operator who allows struct)
    **{name: (None, _no_object_buffer)
       for name in ("readinto", "readinto1", "recv_into", "recvfrom_into", "recvmsg_into", "read", "pack_into")},
    "resize": (("numpy.ndarray",), _no_unchecked_resize),
    "set_state": (("numpy.random.RandomState",), None, _state_position_in_range),
}

# library classes (qualified names) a class of the snippet's may not derive from, and why
# (checked where the snippet's classes are checked: compiled classes cannot take the
# __init_subclass__ refusal NOT_SUBCLASSED puts on Python ones)
FINAL_CLASSES = {
    "numpy.random.BitGenerator": "a bit generator's compiled code trusts the state its subclass's state setter "
                                 "takes (the Mersenne Twister's position): use numpy's generators as they are",
    # groupby's compiled aggregations write out[code] for each code an array's factorize()
    # returns, and reindex takes the positions an index's get_indexer() returns: an
    # override's code or position past the data wrote or read the heap
    **dict.fromkeys(("pandas.core.arrays.base.ExtensionArray", "pandas.core.dtypes.base.ExtensionDtype",
                     "pandas.core.indexes.base.Index"),
                    "pandas' compiled code trusts what the methods of its arrays, indexes and dtypes return (codes, "
                    "positions): use them as they are, and keep your own logic in functions or a class that holds "
                    "a Series"),
    # compiled classes whose state is in the instance's __dict__: their code names no
    # attribute the state rule (state_names) can see, and reads simplices it is given
    **dict.fromkeys(("scipy.spatial._qhull._QhullUser", "scipy.interpolate._interpnd.NDInterpolatorBase"),
                    "its compiled code reads positions from the state it keeps (a triangulation's simplices), "
                    "which a subclass could set: use it as it is, and keep your own logic in functions or a class "
                    "that holds one"),
}


def guarded_method(obj, name: str, method, refuse):
    """`method` (obj.name, already looked up) wrapped in its GUARDED_METHODS check, when
    obj is one of the entry's types (or a subclass, or an instance of one)."""
    type_names, check, *after = GUARDED_METHODS[name]
    if getattr(method, "sandbox_guarded", False):
        return method  # (a module's function, guarded where the module handed it out)
    if type(obj) is super and obj.__self__ is not None:
        obj = obj.__self__  # super().resize: the method as that object (or class) has it
    if isinstance(obj, types.ModuleType) and not isinstance(getattr(method, "__self__", obj), types.ModuleType):
        obj = method.__self__  # np.random.set_state: the module's global RandomState's method
    if type_names is not None:
        kinds = tuple(t for t in map(lookup, type_names) if isinstance(t, type))
        cls = obj if isinstance(obj, type) else type(obj)
        if not (kinds and issubclass(cls, kinds)) or not callable(method):
            return method
    elif not callable(method):
        return method

    @functools.wraps(method)
    def checked(*args, **kwargs):
        why = check(args, kwargs) if check is not None else None
        if why is not None:
            raise refuse(f"{name}(): {why}")
        if not after:  # (no other reference to the object is held here: numpy's resize counts them)
            return method(*args, **kwargs)
        # the object: the method's, or read from the class, the first argument
        bound = getattr(method, "__self__", None)
        target = bound if bound is not None and not isinstance(bound, type) else (args[0] if args else None)
        if target is None:
            return method(*args, **kwargs)
        results = []
        why = after[0](target, lambda: results.append(method(*args, **kwargs)))
        if why is not None:
            raise refuse(f"{name}(): {why}")
        return results[0]
    checked.sandbox_guarded = True
    return checked


# qualified name of a function -> keyword values it gets while a restricted snippet runs,
# whoever calls it and however the caller passed them: the checks that library code may
# skip for speed, and that compiled code then relies on
FORCED_KEYWORDS = {
    # scipy.sparse's constructors check a matrix's index arrays only in part (see below)
    **dict.fromkeys(("scipy.sparse._compressed._cs_matrix.check_format", "scipy.sparse._bsr._bsr_base.check_format"),
                    {"full_check": True}),
    # MultiIndex(..., verify_integrity=False) with a code past its level: .values reads out of bounds
    **dict.fromkeys(("pandas.MultiIndex.__new__", "pandas.MultiIndex.set_codes", "pandas.MultiIndex.set_levels"),
                    {"verify_integrity": True}),
    # "invalid codes can lead to severe problems, such as segfaults" (pandas' own docstring)
    "pandas.Categorical.from_codes": {"validate": True},
}

# scipy.sparse's compiled routines trust a matrix's index arrays: an index past the shape
# (given to the constructor, written into m.indices later, or served by a subclass's
# property) writes out of bounds. While a restricted snippet runs, the constructors
# check the indices in full (FORCED_KEYWORDS), the snippet gets the index arrays as
# read-only copies, and it cannot subclass the matrix classes.
_SPARSE_INDEXED = ("scipy.sparse._compressed._cs_matrix", "scipy.sparse._coo._coo_base")
NOT_SUBCLASSED = {name: "scipy.sparse's routines trust a matrix's index arrays, which a subclass could serve: "
                        "use the matrix classes as they are" for name in _SPARSE_INDEXED}
# The same for the index arrays that other objects hand out as writable views of their
# own, and that their compiled code reads positions from later: a k-d tree's queries read
# its points at `indices`, a pandas SparseArray's operations its values at its sp_index's
# `indices` (or `blocs` and `blengths`), a SuperLU factorisation's solve() its rows at
# `perm_r` and `perm_c`; a Delaunay triangulation's find_simplex (and the interpolators
# built on one) walk its `simplices` and `neighbors`; matplotlib's triangulation hands its
# `triangles`, `neighbors` and `edges` to its C++ trifinder and contourer. A far position
# written into one read the heap.
_KDTREE_INDEXED = ("scipy.spatial._ckdtree.cKDTree", "scipy.spatial._ckdtree.cKDTreeNode")
_DELAUNAY = ("scipy.spatial._qhull.Delaunay",)
_MPL_TRIANGULATION = ("matplotlib.tri._triangulation.Triangulation",)
# (a pandas SparseArray's sp_index: where its values sit, and in blocks of what length)
_PANDAS_SPARSE_INDEX = ("pandas._libs.sparse.IntIndex", "pandas._libs.sparse.BlockIndex")
COPIED_ATTRIBUTES = {**dict.fromkeys(("indptr", "row", "col", "coords"), _SPARSE_INDEXED),
                     "indices": _SPARSE_INDEXED + _KDTREE_INDEXED + _PANDAS_SPARSE_INDEX,
                     **dict.fromkeys(("blocs", "blengths"), _PANDAS_SPARSE_INDEX[1:]),
                     **dict.fromkeys(("simplices", "vertex_to_simplex", "vertex_neighbor_vertices", "convex_hull",
                                      "coplanar"), _DELAUNAY),
                     "neighbors": _DELAUNAY + _MPL_TRIANGULATION,
                     **dict.fromkeys(("triangles", "edges", "mask"), _MPL_TRIANGULATION),
                     # (a SuperLU factorisation's row and column permutations, which solve() applies)
                     **dict.fromkeys(("perm_r", "perm_c"), ("scipy.sparse.linalg._dsolve._superlu.SuperLU",))}


# Packages whose classes keep state that their compiled code trusts (BSpline's t, c and k are
# read past their ends when they disagree): a class of the snippet's derived from one of
# them may not set, delete or shadow the attributes the library's own code uses.
STATE_TRUSTING_PACKAGES = frozenset(name.split(".")[0] for name in profiles.DATA_SCIENCE) | {"mpmath"}


def _code_names(code) -> set:
    """The attribute and global names a code object (and the code nested in it) uses."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def state_names(library_bases) -> frozenset:
    """The names that the classes of STATE_TRUSTING_PACKAGES among `library_bases` use
    in their own code (self.c, self.indices...), but those whose writes the library
    checks itself: a C attribute's setter, WRITABLE_ATTRIBUTES (a Python property's
    setter may pass anything on: BSpline's c does)."""
    used, checked = set(), set()
    for base in library_bases:
        if (getattr(base, "__module__", None) or "").split(".")[0] not in STATE_TRUSTING_PACKAGES:
            continue
        checked |= writable_attributes.get(base, frozenset())
        for name, value in vars(base).items():
            if type(value) is types.GetSetDescriptorType:
                checked.add(name)
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            functions = (value.fget, value.fset, value.fdel) if isinstance(value, property) else (
                getattr(value, "func", None), value)
            for function in functions:
                if isinstance(function, types.FunctionType):
                    used |= _code_names(function.__code__)
    # (dunders are the class's protocol, never instance state: a class body's __module__ and __doc__)
    return frozenset(name for name in used - checked if not (name.startswith("__") and name.endswith("__")))


# Library bases whose subclasses keep private state of the snippet's own (self._data in a
# test case's setUp, a helper method _make): the private names the base's package uses
# anywhere in its code stay the library's, to read and to write (package_private_names).
OPEN_BASES = {
    "unittest.case.TestCase": "unittest",
}


_ATTRIBUTE_OPS = frozenset({"LOAD_ATTR", "STORE_ATTR", "DELETE_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"})


def package_private_names(base: type, package: str) -> frozenset:
    """The private names (not dunders) that `base` and its bases define, and that the
    functions and methods of the package's loaded modules use, as attributes or in
    strings (getattr(cls, '_x')): where the library may keep state on a test case."""
    names = set()
    for klass in base.__mro__:
        names.update(vars(klass))

    def add_code(code):
        # attribute names only (not the modules a function imports, nor its globals)
        names.update(op.argval for op in dis.get_instructions(code) if op.opname in _ATTRIBUTE_OPS)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                add_code(const)
            elif isinstance(const, str) and const.isidentifier():
                names.add(const)

    def add(value):
        for item in (value.fget, value.fset, value.fdel) if isinstance(value, property) else (value,):
            item = getattr(item, "__func__", item)
            if isinstance(item, types.FunctionType) and (item.__module__ or "").split(".")[0] == package:
                add_code(item.__code__)

    for module in [m for n, m in list(sys.modules.items()) if n == package or n.startswith(package + ".")]:
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == module.__name__ and not issubclass(value, tuple):
                for member in list(vars(value).values()):   # (a named tuple's _make is not a test case's)
                    add(member)
            else:
                add(value)
    return frozenset(name for name in names if name.startswith("_") and not name.startswith("__"))


def c_attribute_owner(library_bases, name: str):
    """The first of `library_bases` (of STATE_TRUSTING_PACKAGES) that defines `name` as an
    attribute in C, a getset or member descriptor (ndarray's base, dtype, shape; a slot),
    or None. A method or value of the snippet's under such a name would answer every
    Python read of it (the library's Python code, the sandbox's own checks) while compiled
    code reads the real one."""
    for base in library_bases:
        if ((getattr(base, "__module__", None) or "").split(".")[0] in STATE_TRUSTING_PACKAGES
                and type(vars(base).get(name)) in (types.GetSetDescriptorType, types.MemberDescriptorType)):
            return base
    return None


def copied_attribute(obj, name: str, value, refuse):
    """`value` (obj.name, already looked up), as a read-only copy when obj is one of
    the types COPIED_ATTRIBUTES names for it: writes into it cannot reach obj. Read
    from the class, it is refused: a property's fget would give the live array
    (coo_matrix.row.fget(m)), which the matrix's compiled routines trust."""
    kinds = tuple(t for t in map(lookup, COPIED_ATTRIBUTES[name]) if isinstance(t, type))
    if type(obj) is super and obj.__self__ is not None:
        obj = obj.__self__  # super(coo_matrix, m).row: the same property, for the same matrix
    if kinds and isinstance(obj, type) and issubclass(obj, kinds):
        raise refuse(f"{obj.__name__}.{name} is read on the object (m.{name}, tree.{name}), which gives a "
                     "read-only copy")
    if not kinds or not isinstance(obj, kinds):
        return value

    def copied(array):
        if not hasattr(array, "copy") or not hasattr(array, "setflags"):
            return array
        array = array.copy()
        array.setflags(write=False)
        return array
    return tuple(map(copied, value)) if type(value) is tuple else copied(value)


# qualified name -> {keyword: its position}: a truthy value, passed either way, is
# refused (the call goes through otherwise).
REFUSED_KEYWORDS = {
    "numpy.load": {"allow_pickle": 2},
    "numpy.lib.format.read_array": {"allow_pickle": 1},
}
_KEYWORD_ADVICE = "unpickling runs code: save arrays with numpy.save (the default allow_pickle=False reads them)"

# Library classes whose documented way to be extended is a subclass that defines some of
# their private methods (scipy.stats: "subclass rv_continuous and define _pdf or _cdf"):
# those names, as methods of the snippet's (never values, properties or slots), may be
# defined in a class of the snippet's. The library calls them and uses what they return
# as numbers, as it does a public method's.
_DISTRIBUTION_HOOKS = ("_cdf", "_logcdf", "_sf", "_logsf", "_ppf", "_isf", "_rvs", "_stats", "_munp",
                       "_entropy", "_argcheck", "_get_support", "_shape_info")
OVERRIDE_HOOKS = {
    "scipy.stats.rv_continuous": frozenset({"_pdf", "_logpdf", "_fitstart", *_DISTRIBUTION_HOOKS}),
    "scipy.stats.rv_discrete": frozenset({"_pmf", "_logpmf", *_DISTRIBUTION_HOOKS}),
    # ("implement _matvec, and _adjoint or _rmatvec": what a matrix-free operator defines)
    "scipy.sparse.linalg.LinearOperator": frozenset({"_matvec", "_rmatvec", "_matmat", "_rmatmat", "_adjoint",
                                                     "_transpose"}),
}

# library types whose attributes a snippet may set, and why that opens nothing: the
# type validates the write itself, through a function the snippet may call anyway.
WRITABLE_TYPES = {
    "pandas._config.config.DictWrapper": "pd.options.display.width = 120 is pd.set_option(...)",
    "sandbox.restricted.subsets.snippet_logging.Logger": "logger.propagate = False: the wrapper's one settable attribute",
    # the C Element has tag, text, tail and attrib and no other attribute (attrib must be a dict);
    # what it holds reaches only the serializer, which takes strings
    "xml.etree.ElementTree.Element": "el.text = 'hi' is how an XML tree is built (el.set() writes attrib anyway)",
}
# ...and library types whose instances of every subclass a snippet may set public attributes on
WRITABLE_FAMILIES = {
    # node.name = 'renamed' in a NodeTransformer: a tree is data here (snippet_ast), compiled by
    # nothing the snippet can call; its private names (_fields) stay read-only
    "ast.AST": "a parsed tree's nodes are changed by setting their fields",
}
# ...and single attributes of library types (their subclasses included), each a property
# whose setter checks and converts the value as the matching method does.
WRITABLE_ATTRIBUTES = {
    "pandas.DataFrame": ({"columns", "index"}, "df.columns = [...] is df.set_axis([...], axis=1)"),
    "pandas.Series": ({"name", "index"}, "s.name = 'x' is s.rename('x')"),
    "pandas.Index": ({"name", "names"}, "df.index.name = 'day' is index.rename('day')"),
    # the C connection's and cursor's setters check the value (a callable, a level name)
    "sqlite3.Connection": ({"row_factory", "text_factory", "isolation_level", "autocommit"},
                           "conn.row_factory = sqlite3.Row is how rows by name are asked for"),
    "sqlite3.Cursor": ({"row_factory", "arraysize"}, "cur.arraysize = 100 is fetchmany's default size"),
    # (not numpy's a.shape = ...: a library's own array, reshaped under compiled code that took
    # its layout from elsewhere, is a door; and never dtype or strides, which reinterpret memory)
}

_TASK_STACK = "a task's stack is the sandbox's frames; use traceback.format_exc() in an except block"
# attribute name -> (types it is refused on, what to do instead[, only when this holds of
# the object]): methods and attributes of library objects.
REFUSED_ATTRIBUTES = {
    "data": (("numpy.ndarray",), "an object array's memory is its object pointers, and writing into it forges "
                                 "references: use its items (a[i], a.tolist())", lambda array: array.dtype.hasobject),
    "ctypes": (("numpy.ndarray", "numpy.generic"), "ndarray.ctypes hands out raw memory addresses; "
                                                  "use the array's own methods"),
    "style": (("pandas.DataFrame", "pandas.Series"), "the Styler renders jinja2 templates and formats with "
                                                    "strings that reach attributes unguarded; use "
                                                    "df.to_string(), df.to_html() or df.to_markdown()"),
    "construct_fast": (("scipy.interpolate.BSpline", "scipy.interpolate.PPoly", "scipy.interpolate.BPoly",
                        "scipy.interpolate.NdPPoly"),
                       "construct_fast skips the checks that the compiled evaluation relies on (a c shorter than "
                       "t says is read past its end): call the class itself, e.g. BSpline(t, c, k)"),
    **dict.fromkeys(("set_authorizer", "setlimit", "setconfig", "enable_load_extension", "load_extension"),
                    (("sqlite3.Connection",), "the sandbox's authorizer and limits keep SQL inside the database, "
                                              "and extensions are native code: register Python functions with "
                                              "conn.create_function(name, nargs, func)")),
    # (SQLite attaches the bytes as a database, and ATTACH is refused)
    "deserialize": (("sqlite3.Connection",), "to copy a database use source.backup(target), or write the bytes to "
                                             "a file and sqlite3.connect() it"),
    # (eval_str=True evaluates annotation text, the snippet's included, as unrestricted Python)
    **dict.fromkeys(("from_callable", "from_function"),
                    (("inspect.Signature",), "a signature is inspect.signature(f), whose annotations stay as "
                                             "they are")),
    # (it opens each name with the library's own open(), which reaches past the snippet's)
    "read": (("configparser.RawConfigParser",), "it opens files by name itself: open the file and hand it over, "
                                                "with open('settings.ini') as f: parser.read_file(f) (or "
                                                "parser.read_string(text))"),
    "print_stack": (("asyncio.Task",), _TASK_STACK),
    "get_stack": (("asyncio.Task",), _TASK_STACK),
}

_NO_FILE_URLS = ("the network profile reaches the network only: file:// URLs are refused; read files with "
                 "open() (the filesystem profile gives a workspace)")
# qualified name of a function (of a module or a class) -> refusal: switched off in the
# child while a restricted snippet runs, so every path to it refuses instead of running:
# sympy's string parser (sympify("..."), S("..."), expr.subs("x", 1), Matrix("...")),
# urllib's local files (urlopen("file:///..."), urlretrieve, the legacy URLopener).
_UNPICKLING = ("unpickling runs code (any function the bytes name): keep data in json, numpy.save/load "
               "without pickle, or pandas' to_csv/read_csv and to_parquet")
SWITCHED_OFF = {
    # every unpickler, whoever calls it: numpy's NpzFile(allow_pickle=True) and pandas'
    # pickle_compat.loads reach it with the snippet's bytes (a class is replaced by a
    # subclass whose load refuses, so that a library may still derive from it)
    **dict.fromkeys(("pickle.load", "pickle.loads", "pickle._load", "pickle._loads", "pickle._Unpickler.load",
                     "pickle._Unpickler", "pickle.Unpickler", "_pickle.load", "_pickle.loads", "_pickle.Unpickler"),
                    _UNPICKLING),
    "sympy.plotting.experimental_lambdify.Lambdifier.__init__":
        "experimental_lambdify generates code from the expression's names; evaluate with "
        "expr.subs(x, value), or draw with sympy.plot or matplotlib",
    "_pytest.config.main": _TEST_RUNNER,   # (pytest.main, however a library reaches it)
    "urllib.request.FileHandler.file_open": _NO_FILE_URLS,
    "urllib.request.URLopener.open_file": _NO_FILE_URLS,
    "urllib.request.URLopener.open_local_file": _NO_FILE_URLS,
    "urllib.request.URLopener.retrieve": "the legacy URLopener writes files with the real open(): use "
                                         "urllib.request.urlretrieve(url, 'name') or urlopen",
}
# Library code that starts programs, whoever calls it: sympy's autowrap and ufuncify compile
# the C code they generate and load it, matplotlib's usetex runs latex, pyperclip its
# helpers, scipy's workers=2 starts multiprocessing's forkserver (a whole Python that
# unpickles what it is sent) through _posixsubprocess directly. While a restricted snippet
# runs, each refuses with PermissionError (an OSError, as the kernel's refusal would be:
# libraries that probe for a program catch it).
NO_PROGRAMS = ("subprocess.Popen._execute_child", "os.system", "os.popen", "os.fork", "os.forkpty",
               "os.execv", "os.execve", "os.execl", "os.execle", "os.execlp", "os.execlpe", "os.execvp",
               "os.execvpe", "os.posix_spawn", "os.posix_spawnp", "os.spawnv", "os.spawnve", "os.spawnvp",
               "os.spawnvpe", "os.spawnl", "os.spawnle", "os.spawnlp", "os.spawnlpe", "pty.fork", "pty.spawn",
               "_posixsubprocess.fork_exec")
_NO_PROGRAMS_ADVICE = "no program can run in the sandbox (a library tried to start one): do the work in Python"

# qualified name -> what stands in for it while a restricted snippet runs: library helpers
# that read the host's files on the way to the network (requests sends the ~/.netrc
# credentials it finds for a host, and unpacks zip members named by a path), or tell the
# host's kernel release (pd.show_versions).
NEUTRAL_WHILE_RUNNING = {
    "requests.utils.get_netrc_auth": lambda url, raise_errors=False: None,
    "requests.sessions.get_netrc_auth": lambda url, raise_errors=False: None,
    "requests.utils.extract_zipped_paths": lambda path: path,
    "requests.adapters.extract_zipped_paths": lambda path: path,
    "pandas.util._print_versions._get_sys_info": lambda: _sys_info_without_the_host(),
}


# the top-level names sympy's own code imports through sympy.external.import_module
_SYMPY_OPTIONAL_LIBRARIES = frozenset({
    "numpy", "scipy", "matplotlib", "mpl_toolkits", "sympy", "mpmath", "gmpy2", "gmpy", "flint", "pycosat", "pysat",
    "z3", "pymc", "pymc3", "jax", "tensorflow", "torch", "cupy", "aesara", "theano", "numexpr", "numba",
    "llvmlite", "lark", "antlr4", "matchpy", "pyglet", "lfortran", "clang", "lxml", "IPython"})


def _sys_info_without_the_host() -> dict:
    """What pd.show_versions() prints of the system, without the host's kernel release and
    version (the platform subset does not give them either)."""
    import platform
    hidden = "(the host's is not shown in the sandbox)"
    return {"commit": None, "python": platform.python_version(), "python-bits": sys.maxsize.bit_length() + 1,
            "OS": platform.system(), "OS-release": hidden, "Version": hidden, "machine": platform.machine(),
            "processor": "", "byteorder": sys.byteorder, "LC_ALL": None, "LANG": None,
            "LOCALE": {"language-code": None, "encoding": None}}
# library -> modules it imports lazily whose import-time code needs what a run checks or
# switches off (sympy.simplify imports sympy.physics.units, which sympifies its prefix
# names): imported with the library (import_companions).
IMPORTED_WITH = {"sympy": ("sympy.physics.units",),
                 # (its renderer's methods are wrapped: compiled_inputs; pyplot loads it at the first figure)
                 "matplotlib": ("matplotlib.backends.backend_agg",)}

# qualified name of a method that returns Python source the library then runs with the
# real builtins: while a restricted snippet runs, source that the snippet's names turned
# into code is refused (generated_code.py); sympy's lambdify is behind nsolve and plot.
CHECKED_SOURCE = ("sympy.utilities.lambdify._EvaluatorPrinter.doprint",)


def _plain_fields(where):
    """A check that the format string `where` finds among a call's arguments has plain
    fields: library code runs str.format on it, and {x.__class__} would walk
    attributes past the guards."""
    def check(*args, **kwargs):
        try:
            fmt = where(*args, **kwargs)
        except (TypeError, AttributeError):
            return None   # called unlike `where` says: the original's own error
        return None if not isinstance(fmt, str) or plain_format_fields(fmt) else _FORMAT_FIELDS_ADVICE
    return check


def _agg_backend_only(registry, backend, *args, **kwargs):
    """matplotlib imports a backend's module by name (rcParams['backend'] can be
    'module://anything', and a plain dict.update sets it past rcParams' checks)."""
    if type(backend) is str and backend.lower() == "agg":
        return None
    return f"{_AGG_ONLY}; leave rcParams['backend'] alone"


def _no_figure_hooks(*args, **kwargs):
    """rcParams['figure.hooks'] names functions ("module:name") that plt.figure imports and calls."""
    import matplotlib
    hooks = dict.get(matplotlib.rcParams, "figure.hooks")
    if hooks is None or (type(hooks) in (list, tuple) and not hooks):   # (a falsy list of the snippet's
        return None                                                    # own could still iterate)
    return "rcParams['figure.hooks'] imports and calls functions by name: call your function on the figure yourself"


def _public_function_names(func, depth: int = 0, obj=None):
    """pandas looks a function given by name up on the object (df.agg('sum'),
    df.apply('__getattribute__', args=('_mgr',))): a name that starts with '_'
    reaches its internals, and a method the sandbox refuses on the object
    (df.apply('query', args=(...,))) would run all the same. `func` as pandas takes
    it: a name, a callable, or a list or dict of them (of (column, name) pairs in a
    named aggregation); `obj`: the object pandas looks the name up on, when known
    (else any method REFUSED_ATTRIBUTES names is refused by its name)."""
    if isinstance(func, str):
        name = str.__str__(func)
        if name.startswith("_"):
            return (f"pandas looks {name[:40]!r} up on the object by name, and names that start with '_' "
                    "are its internals: pass a public name ('sum', 'mean') or the function itself")
        refused = attribute_refusal(obj, name) if obj is not None else (
            f"{name} is refused: {REFUSED_ATTRIBUTES[name][1]}" if name in _attribute_types else None)
        if refused is not None:
            return f"pandas would look {name!r} up on the object by name and call it: {refused}"
        if name in pandas_expressions.METHODS:
            return (f"pandas would look {name!r} up on the object by name and call it without the sandbox's "
                    f"checks of its expression: call df.{name}(...) itself")
        numpy = sys.modules.get("numpy")
        found = getattr(numpy, name, None) if numpy is not None else None
        if found is not None and (id(found) in refused_ids or id(found) in replaced_ids):
            # (when the object has no method of that name, pandas calls numpy's: numpy.ndarray
            # over a buffer would skip the checks the snippet's own numpy.ndarray makes)
            return (f"pandas would call numpy.{name[:40]} on the object, which the sandbox refuses or checks: "
                    f"call numpy.{name[:40]} yourself")
        return None
    # (a list or dict is looked into for an early answer; pandas looks each name up on
    # its own later, and every lookup is checked then, however the container iterates)
    if depth < 3 and type(func) in (list, tuple, dict):
        for item in (func.values() if type(func) is dict else func):
            why = _public_function_names(item, depth + 1, obj)
            if why is not None:
                return why
    return None


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


def _lambdify_door(name: str) -> bool:
    """A name in lambdify's source that would reach a module, or an object this policy
    refuses, stands in for or guards: bare, in the modules lambdify's namespace is
    made of (numpy's ndarray, load, lib); dotted, anything but a function of the
    math modules (numpy.lib.stride_tricks.as_strided)."""
    if "." in name:
        module_name, _, attr = name.rpartition(".")
        module = sys.modules.get(module_name) if module_name in _LAMBDIFY_MATH_MODULES else None
        return module is None or _door_object(getattr(module, attr, None))
    return any(_door_object(getattr(sys.modules.get(module_name), name, None)) for module_name in _LAMBDIFY_MODULES)


def _printer_imports_refusal(evaluator) -> str | None:
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
                    not _printer_import_allowed(module, name):
                return f"it imports {str(name)[:60]!r} from {module[:60]!r}"
    return None


def _printer_import_allowed(module: str, name: str) -> bool:
    if module == "functools":
        return name == "reduce"    # (the numpy printer's Max and Min)
    if module not in _LAMBDIFY_MATH_MODULES and not (module.startswith("sympy.") and module in sys.modules):
        return False
    try:
        loaded = sys.modules.get(module) or importlib.import_module(module)  # (a fixed math module's name)
    except ImportError:
        return True   # (lambdify's own import fails the same way)
    return not _door_object(getattr(loaded, name, None))


def _door_object(found) -> bool:
    return found is not None and (isinstance(found, types.ModuleType) or id(found) in refused_ids
                                  or id(found) in replaced_ids or id(found) in keyword_guards)


def _function_argument(self, func=None, *args, **kwargs):
    return _public_function_names([func, *kwargs.values()])


_NOT_GIVEN = object()

_FRAME_NAMES = ("looks the names in the string up in the calling frame, which is the sandbox's own: pass the "
                "matrices themselves, np.bmat([[A, B], [C, D]]) or np.block([[A, B], [C, D]])")


def _no_frame_lookup(obj=None, ldict=None, gdict=None, *args, **kwargs):
    """numpy.bmat('A, B; C, D') reads A, B... from its caller's frame: called through the
    guards, that is a guard's frame (its locals, its module's globals)."""
    return f"bmat({obj[:40]!r}) {_FRAME_NAMES}" if isinstance(obj, str) and gdict is None else None


def _no_frame_lookup_key(self=None, key=None, *args, **kwargs):
    """np.r_['A, B'] and np.c_[...] hand their caller's frame to bmat."""
    return f"np.r_[{key[:40]!r}] {_FRAME_NAMES}" if isinstance(key, str) else None


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


# qualified name of a function or method -> a check of its arguments that returns why the
# call is refused, or None: while a restricted snippet runs, every call is checked,
# whoever makes it (the libraries build formatters and load backends from the options the
# snippet set: set_major_formatter("{x}"), bar_label(fmt=...), colorbar(format=...),
# to_csv(float_format=...), rcParams)
CHECKED_CALLS = {
    "matplotlib.ticker.StrMethodFormatter.__call__": _plain_fields(lambda self, *args, **kwargs: self.fmt),
    "matplotlib.cbook._auto_format_str": _plain_fields(lambda fmt, *args, **kwargs: fmt),
    "pandas.io.formats.format.DataFrameFormatter._validate_float_format":
        _plain_fields(lambda self, fmt, *args, **kwargs: fmt),
    # (with jinja2 installed: to_latex formats through the Styler)
    "pandas.io.formats.style_render._maybe_wrap_formatter":
        _plain_fields(lambda formatter=None, *args, **kwargs: formatter),
    "matplotlib.backends.registry.BackendRegistry.load_backend_module": _agg_backend_only,
    "sympy.parsing.sympy_parser.parse_expr": _math_text_only,
    # every node of a pandas expression (df.query, df.eval, pd.eval), as pandas visits it
    "pandas.core.computation.expr.BaseExprVisitor.visit": pandas_expressions.node_refusal,
    # pandas' lookups of a function by name (agg, apply, transform; pivot_table's aggfunc
    # on the way): where each calls getattr(obj, name). The groupby classes bind agg twice.
    "pandas.core.apply.Apply.apply_str":
        lambda self, *args, **kwargs: _public_function_names(self.func, obj=getattr(self, "obj", None)),
    "pandas.core.apply.Apply._apply_str":
        lambda self, obj=None, func=None, *args, **kwargs: _public_function_names(func, obj=obj),
    **dict.fromkeys((f"pandas.core.groupby.{klass}.{method}"
                     for klass in ("generic.SeriesGroupBy", "generic.DataFrameGroupBy")
                     for method in ("aggregate", "agg")), _function_argument),
    **dict.fromkeys((f"pandas.core.groupby.groupby.GroupBy.{method}"
                     for method in ("apply", "_transform", "_reduction_kernel_transform")), _function_argument),
    "matplotlib.pyplot.figure": _no_figure_hooks,
    **dict.fromkeys(("mpmath.identification.identify", "mpmath.identification.IdentificationMethods.identify"),
                    _constants_by_value),
    "mpmath.identify": lambda x=None, constants=None, *args, **kwargs: _constants_by_value(None, x, constants),
    "sympy.core.function.UndefinedFunction.__new__": _assumptions_only,
    # (a URI string: with SQLAlchemy installed, pandas opens any database through it, none of
    # snippet_sqlite's checks applied)
    "pandas.io.sql.pandasSQL_builder": lambda con=None, *args, **kwargs: (
        "a database URI is not opened in the sandbox: pass a connection, "
        "e.g. pd.read_sql(query, sqlite3.connect('data.db'))" if isinstance(con, (str, bytes)) else None),
    # scipy pastes a distribution's shape names into the source of the argument parsers it
    # exec()s with the real builtins, after checking them with the value's own replace() and
    # split(): a str subclass answered the check with a name and the paste with code (ISV-060)
    "scipy.stats._distn_infrastructure.rv_generic._construct_argparser": lambda self, *args, **kwargs: (
        None if getattr(self, "shapes", None) is None or type(self.shapes) is str else
        "a distribution's shapes are a plain str of parameter names, e.g. shapes='a, b' (scipy pastes them "
        "into code it runs)"),
    # pandas imports its plotting backend by name (any module, past the import allow-list:
    # `antigravity` opens a browser) and calls the module's plot() with the frame (ISV-061)
    "pandas.plotting._core._load_backend": lambda backend=None, *args, **kwargs: (
        None if type(backend) is str and backend == "matplotlib" else
        f"pandas plots with matplotlib in the sandbox, not with {str(backend)[:40]!r}: leave "
        "pd.options.plotting.backend as 'matplotlib' (pass no backend=)"),
    **dict.fromkeys(("numpy._pytesttester.PytestTester.__call__", "scipy._lib._testutils.PytestTester.__call__"),
                    lambda *args, **kwargs: _TEST_RUNNER),   # (numpy.test, scipy.test, scipy.stats.test...)
    # sympy imports its optional libraries by name through one function, and some of its
    # callers pass the snippet's string: sympy.stats.sample(X, library='this') imported it (ISV-063)
    "sympy.external.importtools.import_module": lambda module=None, *args, **kwargs: (
        None if type(module) is str and module.split(".")[0] in _SYMPY_OPTIONAL_LIBRARIES else
        f"sympy imports the optional libraries it knows by name, and {str(module)[:40]!r} is not one of them: "
        "pass one of numpy, scipy or matplotlib (library='numpy')"),
    # np.info('name') looks the name up in the module named by toplevel, imported by name (ISV-063)
    "numpy.lib._utils_impl.info": lambda object=None, maxwidth=76, output=None, toplevel="numpy", *args, **kwargs: (
        None if type(toplevel) is str and toplevel == "numpy" else
        "np.info looks names up in numpy only here (toplevel= would import any module by name)"),
    "numpy.matrixlib.defmatrix.bmat": _no_frame_lookup,
    "numpy.lib._index_tricks_impl.AxisConcatenator.__getitem__": _no_frame_lookup_key,
    **CHECKED_BEFORE_THE_CALL,   # (the numbers compiled code trusts: compiled_inputs.py)
}
_CHECKED_SOURCE_ADVICE = ("name symbols and functions with plain identifiers (x, y1, f) that are not Python "
                          "builtins, and build expressions from them with operators")

# qualified name -> (position, keyword) of the file name a function writes to with the real
# open(): the snippet's version opens that name with the snippet's open() first (the
# profile's policy: the scratch directory, the workspace, or no file) and passes on the
# path that open() resolved.
WRITES_NAMED_FILE = {
    "urllib.request.urlretrieve": (1, "filename"),
}

# open()-like functions (qualified names) that library code calls with the file the snippet
# names (tarfile.open(name=4), and gzip through it): while a restricted snippet runs they
# take a path only, as the snippet's own open() does; a descriptor number (3 and 4 are the
# sandbox's request and result pipes) is refused.
BY_PATH_ONLY = ("builtins.open", "tarfile.bltn_open")
_BY_PATH_ADVICE = "files in the sandbox are named by path, not by file descriptor: pass the file's name"

by_path_ids: set[int] = set()         # ids of the BY_PATH_ONLY replacements in place: open() to the guards
refused_ids: dict[int, str] = {}      # id(object) -> advice, for the objects of loaded modules
named_file_writers: dict[int, tuple] = {}  # id(function) -> WRITES_NAMED_FILE's (position, keyword)
replaced_ids: dict[int, object] = {}  # id(object) -> a factory of what the snippet gets instead
writable_types: frozenset = frozenset()  # WRITABLE_TYPES, those of loaded modules
writable_families: tuple = ()           # WRITABLE_FAMILIES, those of loaded modules
open_bases: dict[type, frozenset] = {}  # OPEN_BASES, those of loaded modules -> the package's private names
writable_attributes: dict[type, frozenset] = {}  # WRITABLE_ATTRIBUTES, those of loaded modules
override_hooks: dict[type, frozenset] = {}  # OVERRIDE_HOOKS, those of loaded modules
final_classes: dict[type, str] = {}  # FINAL_CLASSES, those of loaded modules
keyword_guards: dict[int, tuple] = {}  # id(function) -> (qualified name, refused keywords)
_attribute_types: dict[str, tuple] = {}
# entry of the tables SwitchedOff applies (but BY_PATH_ONLY: io.open is open, and library
# code opens descriptors with it) -> its original function; and where else a module binds
# it (sympy.parse_expr is sympy_parser.parse_expr): every binding is replaced, so no
# re-export or module-level import keeps the original
_originals: dict[str, object] = {}
other_bindings: dict[str, tuple] = {}
_resolved_with = -1                    # len(sys.modules) at the last resolve()
SETTLE_ROUNDS = 5                      # settle(): a lazy import rarely leads to a second


def writable_attribute(obj, name) -> bool:
    """May the snippet set `name` on this library object (WRITABLE_ATTRIBUTES)?"""
    return type(name) is str and any(name in writable_attributes.get(klass, ()) for klass in type(obj).__mro__)


def lookup(qualified: str):
    """The object a qualified name names, if its module is already imported."""
    module_name, _, attr = qualified.rpartition(".")
    parts = module_name.split(".")
    for split in range(len(parts), 0, -1):
        module = sys.modules.get(".".join(parts[:split]))
        if module is None:
            continue
        value = module
        try:
            for name in parts[split:] + [attr]:
                value = getattr(value, name)
        except AttributeError:
            return None
        return value
    return None


def resolve() -> None:
    """Look every entry up among the imported modules."""
    global _resolved_with, writable_types, writable_families, writable_attributes, override_hooks, final_classes
    global open_bases
    loaded = len(sys.modules)
    for qualified, advice in REFUSED_OBJECTS.items():
        value = lookup(qualified)
        if value is not None:
            refused_ids[id(value)] = f"{qualified} is refused: {advice}"
    for qualified, replacement in REPLACED_OBJECTS.items():
        value = lookup(qualified)
        if value is not None:
            replaced_ids[id(value)] = replacement
    for qualified, factory in STAND_INS.items():
        value = lookup(qualified)
        if callable(value):
            replaced_ids[id(value)] = functools.partial(factory, value)
    for qualified, where in WRITES_NAMED_FILE.items():
        value = lookup(qualified)
        if callable(value):
            named_file_writers[id(value)] = where
    for qualified, keywords in REFUSED_KEYWORDS.items():
        value = lookup(qualified)
        if value is not None:
            keyword_guards[id(value)] = (qualified, keywords)
    for name, (type_names, *_advice_and_condition) in REFUSED_ATTRIBUTES.items():
        found = tuple(t for t in map(lookup, type_names) if isinstance(t, type))
        if found:
            _attribute_types[name] = found
    writable_types = frozenset(t for t in map(lookup, WRITABLE_TYPES) if isinstance(t, type))
    writable_families = tuple(t for t in map(lookup, WRITABLE_FAMILIES) if isinstance(t, type))
    open_bases = {t: open_bases.get(t) or package_private_names(t, package)
                  for t, package in ((lookup(qualified), package) for qualified, package in OPEN_BASES.items())
                  if isinstance(t, type)}
    final_classes = {t: why for t, why in ((lookup(qualified), why) for qualified, why in FINAL_CLASSES.items())
                     if isinstance(t, type)}
    override_hooks = {t: names for t, names in ((lookup(qualified), names)
                                                for qualified, names in OVERRIDE_HOOKS.items())
                      if isinstance(t, type)}
    writable_attributes = {t: frozenset(names) for t, (names, _why) in
                           ((lookup(qualified), entry) for qualified, entry in WRITABLE_ATTRIBUTES.items())
                           if isinstance(t, type)}
    _find_other_bindings()
    _resolved_with = loaded   # only now: a resolve() that failed part way is done again


def _find_other_bindings() -> None:
    """Once per resolve() (the fork server, then after a snippet's imports): one
    pass over the loaded modules' names."""
    for qualified in (*SWITCHED_OFF, *NO_PROGRAMS, *NEUTRAL_WHILE_RUNNING, *CHECKED_SOURCE, *CHECKED_CALLS,
                      *FORCED_KEYWORDS, *WRAPPED_WHILE_RUNNING):
        if qualified not in _originals and qualified.rpartition(".")[0] in sys.modules:  # a module's function
            value = lookup(qualified)
            if callable(value):       # (first seen outside a run: the original)
                _originals[qualified] = value
    if not _originals:
        return
    wanted = {id(value): qualified for qualified, value in _originals.items()}
    found: dict[str, list] = {}
    for module in list(sys.modules.values()):
        names = getattr(module, "__dict__", None)
        if not isinstance(names, dict):
            continue
        for attr, value in list(names.items()):
            qualified = wanted.get(id(value))
            if qualified is not None and f"{names.get('__name__')}.{attr}" != qualified:
                found.setdefault(qualified, []).append((module, attr))
    # Added to, never replaced: during a run the bindings found before hold the replacement,
    # not the original, and a pass then must not forget them.
    for qualified, sites in found.items():
        known = other_bindings.get(qualified, ())
        other_bindings[qualified] = known + tuple(site for site in sites if site not in known)


def settle() -> None:
    """In the fork server, once its modules are imported: resolve() and apply the tables
    once, until neither imports anything more. Looking an entry up can import a library's
    lazy submodule (scipy.cluster, at the first look at scipy.cluster.hierarchy), and so
    can resolve() itself: done here, once, and not in the first run of every child; and
    refresh() then compares with the final count, so a child's first import does not
    resolve everything again (about 30 ms in the data-science profile, bench/README.md)."""
    for _round in range(SETTLE_ROUNDS):
        loaded = len(sys.modules)
        import_companions()
        resolve()
        with SwitchedOff(PermissionError):  # (nothing runs: refuse is never called)
            pass
        if len(sys.modules) == loaded == _resolved_with:
            return


def refresh() -> None:
    """resolve() again if modules were imported since (cheap when none were)."""
    if len(sys.modules) != _resolved_with:
        import_companions()
        resolve()


def import_companions() -> None:
    """The IMPORTED_WITH modules of the libraries loaded: in the fork server, or in a
    run right after the snippet's import brought the library in (before the run's
    switch-offs reach it)."""
    for library, companions in IMPORTED_WITH.items():
        if library in sys.modules:
            for name in companions:
                if name not in sys.modules:
                    try:
                        importlib.import_module(name)
                    except Exception:  # noqa: BLE001 - the library works without it, less well
                        pass


def attribute_refusal(obj, name: str) -> str | None:
    """Why `obj.name` is refused, or None."""
    types_ = _attribute_types.get(name)
    if type(obj) is super and obj.__self__ is not None:
        obj = obj.__self__  # super().query in a subclass: the same method
    if not types_:
        return None
    _types, advice, *condition = REFUSED_ATTRIBUTES[name]
    if isinstance(obj, types_) and (not condition or condition[0](obj)):
        return f"{type(obj).__name__}.{name} is refused: {advice}"
    if isinstance(obj, type) and issubclass(obj, types_):
        # unbound (DataFrame.query(df, ...)), and whatever the condition: the descriptor read
        # from the class applies to any instance later, under any name a class of the
        # snippet's gives it (class S(np.ndarray): d = np.ndarray.data, then a.view(S).d)
        return f"{obj.__name__}.{name} is refused: {advice}"
    return None


def keyword_guard(function, refuse):
    """A stand-in for `function` that refuses the keywords of REFUSED_KEYWORDS;
    `refuse(message)` returns the exception to raise."""
    qualified, keywords = keyword_guards[id(function)]

    @functools.wraps(function)
    def guarded(*args, **kwargs):
        for keyword, position in keywords.items():
            if keyword in kwargs:
                value, kwargs[keyword] = kwargs[keyword], False
            elif len(args) > position:
                value, args = args[position], (*args[:position], False, *args[position + 1:])
            else:
                continue
            # asked once; the function gets False, not the snippet's object (its truth could change)
            if value:
                raise refuse(f"{qualified}({keyword}=True) is refused: {_KEYWORD_ADVICE}")
        return function(*args, **kwargs)
    return guarded


def _with_keywords(original, *, forced: dict):
    signature = signature_of(original)

    @functools.wraps(original)
    def forcing(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)   # (a mismatch is the call's own TypeError)
        bound.arguments.update(forced)
        return original(*bound.args, **bound.kwargs)
    return forcing


def _refusing_subclass(cls: type, refusal) -> type:
    """`cls` with a load() that refuses (a C class's methods cannot be replaced in place)."""
    return type(cls.__name__, (cls,), {"load": refusal, "__module__": cls.__module__, "__doc__": cls.__doc__})


class SwitchedOff:
    """While a restricted snippet runs (and reports), each loaded entry of SWITCHED_OFF
    is replaced with a refusal, and each of BY_PATH_ONLY with a version that refuses a
    descriptor number; `apply()` again after an import catches modules that import
    loaded. Put back on exit, so the process keeps no trace of one run's policy (a
    pooled child pre-warms in restricted mode)."""

    def __init__(self, refuse):
        self.refuse = refuse
        self.saved: dict[str, tuple] = {}

    def apply(self) -> None:
        for qualified, message in SWITCHED_OFF.items():
            def switched_off(*args, _message=message, **kwargs):
                raise self.refuse(_message)
            self._replace(qualified, functools.partial(self._switched_off, off=switched_off))
        for qualified in BY_PATH_ONLY:
            self._replace(qualified, self._by_path_only)
        for qualified in NO_PROGRAMS:
            self._replace(qualified, lambda original: self._no_program)
        for qualified, neutral in NEUTRAL_WHILE_RUNNING.items():
            self._replace(qualified, lambda original, _neutral=neutral: _neutral)
        for qualified in CHECKED_SOURCE:
            self._replace(qualified, self._checked_source)
        for qualified, check in CHECKED_CALLS.items():
            self._replace(qualified, functools.partial(self._checked_call, check=check, name=qualified))
        for qualified, forced in FORCED_KEYWORDS.items():
            self._replace(qualified, functools.partial(_with_keywords, forced=forced))
        for qualified, make in WRAPPED_WHILE_RUNNING.items():
            self._replace(qualified, functools.partial(make, refuse=self.refuse))
        for qualified, why in NOT_SUBCLASSED.items():
            def refuse_subclass(cls, *args, _why=why, **kwargs):
                raise self.refuse(f"a subclass of {cls.__mro__[1].__name__}: {_why}")
            self._replace(qualified + ".__init_subclass__", lambda original, _off=refuse_subclass: classmethod(_off))

    def _no_program(self, *args, **kwargs):
        self.refuse(_NO_PROGRAMS_ADVICE)  # (the security event; the exception is the kernel's kind)
        exc = PermissionError(errno.EPERM, _NO_PROGRAMS_ADVICE)
        exc._sandbox_refused = True
        raise exc

    def _switched_off(self, original, *, off):
        """The refusal for a function or method; for a class (a C unpickler, whose methods
        cannot be replaced in place), a subclass whose load() refuses, and the same load()
        set on every subclass a library already derived from it."""
        if not isinstance(original, type):
            return off
        pending = list(original.__subclasses__())
        while pending:
            sub = pending.pop()
            pending.extend(sub.__subclasses__())
            if (id(sub), "load") not in self.saved and not sub.__module__.startswith("sandbox."):
                with contextlib.suppress(TypeError):  # (a C subclass: none is loaded here today)
                    self._set(sub, "load", off)
        return _refusing_subclass(original, off)

    def _replace(self, qualified: str, make) -> None:
        owner_name, _, attr = qualified.rpartition(".")
        if owner_name.partition(".")[0] not in sys.modules:
            return  # (most entries, in most runs: a library not imported; lookup() would find nothing)
        owner = sys.modules.get(owner_name) or lookup(owner_name)  # (a module, or a class)
        if owner is None or not hasattr(owner, attr):
            return
        if (id(owner), attr) not in self.saved:
            original = getattr(owner, attr)
            # (a resolve() later in this run, after an import, then finds the other bindings of
            # the original, not of this replacement: it only records what it has not seen)
            if qualified not in BY_PATH_ONLY:  # (io.open is open: library code opens descriptors with it)
                _originals.setdefault(qualified, original)
            replacement = make(original)
            if isinstance(owner, type) and isinstance(vars(owner).get(attr), (staticmethod, classmethod)) \
                    and callable(replacement) and not isinstance(replacement, (staticmethod, classmethod)):
                # (it wraps the function as the class hands it out, bound already: stored as a
                # plain function it would become a method of the class's instances)
                replacement = staticmethod(replacement)
            self._set(owner, attr, replacement)
        replacement = getattr(owner, attr)
        for module, other in other_bindings.get(qualified, ()):
            if (id(module), other) not in self.saved:
                self._set(module, other, replacement)

    def _set(self, owner, attr: str, replacement) -> None:
        # as stored (a class's staticmethod stays one); None when the class inherits it
        self.saved[(id(owner), attr)] = (owner, attr, vars(owner).get(attr))
        setattr(owner, attr, replacement)

    def _checked_call(self, original, *, check, name):
        shown = name.rpartition(".")[0] if name.endswith(".__call__") else name

        @functools.wraps(original)
        def checked(*args, **kwargs):
            why = check(*args, **kwargs)
            if why is not None:
                raise self.refuse(f"{shown}: {why}")
            return original(*args, **kwargs)
        return checked

    def _checked_source(self, original):
        @functools.wraps(original)
        def checked(*args, **kwargs):
            source = original(*args, **kwargs)
            why = generated_code.refusal(source, _expression_names(*args, **kwargs), is_door=_lambdify_door) \
                if isinstance(source, str) else None
            why = why or _printer_imports_refusal(args[0] if args else None)
            if why is not None:
                raise self.refuse(f"a library generated Python code from the snippet's names ({why}), and the "
                                  f"sandbox does not run it: {_CHECKED_SOURCE_ADVICE}")
            return source
        return checked

    def _by_path_only(self, original):
        @functools.wraps(original)
        def by_path(file, *args, **kwargs):
            if isinstance(file, int):
                raise self.refuse(_BY_PATH_ADVICE)
            return original(file, *args, **kwargs)
        by_path_ids.add(id(by_path))
        return by_path

    def __enter__(self):
        self.apply()
        return self

    def __exit__(self, *exc):
        for owner, attr, original in self.saved.values():
            by_path_ids.discard(id(getattr(owner, attr)))
            if original is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, original)
        self.saved.clear()

"""Module profiles: which modules a snippet may import, in one place.

A profile is a set of module names. The import hook in ``restricted.py`` allows a
name only if it is in the set it is given (``allowed_modules``); a dotted name such
as ``xml.etree.ElementTree`` is listed whole, because allowing a package does not
allow its submodules. The packages in ``WHOLE_PACKAGES`` are the exception: their
public submodules (``numpy.linalg``, ``email.mime.text``) come with them, and so do
those of a package the operator lists as ``pkg.*``.

``DANGEROUS`` modules are never allowed through configuration: they hand out the
process, the file system, the network, the interpreter or its frames.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable

BASIC = frozenset({
    "math", "cmath", "random", "statistics", "decimal", "fractions", "numbers",
    "collections", "collections.abc", "itertools", "functools", "operator", "heapq",
    "bisect", "copy", "array", "string", "textwrap", "re", "difflib", "unicodedata",
    "base64", "binascii", "hashlib", "hmac", "secrets", "json", "csv", "html",
    "html.parser", "xml.etree.ElementTree", "urllib.parse", "datetime", "time",
    "calendar", "uuid", "dataclasses", "enum", "typing", "abc", "contextlib", "types",
    "pprint", "reprlib", "zlib", "struct", "colorsys", "graphlib", "keyword", "ipaddress", "fnmatch",
    "tomllib", "errno",
    # settings files: parsed from text or a file object; read(path) is refused (library_policy)
    "configparser",
    # the package alone: HTTPStatus and HTTPMethod (http.client and http.server are other modules)
    "http",
    # queue: its classes only lock (threading comes in with it, but no thread is started)
    "queue",
    # Left out on purpose: timeit (compiles strings), traceback
    # (frames). gzip, bz2, lzma, zoneinfo, ast, shlex, codecs and mimetypes are subsets
    # (module_subsets.py): their functions over data, not over paths, code or registries.
})

# The libraries the data-science extra installs, whose routes around the guards were
# audited (restricted/libraries/: a table each). Others (plotly) are the operator's call
# through SANDBOX_ALLOWED_IMPORTS, unaudited: for them the kernel layers are what holds.
DATA_SCIENCE = frozenset({
    "numpy", "pandas", "scipy", "matplotlib", "matplotlib.pyplot", "sympy", "sklearn", "seaborn", "statsmodels",
})
# Imported by the snippet that asks for them, not in the fork server: together they cost the
# fork server seconds of start-up and tens of MB that most snippets never use.
IMPORTED_ON_DEMAND = frozenset({"sklearn", "seaborn", "statsmodels"})

NETWORK = frozenset({
    "urllib.request", "urllib.error", "urllib.response", "http.client", "httpx",
    "requests", "email", "socket",
})

FILESYSTEM = frozenset({
    "pathlib", "os.path", "tempfile", "shutil", "glob", "zipfile", "tarfile", "io", "gzip", "bz2", "lzma",
})

# The libraries without which a profile is pointless: switched on without them, the
# server refuses to start (the pyz, for one, carries no data-science libraries).
REQUIRED_LIBRARIES = {"data_science": ("numpy", "pandas")}
# The extra of pyproject.toml that installs a profile's libraries (install_source says how).
EXTRAS = {"data_science": "datascience"}

# The environment the numerical libraries start in, in the fork server and in every child:
# one thread each (RLIMIT_NPROC and the memory limit break their thread pools) and
# matplotlib's non-interactive backend.
LIBRARY_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "MPLBACKEND": "Agg",
}

# The switch that turns each optional profile on ("basic" is always on).
SWITCHES = {
    "data_science": "SANDBOX_ENABLE_DATA_SCIENCE",
    "network": "SANDBOX_ENABLE_NETWORK",
    "filesystem": "SANDBOX_ENABLE_FILESYSTEM",
}

PROFILES: dict[str, frozenset[str]] = {
    "basic": BASIC,
    "data_science": DATA_SCIENCE,
    "network": NETWORK,
    "filesystem": FILESYSTEM,
}

# Libraries used through their submodules (numpy.linalg, sklearn.linear_model, ...).
# SANDBOX_ALLOWED_IMPORTS=pkg.*: pkg and every submodule of it that no rule refuses by name
# (is_allowed); never a module DANGEROUS names, nor one of a profile that is off.
WILDCARD = ".*"

WHOLE_PACKAGES = frozenset({
    "numpy", "pandas", "scipy", "matplotlib", "sympy", "seaborn", "sklearn", "statsmodels",
    "plotly", "email", "httpx", "requests",
})

# Name -> why it is never allowed through configuration. A dotted name listed here
# also covers its submodules (``importlib.util``, ``multiprocessing.pool``).
DANGEROUS: dict[str, str] = {
    "os": "process, environment and file system control",
    "posix": "the os module's C core",
    "nt": "the os module's C core",
    "sys": "interpreter internals (modules, frames, recursion limit)",
    "builtins": "unrestricted builtins (eval, exec, open, __import__)",
    "subprocess": "runs programs",
    "pty": "runs programs",
    "ctypes": "calls arbitrary C functions",
    "cffi": "calls arbitrary C functions",
    "importlib": "imports any module, bypassing the allow-list",
    "imp": "imports any module, bypassing the allow-list",
    "pkgutil": "imports and lists modules",
    "zipimport": "imports code from archives",
    "runpy": "runs modules as scripts",
    "site": "edits the import path",
    "sysconfig": "host paths and build configuration",
    "code": "interactive interpreter (exec)",
    "codeop": "compiles code",
    "inspect": "frames, globals and source of any object",
    "dis": "code object internals",
    "ast": "compiles code (harmless alone, but a building block)",
    # formula strings ("y ~ I(x ** 2)") are Python, evaluated with the real builtins: statsmodels'
    # formulas reach them through a check of every term (statsmodels_table), these directly
    **dict.fromkeys(("patsy", "formulaic"),
                    "its formula strings are Python code, evaluated with the real builtins"),
    "gc": "reaches every live object",
    "traceback": "walks frames",
    "faulthandler": "writes to file descriptors, dumps frames",
    "tracemalloc": "interpreter internals",
    "pickle": "deserialisation runs arbitrary callables",
    "_pickle": "deserialisation runs arbitrary callables",
    "copyreg": "pickle registry",
    "marshal": "loads code objects",
    "shelve": "pickle on disk",
    "dbm": "files on disk",
    "signal": "signal handlers",
    "threading": "threads",
    "_thread": "threads",
    "multiprocessing": "processes",
    "concurrent": "thread and process pools",
    "asyncio": "subprocesses, sockets and threads",
    "resource": "process limits",
    "fcntl": "file descriptor control",
    "termios": "terminal control",
    "tty": "terminal control",
    "mmap": "raw memory maps",
    "select": "file descriptor polling",
    "selectors": "file descriptor polling",
    "socket": "network access",
    "ssl": "network access",
    "io": "file access",
    "platform": "runs programs to probe the host",
    "sqlite3": "databases by URI anywhere, loadable extensions (import sqlite3 gives a checked subset)",
    "webbrowser": "runs programs",
    "pdb": "debugger (exec, frames)",
    "bdb": "debugger (frames)",
    "trace": "tracing hooks (frames)",
    "profile": "profiling hooks (exec)",
    "cProfile": "profiling hooks (exec)",
    "atexit": "runs code after the snippet",
    "linecache": "reads host source files",
    # strings and names run as unrestricted Python, or any module imported by name: an operator
    # adding one of these through SANDBOX_ALLOWED_IMPORTS would open the Python layer's door
    "timeit": "compiles and runs strings as unrestricted Python (exec)",
    "doctest": "runs the examples in docstrings as unrestricted Python (exec)",
    "rlcompleter": "evaluates expressions as unrestricted Python (eval)",
    "pydoc": "imports any module by name (pydoc.locate) and runs a pager program",
    # packaging tools resolve "module:attribute" strings with the real import system
    # (setuptools.config.expand.read_attr, pkg_resources.EntryPoint.resolve) and run setup scripts
    **dict.fromkeys(("setuptools", "pkg_resources", "distutils"),
                    "imports any module named in a string and runs setup scripts as unrestricted Python"),
    "unittest": "imports any module named in a test name (loadTestsFromName); unittest.mock patches any object",
    "logging": "its handlers and formatters read files (a traceback's source) and format fields unguarded; "
               "logging.config imports and calls any function a configuration names, and listens on a socket: "
               "the sandbox's own logging subset is there without any setting",
    "warnings": "reads source files and replaces the interpreter's hooks: the sandbox's own warnings subset is "
                "there without any setting",
    "zoneinfo": "reads time zone files from any directory (reset_tzpath): the sandbox's zoneinfo subset is there "
                "without any setting",
    **dict.fromkeys(("compileall", "py_compile"), "compiles files and writes bytecode where Python imports from"),
    **dict.fromkeys(("ensurepip", "venv"), "runs pip and other programs"),
    "idlelib": "IDLE: runs code and programs",
    "antigravity": "opens a web browser (runs a program) when imported",
    "netrc": "reads the user's credentials file (~/.netrc)",
    **dict.fromkeys(("tkinter", "turtle"), "talks to the host's display server"),
    **dict.fromkeys(("readline", "curses"), "terminal control"),
    "pwd": "host user database",
    "grp": "host group database",
    "numpy.ctypeslib": "loads shared libraries",
    "numpy.f2py": "compiles and runs programs",
    "numpy.distutils": "compiles and runs programs",
    "numpy.testing": "runs programs",
    # a test runner imports the test files it is given, and the conftest.py and pytest.ini it
    # finds in the working directory, as unrestricted Python (ISV-062)
    **dict.fromkeys(("pytest", "_pytest", "sympy.testing", "sympy.utilities.runtests", "sympy.utilities.pytest",
                     "mpmath.tests"), "runs test files (and the conftest.py it finds) as unrestricted Python"),
    "sympy.parsing": "parses strings with eval",
    "sympy.external": "imports modules by name",
    "sympy.utilities.source": "imports modules by name",
    "sympy.utilities.lambdify": "generates and runs code",
    "sympy.utilities.autowrap": "writes the code it generates from symbol names to a file and compiles or imports it: "
                                "use sympy.lambdify(x, expr, 'numpy')",
    "pandas.io.pickle": "deserialisation runs arbitrary callables",
    "pandas.api.extensions": "registers accessors that write onto pandas' classes",
    # pandas' internals call compiled code with index arrays they trust their callers to
    # have checked (take_nd with an index past the array writes out of bounds)
    "pandas.core": "pandas' internals (compiled code that trusts its index arrays); use the pandas namespace: "
                   "pd.DataFrame, pd.merge, pd.api.types...",
    # LAPACK and BLAS as they are: pivot and permutation arrays are trusted (laswp, getrs),
    # and one out of range writes out of bounds; scipy.linalg's own functions wrap them
    "scipy.linalg.lapack": "raw LAPACK calls trust index arrays (write out of bounds); use scipy.linalg's functions",
    "scipy.linalg.blas": "raw BLAS calls; use scipy.linalg's functions or numpy",
    "scipy.linalg.cython_lapack": "raw LAPACK function pointers",
    "scipy.linalg.cython_blas": "raw BLAS function pointers",
    "numpy.linalg.lapack_lite": "raw LAPACK calls with the sizes the caller gives (write out of bounds); "
                                "use numpy.linalg's functions",
    "scipy.linalg.interpolative": "its routines trust the index arrays they are given (id_to_svd writes out of "
                                  "bounds); use scipy.linalg.svd or numpy.linalg.svd",
    "numpy.core": "numpy 2's forwarder to its internals (numpy._core); use the numpy namespace",
}

# Which profile provides a module: network and filesystem modules (socket, io, os.path,
# pathlib, ...) are refused as extras unless that profile is on.
_PROFILE_OF = {name: profile for profile, names in PROFILES.items() for name in names}


def _parents(name: str) -> list[str]:
    """'a.b.c' -> ['a', 'a.b', 'a.b.c']."""
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def python_layer_claim(enabled_profiles: Iterable[str], restricted: bool, extra_imports: Iterable[str] = ()) -> str:
    """What the RestrictedPython layer can honestly claim with these profiles and the
    operator's extra imports: the one sentence behind get_sandbox_info, `check` and the README."""
    claim = _profiles_claim(enabled_profiles, restricted)
    extras = sorted(extra_imports)
    if restricted and extras:
        # an unaudited package may resolve "module.attribute" strings with the real import
        # system (pydantic.ImportString, uvicorn.importer) and hand out what it finds
        claim += (f"; except for the extra imports the operator added ({', '.join(extras)}): they are not "
                  "audited, and what they reach the kernel layers alone confine")
    return claim


def _profiles_claim(enabled_profiles: Iterable[str], restricted: bool) -> str:
    if not restricted:
        return ("off (SANDBOX_RESTRICTED_PYTHON=false): snippets run real Python; the kernel layers "
                "are the only boundary")
    if "data_science" in enabled_profiles:
        return ("defence in depth: numpy, pandas, scipy, sympy, matplotlib, scikit-learn, seaborn and "
                "statsmodels carry eval, unpickling, "
                "dynamic imports and raw memory, and open the files they are given with the real open(); "
                "the known doors are refused, but the kernel layers are the boundary")
    doors = []
    if "filesystem" in enabled_profiles:
        doors.append("the filesystem profile's open(), io, pathlib, shutil, glob, tempfile, zipfile and tarfile "
                     "reach the paths the process may (/proc/self/fd/ and its own pipes included): the mount "
                     "namespace and Landlock confine them to the workspace and the read-only Python installation")
    if "network" in enabled_profiles:
        doors.append("the network profile's sockets and HTTP clients reach what the process may: its own "
                     "network namespace and the egress proxy's allow-list confine them")
    if doors:
        return ("holds on its own in these profiles except at the doors they open, which the kernel layers "
                "alone confine: " + "; ".join(doors))
    return "holds on its own in these profiles; the kernel layers are a second, independent boundary"


def danger(name: str) -> str | None:
    """Why ``name`` is dangerous (it or a parent package is in DANGEROUS), else None."""
    if any(part.startswith("_") for part in name.split(".")):
        return "private module (interpreter or C internals)"
    for prefix in _parents(name):
        if prefix in DANGEROUS:
            return DANGEROUS[prefix]
    return None


# What a snippet can write instead of a module it may not import (top-level name -> advice).
INSTEAD = {
    **dict.fromkeys(("argparse", "getopt", "optparse"),
                    "a snippet gets no command line (sys.argv == []): put the values in the code"),
    **dict.fromkeys(("threading", "_thread", "multiprocessing", "concurrent"),
                    "run the work in a plain loop, or wait on several things at once with asyncio.gather"),
    **dict.fromkeys(("subprocess", "pty"), "no program can run in the sandbox: do the work in Python"),
    **dict.fromkeys(("pickle", "_pickle", "shelve", "marshal"), "serialise with json (or pandas' to_csv/to_json)"),
    "sqlite3": "import sqlite3 itself: a subset whose connect() opens ':memory:' or a file in the snippet's "
               "directory",
    "timeit": "time the code with time.perf_counter() before and after",
    **dict.fromkeys(("unittest", "doctest", "pytest"), "check results with plain assert statements"),
    **dict.fromkeys(("inspect", "dis"), "a snippet's functions and classes are its own: call them, "
                                              "and read __name__ or __doc__"),
    "getpass": "there is no terminal: put the value in the code",
    **dict.fromkeys(("patsy", "formulaic"),
                    "write the formula for statsmodels (import statsmodels.formula.api as smf; "
                    "smf.ols('y ~ x', data=df)), which checks each term before patsy evaluates it"),
}


def import_advice(name: str, allowed: Iterable[str]) -> str:
    """Why a snippet may not import ``name`` under ``allowed``, and what would change
    that: a profile that is off names its switch, a module nothing allows says so, an
    ordinary one names SANDBOX_ALLOWED_IMPORTS, and one that is not there says that.
    (From inside the sandbox: ``allowed`` is all it knows of the server's settings.)"""
    allowed = frozenset(allowed)
    top = name.split(".")[0]
    why = danger(name)
    profile = _PROFILE_OF.get(name) or (_PROFILE_OF.get(top) if top in WHOLE_PACKAGES and why is None else None)
    if profile is not None:
        if profile == "basic" or PROFILES[profile] & allowed:
            return "this call's allowed_imports leaves it out: add it there, or leave allowed_imports out"
        return (f"it is in the {profile} profile, which is off on this server: the operator switches it on "
                f"with {SWITCHES[profile]}=true (get_sandbox_info lists the modules that are on)")
    instead = f"; instead: {INSTEAD[top]}" if top in INSTEAD else ""
    if why is not None:
        return f"no setting allows it in the sandbox ({why}){instead}"
    if not importable(top):
        return f"{top} is not installed on this server"
    real = getattr(sys.modules.get(name), "__name__", name)
    covering = next((p for p in _parents(name)[:-1] if p + WILDCARD in allowed), None)
    if covering is not None and real != name:
        return f"{name} is the module {real!s:.80}; {covering}.* admits modules under their own names only"
    whole = f", or {top}.* for {top} with all its submodules" if "." in name else ""
    return ("it is not among the modules the sandbox allows: the operator can add it with "
            f"SANDBOX_ALLOWED_IMPORTS{whole} (get_sandbox_info lists the modules that are on){instead}")


def is_allowed(name: str, allowed: Iterable[str]) -> bool:
    """Is ``name`` importable under the set ``allowed`` (exact name, a WHOLE_PACKAGES child,
    or a submodule of a ``pkg.*`` entry that the wildcard admits)?"""
    allowed = allowed if isinstance(allowed, (set, frozenset)) else frozenset(allowed)
    if not isinstance(name, str) or not name or any(not p.isidentifier() for p in name.split(".")):
        return False
    if name in allowed:
        return True
    top = name.split(".")[0]
    if top in WHOLE_PACKAGES and top in allowed and danger(name) is None:
        return True
    return any(package + WILDCARD in allowed for package in _parents(name)[:-1]) and _wildcard_admits(name)


def _wildcard_admits(name: str) -> bool:
    """A ``pkg.*`` entry admits a submodule of pkg only if no rule refuses it by name
    (DANGEROUS, private, a parent of those), it belongs to no profile (a profile's modules
    come with their profile, or listed one by one), and, once imported, it is the module of
    that name itself: a package may put another module there (six.moves.builtins is
    builtins), and such an alias is admitted only by its own name."""
    if danger(name) is not None or name in _PROFILE_OF:
        return False
    loaded = sys.modules.get(name)
    return loaded is None or getattr(loaded, "__name__", None) == name


def wildcard_package(entry: str) -> str | None:
    """``pkg`` for a SANDBOX_ALLOWED_IMPORTS entry ``pkg.*`` (``""`` for ``*`` alone), else None."""
    if entry == "*":
        return ""
    return entry[: -len(WILDCARD)] if entry.endswith(WILDCARD) else None


def permits(name: str, allowed: Iterable[str]) -> bool:
    """The import-time check: allowed, and if dangerous (socket, io, os.path) only as a member
    of a profile, so an "os" that slipped into ``allowed`` is still refused."""
    if not is_allowed(name, allowed):
        return False
    return danger(name) is None or name in _PROFILE_OF


def leads_to_allowed(name: str, allowed: Iterable[str]) -> bool:
    """Is ``name`` a package on the way to an allowed module (``xml``, ``xml.etree`` for
    ``xml.etree.ElementTree``)? Such a package is usable only for reaching that module."""
    prefix = name + "."
    return any(m.startswith(prefix) and permits(m, allowed) for m in allowed)


def _enabled(enabled_profiles: Iterable[str]) -> list[str]:
    names = list(enabled_profiles)
    unknown = [n for n in names if n not in PROFILES]
    if unknown:
        raise ValueError(f"unknown profile(s): {', '.join(map(str, unknown))}; known: {', '.join(PROFILES)}")
    return names


def refusal_reason(name: str, *, network: bool = False, filesystem: bool = False) -> str | None:
    """Why an extra module ``name`` (or ``pkg.*``) is refused, or None when it may be added."""
    package = wildcard_package(name) if isinstance(name, str) else None
    if package == "":
        return ("a wildcard names its package, as packaging.*: '*' alone would admit every module; "
                "list the packages the snippets need")
    if package is not None:
        why = refusal_reason(package, network=network, filesystem=filesystem)
        return None if why is None else f"{package} itself is refused: {why}"
    if not isinstance(name, str) or not name or any(not p.isidentifier() for p in name.split(".")):
        return "not a module name"
    why = danger(name)
    profile = _PROFILE_OF.get(name)
    if why is None and profile not in ("network", "filesystem"):
        return None
    if profile == "network" and network or profile == "filesystem" and filesystem:
        return None
    if profile in ("network", "filesystem"):  # host access: only with the profile that grants it
        return f"only available with the {profile} profile"
    return why


def check_extra_imports(names: Iterable[str], *, network: bool = False,
                        filesystem: bool = False) -> list[tuple[str, str]]:
    """The extra modules (SANDBOX_ALLOWED_IMPORTS) that are refused, as (name, reason) pairs.

    Members of the network profile (``socket``, ``requests``, ...) are refused unless
    ``network`` is true, members of the filesystem profile (``io``, ``os.path``, ``pathlib``,
    ...) unless ``filesystem`` is.
    """
    refused = []
    for name in names:
        why = refusal_reason(name, network=network, filesystem=filesystem)
        if why is not None:
            refused.append((name, why))
    return refused


def allowed_modules(enabled_profiles: Iterable[str], extra: Iterable[str] = ()) -> frozenset[str]:
    """The union of the enabled profiles plus the extra names that are not refused.

    Dangerous extras are dropped silently here; configuration should call
    ``check_extra_imports`` first to report them.
    """
    profiles = _enabled(enabled_profiles)
    modules: set[str] = set()
    for profile in profiles:
        modules |= PROFILES[profile]
    network, filesystem = "network" in profiles, "filesystem" in profiles
    for name in extra:
        if refusal_reason(name, network=network, filesystem=filesystem) is None:
            modules.add(name)
            if wildcard_package(name):  # pkg.* is pkg with its submodules
                modules.add(wildcard_package(name))
    return frozenset(modules)


def importable(name: str) -> bool:
    """Can ``name`` be imported here? Never imports a dangerous module to find out.

    ``find_spec`` imports the parent packages of a dotted name, so those are checked first.
    """
    if not isinstance(name, str) or not name or any(not p.isidentifier() for p in name.split(".")):
        return False
    if name in sys.modules:
        return sys.modules[name] is not None
    if any(danger(p) and p not in sys.modules for p in _parents(name)[:-1]):
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except Exception:  # ImportError, a non-package parent, a parent that fails on import
        return False


def profile_modules_available(profile: str) -> list[str]:
    """The modules of ``profile`` that are installed here, sorted."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile: {profile!r}")
    return sorted(name for name in PROFILES[profile] if importable(name))

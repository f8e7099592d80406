"""Modules that are refused as a whole but whose everyday part agents reach for:
`import sys` for `print(..., file=sys.stderr)` and `sys.version_info`, `import io`
for `io.StringIO` without the filesystem profile, `import os` for `os.path.join`,
`os.getcwd()` and `os.makedirs("out")`. The import hook hands out a small read-only
object with exactly the names below (sys.stdout and sys.stderr may be set, as in
Python); any other name is refused with the list of what is there.
"""

from __future__ import annotations

import importlib
import io
import os
import sys

from sandbox.restricted.subsets import snippet_ast
from sandbox.restricted import snippet_files
from sandbox.restricted.subsets import snippet_traceback
from sandbox.restricted import stand_ins
from sandbox.restricted.base import RESTRICTED_RECURSION_LIMIT

# The deepest recursion sys.setrecursionlimit gives a snippet (a larger limit is taken as
# this one, as `sys.setrecursionlimit(10**6)` usually means "enough"): each of its calls
# takes two or three frames under the guards, through C, and on Python 3.10 about 6,000
# levels of lambdas overflow the C stack (3.13 stops nested method calls near 4,900 with
# a RecursionError of its own): tests/restricted/test_rp_errors.py recurses that deep on each Python.
MAX_SNIPPET_RECURSION = 5_000
_FRAMES_BESIDE = RESTRICTED_RECURSION_LIMIT - 2 * 1000   # the sandbox's own frames under the snippet

# module -> the names a snippet gets from it without the module's profile
SUBSETS = {
    "sys": ("stdout", "stderr", "version", "version_info", "hexversion", "maxsize", "float_info", "int_info",
            "platform", "byteorder", "argv", "getrecursionlimit", "implementation", "float_repr_style",
            "maxunicode", "exit", "setrecursionlimit", "getsizeof", "getdefaultencoding",
            # what CPython's own "Exceeds the limit (4300 digits)" error tells the snippet to call
            "get_int_max_str_digits", "set_int_max_str_digits",
            # the exception being handled, without its traceback object (snippet_traceback)
            "exc_info", "exception"),
    "io": ("StringIO", "BytesIO", "SEEK_SET", "SEEK_CUR", "SEEK_END", "UnsupportedOperation"),
    # and the functions over files of snippet_files, where the snippet has a directory
    "os": ("path", "sep", "altsep", "extsep", "pathsep", "linesep", "curdir", "pardir", "name", "devnull",
           "getcwd", "getenv", "environ", "cpu_count"),
    # path arithmetic (abspath and relpath read only the current directory)
    "os.path": ("join", "split", "splitext", "basename", "dirname", "normpath", "normcase", "isabs",
                "commonprefix", "commonpath", "relpath", "abspath", "sep", "extsep", "curdir", "pardir"),
    # coroutines on a private event loop; the loop itself never reaches the snippet (DENIED_TYPES)
    "asyncio": ("run", "gather", "sleep", "wait_for", "wait", "create_task", "as_completed", "shield",
                "current_task", "Queue", "LifoQueue", "PriorityQueue", "QueueEmpty", "QueueFull", "Lock", "Event",
                "Semaphore", "BoundedSemaphore", "Condition", "TimeoutError", "CancelledError", "InvalidStateError",
                "iscoroutine", "iscoroutinefunction", "FIRST_COMPLETED", "FIRST_EXCEPTION", "ALL_COMPLETED",
                "timeout", "TaskGroup"),
    # the sandbox's own versions (snippet_*.py, imported by the fork server: PRELOADED below)
    "logging": ("CRITICAL", "FATAL", "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "NOTSET", "getLogger",
                "basicConfig", "debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log",
                "disable", "getLevelName", "StreamHandler", "FileHandler", "NullHandler", "Handler", "Formatter"),
    "warnings": ("warn", "simplefilter", "filterwarnings", "resetwarnings", "catch_warnings"),
    "traceback": ("format_exc", "print_exc", "format_exception", "print_exception", "format_exception_only",
                  # over a summary of the snippet's own frames (exc.__traceback__: snippet_traceback)
                  "extract_tb", "format_tb", "print_tb", "format_list", "StackSummary", "FrameSummary"),
    # compression of bytes in memory (the filesystem profile has the whole modules, files included)
    "gzip": ("compress", "decompress", "BadGzipFile", "GzipFile"),
    "bz2": ("compress", "decompress"),
    "lzma": ("compress", "decompress", "LZMAError", "FORMAT_AUTO", "FORMAT_XZ", "FORMAT_ALONE", "FORMAT_RAW",
             "CHECK_NONE", "CHECK_CRC32", "CHECK_CRC64", "CHECK_SHA256"),
    # time zones by name (a key is checked before it is looked up; reset_tzpath is not here)
    "zoneinfo": ("ZoneInfo", "ZoneInfoNotFoundError", "available_timezones"),
    # paths, and files in the snippet's directory (snippet_pathlib: the filesystem profile has the whole module)
    "pathlib": ("Path", "PosixPath", "PurePath", "PurePosixPath", "PureWindowsPath"),
    "glob": ("glob", "iglob", "escape"),
    # files and trees copied, moved and removed, temporary ones made (snippet_tempfiles)
    "shutil": ("copyfileobj", "copyfile", "copy", "copy2", "copytree", "rmtree", "move", "ignore_patterns", "Error",
               "SameFileError"),
    "tempfile": ("gettempdir", "mkdtemp", "TemporaryDirectory", "NamedTemporaryFile", "TemporaryFile"),
    # timing a function (snippet_timeit: never a string of code)
    "timeit": ("timeit", "repeat", "default_timer"),
    # SQL over a database in memory or in the snippet's directory (snippet_sqlite: an authorizer
    # refuses ATTACH, virtual tables, extensions and the pragmas that reach files)
    "sqlite3": ("connect", "Connection", "Cursor", "Row", "Error", "Warning", "InterfaceError", "DatabaseError",
                "DataError", "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
                "NotSupportedError", "PARSE_DECLTYPES", "PARSE_COLNAMES", "register_adapter", "register_converter",
                "complete_statement", "sqlite_version", "sqlite_version_info", "apilevel", "paramstyle",
                "threadsafety", "Binary", "Date", "Time", "Timestamp", "DateFromTicks", "TimeFromTicks",
                "TimestampFromTicks"),
    # which Python, on which system and machine ("print the environment" snippets)
    "platform": ("python_version", "python_version_tuple", "python_implementation", "system", "machine"),
    # code parsed into a tree, walked, changed and unparsed (snippet_ast: never compiled nor run)
    "ast": snippet_ast.NAMES,
    # command lines split and quoted (the shlex class, whose sourcehook opens files, is not here)
    "shlex": ("split", "quote", "join"),
    # the codecs over bytes and text: rot13, hex, base64, zlib... (not codecs.open, nor the registries)
    "codecs": ("encode", "decode", "BOM", "BOM_UTF8", "BOM_UTF16", "BOM_UTF16_LE", "BOM_UTF16_BE", "BOM_UTF32",
               "BOM_UTF32_LE", "BOM_UTF32_BE"),
    # a file name's type from Python's own table (no file of the host is read for it)
    "mimetypes": ("guess_type", "guess_extension", "guess_all_extensions"),
    # a collection now (what the snippet's allocations would trigger anyway), nothing of the collector's
    "gc": ("collect",),
    # test cases of the snippet's own, loaded from their classes and run (snippet_unittest)
    "unittest": ("TestCase", "TestSuite", "TestLoader", "TextTestRunner", "TextTestResult", "TestResult",
                 "FunctionTestCase", "main", "skip", "skipIf", "skipUnless", "expectedFailure", "SkipTest"),
    # signatures and predicates, for decorators and dispatch; no frame, source, member walk or
    # annotation evaluation (signature takes no eval_str; Signature.from_callable is refused)
    "inspect": ("signature", "Signature", "Parameter", "BoundArguments", "isclass", "isfunction", "ismethod",
                "isroutine", "isbuiltin", "iscoroutinefunction", "isgeneratorfunction", "isasyncgenfunction",
                "iscoroutine", "isgenerator", "isasyncgen", "isawaitable", "isabstract", "getdoc", "cleandoc"),
}
WHY = {
    "sys": "the rest of sys reaches the interpreter's internals (modules, frames, hooks)",
    "io": "the rest of io opens files: switch on the filesystem profile (SANDBOX_ENABLE_FILESYSTEM) for them",
    "platform": "the rest of platform runs programs (uname -p, file) or reads the host's files to describe it; "
                "the host's kernel and name are not the snippet's to know",
    "os": "the rest of os controls the process and the host; for files use open() and the functions listed",
    "os.path": "the rest of os.path reads the file system outside the snippet's directory",
    "asyncio": "the rest of asyncio reaches the event loop: subprocesses, sockets, threads and file descriptors",
    "logging": "the rest of logging hands out handlers and records that reach files and frames",
    "warnings": "the rest of warnings reads source files and replaces the interpreter's hooks",
    "traceback": "the rest of traceback walks frames and reads source files",
    **dict.fromkeys(("gzip", "bz2", "lzma"), "the rest of it opens files: compress and decompress bytes, or switch "
                                              "on the filesystem profile (SANDBOX_ENABLE_FILESYSTEM) for files"),
    "zoneinfo": "the rest of zoneinfo changes where time zone files are read from",
    "shutil": "the rest of shutil runs or looks for programs, archives and reaches the host's disks; here it "
              "works in the snippet's directory only: switch on the filesystem profile (SANDBOX_ENABLE_FILESYSTEM) "
              "for the whole module",
    "tempfile": "mkstemp and the rest hand out file descriptors or change where temporary files go; here they are "
                "made in the snippet's directory: switch on the filesystem profile (SANDBOX_ENABLE_FILESYSTEM) for "
                "the whole module",
    "sqlite3": "the rest of sqlite3 opens databases by URI, loads extensions and replaces the authorizer; here "
               "connect() opens ':memory:' or a file in the snippet's directory",
    "timeit": "the rest of timeit compiles strings and runs them as unrestricted Python: time a function",
    "ast": "the rest of ast compiles trees to code; here a tree is data: parse, walk or visit it, change it, "
           "and unparse it back to text (literal_eval reads a literal from text)",
    "shlex": "the rest of shlex (its shlex class) reads the files its input names",
    "unittest": "the rest of unittest imports and runs tests by name, from other modules and from files "
                "(discover), and mock patches any object; here tests come from the snippet's own TestCase "
                "classes: unittest.main(), or TextTestRunner().run(TestLoader().loadTestsFromTestCase(MyTests))",
    "codecs": "the rest of codecs opens files and changes the interpreter's codec and error-handler registries",
    "mimetypes": "the rest of mimetypes reads the host's type files and changes the module's tables",
    "gc": "the rest of gc reaches every live object (get_objects, get_referrers) and changes when the sandbox "
          "collects",
    "inspect": "the rest of inspect reaches frames, globals and source files (stack, currentframe, getsource, "
               "getmembers) and evaluates annotation text (get_annotations); a snippet's functions and classes "
               "are its own: call them, and read __name__ or __doc__",
    **dict.fromkeys(("pathlib", "glob"), "here it reaches the snippet's directory only, as open() does: switch on "
                                         "the filesystem profile (SANDBOX_ENABLE_FILESYSTEM) for the whole module"),
}


# How a subset with many names is listed (in get_sandbox_info and in a refusal)
SHOWN = {"ast": (*snippet_ast.FUNCTIONS, "NodeVisitor", "NodeTransformer",
                 "AST and every node class (Module, FunctionDef, Name, Call, Constant...)")}


def shown_names(name: str) -> list:
    return sorted(SHOWN.get(name) or SUBSETS[name])


# What the subsets are made of, imported by the fork server: a snippet's first import of one
# then brings no new module into its child, where any new module makes the child resolve the
# library tables again over every loaded module (about 10 ms of copied memory: bench/README.md).
# Not asyncio (47 modules: a choice to make with figures on how often agents write async code).
PRELOADED = ("sandbox.restricted.subsets.snippet_sqlite", "sandbox.restricted.subsets.snippet_gzip", "sandbox.restricted.subsets.snippet_unittest", "sandbox.restricted.subsets.snippet_pathlib", "sandbox.restricted.subsets.snippet_glob", "sandbox.restricted.subsets.snippet_tempfiles",
             "sandbox.restricted.subsets.snippet_timeit", "sandbox.restricted.subsets.snippet_logging", "sandbox.restricted.subsets.snippet_warnings", "zoneinfo", "gzip",
             "bz2", "lzma", "platform", "shlex", "mimetypes",
             # the codecs a snippet names most (codecs.encode(s, "rot13"), "hex", "base64", "zlib")
             "encodings.rot_13", "encodings.hex_codec", "encodings.base64_codec", "encodings.zlib_codec")

# module -> (qualified name of a type whose instances no guard hands out, once the module is in use)
DENIED_TYPES = {"asyncio": ("asyncio.AbstractEventLoop",)}


class Stream:
    """sys.stdout / sys.stderr for a snippet: write and flush, not the file object
    (whose buffer, raw file and class would reach the process's descriptors)."""

    __slots__ = ("__stream",)

    def __init__(self, stream):
        object.__setattr__(self, "_Stream__stream", stream)

    def write(self, text) -> int:
        return object.__getattribute__(self, "_Stream__stream").write(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        object.__getattribute__(self, "_Stream__stream").flush()

    def isatty(self) -> bool:
        return False

    encoding = "utf-8"


class StandardStream:
    """sys.stdout or sys.stderr as the subset gives it: read at each use, as in Python
    (inside contextlib.redirect_stdout(buf) it is buf, else the wrapper above), and
    settable (sys.stdout = buf; the run puts the real one back when it ends)."""

    __slots__ = ("name", "original", "wrapper")

    def __init__(self, name: str):
        self.name, self.original = name, getattr(sys, name)
        self.wrapper = Stream(self.original)

    def get(self):
        current = getattr(sys, self.name)
        if current is self.original:
            return self.wrapper
        # a stream over a file descriptor is never handed out itself (whoever put it there)
        return Stream(current) if isinstance(current, (io.TextIOWrapper, io.BufferedIOBase, io.RawIOBase)) \
            and not isinstance(current, io.BytesIO) else current

    def set(self, value) -> None:
        setattr(sys, self.name, self.original if value is self.wrapper else value)


class ModuleSubset:
    """A read-only module of a few names (and sys's two settable streams)."""

    __slots__ = ("__name", "__values")

    def __init__(self, *args, **kwargs):
        # type(sys) reaches the class: a subset is made by _subset() only
        raise TypeError("modules cannot be created by the snippet: import them")

    def __reduce_ex__(self, protocol):  # copy would make a subset without a name or values
        raise TypeError("modules cannot be copied: use the module itself")

    def __getattr__(self, attr):
        values = object.__getattribute__(self, "_ModuleSubset__values")
        if attr in values:
            value = values[attr]
            return value.get() if type(value) is StandardStream else value
        name = object.__getattribute__(self, "_ModuleSubset__name")
        raise AttributeError(f"{name}.{attr} is not available in the sandbox ({WHY[name]}); {name} here has: "
                             + ", ".join(sorted(values) if name not in SHOWN else shown_names(name)))

    def __setattr__(self, attr, value):
        stream = object.__getattribute__(self, "_ModuleSubset__values").get(attr)
        if type(stream) is StandardStream:
            stream.set(value)
            return
        name = object.__getattribute__(self, "_ModuleSubset__name")
        raise AttributeError(f"cannot set {name}.{attr!s:.80}: this module is read-only; keep your own value in a "
                             "variable" + (" (os.environ['NAME'] = value changes the environment's copy)"
                                           if name == "os" else ""))

    def __delattr__(self, attr):
        raise AttributeError(f"cannot delete {attr!s:.80}: this module is read-only")

    def __repr__(self) -> str:
        return f"<module {object.__getattribute__(self, '_ModuleSubset__name')!r} (a sandbox subset)>"


def _subset(name: str, values: dict) -> ModuleSubset:
    made = object.__new__(ModuleSubset)
    object.__setattr__(made, "_ModuleSubset__name", name)
    object.__setattr__(made, "_ModuleSubset__values", values)
    return made


def _recursion_limit_functions() -> dict:
    """sys.getrecursionlimit and setrecursionlimit in the snippet's frames (two of
    the interpreter's each), between 100 and MAX_SNIPPET_RECURSION; the limit goes
    back when the run ends."""
    def getrecursionlimit() -> int:
        return max(1, (sys.getrecursionlimit() - _FRAMES_BESIDE) // 2)

    def setrecursionlimit(limit) -> None:
        if not isinstance(limit, int) or isinstance(limit, bool):
            raise TypeError(f"'{type(limit).__name__}' object cannot be interpreted as an integer")
        if limit < 1:
            raise ValueError("recursion limit must be greater or equal than 1")
        # (no lower than 100: the sandbox reports the result in these frames too)
        sys.setrecursionlimit(2 * min(max(int(limit), 100), MAX_SNIPPET_RECURSION) + _FRAMES_BESIDE)

    return {"getrecursionlimit": getrecursionlimit, "setrecursionlimit": setrecursionlimit}


_ZONE_INFO: dict = {}


def _zone_info_by_exact_key(real: type) -> type:
    """zoneinfo.ZoneInfo taking its key as an exact str: ZoneInfo checks a key with the
    key's own methods (startswith, split, len) before it opens the file the key names, and
    a str subclass of the snippet's could pass a key that the file lookup reads otherwise
    (`../../etc/passwd` as a time zone file). One class per process: isinstance holds."""
    made = _ZONE_INFO.get("class")
    if made is None:
        def exact(key):
            return str.__str__(key) if isinstance(key, str) else key

        class ZoneInfo(real):
            def __new__(cls, key):
                return super().__new__(cls, exact(key))

            @classmethod
            def no_cache(cls, key):
                return super().no_cache(exact(key))

        ZoneInfo.__module__, ZoneInfo.__doc__ = "zoneinfo", real.__doc__
        made = _ZONE_INFO["class"] = ZoneInfo
        stand_ins.hide(real, ZoneInfo)   # (type(tzinfo) of a library's zone: this class, not the real one)
    return made


def _mime_type_functions(mimetypes) -> dict:
    """guess_type and the rest, over a table of Python's defaults: the module's own
    functions first read /etc/mime.types and the other files the host has."""
    initialised = mimetypes.inited
    mimetypes.inited = True   # (MimeTypes() would otherwise read those files first, for the module)
    try:
        table = mimetypes.MimeTypes()
    finally:
        mimetypes.inited = initialised
    return {attr: getattr(table, attr) for attr in SUBSETS["mimetypes"]}


def _signature_as_written(inspect, refuse):
    def signature(obj, *, follow_wrapped=True, **evaluation):
        """inspect.signature(obj): annotations as they are, never evaluated (eval_str, with
        its globals and locals, would run annotation text, the snippet's included, as
        unrestricted Python)."""
        if evaluation:
            raise refuse(f"inspect.signature({', '.join(evaluation)}=...): annotations are not evaluated in the "
                         "sandbox; they come back as written (a class, or the text)")
        return inspect.signature(obj, follow_wrapped=bool(follow_wrapped))
    return signature


def names(subset: ModuleSubset) -> list:
    """The names a subset has."""
    return list(object.__getattribute__(subset, "_ModuleSubset__values"))


def values(subset: ModuleSubset) -> list:
    """What a subset hands out (sys's streams as their holders)."""
    return list(object.__getattribute__(subset, "_ModuleSubset__values").values())


def make(name: str, files: str | None = None, refuse=None, formatter=None, snippet_open=None,
         snippet_names=None) -> ModuleSubset:
    """The subset of `name` as this process sees it now (sys.stdout and sys.stderr
    are the snippet's own streams by then). `files` and `refuse`: the snippet's
    directory (snippet_files) and how to refuse a path outside it; `formatter`: the
    execution's guarded string.Formatter class; `snippet_open`: the snippet's open();
    `snippet_names()`: the running snippet's globals."""
    if name == "logging":
        from sandbox.restricted.subsets import snippet_logging
        return _subset(name, snippet_logging.values(formatter, snippet_open))
    if name == "warnings":
        from sandbox.restricted.subsets import snippet_warnings
        return _subset(name, snippet_warnings.values())
    if name in ("pathlib", "glob", "shutil", "tempfile"):  # (over the snippet's directory)
        from sandbox.restricted.subsets import snippet_glob
        from sandbox.restricted.subsets import snippet_pathlib
        from sandbox.restricted.subsets import snippet_tempfiles
        make_values = {"pathlib": snippet_pathlib.values, "glob": snippet_glob.values,
                       "shutil": snippet_tempfiles.shutil_values, "tempfile": snippet_tempfiles.tempfile_values}[name]
        return _subset(name, make_values(snippet_files.SnippetFiles(files, refuse, snippet_open, name)))
    if name == "sqlite3":
        from sandbox.restricted.subsets import snippet_sqlite
        return _subset(name, snippet_sqlite.values(files, refuse))
    if name == "timeit":
        from sandbox.restricted.subsets import snippet_timeit
        return _subset(name, snippet_timeit.values(refuse))
    if name == "traceback":
        return _subset(name, snippet_traceback.values())
    if name == "ast":
        return _subset(name, snippet_ast.values())
    if name == "unittest":
        from sandbox.restricted.subsets import snippet_unittest
        return _subset(name, snippet_unittest.values(refuse, snippet_names, lambda: StandardStream("stderr").get()))
    if name == "asyncio":
        from sandbox.restricted.subsets import snippet_asyncio
        return _subset(name, snippet_asyncio.values())
    module = {"sys": sys, "io": io, "os": os, "os.path": os.path}.get(name) or importlib.import_module(name)
    values = {attr: getattr(module, attr) for attr in SUBSETS[name] if hasattr(module, attr)}
    if name == "sys":
        values.update(argv=[], stdout=StandardStream("stdout"), stderr=StandardStream("stderr"),
                      exc_info=snippet_traceback.exc_info, **_recursion_limit_functions())
        if "exception" in values:
            values["exception"] = snippet_traceback.exception
    if name == "gzip":   # (over a file object only: snippet_gzip)
        from sandbox.restricted.subsets import snippet_gzip
        values["GzipFile"] = snippet_gzip.GzipFile
    if name == "zoneinfo":
        values["ZoneInfo"] = _zone_info_by_exact_key(module.ZoneInfo)
    if name == "mimetypes":
        values = _mime_type_functions(module)
    if name == "inspect":
        values["signature"] = _signature_as_written(module, refuse)
    if name in ("os", "os.path"):
        os_functions, path_functions = snippet_files.file_functions(files, refuse)
        path = {attr: getattr(os.path, attr) for attr in SUBSETS["os.path"]}
        path.update(path_functions)
        if name == "os.path":
            values = path
        else:
            values.update(os_functions, path=_subset("os.path", path), environ=dict(os.environ))
    return _subset(name, values)

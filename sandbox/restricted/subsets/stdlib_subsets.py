"""The subsets made of the real module's own names (sys, io, os, os.path, compression,
time zones, platform, shlex, codecs, mimetypes, gc, inspect): agents reach for their
everyday part (`print(..., file=sys.stderr)`, `io.StringIO`, `os.path.join`), which
needs no code of the sandbox's beyond a few wrappers, written here."""

from __future__ import annotations

import importlib
import io
import os
import sys

from sandbox.restricted import snippet_files
from sandbox.restricted import stand_ins
from sandbox.restricted.base import RESTRICTED_RECURSION_LIMIT
from sandbox.restricted.subsets import snippet_traceback
from sandbox.restricted.subsets.streams import StandardStream
from sandbox.restricted.subsets.subset import Execution, Subset

# The deepest recursion sys.setrecursionlimit gives a snippet (a larger limit is taken as
# this one, as `sys.setrecursionlimit(10**6)` usually means "enough"): each of its calls
# takes two or three frames under the guards, through C, and on Python 3.10 about 6,000
# levels of lambdas overflow the C stack (3.13 stops nested method calls near 4,900 with
# a RecursionError of its own): tests/restricted/test_rp_errors.py recurses that deep on each Python.
MAX_SNIPPET_RECURSION = 5_000
_FRAMES_BESIDE = RESTRICTED_RECURSION_LIMIT - 2 * 1000   # the sandbox's own frames under the snippet


def _module_named(name: str):
    """The real module, imported when a snippet first imports its subset."""
    return {"sys": sys, "io": io, "os": os, "os.path": os.path}.get(name) or importlib.import_module(name)


def _copied(name: str):
    """A subset's values taken from the real module as they are."""
    return lambda execution: vars(_module_named(name))


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


def _sys_values(execution: Execution) -> dict:
    values = dict(vars(sys), argv=[], stdout=StandardStream("stdout"), stderr=StandardStream("stderr"),
                  exc_info=snippet_traceback.exc_info, **_recursion_limit_functions())
    if hasattr(sys, "exception"):
        values["exception"] = snippet_traceback.exception
    return values


def _os_values(execution: Execution) -> dict:
    """os's names (path: the os.path subset, which the registry puts in), and the
    functions over the snippet's files, never the real ones of the same names."""
    os_functions, _ = snippet_files.file_functions(execution.files, execution.refuse)
    values = {attr: getattr(os, attr) for attr in OS.names if attr != "path" and hasattr(os, attr)}
    return dict(values, **os_functions, environ=dict(os.environ))


def _os_path_values(execution: Execution) -> dict:
    _, path_functions = snippet_files.file_functions(execution.files, execution.refuse)
    return dict({attr: getattr(os.path, attr) for attr in OS_PATH.names}, **path_functions)


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


def _zoneinfo_values(execution: Execution) -> dict:
    module = _module_named("zoneinfo")
    return dict(vars(module), ZoneInfo=_zone_info_by_exact_key(module.ZoneInfo))


def _mimetypes_values(execution: Execution) -> dict:
    """guess_type and the rest, over a table of Python's defaults: the module's own
    functions first read /etc/mime.types and the other files the host has."""
    mimetypes = _module_named("mimetypes")
    initialised = mimetypes.inited
    mimetypes.inited = True   # (MimeTypes() would otherwise read those files first, for the module)
    try:
        table = mimetypes.MimeTypes()
    finally:
        mimetypes.inited = initialised
    return {attr: getattr(table, attr) for attr in MIMETYPES.names}


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


def _inspect_values(execution: Execution) -> dict:
    inspect = _module_named("inspect")
    return dict(vars(inspect), signature=_signature_as_written(inspect, execution.refuse))


_COMPRESSION_WHY = ("the rest of it opens files: compress and decompress bytes, or switch on the filesystem profile "
                    "(SANDBOX_ENABLE_FILESYSTEM) for files")

SYS = Subset(
    "sys", ("stdout", "stderr", "version", "version_info", "hexversion", "maxsize", "float_info", "int_info",
            "platform", "byteorder", "argv", "getrecursionlimit", "implementation", "float_repr_style",
            "maxunicode", "exit", "setrecursionlimit", "getsizeof", "getdefaultencoding",
            # what CPython's own "Exceeds the limit (4300 digits)" error tells the snippet to call
            "get_int_max_str_digits", "set_int_max_str_digits",
            # the exception being handled, without its traceback object (snippet_traceback)
            "exc_info", "exception"),
    "the rest of sys reaches the interpreter's internals (modules, frames, hooks)", _sys_values)
IO = Subset(
    "io", ("StringIO", "BytesIO", "SEEK_SET", "SEEK_CUR", "SEEK_END", "UnsupportedOperation"),
    "the rest of io opens files: switch on the filesystem profile (SANDBOX_ENABLE_FILESYSTEM) for them",
    _copied("io"))
OS = Subset(
    # and the functions over files of snippet_files, where the snippet has a directory
    "os", ("path", "sep", "altsep", "extsep", "pathsep", "linesep", "curdir", "pardir", "name", "devnull",
           "getcwd", "getenv", "environ", "cpu_count"),
    "the rest of os controls the process and the host; for files use open() and the functions listed",
    _os_values, with_files=snippet_files.OS_FILE_FUNCTIONS)
OS_PATH = Subset(
    # path arithmetic (abspath and relpath read only the current directory)
    "os.path", ("join", "split", "splitext", "basename", "dirname", "normpath", "normcase", "isabs",
                "commonprefix", "commonpath", "relpath", "abspath", "sep", "extsep", "curdir", "pardir"),
    "the rest of os.path reads the file system outside the snippet's directory",
    _os_path_values, with_files=snippet_files.PATH_QUERIES)
# compression of bytes in memory (the filesystem profile has the whole modules, files included)
BZ2 = Subset("bz2", ("compress", "decompress"), _COMPRESSION_WHY, _copied("bz2"))
LZMA = Subset(
    "lzma", ("compress", "decompress", "LZMAError", "FORMAT_AUTO", "FORMAT_XZ", "FORMAT_ALONE", "FORMAT_RAW",
             "CHECK_NONE", "CHECK_CRC32", "CHECK_CRC64", "CHECK_SHA256"),
    _COMPRESSION_WHY, _copied("lzma"))
ZONEINFO = Subset(
    # time zones by name (a key is checked before it is looked up; reset_tzpath is not here)
    "zoneinfo", ("ZoneInfo", "ZoneInfoNotFoundError", "available_timezones"),
    "the rest of zoneinfo changes where time zone files are read from", _zoneinfo_values)
PLATFORM = Subset(
    # which Python, on which system and machine ("print the environment" snippets)
    "platform", ("python_version", "python_version_tuple", "python_implementation", "system", "machine"),
    "the rest of platform runs programs (uname -p, file) or reads the host's files to describe it; "
    "the host's kernel and name are not the snippet's to know", _copied("platform"))
SHLEX = Subset(
    # command lines split and quoted (the shlex class, whose sourcehook opens files, is not here)
    "shlex", ("split", "quote", "join"), "the rest of shlex (its shlex class) reads the files its input names",
    _copied("shlex"))
CODECS = Subset(
    # the codecs over bytes and text: rot13, hex, base64, zlib... (not codecs.open, nor the registries)
    "codecs", ("encode", "decode", "BOM", "BOM_UTF8", "BOM_UTF16", "BOM_UTF16_LE", "BOM_UTF16_BE", "BOM_UTF32",
               "BOM_UTF32_LE", "BOM_UTF32_BE"),
    "the rest of codecs opens files and changes the interpreter's codec and error-handler registries",
    _copied("codecs"))
MIMETYPES = Subset(
    # a file name's type from Python's own table (no file of the host is read for it)
    "mimetypes", ("guess_type", "guess_extension", "guess_all_extensions"),
    "the rest of mimetypes reads the host's type files and changes the module's tables", _mimetypes_values)
GC = Subset(
    # a collection now (what the snippet's allocations would trigger anyway), nothing of the collector's
    "gc", ("collect",),
    "the rest of gc reaches every live object (get_objects, get_referrers) and changes when the sandbox collects",
    _copied("gc"))
INSPECT = Subset(
    # signatures and predicates, for decorators and dispatch; no frame, source, member walk or
    # annotation evaluation (signature takes no eval_str; Signature.from_callable is refused)
    "inspect", ("signature", "Signature", "Parameter", "BoundArguments", "isclass", "isfunction", "ismethod",
                "isroutine", "isbuiltin", "iscoroutinefunction", "isgeneratorfunction", "isasyncgenfunction",
                "iscoroutine", "isgenerator", "isasyncgen", "isawaitable", "isabstract", "getdoc", "cleandoc"),
    "the rest of inspect reaches frames, globals and source files (stack, currentframe, getsource, "
    "getmembers) and evaluates annotation text (get_annotations); a snippet's functions and classes "
    "are its own: call them, and read __name__ or __doc__", _inspect_values)

"""Modules that are refused as a whole but whose everyday part agents reach for:
`import sys` for `print(..., file=sys.stderr)` and `sys.version_info`, `import io`
for `io.StringIO` without the filesystem profile, `import os` for `os.path.join`,
`os.getcwd()` and `os.makedirs("out")`. The import hook hands out a small read-only
object with exactly the names its subset declares (sys.stdout and sys.stderr may be
set, as in Python); any other name is refused with the list of what is there.

Each subset is declared once, by the module that makes it (a `subset.Subset`); this
module collects the declarations and makes the read-only objects.
"""

from __future__ import annotations

from sandbox.restricted.subsets import snippet_ast
from sandbox.restricted.subsets import snippet_asyncio
from sandbox.restricted.subsets import snippet_glob
from sandbox.restricted.subsets import snippet_gzip
from sandbox.restricted.subsets import snippet_logging
from sandbox.restricted.subsets import snippet_pathlib
from sandbox.restricted.subsets import snippet_sqlite
from sandbox.restricted.subsets import snippet_tempfiles
from sandbox.restricted.subsets import snippet_timeit
from sandbox.restricted.subsets import snippet_traceback
from sandbox.restricted.subsets import snippet_unittest
from sandbox.restricted.subsets import snippet_warnings
from sandbox.restricted.subsets import stdlib_subsets as stdlib
from sandbox.restricted.subsets.streams import StandardStream
from sandbox.restricted.subsets.subset import Execution, Subset

# module -> its declaration, in the order get_sandbox_info lists them
DECLARED: dict[str, Subset] = {subset.name: subset for subset in (
    stdlib.SYS, stdlib.IO, stdlib.OS, stdlib.OS_PATH, snippet_asyncio.SUBSET, snippet_logging.SUBSET,
    snippet_warnings.SUBSET, snippet_traceback.SUBSET, snippet_gzip.SUBSET, stdlib.BZ2, stdlib.LZMA,
    stdlib.ZONEINFO, snippet_pathlib.SUBSET, snippet_glob.SUBSET, snippet_tempfiles.SHUTIL,
    snippet_tempfiles.TEMPFILE, snippet_timeit.SUBSET, snippet_sqlite.SUBSET, stdlib.PLATFORM, snippet_ast.SUBSET,
    stdlib.SHLEX, stdlib.CODECS, stdlib.MIMETYPES, stdlib.GC, snippet_unittest.SUBSET, stdlib.INSPECT)}

# module -> the names a snippet gets from it without the module's profile
SUBSETS = {name: subset.names for name, subset in DECLARED.items()}
# module -> why the rest of it is not there
WHY = {name: subset.why for name, subset in DECLARED.items()}
# How a subset with many names is listed (in get_sandbox_info and in a refusal)
SHOWN = {name: subset.shown for name, subset in DECLARED.items() if subset.shown}
# module -> (qualified name of a type whose instances no guard hands out, once the module is in use)
DENIED_TYPES = {name: subset.denied_types for name, subset in DECLARED.items() if subset.denied_types}


def shown_names(name: str) -> list:
    return sorted(SHOWN.get(name) or SUBSETS[name])


# The real modules the subsets above take names from, imported by the fork server beside this
# module's own imports: a snippet's first import of a subset then brings no new module into its
# child, where any new module makes the child resolve the library tables again over every loaded
# module (about 10 ms of copied memory: bench/README.md). Not asyncio (47 modules: a choice to
# make with figures on how often agents write async code; snippet_asyncio imports it on first use).
PRELOADED = ("zoneinfo", "gzip", "bz2", "lzma", "platform", "shlex", "mimetypes",
             # the codecs a snippet names most (codecs.encode(s, "rot13"), "hex", "base64", "zlib")
             "encodings.rot_13", "encodings.hex_codec", "encodings.base64_codec", "encodings.zlib_codec")


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


def names(subset: ModuleSubset) -> list:
    """The names a subset has."""
    return list(object.__getattribute__(subset, "_ModuleSubset__values"))


def values(subset: ModuleSubset) -> list:
    """What a subset hands out (sys's streams as their holders)."""
    return list(object.__getattribute__(subset, "_ModuleSubset__values").values())


def make(name: str, files: str | None = None, refuse=None, formatter=None, snippet_open=None,
         snippet_names=None) -> ModuleSubset:
    """The subset of `name` as this process sees it now (sys.stdout and sys.stderr
    are the snippet's own streams by then); the arguments: subset.Execution's."""
    subset = DECLARED[name]
    found = dict(subset.values(Execution(files, refuse, formatter, snippet_open, snippet_names)))
    for dotted in DECLARED:   # a dotted subset is its parent's attribute too (os.path in os)
        parent, _, attr = dotted.rpartition(".")
        if parent == name:
            found[attr] = make(dotted, files, refuse, formatter, snippet_open, snippet_names)
    # exactly the declared names (those this Python has): what a builder has beside them stays out
    declared = subset.names + (subset.with_files if files is not None else ())
    return _subset(name, {attr: found[attr] for attr in declared if attr in found})

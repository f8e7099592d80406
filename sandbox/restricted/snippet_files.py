"""Where a RestrictedPython snippet's open() reaches, by profile.

- filesystem profile: any path; the kernel layers (mounts, Landlock) decide, and the
  snippet's current directory is the workspace.
- otherwise, with the mount namespace: the scratch directory, the child's private
  /tmp (a small tmpfs that goes with the child), whose empty WORKDIR is the current
  directory, so that `open("notes.txt", "w")` and `plt.savefig("plot.png")` work
  (and "/tmp/x.png" too). open() refuses paths that resolve outside /tmp, so this
  holds without the kernel too. (Not /tmp itself as the current directory: it holds
  the mount points of a Python installation that lives under /tmp.)
- otherwise: no open() at all (there is no private directory to give).

The operator's mounts (SANDBOX_MOUNTS) are reached in both profiles with their mode: a
read-only one is read, never written (open for writing, makedirs, remove, rename, ...
are refused here before the kernel refuses them too).
"""

from __future__ import annotations

import io
import os
import secrets
from xml.etree import ElementTree

SCRATCH = "/tmp"
WORKDIR = "/tmp/work"
WORKSPACE_FILES, SCRATCH_FILES = "workspace", "scratch"


_MOUNTS: tuple = ()  # (sandbox path, writable) of each SANDBOX_MOUNTS entry: set_mounts


def set_mounts(mounts) -> None:
    """The operator's mounts of this process's private root (the child sets them once)."""
    global _MOUNTS
    _MOUNTS = tuple((path, bool(writable)) for path, writable in mounts)


def mount_of(real: str) -> tuple[str, bool] | None:
    """The operator mount that the resolved path `real` lies in, else None."""
    for path, writable in _MOUNTS:
        if real == path or real.startswith(path + "/"):
            return path, writable
    return None


def _writes(mode) -> bool:
    return not isinstance(mode, str) or any(c in mode for c in "wax+")


def refuse_read_only(path: str, real: str, refuse) -> None:
    """A write under a read-only operator mount is refused, naming the mount."""
    mount = mount_of(real)
    if mount is not None and not mount[1]:
        raise refuse(f"{path!r:.100} is in {mount[0]}, a read-only mount of the operator's (SANDBOX_MOUNTS): "
                     "read it there and write what you make to the current directory")


def plain_path(file) -> str:
    """The path a snippet named, as an exact str: checked and then used as it is, so that a
    str subclass's own methods (split, startswith), which os.path.realpath may call, can
    answer the check no otherwise than the kernel reads the name."""
    # an integer would reach the fds the sandbox itself uses (stdout, the result pipe)
    if not isinstance(file, (str, bytes, os.PathLike)):
        raise TypeError("files in the sandbox are named by path, not by file descriptor")
    return str.__str__(os.fsdecode(os.fspath(file)))


def path_open(refuse, file, mode="r", buffering=-1, encoding=None, errors=None, newline=None):
    """open() by path only (no fd, no opener): the filesystem profile's."""
    path = plain_path(file)
    if _writes(mode):
        refuse_read_only(path, os.path.realpath(path), refuse)
    return io.open(path, mode, buffering, encoding, errors, newline)


def in_scratch(path: str) -> str | None:
    """`path` resolved (against the current directory, symbolic links followed), or
    None when that lands outside the scratch directory."""
    real = os.path.realpath(path)
    return real if real == SCRATCH or real.startswith(SCRATCH + "/") else None


def in_reach(path: str) -> str | None:
    """`path` resolved, or None when it lands neither in the scratch directory nor in
    an operator mount."""
    real = os.path.realpath(path)
    if real == SCRATCH or real.startswith(SCRATCH + "/") or mount_of(real) is not None:
        return real
    return None


def scratch_open(refuse, file, mode="r", buffering=-1, encoding=None, errors=None, newline=None):
    """open() confined to the scratch directory; `refuse(detail)` makes the exception."""
    path = plain_path(file)
    real = in_reach(path)
    if real is not None and _writes(mode):
        refuse_read_only(path, real, refuse)
    if real is None:
        raise refuse(f"open({path!r:.100}) is outside the scratch directory {SCRATCH}{_and_mounts()}: without the "
                     f"filesystem profile, open() reaches only that directory (the current one is {WORKDIR}; all "
                     "of it is gone when the run or its session ends): use a plain name such as 'notes.txt', or "
                     "switch on "
                     "SANDBOX_ENABLE_FILESYSTEM=true for a workspace")
    try:
        return io.open(real, mode, buffering, encoding, errors, newline)
    except OSError as exc:
        if exc.filename == real:   # the name as the snippet gave it, as open() reports it
            exc.filename = path
        raise


def _and_mounts() -> str:
    return f" and the mounts {', '.join(path for path, _ in _MOUNTS)}" if _MOUNTS else ""


def no_open(*args, **kwargs):
    raise PermissionError("open() needs the filesystem profile (SANDBOX_ENABLE_FILESYSTEM=true), and this "
                          "sandbox has no private scratch directory (its mount namespace is off): keep data in "
                          "memory instead, with io.StringIO or io.BytesIO")


# The os and os.path functions over files that a snippet gets (module_subsets), by name.
OS_FILE_FUNCTIONS = ("listdir", "scandir", "makedirs", "mkdir", "remove", "unlink", "rmdir", "rename", "replace",
                     "walk", "stat")
PATH_QUERIES = ("exists", "isfile", "isdir", "islink", "getsize", "getmtime")


def file_functions(files: str | None, refuse) -> tuple[dict, dict]:
    """(os functions, os.path functions) over files for this profile, by path only:
    in the scratch directory's case each path must resolve inside it. None (no
    private directory): none at all."""
    if files is None:
        return {}, {}

    def checked(path, *, writes: bool = False) -> str:
        path = plain_path(path)
        if files == SCRATCH_FILES and in_reach(path) is None:
            raise refuse(f"{path!r:.100} is outside the scratch directory {SCRATCH}{_and_mounts()}: without the "
                         "filesystem profile, files live only there (the current directory): use relative names, "
                         "or switch on SANDBOX_ENABLE_FILESYSTEM=true for a workspace")
        if writes:
            refuse_read_only(path, os.path.realpath(path), refuse)
        return path

    def listdir(path="."):
        return os.listdir(checked(path))

    def scandir(path="."):
        return os.scandir(checked(path))

    def makedirs(name, mode=0o777, exist_ok=False):
        os.makedirs(checked(name, writes=True), mode, exist_ok)

    def mkdir(path, mode=0o777):
        os.mkdir(checked(path, writes=True), mode)

    def remove(path):
        os.remove(checked(path, writes=True))

    def rmdir(path):
        os.rmdir(checked(path, writes=True))

    def rename(src, dst):
        os.rename(checked(src, writes=True), checked(dst, writes=True))

    def replace(src, dst):
        os.replace(checked(src, writes=True), checked(dst, writes=True))

    def stat(path):
        return os.stat(checked(path))

    def walk(top=".", topdown=True, onerror=None):
        return os.walk(checked(top), topdown, onerror, followlinks=False)

    def query(name):
        real = getattr(os.path, name)

        def ask(path):
            return real(checked(path))
        ask.__name__ = ask.__qualname__ = name
        return ask

    os_functions = {"listdir": listdir, "scandir": scandir, "makedirs": makedirs, "mkdir": mkdir, "remove": remove, "unlink": remove,
                    "rmdir": rmdir, "rename": rename, "replace": replace, "walk": walk, "stat": stat}
    return os_functions, {name: query(name) for name in PATH_QUERIES}


class SnippetFiles:
    """file_functions() and the snippet's open() by name, for the subsets built on them
    (pathlib, glob, shutil, tempfile): `files.listdir(path)`, `files.open(path, "rb")`.
    Without a directory (no mount namespace) each refuses, naming `module`."""

    def __init__(self, files: str | None, refuse, snippet_open, module: str):
        os_functions, queries = file_functions(files, refuse)
        self.functions = {**queries, **os_functions}
        self.open, self.refuse, self.module = snippet_open, refuse, module

    def __getattr__(self, name):
        function = self.functions.get(name)
        if function is None:
            raise self.refuse(f"{self.module} here has no directory to work in (the sandbox's mount namespace is "
                              "off): keep data in memory, with io.StringIO or io.BytesIO")
        return function


# Functions and methods of allowed modules that open the path they are given with the
# real open(): the snippet's versions open it with the snippet's own open() (the
# profile's policy above) and pass the file on. function -> (position of the path among
# its arguments, its keyword); method name -> (its class, position, keyword).
OPENING_FUNCTIONS = {
    ElementTree.parse: (0, "source"),
    ElementTree.iterparse: (0, "source"),
}
OPENING_METHODS = {
    "parse": (ElementTree.ElementTree, 0, "source"),
    "write": (ElementTree.ElementTree, 0, "file_or_filename"),
}


def opening_method(obj, name: str, method, snippet_open):
    """obj.name (already looked up) through `through_open` when it is one of OPENING_METHODS:
    on an instance, or unbound on the class (the path then comes after self)."""
    cls, position, keyword = OPENING_METHODS[name]
    if type(obj) is super and obj.__self__ is not None:
        obj = obj.__self__  # super().parse: the method as that object (or class) has it
    if isinstance(obj, cls):
        return through_open(method, name, position, keyword, snippet_open)
    if isinstance(obj, type) and issubclass(obj, cls):
        return through_open(method, name, position + 1, keyword, snippet_open)
    return method


def element_tree_checks(args, kwargs):
    """ElementTree(element, file): a path there is parsed with the real open()."""
    file = kwargs.get("file", args[1] if len(args) > 1 else None)
    if _is_path(file):
        raise TypeError("ElementTree(file=path) is not available in the sandbox: use "
                        "xml.etree.ElementTree.parse(path), which returns the tree")


def _is_path(value) -> bool:
    return isinstance(value, (str, bytes, os.PathLike))


def through_open(function, name: str, position: int, keyword: str, snippet_open):
    """`function` with a path argument opened by `snippet_open` first (read, or written:
    in text mode when ElementTree.write is asked for encoding="unicode")."""
    def opened(*args, **kwargs):
        if keyword in kwargs:
            path = kwargs[keyword]
        elif len(args) > position:
            path = args[position]
        else:
            return function(*args, **kwargs)
        if not _is_path(path):
            return function(*args, **kwargs)
        mode = "rb"
        if name == "write":
            encoding = kwargs.get("encoding", args[position + 1] if len(args) > position + 1 else None)
            mode = "w" if isinstance(encoding, str) and encoding.lower() == "unicode" else "wb"
        file = snippet_open(path, mode, encoding="utf-8") if mode == "w" else snippet_open(path, mode)
        if keyword in kwargs:
            kwargs[keyword] = file
        else:
            args = (*args[:position], file, *args[position + 1:])
        if name == "iterparse":
            return function(*args, **kwargs)  # it reads lazily: the file closes when collected
        with file:
            return function(*args, **kwargs)
    opened.__name__ = getattr(function, "__name__", name)
    opened.__doc__ = getattr(function, "__doc__", None)
    return opened


def writing_through_open(function, position: int, keyword: str, snippet_open):
    """`function`, which writes to the file it is named with the real open()
    (the tables' writes_named_file): the name is opened with `snippet_open` first,
    and the function gets the path that open resolved."""
    def writing(*args, **kwargs):
        path = kwargs.get(keyword) if keyword in kwargs else (args[position] if len(args) > position else None)
        if path is None:  # (the function would make a temporary file: one in the snippet's directory)
            path = f"{getattr(function, '__name__', 'file')}-{secrets.token_hex(4)}.tmp"
        with snippet_open(path, "wb") as file:
            resolved = file.name
        if keyword in kwargs or len(args) <= position:
            kwargs[keyword] = resolved
        else:
            args = (*args[:position], resolved, *args[position + 1:])
        return function(*args, **kwargs)
    writing.__name__ = getattr(function, "__name__", "writing")
    writing.__doc__ = getattr(function, "__doc__", None)
    return writing

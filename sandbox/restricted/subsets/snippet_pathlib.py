"""The snippet's `pathlib` without the filesystem profile (a subset). Pure path
arithmetic is the real one (PurePath, PurePosixPath); `Path` is a pure path whose
methods over files go through the snippet's own open() and the checked os functions
of snippet_files, so they reach the scratch directory only, as open() does. What
would reach beyond plain files there (links, owners, modes, the home directory) is
refused with what to do instead."""

from __future__ import annotations

import os
import pathlib

from sandbox.restricted.subsets import path_patterns
from sandbox.restricted.sealed import Sealed, seal
from sandbox.restricted.subsets.subset import Subset

_NOT_HERE = {
    "symlink_to": "links are not made in the sandbox: copy the data (p.write_bytes(q.read_bytes()))",
    "hardlink_to": "links are not made in the sandbox: copy the data (p.write_bytes(q.read_bytes()))",
    "link_to": "links are not made in the sandbox: copy the data (p.write_bytes(q.read_bytes()))",
    "readlink": "links are not made in the sandbox: use the path itself",
    "chmod": "the sandbox's files keep their modes: nothing to change",
    "lchmod": "the sandbox's files keep their modes: nothing to change",
    "owner": "the sandbox's files have one owner: nothing to ask",
    "group": "the sandbox's files have one owner: nothing to ask",
    "home": "the sandbox has no home directory: use Path.cwd() or relative paths",
    "expanduser": "the sandbox has no home directory: use Path.cwd() or relative paths",
    "samefile": "compare p.resolve() == q.resolve()",
    "lstat": "use p.stat() (there are no links to tell apart)",
}


def path_class(files) -> type:
    """`Path` for one execution, over `files` (snippet_files.SnippetFiles: the checked
    functions and the snippet's open())."""
    refuse = files.refuse

    class Path(Sealed, pathlib.PurePosixPath):
        """A path in the scratch directory (the current one): read, write, list, make
        and remove files and directories there. Paths outside it are refused."""

        __slots__ = ()

        @classmethod
        def cwd(cls):
            return cls(os.getcwd())

        def absolute(self):
            return type(self)(os.path.abspath(self))

        def resolve(self, strict=False):
            if strict and not self.exists():
                raise FileNotFoundError(f"No such file or directory: {str(self)!r}")
            files.exists(self)  # (refuses a path outside)
            return type(self)(os.path.realpath(self))

        def exists(self):
            return files.exists(self)

        def is_file(self):
            return files.isfile(self)

        def is_dir(self):
            return files.isdir(self)

        def is_symlink(self):
            return files.islink(self)

        def stat(self):
            return files.stat(self)

        def open(self, mode="r", buffering=-1, encoding=None, errors=None, newline=None):
            return files.open(self, mode, buffering, encoding, errors, newline)

        def read_text(self, encoding=None, errors=None):
            with self.open(encoding=encoding, errors=errors) as f:
                return f.read()

        def read_bytes(self):
            with self.open("rb") as f:
                return f.read()

        def write_text(self, data, encoding=None, errors=None, newline=None):
            if not isinstance(data, str):
                raise TypeError(f"data must be str, not {type(data).__name__}")
            with self.open("w", encoding=encoding, errors=errors, newline=newline) as f:
                return f.write(data)

        def write_bytes(self, data):
            data = bytes(memoryview(data))
            with self.open("wb") as f:
                return f.write(data)

        def touch(self, mode=0o666, exist_ok=True):
            self.open("a" if exist_ok else "x").close()

        def mkdir(self, mode=0o777, parents=False, exist_ok=False):
            if parents:
                files.makedirs(self, mode, exist_ok)
                return
            try:
                files.mkdir(self, mode)
            except FileExistsError:
                if not exist_ok or not self.is_dir():
                    raise

        def unlink(self, missing_ok=False):
            try:
                files.remove(self)
            except FileNotFoundError:
                if not missing_ok:
                    raise

        def rmdir(self):
            files.rmdir(self)

        def rename(self, target):
            files.rename(self, target)
            return type(self)(target)

        def replace(self, target):
            files.replace(self, target)
            return type(self)(target)

        def iterdir(self):
            for name in files.listdir(self):
                yield self / name

        def glob(self, pattern):
            parts = path_patterns.split(pattern, refuse)
            yield from (self / relative for relative in dict.fromkeys(path_patterns.matches(str(self), parts, files)))

        def rglob(self, pattern):
            yield from self.glob(f"**/{pattern}")

    for name, advice in _NOT_HERE.items():
        setattr(Path, name, _refused(name, advice, refuse))
    # (a subclass's instances would be the snippet's own: pathlib's parsed parts readable and writable)
    seal(Path, advice="write functions that take a Path")
    return Path


def _refused(name: str, advice: str, refuse):
    def refused(*args, **kwargs):
        raise refuse(f"Path.{name} is not available in the sandbox: {advice}")
    refused.__name__ = refused.__qualname__ = name
    return refused


def values(files) -> dict:
    """The names SUBSET lists."""
    path = path_class(files)
    return {"Path": path, "PosixPath": path, "PurePath": pathlib.PurePath, "PurePosixPath": pathlib.PurePosixPath,
            "PureWindowsPath": pathlib.PureWindowsPath}


SUBSET = Subset(
    # paths, and files in the snippet's directory (the filesystem profile has the whole module)
    "pathlib", ("Path", "PosixPath", "PurePath", "PurePosixPath", "PureWindowsPath"),
    "here it reaches the snippet's directory only, as open() does: switch on the filesystem profile "
    "(SANDBOX_ENABLE_FILESYSTEM) for the whole module",
    lambda execution: values(execution.snippet_files("pathlib")))

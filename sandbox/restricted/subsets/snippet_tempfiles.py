"""The snippet's `shutil` and `tempfile` without the filesystem profile (subsets): copying,
moving and removing files and trees, and temporary files and directories, all in the
scratch directory, built on snippet_files' checked functions and the snippet's own
open(), so they reach what those reach and no more. What concerns programs, descriptors
or the host (shutil.which, tempfile.mkstemp's descriptor) is not there."""

from __future__ import annotations

import os
import secrets
import shutil as real_shutil

from sandbox.restricted import snippet_files
from sandbox.restricted.sealed import Sealed, seal
from sandbox.restricted.subsets.subset import Subset

_CHUNK = 1 << 16


def shutil_values(files: snippet_files.SnippetFiles) -> dict:
    """The names SHUTIL lists."""
    refuse = files.refuse

    def copyfileobj(fsrc, fdst, length=0):
        while True:
            chunk = fsrc.read(length if length and length > 0 else _CHUNK)
            if not chunk:
                return
            fdst.write(chunk)

    def copyfile(src, dst, *, follow_symlinks=True):
        with files.open(src, "rb") as source, files.open(dst, "wb") as target:
            copyfileobj(source, target)
        return dst

    def copy(src, dst, *, follow_symlinks=True):
        if files.isdir(dst):
            dst = os.path.join(dst, os.path.basename(os.fspath(src)))
        return copyfile(src, dst)

    def copytree(src, dst, symlinks=False, ignore=None, copy_function=copy, ignore_dangling_symlinks=False,
                 dirs_exist_ok=False):
        names = files.listdir(src)
        ignored = set(ignore(os.fspath(src), names)) if ignore is not None else set()
        files.makedirs(dst, exist_ok=dirs_exist_ok)
        for name in names:
            source, target = os.path.join(src, name), os.path.join(dst, name)
            if name in ignored or files.islink(source):
                continue  # (the scratch directory holds no links the snippet could have made)
            if files.isdir(source):
                copytree(source, target, ignore=ignore, copy_function=copy_function, dirs_exist_ok=dirs_exist_ok)
            else:
                copy_function(source, target)
        return dst

    def rmtree(path, ignore_errors=False, onerror=None, **kwargs):
        path = snippet_files.plain_path(path)
        files.stat(path)  # (refuses a path outside the scratch directory)
        if os.path.realpath(path) in (os.path.realpath(snippet_files.SCRATCH), os.path.realpath(os.getcwd())):
            raise refuse(f"rmtree({path!r:.80}) would remove the scratch directory itself (it also "
                         "holds the sandbox's own mounts): remove the directories you made in it")
        try:
            for top, dirs, names in files.walk(path, topdown=False):
                for name in names:
                    files.remove(os.path.join(top, name))
                for name in dirs:
                    files.rmdir(os.path.join(top, name))
            files.rmdir(path)
        except OSError:
            if not ignore_errors:
                raise

    def move(src, dst, copy_function=None):
        if files.isdir(dst):
            dst = os.path.join(dst, os.path.basename(os.fspath(src).rstrip("/")))
        files.rename(src, dst)
        return dst

    return {"copyfileobj": copyfileobj, "copyfile": copyfile, "copy": copy, "copy2": copy, "copytree": copytree,
            "rmtree": rmtree, "move": move, "ignore_patterns": real_shutil.ignore_patterns,
            "Error": real_shutil.Error, "SameFileError": real_shutil.SameFileError}


def tempfile_values(files: snippet_files.SnippetFiles) -> dict:
    """The names TEMPFILE lists."""
    remove_tree = shutil_values(files)["rmtree"]

    def gettempdir():
        return snippet_files.SCRATCH

    def _name(suffix, prefix, dir):
        return os.path.join(snippet_files.SCRATCH if dir is None else os.fspath(dir),
                            f"{'tmp' if prefix is None else prefix}{secrets.token_hex(4)}{suffix or ''}")

    def mkdtemp(suffix=None, prefix=None, dir=None):
        path = _name(suffix, prefix, dir)
        files.mkdir(path, 0o700)
        return os.path.abspath(path)

    class TemporaryDirectory(Sealed):
        """A directory in the scratch directory, removed with what it holds on exit."""

        def __init__(self, suffix=None, prefix=None, dir=None, ignore_cleanup_errors=False, *, delete=True):
            self.name = mkdtemp(suffix, prefix, dir)
            self.ignore_cleanup_errors, self.delete = ignore_cleanup_errors, delete

        def __enter__(self):
            return self.name

        def __exit__(self, *exc):
            if self.delete:  # (3.12's delete=False keeps it after the with block)
                self.cleanup()

        def cleanup(self):
            if files.exists(self.name):
                remove_tree(self.name, ignore_errors=self.ignore_cleanup_errors)

        def __repr__(self):
            return f"<TemporaryDirectory {self.name!r}>"

    class NamedTemporaryFile(Sealed):
        """A file in the scratch directory, open in `mode`, removed on close when delete."""

        def __init__(self, mode="w+b", buffering=-1, encoding=None, newline=None, suffix=None, prefix=None,
                     dir=None, delete=True, *, errors=None):
            self.name = os.path.abspath(_name(suffix, prefix, dir))
            self.delete = delete
            files.open(self.name, "xb").close()  # (made anew, as tempfile makes it)
            self.file = files.open(self.name, mode, buffering, encoding, errors, newline)

        def __getattr__(self, name):  # read, write, seek, flush... of the open file
            if name.startswith("_"):
                raise AttributeError(name)
            return getattr(self.file, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()

        def __iter__(self):
            return iter(self.file)

        def close(self):
            self.file.close()
            if self.delete and files.exists(self.name):
                files.remove(self.name)

        def __repr__(self):
            return f"<NamedTemporaryFile {self.name!r}>"

    def TemporaryFile(mode="w+b", buffering=-1, encoding=None, newline=None, suffix=None, prefix=None, dir=None,
                      *, errors=None):
        return NamedTemporaryFile(mode, buffering, encoding, newline, suffix, prefix, dir, True, errors=errors)

    seal(TemporaryDirectory, NamedTemporaryFile)
    return {"gettempdir": gettempdir, "mkdtemp": mkdtemp, "TemporaryDirectory": TemporaryDirectory,
            "NamedTemporaryFile": NamedTemporaryFile, "TemporaryFile": TemporaryFile}


# files and trees copied, moved and removed, temporary ones made
SHUTIL = Subset(
    "shutil", ("copyfileobj", "copyfile", "copy", "copy2", "copytree", "rmtree", "move", "ignore_patterns", "Error",
               "SameFileError"),
    "the rest of shutil runs or looks for programs, archives and reaches the host's disks; here it works in the "
    "snippet's directory only: switch on the filesystem profile (SANDBOX_ENABLE_FILESYSTEM) for the whole module",
    lambda execution: shutil_values(execution.snippet_files("shutil")))
TEMPFILE = Subset(
    "tempfile", ("gettempdir", "mkdtemp", "TemporaryDirectory", "NamedTemporaryFile", "TemporaryFile"),
    "mkstemp and the rest hand out file descriptors or change where temporary files go; here they are made in the "
    "snippet's directory: switch on the filesystem profile (SANDBOX_ENABLE_FILESYSTEM) for the whole module",
    lambda execution: tempfile_values(execution.snippet_files("tempfile")))

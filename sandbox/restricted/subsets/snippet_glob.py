"""The snippet's `glob` without the filesystem profile (a subset): glob() and iglob()
matched over snippet_files' checked directory functions (path_patterns.py), so a
pattern reaches the scratch directory only, as open() does."""

from __future__ import annotations

import glob as real_glob
import os

from sandbox.restricted.subsets import path_patterns
from sandbox.restricted.subsets.subset import Subset


def values(files) -> dict:
    """The names SUBSET lists; `files`: snippet_files.SnippetFiles."""
    refuse = files.refuse

    def iglob(pathname, *, root_dir=None, dir_fd=None, recursive=False, include_hidden=False):
        if dir_fd is not None:
            raise refuse("glob(dir_fd=...): files in the sandbox are named by path: pass root_dir= instead")
        pathname = os.fspath(pathname)
        if not isinstance(pathname, str):
            raise TypeError("glob here takes a str pattern (decode bytes first)")
        components = pathname.split("/")
        first_magic = next((i for i, part in enumerate(components) if real_glob.has_magic(part)), None)
        if first_magic is None:  # no pattern: the path itself, if it is there
            if files.exists(os.path.join(root_dir, pathname) if root_dir else pathname):
                yield pathname
            return
        base = "/".join(components[:first_magic]) or ("/" if pathname.startswith("/") else "")
        parts = path_patterns.split("/".join(components[first_magic:]), refuse)
        if not recursive:
            parts = ["*" if part == "**" else part for part in parts]
        top = os.path.join(root_dir, base) if root_dir else (base or ".")
        found = path_patterns.matches(top, parts, files, hidden=include_hidden)
        if parts[-1] == "**":  # glob's "**" at the end also gives the files below
            found = [*found, *path_patterns.matches(top, [*parts, "*"], files, hidden=include_hidden)]
        dirs_only = pathname.endswith("/")  # ("d/*/": the directories, each with its "/")
        for relative in dict.fromkeys(found):
            path = os.path.join(base, relative) if base else relative  # ("d/**" gives "d/" itself)
            if not path:
                continue
            if dirs_only:
                if not files.isdir(os.path.join(root_dir, path) if root_dir else path):
                    continue
                path = path.rstrip("/") + "/"
            yield path

    def glob(pathname, *, root_dir=None, dir_fd=None, recursive=False, include_hidden=False):
        return list(iglob(pathname, root_dir=root_dir, dir_fd=dir_fd, recursive=recursive,
                          include_hidden=include_hidden))

    return {"glob": glob, "iglob": iglob, "escape": real_glob.escape}


SUBSET = Subset(
    "glob", ("glob", "iglob", "escape"),
    "here it reaches the snippet's directory only, as open() does: switch on the filesystem profile "
    "(SANDBOX_ENABLE_FILESYSTEM) for the whole module",
    lambda execution: values(execution.snippet_files("glob")))

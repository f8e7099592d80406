"""Glob patterns over the snippet's checked directory functions (snippet_files), for the
pathlib and glob subsets: matched one path component at a time from a directory the
functions accept, links never followed, so a pattern reaches what they reach and no more."""

from __future__ import annotations

import fnmatch
import os


def split(pattern, refuse) -> list:
    """A relative pattern's components ("." and empty ones dropped); `refuse(detail)`
    makes the exception for one that would climb out of where it starts."""
    if not isinstance(pattern, str) or not pattern:
        raise ValueError(f"Unacceptable pattern: {pattern!r:.80}")
    if pattern.startswith("/") or ".." in pattern.split("/"):
        raise refuse(f"glob({pattern!r:.80}): a pattern is relative to where it starts and stays below it; start "
                     "from the directory you want (Path('data').glob('*.csv'), glob.glob('data/*.csv'))")
    return [part for part in pattern.split("/") if part not in ("", ".")]


def matches(top: str, parts: list, files, *, hidden: bool = True, relative: str = ""):
    """The paths below the directory `top` (relative to it) that match `parts`; "**" is
    any number of directories (none included). `files` is snippet_files.SnippetFiles (its checked
    functions by name); `hidden`: whether "*" matches names starting with "." (pathlib
    yes, glob no)."""
    if not parts:
        yield relative
        return
    here = os.path.join(top, relative) if relative else top
    part, rest = parts[0], parts[1:]
    if part == "**":  # no directory, then each one below (and each below those)
        if rest:
            yield from matches(top, rest, files, hidden=hidden, relative=relative)
        else:
            yield relative
        for name in _names(here, files, hidden):
            child = os.path.join(relative, name) if relative else name
            full = os.path.join(top, child)
            if files.isdir(full) and not files.islink(full):
                yield from matches(top, parts, files, hidden=hidden, relative=child)
        return
    if not files.isdir(here):
        return
    for name in _names(here, files, hidden or part.startswith(".")):
        if fnmatch.fnmatchcase(name, part):
            child = os.path.join(relative, name) if relative else name
            if not rest:
                yield child
            elif files.isdir(os.path.join(top, child)):
                yield from matches(top, rest, files, hidden=hidden, relative=child)


def _names(directory: str, files, hidden: bool) -> list:
    return sorted(name for name in files.listdir(directory) if hidden or not name.startswith("."))

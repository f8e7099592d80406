"""sys.stdout and sys.stderr as a subset hands them out: write and flush over the
process's stream, read at each use and settable as in Python."""

from __future__ import annotations

import io
import sys


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

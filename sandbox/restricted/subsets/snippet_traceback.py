"""Tracebacks as the snippet may see them: its own frames and lines only, never a
host path or a library's source. Used for the error of a failed run and by the
snippet's `traceback` module (a subset: format_exc, print_exc, format_exception...),
whose functions read frames here, in trusted code, and hand out only text."""

from __future__ import annotations

import sys
import traceback

from sandbox.restricted.json_value import cap_text
from sandbox.restricted.base import MAX_MESSAGE, SNIPPET_FILENAME
from sandbox.restricted.subsets.subset import Subset

source = {"code": ""}  # the running snippet's code, for its lines (set by restricted._execute)


def snippet_frames(exc: BaseException) -> list[tuple[str, int]]:
    """(function name, line) of each snippet frame of the exception's traceback."""
    return [(frame.f_code.co_name, lineno) for frame, lineno in traceback.walk_tb(exc.__traceback__)
            if frame.f_code.co_filename == SNIPPET_FILENAME]


def exception_text(exc: BaseException) -> str:
    name = type(exc).__name__
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        text = "<unprintable message>"
    return f"{name}: {text}" if text else name


def format_traceback(frames: list[tuple[str, int]], message: str, code: str) -> str:
    """Only the snippet's frames: never a host path (site-packages, the server's source)."""
    lines = code.splitlines()
    shown = frames if len(frames) <= 12 else frames[:4] + [None] + frames[-7:]
    out = ["Traceback (most recent call last):"]
    for item in shown:
        if item is None:
            out.append(f"  ... {len(frames) - 11} more frames ...")
            continue
        name, lineno = item
        out.append(f'  File "{SNIPPET_FILENAME}", line {lineno}, in {name}')
        if lineno and 0 < lineno <= len(lines) and lines[lineno - 1].strip():
            out.append("    " + cap_text(lines[lineno - 1].strip(), 200)[0])
    out.append(message)
    return "\n".join(out)


def describe(exc) -> str:
    """The snippet's view of an exception, with a newline at the end."""
    if exc is None:
        return "NoneType: None\n"
    if not isinstance(exc, BaseException):
        raise TypeError("expected an exception, e.g. traceback.format_exception(exc) in an except block")
    return cap_text(format_traceback(snippet_frames(exc), exception_text(exc), source["code"]), MAX_MESSAGE)[0] + "\n"


def _exception(args) -> BaseException | None:
    """format_exception(exc) or the older (type, value, tb): the value, whose own
    traceback is the one used (a tb argument is never walked)."""
    if len(args) == 1:
        return args[0]
    if len(args) in (2, 3):
        return args[1]
    raise TypeError("format_exception takes the exception, e.g. traceback.format_exception(exc)")


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def format_exc(limit=None, chain=True) -> str:
    return describe(sys.exc_info()[1])


def print_exc(limit=None, file=None, chain=True) -> None:
    (file if file is not None else sys.stderr).write(format_exc())


def format_exception(*args, limit=None, chain=True) -> list[str]:
    return _lines(describe(_exception(args)))


def print_exception(*args, limit=None, file=None, chain=True) -> None:
    (file if file is not None else sys.stderr).write("".join(format_exception(*args)))


def format_exception_only(*args) -> list[str]:
    exc = _exception(args)
    if exc is not None and not isinstance(exc, BaseException):
        raise TypeError("expected an exception")
    return [exception_text(exc) + "\n" if exc is not None else "NoneType: None\n"]


def exc_info() -> tuple:
    """sys.exc_info() for a snippet: (type, value, None). The traceback object leads to
    frames; the functions above format the exception's own traceback."""
    exc = sys.exc_info()[1]
    return (None, None, None) if exc is None else (type(exc), exc, None)


def exception():
    """sys.exception() (3.11): the exception being handled, or None."""
    return sys.exc_info()[1]


class TracebackSummary:
    """What `exc.__traceback__` gives a snippet: one of its own frames' line, and the next
    one (tb_next), as data. Made of the snippet's frames only, from their names and line
    numbers: it holds no frame, no code object, no globals and no host path."""

    __slots__ = ("tb_lineno", "tb_next", "_name", "_line")

    def __init__(self, lineno: int, name: str, line: str, tb_next=None):
        for slot, value in (("tb_lineno", lineno), ("_name", name), ("_line", line), ("tb_next", tb_next)):
            object.__setattr__(self, slot, value)

    def __setattr__(self, name, value):
        raise AttributeError("a traceback's attributes are read-only")

    def __repr__(self) -> str:
        return f"<traceback of {SNIPPET_FILENAME}, line {self.tb_lineno}>"


def with_traceback(method):
    """exc.with_traceback(tb) for a snippet, whose tracebacks are summaries: a summary
    stands for the traceback it was made from, which the exception then gets anew where
    it is raised (`raise Other(...).with_traceback(exc.__traceback__)` runs as written)."""
    def checked(tb):
        return method(None if isinstance(tb, TracebackSummary) else tb)
    checked.__name__ = checked.__qualname__ = "with_traceback"
    checked.__doc__ = getattr(method, "__doc__", None)
    return checked


def _source_line(lineno: int) -> str:
    lines = source["code"].splitlines()
    return lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""


def summary(tb) -> TracebackSummary | None:
    """The snippet's view of a traceback object: its own frames, innermost last."""
    made = None
    for frame, lineno in reversed(list(traceback.walk_tb(tb))):
        if frame.f_code.co_filename == SNIPPET_FILENAME:
            made = TracebackSummary(lineno, frame.f_code.co_name, _source_line(lineno), made)
    return made


class FrameSummary:
    """One entry of extract_tb, as traceback.FrameSummary reads (filename, lineno, name,
    line; unpacked as a 4-tuple). Data only: its line is given, never looked up in a file."""

    __slots__ = ("filename", "lineno", "name", "line", "locals")

    def __init__(self, filename, lineno, name, *, line=None, locals=None, lookup_line=True):
        self.filename, self.lineno, self.name, self.line, self.locals = filename, lineno, name, line, None

    def __iter__(self):
        return iter((self.filename, self.lineno, self.name, self.line))

    def __getitem__(self, index):
        return (self.filename, self.lineno, self.name, self.line)[index]

    def __len__(self) -> int:
        return 4

    def __eq__(self, other):
        if isinstance(other, FrameSummary):
            return tuple(self) == tuple(other)
        return tuple(self) == other if isinstance(other, tuple) else NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"<FrameSummary file {self.filename}, line {self.lineno} in {self.name}>"


class StackSummary(list):
    """extract_tb's answer: a list of FrameSummary, with format() as traceback's."""

    @classmethod
    def from_list(cls, entries):
        return cls(entry if isinstance(entry, FrameSummary) else FrameSummary(entry[0], entry[1], entry[2],
                                                                                line=entry[3])
                   for entry in entries)

    def format(self) -> list[str]:
        return format_list(self)


def _summary_or_none(tb) -> TracebackSummary | None:
    if tb is not None and not isinstance(tb, TracebackSummary):
        raise TypeError("expected an exception's __traceback__ (exc.__traceback__), or None")
    return tb


def extract_tb(tb, limit=None) -> StackSummary:
    entries, current = [], _summary_or_none(tb)
    while current is not None:
        entries.append(FrameSummary(SNIPPET_FILENAME, current.tb_lineno, current._name, line=current._line))
        current = current.tb_next
    if limit is not None:
        entries = entries[:limit] if limit >= 0 else entries[limit:]
    return StackSummary(entries)


def format_list(extracted) -> list[str]:
    out = []
    for entry in StackSummary.from_list(extracted):
        text = f'  File "{entry.filename}", line {entry.lineno}, in {entry.name}\n'
        if entry.line:
            text += f"    {str(entry.line).strip()}\n"
        out.append(text)
    return out


def format_tb(tb, limit=None) -> list[str]:
    return format_list(extract_tb(tb, limit))


def print_tb(tb, limit=None, file=None) -> None:
    (file if file is not None else sys.stderr).write("".join(format_tb(tb, limit)))


def values() -> dict:
    """The functions SUBSET names."""
    return {name: globals()[name] for name in SUBSET.names}


SUBSET = Subset(
    "traceback", ("format_exc", "print_exc", "format_exception", "print_exception", "format_exception_only",
                  # over a summary of the snippet's own frames (exc.__traceback__)
                  "extract_tb", "format_tb", "print_tb", "format_list", "StackSummary", "FrameSummary"),
    "the rest of traceback walks frames and reads source files",
    lambda execution: values())

"""The snippet's `logging` module (a subset). The real logging hands out loggers,
handlers and formatters whose methods take records, and a record with a made-up
traceback makes the formatter read any file through linecache; its "{" style
formats fields unguarded. So the snippet gets wrappers: loggers that log at the
snippet's own line, handlers that write to a stream (its stdout or stderr, a
StringIO, or its own object with write()), formatters in "%", "$" or guarded "{"
style whose tracebacks show the snippet's frames only, and a Handler base class
whose emit() sees a plain copy of the record."""

from __future__ import annotations

import logging
import sys
import types

from sandbox.restricted.subsets import snippet_traceback
from sandbox.restricted.base import SNIPPET_FILENAME
from sandbox.restricted.sealed import Sealed, seal
from sandbox.restricted.subsets.subset import Subset

LEVELS = {"CRITICAL": logging.CRITICAL, "FATAL": logging.FATAL, "ERROR": logging.ERROR,
          "WARNING": logging.WARNING, "WARN": logging.WARN, "INFO": logging.INFO,
          "DEBUG": logging.DEBUG, "NOTSET": logging.NOTSET}
STYLES = ("%", "$", "{")
_RECORD_FIELDS = ("name", "msg", "levelname", "levelno", "pathname", "filename", "module", "lineno", "funcName",
                  "created", "msecs", "relativeCreated", "asctime", "message", "process", "thread", "threadName")
_BRACE_FORMATTER = {"make": None}  # the execution's guarded string.Formatter class (set by make())
_SNIPPET_OPEN = {"open": None}     # the execution's open(): where a FileHandler's file may be (set by make())


def _caller() -> tuple[int, str]:
    """The snippet's line and function that called into logging."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != SNIPPET_FILENAME:
        frame = frame.f_back
    return (frame.f_lineno, frame.f_code.co_name) if frame is not None else (0, "<module>")


def _level(level) -> int:
    if isinstance(level, str) and level.upper() in LEVELS:
        return LEVELS[level.upper()]
    if type(level) is int or isinstance(level, bool):
        return int(level)
    raise ValueError(f"unknown level {level!r:.40}: use logging.INFO, 'DEBUG', ...")


class _QuietErrors:
    """A handler whose write fails says so in one line of the snippet's terms, not with
    logging's traceback of host frames."""

    def handleError(self, record):
        sys.stderr.write("--- Logging error ---\n" + snippet_traceback.describe(sys.exc_info()[1]))


class _RealFormatter(logging.Formatter):
    """The formatter handlers use: snippet-only tracebacks, no stack of host frames,
    "{" fields through the guards."""

    def __init__(self, fmt, datefmt, style):
        super().__init__(fmt, datefmt, style)
        self.brace = _BRACE_FORMATTER["make"]() if style == "{" else None

    def formatMessage(self, record):
        if self.brace is not None:
            return self.brace.vformat(self._fmt, (), vars(record))
        return super().formatMessage(record)

    def formatException(self, ei):
        return snippet_traceback.describe(ei[1] if isinstance(ei, tuple) and len(ei) == 3 else None).rstrip("\n")

    def formatStack(self, stack_info):
        return ""


class Formatter(Sealed):
    __slots__ = ("__real",)

    def __init__(self, fmt=None, datefmt=None, style="%"):
        if style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}")
        if not (fmt is None or isinstance(fmt, str)) or not (datefmt is None or isinstance(datefmt, str)):
            raise TypeError("fmt and datefmt are strings")
        object.__setattr__(self, "_Formatter__real", _RealFormatter(fmt, datefmt, style))


def _real_formatter(formatter) -> logging.Formatter:
    if type(formatter) is not Formatter:
        raise TypeError("setFormatter takes a logging.Formatter(...)")
    return object.__getattribute__(formatter, "_Formatter__real")


class _CurrentStream:
    """sys.stderr / sys.stdout as they are when written to (a session's next call has new ones)."""

    def __init__(self, name):
        self.name = name

    def write(self, text):
        return getattr(sys, self.name).write(text)

    def flush(self):
        getattr(sys, self.name).flush()


def _record_copy(record: logging.LogRecord, message: str):
    """What a snippet handler sees of a record: plain values, its message formatted."""
    fields = {name: getattr(record, name, None) for name in _RECORD_FIELDS}
    fields.update(message=record.getMessage(), formatted=message, msg=str(record.msg),
                  getMessage=lambda: fields["message"])
    return types.SimpleNamespace(**fields)


class _Bridge(_QuietErrors, logging.Handler):
    """The real handler behind a snippet Handler subclass: formats each record with a
    _RealFormatter and calls the snippet's emit() with a plain copy."""

    def __init__(self, owner):
        super().__init__()
        self.owner = owner
        self.setFormatter(_RealFormatter(None, None, "%"))

    def emit(self, record):
        self.owner.emit(_record_copy(record, self.format(record)))


# id(snippet handler) -> its bridge: kept here, never on the snippet's object, whose
# attributes the snippet may read (the real handler formats records it is given)
_bridges: dict[int, _Bridge] = {}


def _bridge(handler) -> _Bridge:
    bridge = _bridges.get(id(handler))
    if bridge is None or bridge.owner is not handler:
        bridge = _bridges[id(handler)] = _Bridge(handler)
    return bridge


class Handler:
    """Base class for a snippet's own handler: override emit(self, record). The record
    is a plain copy (name, levelname, levelno, message, lineno, funcName, created, ...),
    and self.format(record) is its line as the handler's formatter makes it."""

    def __init__(self, level=logging.NOTSET):
        _bridge(self).setLevel(_level(level))

    def setLevel(self, level):
        _bridge(self).setLevel(_level(level))

    def setFormatter(self, formatter):
        _bridge(self).setFormatter(_real_formatter(formatter))

    def format(self, record) -> str:
        return str(getattr(record, "formatted", ""))

    def emit(self, record):
        raise NotImplementedError("override emit(self, record) in your handler class")


class _RealStreamHandler(_QuietErrors, logging.StreamHandler):
    pass


class _WrappedHandler(Sealed):
    __slots__ = ("__real",)

    def setLevel(self, level):
        object.__getattribute__(self, "_WrappedHandler__real").setLevel(_level(level))

    def setFormatter(self, formatter):
        object.__getattribute__(self, "_WrappedHandler__real").setFormatter(_real_formatter(formatter))


class StreamHandler(_WrappedHandler):
    __slots__ = ()

    def __init__(self, stream=None):
        if stream is None:
            stream = _CurrentStream("stderr")
        elif not callable(getattr(stream, "write", None)):
            raise TypeError("StreamHandler takes a stream with write(): sys.stdout, sys.stderr or io.StringIO()")
        object.__setattr__(self, "_WrappedHandler__real", _RealStreamHandler(stream))


class FileHandler(_WrappedHandler):
    """A handler that appends to a file, opened with the snippet's own open() (the
    profile's policy: the workspace, the scratch directory, or no file)."""

    __slots__ = ()

    def __init__(self, filename, mode="a", encoding=None, delay=False, errors=None):
        stream = _SNIPPET_OPEN["open"](filename, mode, encoding=encoding, errors=errors)
        object.__setattr__(self, "_WrappedHandler__real", _RealStreamHandler(stream))

    def flush(self):
        object.__getattribute__(self, "_WrappedHandler__real").flush()

    def close(self):
        real = object.__getattribute__(self, "_WrappedHandler__real")
        real.close()
        real.stream.close()


class NullHandler(_WrappedHandler):
    __slots__ = ()

    def __init__(self):
        object.__setattr__(self, "_WrappedHandler__real", logging.NullHandler())


def _real_handler(handler) -> logging.Handler:
    if isinstance(handler, Handler):
        return _bridge(handler)
    if isinstance(handler, _WrappedHandler):
        return object.__getattribute__(handler, "_WrappedHandler__real")
    raise TypeError("addHandler takes logging.StreamHandler(...), logging.NullHandler() or a logging.Handler subclass")


def _exc_info(exc_info):
    """exc_info=True, an exception, or a (type, value, tb) triple: the real exception only."""
    if exc_info is True or (exc_info and isinstance(exc_info, tuple)):
        exc = sys.exc_info()[1] if exc_info is True else exc_info[1]
    else:
        exc = exc_info if isinstance(exc_info, BaseException) else None
    return (type(exc), exc, exc.__traceback__) if isinstance(exc, BaseException) else None


class Logger(Sealed):
    __slots__ = ("__real",)

    def __init__(self, real: logging.Logger):
        object.__setattr__(self, "_Logger__real", real)

    def _log(self, level, msg, args, exc_info=None, stack_info=False, stacklevel=1, extra=None):
        real = object.__getattribute__(self, "_Logger__real")
        if not real.isEnabledFor(level):
            return
        if extra is not None and not (isinstance(extra, dict) and all(isinstance(k, str) for k in extra)):
            raise TypeError("extra must be a dict with string keys")
        line, function = _caller()
        record = real.makeRecord(real.name, level, SNIPPET_FILENAME, line, msg, args, _exc_info(exc_info),
                                 function, extra)
        real.handle(record)

    def debug(self, msg, *args, **kwargs):
        self._log(logging.DEBUG, msg, args, **kwargs)

    def info(self, msg, *args, **kwargs):
        self._log(logging.INFO, msg, args, **kwargs)

    def warning(self, msg, *args, **kwargs):
        self._log(logging.WARNING, msg, args, **kwargs)

    warn = warning

    def error(self, msg, *args, **kwargs):
        self._log(logging.ERROR, msg, args, **kwargs)

    def exception(self, msg, *args, exc_info=True, **kwargs):
        self._log(logging.ERROR, msg, args, exc_info=exc_info, **kwargs)

    def critical(self, msg, *args, **kwargs):
        self._log(logging.CRITICAL, msg, args, **kwargs)

    fatal = critical

    def log(self, level, msg, *args, **kwargs):
        self._log(_level(level), msg, args, **kwargs)

    def setLevel(self, level):
        object.__getattribute__(self, "_Logger__real").setLevel(_level(level))

    def getEffectiveLevel(self) -> int:
        return object.__getattribute__(self, "_Logger__real").getEffectiveLevel()

    def isEnabledFor(self, level) -> bool:
        return object.__getattribute__(self, "_Logger__real").isEnabledFor(_level(level))

    def addHandler(self, handler):
        object.__getattribute__(self, "_Logger__real").addHandler(_real_handler(handler))

    def removeHandler(self, handler):
        object.__getattribute__(self, "_Logger__real").removeHandler(_real_handler(handler))

    def hasHandlers(self) -> bool:
        return object.__getattribute__(self, "_Logger__real").hasHandlers()

    def getChild(self, suffix):
        return getLogger(f"{self.name}.{suffix}")

    @property
    def propagate(self) -> bool:
        return object.__getattribute__(self, "_Logger__real").propagate

    @propagate.setter
    def propagate(self, value):  # `logger.propagate = False` (library_policy.writable_types)
        object.__getattribute__(self, "_Logger__real").propagate = bool(value)

    @property
    def name(self) -> str:
        return object.__getattribute__(self, "_Logger__real").name

    @property
    def parent(self):
        parent = object.__getattribute__(self, "_Logger__real").parent
        return Logger(parent) if parent is not None else None

    def __repr__(self) -> str:
        return repr(object.__getattribute__(self, "_Logger__real"))   # <Logger a.b (WARNING)>

    @property
    def level(self) -> int:
        return object.__getattribute__(self, "_Logger__real").level


def getLogger(name=None) -> Logger:
    if name is not None and not isinstance(name, str):
        raise TypeError("a logger's name is a string")
    return Logger(logging.getLogger(name if name not in ("", "root") else None))


def basicConfig(*, level=None, format=None, datefmt=None, style="%", stream=None, handlers=None, force=False,
                filename=None, filemode="a", encoding=None, errors="backslashreplace", **other):
    if other:
        raise ValueError(f"basicConfig: {', '.join(sorted(other))} is not available in the sandbox (log to "
                         "stderr, the default, or pass stream=io.StringIO() / handlers=[...] / filename=...)")
    if filename is not None:
        if stream is not None or handlers is not None:
            raise ValueError("'stream' or 'handlers' should not be specified together with 'filename'")
        if force or not logging.getLogger().handlers:   # (as logging opens it: only when it will be used)
            handlers = [FileHandler(filename, filemode, encoding=encoding, errors=errors)]
    root = logging.getLogger()
    if force:
        for handler in list(root.handlers):
            root.removeHandler(handler)
    if not root.handlers:
        formatter = Formatter(format or logging.BASIC_FORMAT, datefmt, style)
        made = [_real_handler(h) for h in handlers] if handlers else [_real_handler(StreamHandler(stream))]
        for handler in made:
            if handler.formatter is None:
                handler.setFormatter(_real_formatter(formatter))
            root.addHandler(handler)
    if level is not None:
        root.setLevel(_level(level))


def _module_function(name):
    def log_at_root(msg, *args, **kwargs):
        return getattr(getLogger(), name)(msg, *args, **kwargs)
    log_at_root.__name__ = log_at_root.__qualname__ = name
    return log_at_root


def log(level, msg, *args, **kwargs):
    getLogger().log(level, msg, *args, **kwargs)


def disable(level=logging.CRITICAL):
    logging.disable(_level(level))


def getLevelName(level):
    return logging.getLevelName(level if type(level) in (int, str) else str(level))


# (the wrappers: a snippet's handler subclasses logging.Handler, whose emit() gets a plain record copy)
seal(Formatter, _WrappedHandler, StreamHandler, FileHandler, NullHandler, Logger,
     advice="subclass logging.Handler for a handler of your own, or wrap it in a class of your own")


def values(brace_formatter, snippet_open=None) -> dict:
    """The names SUBSET lists; `brace_formatter` makes the execution's guarded
    string.Formatter; `snippet_open` is the execution's open()."""
    _BRACE_FORMATTER["make"] = brace_formatter
    _SNIPPET_OPEN["open"] = snippet_open
    found = dict(LEVELS, getLogger=getLogger, basicConfig=basicConfig, log=log, disable=disable,
                 getLevelName=getLevelName, StreamHandler=StreamHandler, FileHandler=FileHandler,
                 NullHandler=NullHandler, Handler=Handler, Formatter=Formatter)
    for name in ("debug", "info", "warning", "warn", "error", "exception", "critical", "fatal"):
        found[name] = _module_function(name)
    return found


SUBSET = Subset(
    "logging", ("CRITICAL", "FATAL", "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "NOTSET", "getLogger",
                "basicConfig", "debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log",
                "disable", "getLevelName", "StreamHandler", "FileHandler", "NullHandler", "Handler", "Formatter"),
    "the rest of logging hands out handlers and records that reach files and frames",
    lambda execution: values(execution.formatter, execution.snippet_open))

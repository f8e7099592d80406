"""The messages the processes exchange, as declared types: a field is named once, here,
so a misspelt one fails where the message is built or read, not somewhere down the line.

Each type turns into the JSON object a frame carries (``to_frame``) and back
(``from_frame``). Decoding is strict whoever sent the frame, and it is the check of
what a hostile child sends: the object must have exactly the declared keys (the
optional ones may be missing), each of the declared type, a string no longer than its
field's cap; anything else raises ``protocol.FrameError`` before a field is used.
The frame format itself (protocol.py) does not change.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from dataclasses import dataclass, field

from sandbox.wire.protocol import FrameError

# JSON gives every number as int or float, lists for tuples; bool is an int to Python,
# so it is told apart first
_SCALARS = {bool: lambda v: type(v) is bool,
            int: lambda v: type(v) is int,
            float: lambda v: type(v) in (int, float),
            str: lambda v: type(v) is str,
            dict: lambda v: type(v) is dict}


def _cap(size: int) -> dict:
    """Field metadata: the longest string the field may hold."""
    return {"max": size}


def _accepts(hint, value) -> bool:
    if hint in _SCALARS:
        return _SCALARS[hint](value)
    args = typing.get_args(hint)
    if type(None) in args:   # X | None
        return value is None or any(_accepts(a, value) for a in args if a is not type(None))
    if typing.get_origin(hint) is tuple:   # tuple[str, ...]
        return type(value) is list and all(_accepts(args[0], v) for v in value)
    raise TypeError(f"no decoder for a field of type {hint!r}")


@functools.cache
def _fields(cls) -> tuple:
    """(field, its type) of a message type, resolved once."""
    hints = typing.get_type_hints(cls)
    return tuple((f, hints[f.name]) for f in dataclasses.fields(cls))


def decode(cls, body, where: str):
    """An instance of the message type ``cls`` from a decoded frame object, or FrameError."""
    if type(body) is not dict:
        raise FrameError(f"{where} is not an object")
    fields = _fields(cls)
    unknown = sorted(set(body) - {f.name for f, _ in fields})
    if unknown:
        raise FrameError(f"{where} has unknown fields: {', '.join(map(repr, unknown))[:200]}")
    values = {}
    for f, hint in fields:
        name = f.name
        if name not in body:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise FrameError(f"{where} lacks its {name} field")
            continue
        value = body[name]
        if not _accepts(hint, value):
            raise FrameError(f"{where} field {name} is not a {hint}")
        if type(value) is str and len(value) > f.metadata.get("max", len(value)):
            raise FrameError(f"{where} field {name} is longer than {f.metadata['max']} characters")
        values[name] = tuple(value) if type(value) is list else value
    return cls(**values)


def encode(message) -> dict:
    """The frame object of a message: every field, except optional ones left at None."""
    body = {}
    for f in dataclasses.fields(message):
        value = getattr(message, f.name)
        if value is None and f.default is None:
            continue
        body[f.name] = list(value) if type(value) is tuple else value
    return body


class Message:
    """A message whose frame object is its fields (see encode and decode)."""

    def to_frame(self) -> dict:
        return encode(self)

    @classmethod
    def from_frame(cls, body):
        return decode(cls, body, f"{cls.__name__} message")


# ---- runner -> fork server -> child: what one run asks ------------------------------

@dataclass(frozen=True)
class RunRequest:
    """One execution or validation, with its limits already resolved by the runner."""
    code: str
    timeout: float                       # seconds of wall time (and of CPU, plus one)
    memory_limit: int                    # bytes; only ever lowers the child's hard limit
    allowed_modules: tuple[str, ...]
    restricted: bool = True
    capture_output: bool = True
    max_output: int = 1 << 20            # bytes of each stream, and of the result's JSON
    files: dict | None = None            # filesystem profile: {relative path: text | {"base64": ...}}
    execution_id: str | None = None      # names the process while it runs
    tools: dict | None = None            # code mode: {server: {tool: doc}} the snippet may call

    def to_frame(self) -> dict:
        return encode(self)

    @classmethod
    def from_frame(cls, body) -> "RunRequest":
        return decode(cls, body, "run request")


@dataclass(frozen=True)
class ChildOrder:
    """What the fork server writes to a child: the request, its op, the nonce the
    child's answer must carry, and whether the child is a session's (it then serves
    again after answering). On the wire: one flat object."""
    op: str                              # "execute" or "validate"
    nonce: str
    session: bool
    request: RunRequest

    def to_frame(self) -> dict:
        return {**self.request.to_frame(), "op": self.op, "nonce": self.nonce, "session": self.session}

    @classmethod
    def from_frame(cls, body) -> "ChildOrder":
        if type(body) is not dict:
            raise FrameError("child order is not an object")
        rest = {k: v for k, v in body.items() if k not in ("op", "nonce", "session")}
        head = decode(_OrderHead, {k: v for k, v in body.items() if k in ("op", "nonce", "session")}, "child order")
        return cls(op=head.op, nonce=head.nonce, session=head.session, request=RunRequest.from_frame(rest))


@dataclass(frozen=True)
class _OrderHead:
    op: str
    nonce: str
    session: bool = False


@dataclass(frozen=True)
class RunOrder:
    """The runner asks the fork server to run a request (op "execute" or "validate"),
    in the process of `session` when given."""
    op: str
    id: str
    run: RunRequest
    session: str | None = None

    def to_frame(self) -> dict:
        body = {"op": self.op, "id": self.id, "request": self.run.to_frame()}
        return body if self.session is None else {**body, "session": self.session}

    @classmethod
    def from_frame(cls, body) -> "RunOrder":
        if type(body) is not dict:
            raise FrameError("run order is not an object")
        head = decode(_RunOrderHead, {k: v for k, v in body.items() if k != "request"}, "run order")
        return cls(op=head.op, id=head.id, session=head.session, run=RunRequest.from_frame(body.get("request")))


@dataclass(frozen=True)
class _RunOrderHead:
    op: str
    id: str
    session: str | None = None


# ---- child -> fork server: the result channel -----------------------------------------

@dataclass(frozen=True)
class ExecuteResult(Message):
    """The header of an execution's result frame. The value's JSON, its repr, the
    figures and the out/ files follow it as raw sections that `sections` lists
    ({kind, size, path | mime_type}); they are checked against the payload and the
    request's caps before any is decoded (forkserver/child_report.py). The header's
    own size is capped (protocol.MAX_RESULT_HEADER) before it is decoded."""
    success: bool
    nonce: str | None = field(default=None, metadata=_cap(64))
    error_type: str | None = field(default=None, metadata=_cap(64))
    error: str | None = None
    traceback: str | None = None
    line: int | None = None
    variables: tuple[str, ...] = ()
    security_events: tuple[dict, ...] = ()        # {kind, detail}, the child's word
    sections: tuple[dict, ...] = ()
    result_bytes: int | None = None               # the value's JSON size, for the audit log
    result_truncated: bool = False
    images_truncated: bool = False
    files_truncated: bool = False
    files_refused: tuple[dict, ...] = ()          # {path, reason}: out/ entries not returned
    figure_files: tuple[str, ...] = ()            # out/ PNGs matched to an open figure
    artifacts_error: str | None = None
    kind: str = "result"

    @classmethod
    def from_frame(cls, body) -> "ExecuteResult":
        return decode(cls, body, "result frame")


@dataclass(frozen=True)
class ValidationResult(Message):
    """The result frame of a validation: the validator's report, or, from a child that
    failed before it could make one, an error as an execution's would carry."""
    nonce: str | None = field(default=None, metadata=_cap(64))
    validation: dict | None = None
    analysis: dict | None = None
    recommendations: tuple[str, ...] = ()
    success: bool | None = None
    error_type: str | None = field(default=None, metadata=_cap(64))
    error: str | None = None
    kind: str = "result"

    @classmethod
    def from_frame(cls, body) -> "ValidationResult":
        return decode(cls, body, "validation result frame")


RESULT_FRAMES = {"execute": ExecuteResult, "validate": ValidationResult}


def result_frame(header: dict, op: str):
    """The result frame of a run of `op`, checked in full (FrameError if it is not one)."""
    return RESULT_FRAMES[op].from_frame(header)


@dataclass(frozen=True)
class Ready:
    """The child is hardened and waits for its order."""
    kind: str = "ready"


@dataclass(frozen=True)
class SetupError:
    """A layer could not be applied: the child exits, nothing ran."""
    layer: str = field(metadata=_cap(64))
    error: str = field(metadata=_cap(1000))
    kind: str = "setup_error"


@dataclass(frozen=True)
class ToolCall:
    """Code mode: the snippet calls ``tools.<server>.<tool>(**arguments)``."""
    nonce: str = field(metadata=_cap(64))
    call_id: int
    server: str = field(metadata=_cap(200))
    tool: str = field(metadata=_cap(200))
    arguments: dict
    kind: str = "tool_call"


CHILD_FRAMES = {"ready": Ready, "setup_error": SetupError, "tool_call": ToolCall}


def child_frame(header: dict):
    """A small frame of the child's result channel, checked in full (FrameError if not one)."""
    cls = CHILD_FRAMES.get(header.get("kind"))
    if cls is None:
        raise FrameError("unexpected frame kind on the result channel")
    return decode(cls, header, f"{header['kind']} frame")


# ---- runner <-> fork server: the control socket ----------------------------------------
# (besides RunOrder above; every message but Answer names its "op")

@dataclass(frozen=True)
class Cancel(Message):
    id: str
    op: str = "cancel"


@dataclass(frozen=True)
class Shutdown(Message):
    op: str = "shutdown"


@dataclass(frozen=True)
class SessionOpen(Message):
    """A process for the session, taken from the warm pool (answered {"ok": ...})."""
    id: str
    session: str
    op: str = "session_open"


@dataclass(frozen=True)
class SessionClose(Message):
    session: str
    op: str = "session_close"


@dataclass(frozen=True)
class ToolResult(Message):
    """Code mode: the server's answer to a child's tool call, passed on to the child."""
    id: str
    call_id: int
    answer: dict
    op: str = "tool_result"


@dataclass(frozen=True)
class Hello(Message):
    """The fork server is up: its pid and which layers it could apply."""
    pid: int
    layers: dict
    active: tuple[str, ...]
    op: str = "hello"


@dataclass(frozen=True)
class Output(Message):
    """Progress: the last line a running request printed (at most one a second)."""
    id: str
    line: str
    op: str = "output"


@dataclass(frozen=True)
class ForwardedToolCall(Message):
    """Code mode: a child's tool call, its shape checked, for the server to check and perform."""
    id: str
    call: dict
    op: str = "tool_call"


@dataclass(frozen=True)
class SessionEnded(Message):
    """A session's process ended between calls."""
    session: str
    reason: str
    op: str = "session_ended"


@dataclass(frozen=True)
class Answer(Message):
    """The answer to one request: the result the client sees. A session's call also
    says whether the session ended with it, and why when the call itself succeeded."""
    id: str
    result: dict
    session_ended: bool | None = None
    session_end_reason: str | None = None


TO_FORK_SERVER = {"cancel": Cancel, "shutdown": Shutdown, "session_open": SessionOpen,
                  "session_close": SessionClose, "tool_result": ToolResult,
                  "execute": RunOrder, "validate": RunOrder}
TO_RUNNER = {"hello": Hello, "output": Output, "tool_call": ForwardedToolCall,
             "session_ended": SessionEnded, None: Answer}


def control_message(body, table: dict):
    """A control socket message, decoded by its op through `table` (FrameError if none fits)."""
    if type(body) is not dict:
        raise FrameError("control message is not an object")
    cls = table.get(body.get("op"))
    if cls is None:
        raise FrameError(f"unknown control op {str(body.get('op'))[:50]!r}")
    return cls.from_frame(body)

"""Length-prefixed frames: the only format spoken between the server, the
fork server and the children.

A frame is a 4-byte big-endian length followed by that many bytes. Between the
server and the fork server, and from the fork server to a child, the body is UTF-8 JSON.
From a child to the fork server (the result channel) the body is *sectioned*: a
4-byte length, a small JSON header, then raw sections whose kinds and sizes the
header declares. The fork server checks the header's shape and every declared size
against the request's caps before it decodes a byte of a section, so a child
cannot make it parse more than the limits allow; images and files travel as raw
bytes and are base64-encoded by the parent. Readers enforce a size cap before
buffering anything, so a peer that lies about the length or floods the channel
costs nothing but an error.

The messages, by channel (each a type declared in messages.py):
  runner -> fork server (control socket, "op"):
      RunOrder (execute / validate, with its RunRequest); Cancel; Shutdown;
      SessionOpen; SessionClose; ToolResult (code mode)
  fork server -> runner (control socket, "op" or an answer):
      Hello once; Output (progress, at most 1/s); Answer, of one request (a
      session's call: whether the session ended with it); SessionEnded (its process died between
      calls); ForwardedToolCall (code mode)
  fork server -> runner (fd channel, network profile): the child's proxy listener
      (SCM_RIGHTS), tagged with the request id or "session:" + the session id
  fork server -> child (REQUEST_FD): ChildOrder, once, or one per call of a
      session (session: true keeps the child serving)
  child -> fork server (RESULT_FD, sectioned, "kind"):
      Ready; SetupError; ToolCall (code mode); ExecuteResult or ValidationResult
      per request, whose sections forkserver/child_report.py checks against the caps
  plus the child's stdout and stderr pipes (raw bytes, capped by the fork server) and
  GO_FD, a Unix socket pair: one byte from the fork server (the id maps are written),
  and with the network profile the child's proxy listener back (SCM_RIGHTS).
"""

from __future__ import annotations

import json
import os
import struct
import unicodedata

HEADER = struct.Struct(">I")

# A child's descriptors; everything else is closed before the first layer.
# FORK_SERVER_FD is a pidfd of the fork server (its death, before the parent-death
# signal is armed for good); GO_FD and FORK_SERVER_FD close before the snippet runs.
STDIN, STDOUT, STDERR, REQUEST_FD, RESULT_FD, GO_FD, FORK_SERVER_FD = 0, 1, 2, 3, 4, 5, 6

MAX_REQUEST = 64 << 20              # a request to a child (code and input files), at least
CONTROL_FRAME_CAP = 64 << 20        # a message between the runner and the fork server, at least
REQUEST_SLACK = 8 << 20             # a request's other fields: file names, modules, the tools listing
JSON_ESCAPE_FACTOR = 6              # a control character is six characters of JSON (\u0001)
# A session's call at its time limit gets SIGINT (KeyboardInterrupt in the snippet, as a
# Jupyter interrupt) and keeps its state; code that has not stopped this much later is killed.
INTERRUPT_GRACE = 2.0

# Every error_type an answer can carry: a child's result says one of the
# first seven; the server alone says the others, before any child runs
# (invalid_argument: the request itself is malformed; isolation_unavailable:
# use_container=true on a host that lacks a layer; session_not_found: the
# session_id is unknown, closed or expired; input_too_large: files beyond
# SANDBOX_MAX_INPUT_SIZE; input_not_found: a file URI unknown or expired).
ERROR_TYPES = ("syntax_error", "security_violation", "runtime_error", "timeout", "memory_limit",
               "output_limit", "internal_error", "invalid_argument", "isolation_unavailable",
               "session_not_found", "rate_limited", "input_too_large", "input_not_found")
CHILD_ERROR_TYPES = frozenset(ERROR_TYPES[:7])

# Caps of the child's result channel (the request's output cap adds to them).
MAX_RESULT_HEADER = 256 << 10       # error, traceback, variables, events, section list
MAX_IMAGES = 8
MAX_IMAGE_BYTES = 4 << 20           # per PNG (the server inlines the small ones, links the rest)
MAX_IMAGES_BYTES = 8 << 20          # all PNGs together
MAX_OUTPUT_FILES = 20
MAX_OUTPUT_BYTES = 16 << 20         # all returned files together
MAX_REFUSED_FILES = 20              # files under out/ not returned, reported with the reason
MAX_STARTUP_FRAME = 16 << 10        # ready and setup_error, before a request is assigned


MAX_PATH = 255                      # characters of a returned file's path
# JSON values a child sends on (a result, a tool call's arguments): deeper ones could
# exhaust a recursive decoder or encoder on their way out, in the server's deeper stack
MAX_NESTING = 64


def unsafe_name(text: str) -> bool:
    """A name with control, format (bidi override), surrogate, private or unassigned
    characters, or a backslash: never returned as a file name (checked on both sides)."""
    return any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") or ch == "\\" for ch in text)


def request_frame_cap(max_code: int, max_input: int) -> int:
    """The largest request frame for code of `max_code` bytes and input files of
    `max_input` bytes together, which travel as base64; never below MAX_REQUEST."""
    largest = HEADER.size + JSON_ESCAPE_FACTOR * max_code + 4 * -(-max_input // 3) + REQUEST_SLACK
    return max(MAX_REQUEST, largest)


def control_frame_cap(request_cap: int) -> int:
    """A run order carries one request, with room for the order around it."""
    return max(CONTROL_FRAME_CAP, request_cap + REQUEST_SLACK)


def result_frame_cap(result_cap: int) -> int:
    """The largest result frame a child may send for a request whose result value is
    capped at ``result_cap`` bytes of JSON, and its repr at as many bytes of text."""
    return HEADER.size + MAX_RESULT_HEADER + 2 * result_cap + MAX_IMAGES_BYTES + MAX_OUTPUT_BYTES


class FrameError(Exception):
    """The peer sent something that is not one well-formed frame."""


def dumps(obj) -> bytes:
    # ensure_ascii keeps lone surrogates and control bytes escaped, so the
    # frame is always valid UTF-8 whatever strings the snippet produced.
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def nested_too_deep(value, limit: int = MAX_NESTING) -> bool:
    """Whether lists and dicts nest more than `limit` levels (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, tuple, dict)):
            if depth >= limit:
                return True
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return False


def encode(obj) -> bytes:
    body = dumps(obj)
    return HEADER.pack(len(body)) + body


def decode(body: bytes):
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise FrameError(f"frame is not valid JSON ({type(exc).__name__})") from None


def encode_sectioned(header: dict, sections: list[bytes] = ()) -> bytes:
    """A result-channel frame: header (JSON) then the raw sections, in order."""
    head = dumps(header)
    body = HEADER.pack(len(head)) + head + b"".join(sections)
    return HEADER.pack(len(body)) + body


def split_sectioned(body: bytes) -> tuple[dict, memoryview]:
    """The header (decoded, at most MAX_RESULT_HEADER bytes) and the undecoded rest."""
    if len(body) < HEADER.size:
        raise FrameError("frame too short for its header")
    (size,) = HEADER.unpack_from(body)
    if size > MAX_RESULT_HEADER or HEADER.size + size > len(body):
        raise FrameError(f"frame header of {size} bytes does not fit the frame or the cap")
    header = decode(bytes(body[HEADER.size:HEADER.size + size]))
    if not isinstance(header, dict):
        raise FrameError("frame header is not an object")
    if nested_too_deep(header):  # str() or dumps() of its fields could exhaust the stack later
        raise FrameError(f"frame header nests deeper than {MAX_NESTING} levels")
    return header, memoryview(body)[HEADER.size + size:]


class FrameReader:
    """Incremental reader for a non-blocking stream: feed bytes, iterate over the
    frames (decoded JSON, or the raw bodies with ``raw=True``). Frames are taken
    one at a time, so ``max_size`` may change between two frames of one chunk
    (the result channel's cap grows when the ready frame starts the request)."""

    def __init__(self, max_size: int, raw: bool = False):
        self.max_size = max_size
        self.raw = raw
        self._buf = bytearray()

    def feed(self, data: bytes):
        self._buf += data
        while len(self._buf) >= HEADER.size:
            (size,) = HEADER.unpack_from(self._buf)
            if size > self.max_size:
                raise FrameError(f"frame of {size} bytes exceeds the {self.max_size}-byte cap")
            if len(self._buf) < HEADER.size + size:
                break
            body = bytes(self._buf[HEADER.size:HEADER.size + size])
            del self._buf[:HEADER.size + size]
            yield body if self.raw else decode(body)
        if len(self._buf) > self.max_size + HEADER.size:
            raise FrameError("frame exceeds the size cap")

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame still buffered."""
        return len(self._buf)


def write_frame_fd(fd: int, frame: bytes) -> None:
    """Blocking write of one encoded frame to a file descriptor (used by children)."""
    view = memoryview(frame)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_frame_fd(fd: int, max_size: int):
    """Blocking read of exactly one frame from a file descriptor."""
    header = _read_exact(fd, HEADER.size)
    (size,) = HEADER.unpack(header)
    if size > max_size:
        raise FrameError(f"frame of {size} bytes exceeds the {max_size}-byte cap")
    return decode(_read_exact(fd, size))


def _read_exact(fd: int, size: int) -> bytes:
    chunks = []
    remaining = size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise FrameError("stream closed in the middle of a frame")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)

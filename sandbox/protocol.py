"""Length-prefixed JSON frames: the only format spoken between the server, the
zygote and the children.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8
JSON. Readers enforce a size cap before buffering anything, so a peer that
lies about the length or floods the channel costs nothing but an error.
"""

from __future__ import annotations

import json
import os
import struct

HEADER = struct.Struct(">I")


class FrameError(Exception):
    """The peer sent something that is not one well-formed frame."""


def encode(obj) -> bytes:
    # ensure_ascii keeps lone surrogates and control bytes escaped, so the
    # frame is always valid UTF-8 whatever strings the snippet produced.
    body = json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return HEADER.pack(len(body)) + body


def decode(body: bytes):
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise FrameError(f"frame is not valid JSON ({type(exc).__name__})") from None


class FrameReader:
    """Incremental reader for a non-blocking stream: feed bytes, pop frames."""

    def __init__(self, max_size: int):
        self.max_size = max_size
        self._buf = bytearray()

    def feed(self, data: bytes) -> list:
        self._buf += data
        frames = []
        while len(self._buf) >= HEADER.size:
            (size,) = HEADER.unpack_from(self._buf)
            if size > self.max_size:
                raise FrameError(f"frame of {size} bytes exceeds the {self.max_size}-byte cap")
            if len(self._buf) < HEADER.size + size:
                break
            body = bytes(self._buf[HEADER.size:HEADER.size + size])
            del self._buf[:HEADER.size + size]
            frames.append(decode(body))
        if len(self._buf) > self.max_size + HEADER.size:
            raise FrameError("frame exceeds the size cap")
        return frames

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame still buffered."""
        return len(self._buf)


def write_frame_fd(fd: int, obj) -> None:
    """Blocking write of one frame to a file descriptor (used by children)."""
    view = memoryview(encode(obj))
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

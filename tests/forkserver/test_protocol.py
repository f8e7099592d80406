"""The frame reader on its own: caps are checked before a body is buffered, and
a cap raised between two frames of one chunk applies to the second."""

from __future__ import annotations

import pytest

from sandbox.wire import messages, protocol


def frame(body: bytes) -> bytes:
    return protocol.HEADER.pack(len(body)) + body


def test_a_cap_raised_after_the_first_frame_applies_to_the_second_of_the_same_chunk():
    reader = protocol.FrameReader(16, raw=True)
    chunk = frame(b"ready") + frame(b"x" * 100)
    frames = reader.feed(chunk)
    assert next(frames) == b"ready"
    reader.max_size = 1000  # what the zygote does when "ready" starts the request
    assert list(frames) == [b"x" * 100]


def test_a_frame_over_the_cap_is_refused_from_its_length_alone():
    reader = protocol.FrameReader(16, raw=True)
    with pytest.raises(protocol.FrameError, match="exceeds the 16-byte cap"):
        list(reader.feed(protocol.HEADER.pack(1 << 30)))  # no body needed to refuse it
    assert reader.pending == 4


def test_frames_split_across_feeds_are_reassembled():
    reader = protocol.FrameReader(1 << 10)
    data = frame(b'{"op": "hello"}') + frame(b'{"op": "output"}')
    got = []
    for i in range(0, len(data), 3):
        got += list(reader.feed(data[i:i + 3]))
    assert got == [{"op": "hello"}, {"op": "output"}] and reader.pending == 0


def test_nesting_is_measured_without_recursion():
    from sandbox.wire.protocol import MAX_NESTING, nested_too_deep
    def nest(depth, leaf="x"):
        value = leaf
        for i in range(depth):
            value = [value] if i % 2 else {"k": value}
        return value
    assert not nested_too_deep(nest(MAX_NESTING)) and nested_too_deep(nest(MAX_NESTING + 1))
    assert nested_too_deep(nest(200000))   # far past the interpreter's recursion limit
    assert not nested_too_deep({"a": [1, 2, {"b": "c"}], "d": "e" * 10000})


def test_an_undecodable_message_from_the_fork_server_is_dropped_alone():
    """A message the server cannot decode (nested past its recursion limit) costs
    that message, not the fork server and every request in flight on it."""
    import asyncio
    from sandbox.forkserver import runner

    async def read_two():
        reader = asyncio.StreamReader()
        deep = b"[" * 100000 + b"]" * 100000
        reader.feed_data(protocol.HEADER.pack(len(deep)) + deep + protocol.encode({"id": "next", "result": {}}))
        reader.feed_eof()
        return await runner._read_message(reader), await runner._read_message(reader)

    assert asyncio.run(read_two()) == (None, messages.Answer(id="next", result={}))


def test_a_child_frame_header_nested_too_deep_is_refused_before_anything_reads_it():
    deep = b"[" * 500 + b"]" * 500
    head = b'{"kind": "result", "security_events": [{"kind": ' + deep + b'}]}'
    with pytest.raises(protocol.FrameError, match="nests deeper"):
        protocol.split_sectioned(protocol.HEADER.pack(len(head)) + head)
    fine = protocol.dumps({"kind": "result", "security_events": [{"kind": "x"}]})
    assert protocol.split_sectioned(protocol.HEADER.pack(len(fine)) + fine)[0]["kind"] == "result"

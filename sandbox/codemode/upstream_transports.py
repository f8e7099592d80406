"""Code mode, in the server: the byte streams to an upstream MCP server (stdio
or streamable HTTP), each capped per message as its bytes arrive.

An upstream is not trusted to answer in proportion: a 1 GB answer, or a line
that never ends, must cost the server neither that memory nor the call's
timeout. So no message is held past `MessageCap.limit` bytes: the reading
stops there, the cap records the cut, and the upstream's connection is ended
(`Upstream` reconnects), which fails every call still waiting on it at once;
`tool_calls` tells those calls that an answer was over SANDBOX_TOOL_RESULT_MAX.
"""

from __future__ import annotations

import contextlib
import sys
import time

import anyio

READ_CHUNK = 1 << 16
STOP_GRACE = 2.0          # seconds a stdio upstream has to exit once its stdin is closed
HTTP_TIMEOUT = 30.0       # seconds to connect, write, or wait in a pool
HTTP_READ_TIMEOUT = 300.0 # seconds between two reads of a response (calls have their own timeout)
SSE_EVENT_ENDS = (b"\n\n", b"\r\n\r\n", b"\r\r")


def message_limit(max_result_bytes: int) -> int:
    """The bytes one upstream message may have: room for the value twice (an MCP
    result carries it as text and as structured content), plus the envelope,
    images and tool listings."""
    return 2 * max_result_bytes + (1 << 20)


class AnswerTooLarge(Exception):
    """An upstream message grew past the cap; its connection is ended."""


class MessageCap:
    """The most bytes one message from an upstream may have, and when one was cut."""

    def __init__(self, limit: int, on_cut=lambda: None):
        self.limit = limit
        self.on_cut = on_cut      # the upstream ends its connection
        self.cut_at: float | None = None

    def cut(self) -> AnswerTooLarge:
        self.cut_at = time.monotonic()
        self.on_cut()
        return AnswerTooLarge(f"an answer passed {self.limit} bytes: reading stopped, connection ended")

    def cut_since(self, moment: float) -> bool:
        return self.cut_at is not None and self.cut_at >= moment


async def capped_lines(stream, cap: MessageCap):
    """The newline-ended lines of a byte stream, none longer than the cap."""
    pending = bytearray()
    while True:
        try:
            chunk = await stream.receive(READ_CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            return
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            pending += chunk[start:end]
            if len(pending) > cap.limit:
                raise cap.cut()
            yield bytes(pending)
            pending.clear()
            start = end + 1
        pending += chunk[start:]
        if len(pending) > cap.limit:
            raise cap.cut()


def _parsed(line: bytes):
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:   # the session hands it to the message handler
        return exc


@contextlib.asynccontextmanager
async def stdio(params, cap: MessageCap):
    """(read, write) streams of session messages to an upstream started as a process
    in a session of its own (so its whole tree is ended with it)."""
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage

    opened = time.monotonic()
    process = await anyio.open_process([params.command, *params.args], env=get_default_environment() | (params.env or {}),
                                       stderr=sys.stderr, start_new_session=True)
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        async with to_session:
            try:
                async for line in capped_lines(process.stdout, cap):
                    if line.strip():
                        await to_session.send(_parsed(line))
            except AnswerTooLarge:
                pass   # the cap has told the upstream, which ends this connection
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass   # the session is gone

    async def write() -> None:
        async with from_session:
            try:
                async for message in from_session:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((text + "\n").encode())
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await to_session.aclose()   # the upstream stopped reading: the session sees the end

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process, grace=0.0 if cap.cut_since(opened) else STOP_GRACE)
                for stream in (read_stream, write_stream, to_session, from_session):
                    await stream.aclose()
            tasks.cancel_scope.cancel()


async def _stop(process, grace: float) -> None:
    """Close its stdin, give it `grace` seconds to exit, then end its process group
    (at once after a cut: it may be writing without end)."""
    from mcp.os.posix.utilities import terminate_posix_process_tree
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    with anyio.move_on_after(grace):
        while process.returncode is None:
            await anyio.sleep(0.05)
    if process.returncode is None:
        await terminate_posix_process_tree(process, STOP_GRACE)
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()


@contextlib.asynccontextmanager
async def streamable_http(url: str, headers: dict | None, cap: MessageCap):
    """(read, write) streams to an upstream over streamable HTTP, every response
    body capped: a JSON body as a whole, an event stream per event."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    class CappedBody(httpx2.AsyncByteStream):
        def __init__(self, body, per_event: bool):
            self.body = body
            self.per_event = per_event

        async def __aiter__(self):
            held = 0          # bytes since the body's start, or since the last event's end
            tail = b""        # the end of the chunk before, for an event end split across chunks
            async for chunk in self.body:
                joined = tail + chunk
                ends = [joined.rfind(end) + len(end) for end in SSE_EVENT_ENDS if self.per_event and end in joined]
                held = len(joined) - max(ends) if ends else held + len(chunk)
                if held > cap.limit:
                    raise cap.cut()
                tail = joined[-3:]
                yield chunk

        async def aclose(self):
            await self.body.aclose()

    class CappedTransport(httpx2.AsyncBaseTransport):
        def __init__(self):
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request):
            response = await self.inner.handle_async_request(request)
            per_event = response.headers.get("content-type", "").startswith("text/event-stream")
            return httpx2.Response(response.status_code, headers=response.headers,
                                   stream=CappedBody(response.stream, per_event),
                                   extensions=response.extensions, request=request)

        async def aclose(self):
            await self.inner.aclose()

    # (httpx's default 5 s read timeout would end an event stream that is slow to start)
    timeout = httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT)
    async with httpx2.AsyncClient(headers=headers, transport=CappedTransport(), timeout=timeout) as client:
        # the SDK's own per-event limit is left to the cap above, which knows the setting
        async with streamable_http_client(url, http_client=client, max_sse_event_size=None) as streams:
            yield streams[0], streams[1]

"""The MCP stdio transport on asyncio pipes: no thread per line, and nothing left
blocked on stdin when the server stops (the SDK's transport reads stdin in a
worker thread, so SIGTERM or Ctrl-C waited for the client to close stdin).

While serving, fd 0 points at /dev/null and fd 1 at stderr, as with the SDK's
transport, so nothing a child inherits can read the client's input or write
into the answer; the wire lives on private duplicates. A line that is not
JSON-RPC (a person typing at the terminal) gets the usual parse error, and one
line on stderr saying what this program speaks. fd 0/1 stay diverted after the
transport ends: the process is stopping and nothing may reach the wire then.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import select
import sys
from contextlib import asynccontextmanager

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from sandbox.config import MAX_MESSAGE_BYTES as MAX_LINE  # longer lines are refused unread
HUMAN_HINT = ("mcp-server-python-sandbox: this program speaks MCP (JSON-RPC, one message per line) on "
              "stdin/stdout; start it from an MCP client (see the README: 'Install and connect a client') "
              "instead of typing into it")


def usable() -> bool:
    """asyncio pipes take what epoll can watch: pipes, sockets and terminals, not regular
    files or /dev/null (with which the SDK's threaded transport reads EOF and ends)."""
    try:
        with select.epoll() as poller:
            poller.register(0, select.EPOLLIN)
            poller.register(1, select.EPOLLOUT)
    except OSError:
        return False
    return True


def _claim(fd: int, diversion: int) -> int:
    """A private duplicate of fd for the wire; fd itself now points at `diversion`."""
    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.dup2(diversion, fd)
    os.close(diversion)
    return private


@asynccontextmanager
async def stdio_transport(max_line: int = MAX_LINE):
    """`max_line`: config.message_cap(settings), the longest message read."""
    loop = asyncio.get_running_loop()
    wire_in = _claim(0, os.open(os.devnull, os.O_RDONLY))
    wire_out = _claim(1, os.dup(2))
    reader = asyncio.StreamReader(limit=max_line, loop=loop)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(wire_in, "rb", buffering=0))
    write_transport, write_protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop=loop), os.fdopen(wire_out, "wb", buffering=0))
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)

    read_stream_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_stream_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_lines() -> None:
        hinted = False
        async with read_stream_writer:
            while True:
                try:
                    line = await reader.readuntil(b"\n")
                except asyncio.IncompleteReadError as exc:
                    line = exc.partial
                    if not line:
                        return  # EOF: the client is gone
                except asyncio.LimitOverrunError:
                    await read_stream_writer.send(ValueError(f"message longer than {max_line} bytes"))
                    await _skip_line(reader)
                    continue
                if not line.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:  # noqa: BLE001 - reported to the client as a parse error
                    if not hinted:
                        print(HUMAN_HINT, file=sys.stderr, flush=True)
                        hinted = True
                    await read_stream_writer.send(exc)
                    continue
                await read_stream_writer.send(SessionMessage(message))

    async def write_messages() -> None:
        async with write_stream_reader:
            async for session_message in write_stream_reader:
                data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                writer.write(data.encode("utf-8") + b"\n")
                await writer.drain()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_lines)
            tg.start_soon(write_messages)
            try:
                yield read_stream, write_stream
            finally:
                tg.cancel_scope.cancel()
    finally:
        # fd 0/1 stay diverted: the server is ending, and nothing may write on the wire now
        read_transport.close()
        write_transport.close()


async def _skip_line(reader: asyncio.StreamReader) -> None:
    """Discard the rest of an over-long line, a chunk at a time."""
    while True:
        try:
            await reader.readuntil(b"\n")
            return
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(exc.consumed)
        except asyncio.IncompleteReadError:
            return

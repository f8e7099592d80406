"""A small upstream MCP server of our own for the code-mode tests: well-behaved
tools, one that writes, and tools that misbehave in each way a snippet's call
must survive (hang, crash the server, answer 10 MB or 256 MB or a line that
never ends, report an error, break their own output schema)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

READ = ToolAnnotations(read_only_hint=True)
server = MCPServer("fault-server")
PNG = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                                     "0000000d4944415478da63f8ffff3f0005fe02fea7d6a8960000000049454e44ae426082")).decode()
WRITES: list = []
BACKGROUND: set = set()   # tasks that outlive the call that started them
WIRE = os.dup(1)          # the client's pipe: the SDK points fd 1 at stderr while it serves


class Sum(BaseModel):
    total: int


@server.tool(annotations=READ)
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return Sum(total=a + b)


@server.tool(annotations=READ)
def distinct(tags: set[int]) -> int:
    """Count distinct tags (its inputSchema says uniqueItems)."""
    return len(tags)


@server.tool(annotations=READ)
def code(value: Annotated[str, Field(pattern=r"^(a+)+$")]) -> str:
    """Take a code of a's (its inputSchema's pattern backtracks badly on 'aaa...!')."""
    return value


@server.tool(annotations=READ)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def record(item: str) -> str:
    """Remember an item (a write: not read-only)."""
    WRITES.append(item)
    return f"recorded {len(WRITES)}"


@server.tool(annotations=READ)
def environment() -> list:
    """The names of this server's environment variables."""
    return sorted(os.environ)


@server.tool(annotations=READ)
async def grow(ctx: Context, later: float = 0.0) -> str:
    """Add a tool named grown, and say the list changed (`later` seconds after answering)."""
    def grown() -> str:
        """Appeared at run time."""
        return "grown"

    async def change() -> None:
        await asyncio.sleep(later)
        if "grown" not in {tool.name for tool in await server.list_tools()}:
            server.add_tool(grown, annotations=READ)
        await ctx.notify_tools_changed()              # subscriptions/listen (MCP 2026-07-28)
        await ctx.session.send_tool_list_changed()    # the notification of earlier versions

    if later:
        BACKGROUND.add(asyncio.ensure_future(change()))
    else:
        await change()
    return "grew"


@server.tool(annotations=READ)
async def hang() -> str:
    """Never answer (and say so in the file FAULT_SERVER_MARKS names, if set)."""
    if os.environ.get("FAULT_SERVER_MARKS"):
        with open(os.environ["FAULT_SERVER_MARKS"], "a") as marks:
            marks.write("hang\n")
    await asyncio.sleep(3600)
    return "late"


@server.tool(annotations=READ)
def crash() -> str:
    """Kill this server."""
    sys.stderr.flush()
    os._exit(3)


@server.tool(annotations=READ)
def big(megabytes: int = 10) -> str:
    """Answer `megabytes` MB (10 by default)."""
    return "x" * (megabytes << 20)


@server.tool(annotations=READ)
def flood(ctx: Context, megabytes: int = 256) -> str:
    """Answer with one well-formed line of `megabytes` MB, written straight to the
    client's pipe as it is made (this server never holds it)."""
    head = b'{"jsonrpc":"2.0","id":' + json.dumps(ctx.request_id).encode() + b',"result":{"content":[{"type":"text","text":"'
    _write_forever(head, megabytes << 20, b'"}]}}\n')
    return "unreachable"


@server.tool(annotations=READ)
def endless() -> str:
    """Write a line that never ends."""
    _write_forever(b'{"jsonrpc":"2.0","id":', None, b"")
    return "unreachable"


def _write_forever(head: bytes, size: "int | None", tail: bytes) -> None:
    os.write(WIRE, head)
    chunk, written = b"x" * (1 << 16), 0
    while size is None or written < size:
        os.write(WIRE, chunk)   # blocks while the client does not read; fails once it hung up
        written += len(chunk)
    os.write(WIRE, tail)


@server.tool(annotations=READ)
def fail() -> str:
    """Report an error."""
    raise ValueError("the fault server refuses, as asked")


@server.tool(annotations=READ)
def bad_output() -> Sum:
    """Break its own output schema."""
    return {"total": "not a number"}  # type: ignore[return-value]


@server.tool(annotations=READ)
def picture() -> ImageContent:
    """Return a 1x1 PNG."""
    return ImageContent(type="image", data=PNG, mime_type="image/png")


@server.tool(annotations=READ)
def nested(depth: int) -> TextContent:
    """Answer JSON text of `depth` nested lists (no structured content)."""
    return TextContent(type="text", text="[" * depth + "]" * depth)


if __name__ == "__main__":
    # fault_server.py [--http PORT [--json]]: over streamable HTTP, answering with event
    # streams, or with JSON bodies
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port, json_response="--json" in sys.argv)
    else:
        server.run()

"""Code mode, inside the sandbox: the `tools` object a snippet calls other MCP
servers' tools with, `tools.<server>.<tool>(**arguments)`.

A call is only a message: a "tool_call" frame on the result channel, then the
answer read from the request channel. The fork server passes the call on to
the MCP server, which checks everything (the tool is exposed, the budget, the
arguments against the tool's schema) and performs it; nothing here is trusted
by anyone, so a snippet running real Python that writes such frames itself
gains nothing it could not do through this object. No new system call: the two
pipes are the child's own.
"""

from __future__ import annotations

import base64

from sandbox.wire import protocol
from sandbox.wire.protocol import REQUEST_FD, RESULT_FD

MAX_ANSWER = 32 << 20       # an answer frame (the server caps the value far below)
MAX_ARGUMENTS = 128 << 10   # a call's arguments, as JSON (the frame header that carries them is capped)


class ToolError(Exception):
    """A tool call failed: the tool said so (isError), it was refused, or a limit was reached."""


class Image:
    """An image a tool returned."""

    def __init__(self, mime_type: str, data: bytes):
        self.mime_type = mime_type
        self.data = data

    def __repr__(self) -> str:
        return f"Image({self.mime_type!r}, {len(self.data)} bytes)"


class _Channel:
    """The process's one channel. A session's process serves many calls, each with
    its own nonce, and a tool function (or `tools` itself) kept in a variable from
    an earlier call must speak with the running call's nonce: with a stale one the
    fork server takes the frame for a forgery and ends the session."""

    def __init__(self):
        self.nonce: str | None = None   # None while the running request has no tools
        self.next_id = 0

    def call(self, server: str, tool: str, arguments: dict):
        if self.nonce is None:
            raise ToolError(f"tools.{server}.{tool}: this call has no tools (the server's code mode offers none "
                            "now): get_sandbox_info lists the tool servers and their state")
        self.next_id += 1
        frame = protocol.encode_sectioned({"kind": "tool_call", "nonce": self.nonce, "call_id": self.next_id,
                                           "server": server, "tool": tool, "arguments": arguments})
        protocol.write_frame_fd(RESULT_FD, frame)
        answer = protocol.read_frame_fd(REQUEST_FD, MAX_ANSWER)
        if not isinstance(answer, dict) or answer.get("call_id") != self.next_id:
            raise ToolError("the sandbox lost track of this tool call")
        if not answer.get("ok"):
            raise ToolError(str(answer.get("error") or "the tool call failed"))
        return _value(answer)


_CHANNEL = _Channel()


def start_call(nonce: str | None) -> None:
    """A request begins: its nonce if it may call tools, else None."""
    _CHANNEL.nonce = nonce


def _value(answer: dict):
    images = [Image(str(i.get("mime_type")), base64.b64decode(i.get("data") or ""))
              for i in answer.get("images") or () if isinstance(i, dict)]
    if answer.get("value") is None and images:
        return images[0] if len(images) == 1 else images
    return answer.get("value") if not images else {"value": answer["value"], "images": images}


class _Namespace:
    """tools, or tools.<server>: attributes that are there, and for any other
    name an error that lists what is."""

    def __init__(self, where: str, members: dict):
        self.__dict__.update(members)
        self._where = where

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        known = sorted(key for key in self.__dict__ if not key.startswith("_"))
        raise AttributeError(f"{self._where} has no {name!r}; it has: {', '.join(known) or 'nothing'}"
                             + ("" if self._where == "tools" else
                                " (get_sandbox_info lists every tool with its arguments)"))

    def __repr__(self) -> str:
        return f"<{self._where}: {', '.join(sorted(k for k in self.__dict__ if not k.startswith('_')))}>"


def build(listing: dict) -> _Namespace:
    """`tools` from {server attribute: {tool attribute: its stub line}}. Tools the
    policy does not expose are there too: the server refuses them, saying why."""
    servers = {}
    for server, tools in listing.items():
        functions = {tool: _tool_function(_CHANNEL, server, tool, str(doc)) for tool, doc in tools.items()}
        servers[server] = _Namespace(f"tools.{server}", functions)
    return _Namespace("tools", servers)


def _tool_function(channel: _Channel, server: str, tool: str, doc: str):
    def call(*positional, **arguments):
        if positional:
            raise TypeError(f"tools.{server}.{tool} takes keyword arguments only, named as in its schema: {doc}")
        if protocol.nested_too_deep(arguments):
            raise ToolError(f"tools.{server}.{tool}: the arguments nest lists and dicts more than "
                            f"{protocol.MAX_NESTING} levels deep: flatten them (a list of rows, or a JSON string)")
        try:
            size = len(protocol.dumps(arguments))
        except (TypeError, ValueError) as exc:
            raise ToolError(f"tools.{server}.{tool}: arguments must be JSON values: str, int, float, bool, "
                            f"None, lists and dicts of them ({exc})") from None
        if size > MAX_ARGUMENTS:
            raise ToolError(f"tools.{server}.{tool}: the arguments take {size} bytes as JSON, more than the "
                            f"{MAX_ARGUMENTS} a call may send: send less per call")
        return channel.call(server, tool, arguments)

    call.__name__ = tool
    call.__qualname__ = f"tools.{server}.{tool}"
    call.__doc__ = doc
    return call

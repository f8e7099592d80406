"""The server a bad configuration or a failed start leaves: it still speaks MCP, so the
client can show why.

A client that starts a server which exits at once shows "Connection closed", with the
reason only in a log few users open. Instead this server completes `initialize` (its
instructions carry the problem), lists the sandbox's tools with the problem as their
description, and answers every call with it: the setting, the value, what is accepted,
what to install, or what the host lacks. Nothing runs: no fork server, no sandbox.
"""

from __future__ import annotations

import contextlib

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

from sandbox import __version__

SERVER_NAME = "mcp-server-python-sandbox"
# The tools the working server offers: a model that calls any of them reads the problem.
TOOL_NAMES = ("execute_code", "create_session", "close_session", "validate_code", "get_sandbox_info")


def problem(message: str) -> str:
    return (f"The sandbox is not running: its configuration failed: {message}. The operator fixes the setting "
            "in the MCP client's configuration for this server (its env) and restarts the server.")


def start_problem(message: str) -> str:
    return (f"The sandbox is not running: it could not start: {message}. The operator fixes this on the host "
            "or in the server's settings (the MCP client's env for it) and restarts the server; its log on "
            "stderr has the details.")


def build_failed_server(message: str, explain=problem) -> MCPServer:
    """`explain`: problem (a setting was refused) or start_problem (the sandbox could not start)."""
    text = explain(message)
    server = MCPServer(SERVER_NAME, version=__version__, instructions=text)
    offer_the_problem(server, text)
    return server


def offer_the_problem(server: MCPServer, text: str) -> None:
    """The sandbox's tools on `server` become `text`: their description, and every call's answer."""

    async def unavailable() -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    for name in TOOL_NAMES:
        with contextlib.suppress(ToolError):   # (a failed server has none yet)
            server.remove_tool(name)
        server.add_tool(unavailable, name=name, description=text, structured_output=False)

"""SANDBOX_TOOL_SERVERS: the upstream MCP servers whose tools snippets may call
(code mode), in the format desktop clients use, plus a policy per server:

    {"mcpServers": {
        "time":   {"command": "mcp-server-time", "args": [], "env": {}},
        "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
                   "tools": ["read_graph", "create_entities"], "allow_writes": true},
        "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ..."}}}}

"tools" (optional) lists the tools exposed, by name; "allow_writes" (default
false) lets snippets call tools that do not declare readOnlyHint: true (a
write tool called fifty times in a loop is not one model-visible call).
"""

from __future__ import annotations

import json
import keyword
import re
from dataclasses import dataclass, field

MAX_FILE = 1 << 20
_NAME = re.compile(r"[^A-Za-z0-9_]")


class ToolServersError(ValueError):
    """The file cannot be used; the message says what is wrong and what is accepted."""


@dataclass(frozen=True)
class ToolServer:
    name: str                              # as in the file
    attribute: str                         # the identifier snippets use: tools.<attribute>
    command: str | None = None
    args: tuple = ()
    env: dict = field(default_factory=dict, hash=False)
    url: str | None = None
    headers: dict = field(default_factory=dict, hash=False, repr=False)
    tools: frozenset | None = None         # the names exposed; None: all
    allow_writes: bool = False


def identifier(name: str) -> str:
    """A tool or server name as a Python identifier: other characters become _,
    a leading digit or a keyword gets an underscore."""
    ident = _NAME.sub("_", name) or "_"
    if ident[0].isdigit():
        ident = "_" + ident
    if keyword.iskeyword(ident):
        ident += "_"
    return ident


def load(path: str) -> tuple[ToolServer, ...]:
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE + 1)
    except OSError as exc:
        raise ToolServersError(f"cannot read {path}: {exc.strerror}") from None
    if len(raw) > MAX_FILE:
        raise ToolServersError(f"{path} is larger than {MAX_FILE} bytes")
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise ToolServersError(f"{path} is not JSON: {exc}") from None
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        raise ToolServersError(f'{path} needs an object "mcpServers": {{"name": {{"command": ...}}}}')
    parsed, seen = [], {}
    for name, spec in servers.items():
        server = _server(name, spec)
        if server.attribute in seen:
            raise ToolServersError(f"servers {seen[server.attribute]!r} and {name!r} would both be "
                                   f"tools.{server.attribute}: rename one")
        seen[server.attribute] = name
        parsed.append(server)
    return tuple(parsed)


def _server(name: str, spec) -> ToolServer:
    where = f"mcpServers.{name}"
    if not isinstance(spec, dict):
        raise ToolServersError(f"{where} must be an object")
    known = {"command", "args", "env", "url", "headers", "tools", "allow_writes", "type", "description"}
    unknown = set(spec) - known
    if unknown:
        raise ToolServersError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(known)})")
    command, url = spec.get("command"), spec.get("url")
    if (command is None) == (url is None):
        raise ToolServersError(f'{where} needs either "command" (stdio) or "url" (streamable HTTP)')
    args, env, headers = spec.get("args", []), spec.get("env", {}), spec.get("headers", {})
    if command is not None and not (isinstance(command, str) and command):
        raise ToolServersError(f"{where}.command must be a non-empty string")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise ToolServersError(f"{where}.url must be an http:// or https:// URL")
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        raise ToolServersError(f"{where}.args must be a list of strings")
    for key, value in (("env", env), ("headers", headers)):
        if not (isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())):
            raise ToolServersError(f"{where}.{key} must map strings to strings")
    tools = spec.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(t, str) for t in tools)):
        raise ToolServersError(f"{where}.tools must be a list of tool names")
    allow_writes = spec.get("allow_writes", False)
    if not isinstance(allow_writes, bool):
        raise ToolServersError(f"{where}.allow_writes must be true or false")
    return ToolServer(name=name, attribute=identifier(name), command=command, args=tuple(args), env=dict(env),
                      url=url, headers=dict(headers), tools=frozenset(tools) if tools is not None else None,
                      allow_writes=allow_writes)

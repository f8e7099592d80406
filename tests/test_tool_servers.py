"""SANDBOX_TOOL_SERVERS: the file's format, its errors, and tool names as identifiers."""

from __future__ import annotations

import json

import pytest

from sandbox.tool_servers import ToolServersError, identifier, load


def write(tmp_path, document) -> str:
    path = tmp_path / "servers.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return str(path)


def test_the_desktop_format_with_a_policy(tmp_path):
    servers = load(write(tmp_path, {"mcpServers": {
        "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
        "my-notes": {"url": "https://notes.example/mcp", "headers": {"Authorization": "Bearer x"},
                     "tools": ["search"], "allow_writes": True}}}))
    time, notes = servers
    assert (time.attribute, time.command, time.args, time.tools, time.allow_writes) == (
        "time", "mcp-server-time", ("--local-timezone", "UTC"), None, False)
    assert (notes.attribute, notes.url, notes.tools, notes.allow_writes) == (
        "my_notes", "https://notes.example/mcp", frozenset({"search"}), True)
    assert "Bearer" not in repr(notes)          # headers carry secrets: kept out of reprs


@pytest.mark.parametrize("document, needle", [
    ("not json", "not JSON"),
    ({"servers": {}}, '"mcpServers"'),
    ({"mcpServers": {"a": {}}}, 'either "command"'),
    ({"mcpServers": {"a": {"command": "x", "url": "http://y"}}}, 'either "command"'),
    ({"mcpServers": {"a": {"url": "file:///etc/passwd"}}}, "http:// or https://"),
    ({"mcpServers": {"a": {"command": "x", "args": "--flag"}}}, "args must be a list"),
    ({"mcpServers": {"a": {"command": "x", "env": {"A": 1}}}}, "env must map strings"),
    ({"mcpServers": {"a": {"command": "x", "allow_writes": "yes"}}}, "allow_writes must be true or false"),
    ({"mcpServers": {"a": {"command": "x", "tool": ["y"]}}}, "unknown keys"),
    ({"mcpServers": {"a-b": {"command": "x"}, "a_b": {"command": "y"}}}, "would both be tools.a_b"),
])
def test_errors_name_what_is_wrong(tmp_path, document, needle):
    with pytest.raises(ToolServersError, match=None) as caught:
        load(write(tmp_path, document))
    assert needle in str(caught.value)


@pytest.mark.parametrize("name, ident", [("get-time", "get_time"), ("9lives", "_9lives"), ("class", "class_"),
                                         ("a.b/c", "a_b_c"), ("", "_"), ("ok_name", "ok_name")])
def test_names_become_identifiers(name, ident):
    assert identifier(name) == ident and ident.isidentifier()

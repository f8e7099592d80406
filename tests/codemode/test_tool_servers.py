"""SANDBOX_TOOL_SERVERS: the file's format, its errors, and tool names as identifiers."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from sandbox.codemode import upstreams
from sandbox.tool_servers import ToolServer, ToolServersError, identifier, load


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


def test_tools_whose_names_sanitise_alike_are_all_callable():
    """get-time and get_time are both `get_time` as identifiers: the later one gets a
    suffix (logged, and in get_sandbox_info's `renamed`), neither is dropped."""
    import asyncio
    from types import SimpleNamespace

    from sandbox.tool_servers import ToolServer
    from sandbox.codemode.upstreams import Registry

    def tool(name):
        return SimpleNamespace(name=name, description=name, input_schema={"type": "object"}, output_schema=None,
                               annotations=SimpleNamespace(read_only_hint=True))

    class Session:
        async def list_tools(self):
            return SimpleNamespace(tools=[tool("get-time"), tool("get_time"), tool("get.time")])

    registry = Registry((ToolServer(name="clock", attribute="clock", command="x"),))
    upstream = registry.upstreams["clock"]
    asyncio.run(upstream._list(Session()))
    upstream.session = Session()
    assert {t.attribute: t.name for t in upstream.tools.values()} == {
        "get_time": "get-time", "get_time_2": "get_time", "get_time_3": "get.time"}
    [status] = registry.status()
    assert status["renamed"] == {"get_time": "get_time_2", "get.time": "get_time_3"}
    assert sorted(stub.split("(")[0] for stub in registry.stubs()) == [
        "tools.clock.get_time", "tools.clock.get_time_2", "tools.clock.get_time_3"]


def test_an_upstreams_description_reaches_the_model_without_terminal_controls():
    server = ToolServer(name="up", attribute="up", command="true")
    tool = SimpleNamespace(name="t", description="Reads\n the \x1b]52;c;eA==\x07 docs\u202e", input_schema={"type": "object", "properties": {"xs": {"type": "array"}}},
                           output_schema=None, annotations=None)
    assert upstreams.RemoteTool(server, tool).stub() == ("tools.up.t(xs: list = ...) -> Any  "
                                                         "# Reads the \\x1b]52;c;eA==\\x07 docs\\u202e")


def test_a_tool_with_thousands_of_parameters_gets_a_stub_of_bounded_size():
    """The stub goes into the execute_code description and into every request's listing."""
    server = ToolServer(name="up", attribute="up", command="true")
    properties = {f"p{i}" + "x" * 500: {"type": "string"} for i in range(5000)}
    tool = SimpleNamespace(name="t", description="d", input_schema={"type": "object", "properties": properties},
                           output_schema=None, annotations=None)
    stub = upstreams.RemoteTool(server, tool).stub()
    assert len(stub) < 10_000 and stub.count(": str") == upstreams.MAX_SHOWN_PARAMETERS, len(stub)
    assert f"... ({5000 - upstreams.MAX_SHOWN_PARAMETERS} more parameters)" in stub


def _stub(input_schema, output_schema=None, name="t"):
    server = ToolServer(name="up", attribute="up", command="true")
    tool = SimpleNamespace(name=name, description="", input_schema=input_schema, output_schema=output_schema,
                           annotations=None)
    return upstreams.RemoteTool(server, tool).call_form()


ENTITIES = {"type": "object", "required": ["entities"], "properties": {"entities": {
    "type": "array", "items": {"type": "object", "required": ["name", "entityType", "observations"], "properties": {
        "name": {"type": "string"}, "entityType": {"type": "string"},
        "observations": {"type": "array", "items": {"type": "string"}}}}}}}


def test_a_stub_shows_the_shape_of_nested_arguments_and_results():
    assert _stub(ENTITIES, {"type": "object", "properties": {"count": {"type": "integer"}}}) == (
        "tools.up.t(entities: list[{name: str, entityType: str, observations: list[str]}]) -> {count?: int}")
    # a result shows its keys, one level (every stub goes into execute_code's description)
    assert _stub({}, ENTITIES) == "tools.up.t() -> {entities: list[{...}]}"
    assert _stub({"type": "object", "properties": {
        "unit": {"enum": ["c", "f"]}, "limit": {"type": ["integer", "null"]},
        "tags": {"type": "object", "additionalProperties": {"type": "number"}},
        "when": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/Span"}]}},
        "$defs": {"Span": {"type": "object", "properties": {"days": {"type": "integer"}}, "required": ["days"]}}}) == (
        "tools.up.t(unit: 'c' | 'f' = ..., limit: int | None = ..., tags: dict[str, float] = ..., "
        "when: str | {days: int} = ...) -> Any")


def test_a_recursive_schema_ends_in_an_ellipsis():
    tree = {"$defs": {"Node": {"type": "object", "required": ["value"], "properties": {
        "value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
        "type": "object", "required": ["root"], "properties": {"root": {"$ref": "#/$defs/Node"}}}
    assert _stub(tree) == "tools.up.t(root: {value: int, children?: list[...]}) -> Any"
    assert _stub({"type": "object", "properties": {"me": {"$ref": "#"}}}) == "tools.up.t(me: {me?: ...} = ...) -> Any"


def test_a_huge_or_deep_schema_gives_a_stub_of_bounded_size():
    """Wide objects and unions are cut (`...`), deep ones closed (`{...}`), and a call form
    that would still be too long opens fewer levels."""
    wide = {"type": "object", "properties": {f"k{i}": {"anyOf": [
        {"type": "array", "items": {"type": "object", "properties": {f"q{j}": {"type": "string"} for j in range(50)}}}
        for _ in range(50)]} for i in range(50)}}
    deep = leaf = {"type": "array", "items": {}}
    for _ in range(10_000):
        leaf["items"] = {"type": "object", "properties": {"a": {"type": "array", "items": {}}}}
        leaf = leaf["items"]["properties"]["a"]
    form = _stub({"type": "object", "properties": {f"p{i}": wide for i in range(5)} | {"deep": deep}})
    assert len(form) <= upstreams.MAX_CALL_FORM and "{...}" in form and "deep: list[" in form, form
    # many parameters: each one's shape closed at the first level
    many = _stub({"type": "object", "properties": {f"p{i}": wide for i in range(50)}})
    assert many.count(": {...} = ...") == upstreams.MAX_SHOWN_PARAMETERS, many
    assert _stub({"type": "object", "properties": {"deep": deep}}) == (
        "tools.up.t(deep: list[{a?: list[{a?: list[{a?: list[{...}]}]}]}] = ...) -> Any")


def test_the_keys_and_values_of_a_shape_reach_a_terminal_escaped():
    form = _stub({"type": "object", "properties": {"x": {"type": "object", "properties": {
        "\x1b]52;c;eA==\x07": {"type": "string"}, "\u202eevil": {"enum": ["\x1b[2J", 1]}}}}})
    assert "\x1b" not in form and "\u202e" not in form and "\x07" not in form, form
    assert form == ("tools.up.t(x: {'\\x1b]52;c;eA==\\x07'?: str, '\\u202eevil'?: '\\x1b[2J' | 1} = ...) -> Any")

"""Code mode through a real MCP client, against upstream MCP servers nobody here
wrote (mcp-server-time from PyPI, @modelcontextprotocol/server-memory from npm),
our own fault server, and this server itself: a snippet calls their tools
through `tools`, the server checks and performs every call, and each refusal or
failure is a clear ToolError while the server keeps serving. RestrictedPython
on and off."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_client import LAUNCHER, RawServer, blocking_session, server_command, server_env  # noqa: E402
from slowness import scaled  # noqa: E402

# an upstream's answer must come within it on this machine; a hanging one is cut off there
TOOL_CALL_TIMEOUT = round(scaled(6))
from npm_packages import installed  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
MEMORY_SERVER = "@modelcontextprotocol/server-memory@2026.8.31"
TIME_SERVER = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent)) or shutil.which("mcp-server-time")


def tool_servers_file(directory: Path, **extra) -> str:
    if TIME_SERVER is None:
        pytest.skip("mcp-server-time is not installed (the test extra installs it)")
    servers = {
        "time": {"command": TIME_SERVER, "args": []},
        "memory": {"command": installed("server-memory", MEMORY_SERVER, "mcp-server-memory"),
                   "env": {"MEMORY_FILE_PATH": str(directory / "memory.jsonl")}, "allow_writes": True},
        "faults": {"command": sys.executable, "args": [str(HERE / "tool_servers" / "fault_server.py")]},
        "sandbox": {"command": sys.executable, "args": [str(LAUNCHER)], "tools": ["execute_code"],
                    "allow_writes": True},
        **extra,
    }
    path = directory / "tool-servers.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


@pytest.fixture(scope="module", params=["rp", "norp"])
def server(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp("code-mode")
    log = directory / "audit.jsonl"
    env = {"SANDBOX_TOOL_SERVERS": tool_servers_file(
               directory, broken={"command": str(directory / "no-such-server")}),
           "SANDBOX_TOOL_CALL_BUDGET": "20", "SANDBOX_TOOL_CALL_TIMEOUT": str(TOOL_CALL_TIMEOUT),
           "SANDBOX_RESTRICTED_PYTHON": "true" if request.param == "rp" else "false",
           "SANDBOX_AUDIT_LOG": str(log)}
    with blocking_session(env, start_timeout=120.0) as handle:
        handle.mode, handle.audit_log = request.param, log
        yield handle


def run(server, code, timeout=20):
    return server.call("execute_code", {"code": code, "timeout": timeout})


def test_a_loop_over_time_zones_in_one_call(server):
    data, _ = run(server, "zones = ['Europe/Paris', 'Asia/Tokyo', 'America/New_York', 'UTC']\n"
                          "result = {}\n"
                          "for zone in zones:\n"
                          "    now = tools.time.get_current_time(timezone=zone)\n"
                          "    result[zone] = now['timezone']\n"
                          "converted = tools.time.convert_time(source_timezone='UTC', time='12:00',\n"
                          "                                    target_timezone='Asia/Tokyo')\n"
                          "result['tokyo_noon_utc'] = converted['target']['datetime'][11:16]")
    assert data["success"], data
    assert data["result"] == {"Europe/Paris": "Europe/Paris", "Asia/Tokyo": "Asia/Tokyo",
                              "America/New_York": "America/New_York", "UTC": "UTC", "tokyo_noon_utc": "21:00"}
    assert [c["tool"] for c in data["tool_calls"]] == ["get_current_time"] * 4 + ["convert_time"]
    assert all(c["ok"] and c["server"] == "time" for c in data["tool_calls"])


def test_a_knowledge_graph_written_and_read_back(server):
    tag = f"{server.mode}{time.time_ns()}"
    data, _ = run(server, f"people = ['ada_{tag}', 'alan_{tag}']\n"
                          "tools.memory.create_entities(entities=[\n"
                          "    {'name': p, 'entityType': 'person', 'observations': ['wrote programs']} for p in people])\n"
                          "tools.memory.create_relations(relations=[\n"
                          "    {'from': people[0], 'to': people[1], 'relationType': 'inspired'}])\n"
                          "graph = tools.memory.read_graph()\n"
                          f"mine = [e['name'] for e in graph['entities'] if e['name'].endswith('{tag}')]\n"
                          f"links = [(r['from'], r['relationType'], r['to']) for r in graph['relations'] if r['to'].endswith('{tag}')]\n"
                          "result = [sorted(mine), links]")
    assert data["success"], data
    assert data["result"] == [[f"ada_{tag}", f"alan_{tag}"], [[f"ada_{tag}", "inspired", f"alan_{tag}"]]], data


@pytest.mark.parametrize("code, needle", [
    ("tools.faults.hang()", "did not answer within"),
    ("tools.faults.big()", "SANDBOX_TOOL_RESULT_MAX"),
    ("tools.faults.fail()", "Error executing tool fail"),
    ("tools.faults.bad_output()", "bad_output"),
    ("tools.faults.add(a='two', b=2)", "bad arguments: 'two' is not of type 'integer'"),
    ("tools.faults.add(a=1)", "bad arguments: 'b' is a required property; it takes tools.faults.add(a: int, b: int)"),
])
def test_misbehaving_tools_give_a_clear_tool_error(server, code, needle):
    data, result = run(server, "try:\n    " + code + "\nexcept ToolError as e:\n    result = 'ToolError: ' + str(e)",
                       timeout=TOOL_CALL_TIMEOUT + scaled(9))
    assert data["success"] and data["result"].startswith("ToolError: ") and needle in data["result"], data
    assert _serving_again(server)["result"] == {"total": 3}


def test_a_stub_shows_what_each_entity_needs(server):
    """The memory server's create_entities takes a list of objects: the stub, the
    description, the function's __doc__ and help() show their keys, so the first call is right."""
    shape = "tools.memory.create_entities(entities: list[{name: str, entityType: str, observations: list[str]}])"
    info, _ = server.call("get_sandbox_info")
    assert any(stub.startswith(shape) for stub in info["tool_stubs"]), info["tool_stubs"]
    assert shape in server.tools["execute_code"].description
    assert run(server, "tools.memory.create_entities.__doc__")[0]["result"].startswith(shape)
    if server.mode == "rp":   # (without RestrictedPython the interpreter runs without site: no help())
        assert shape in run(server, "help(tools.memory.create_entities)")[0]["stdout"]


def test_a_call_with_positional_arguments_says_how_to_call(server):
    data, _ = run(server, "try:\n    tools.faults.add(1, 2)\nexcept TypeError as e:\n    result = str(e)")
    assert data["success"], data
    assert "takes keyword arguments only" in data["result"] and "tools.faults.add(a: int, b: int)" in data["result"], data
    assert run(server, "tools.faults.add.__doc__")[0]["result"].startswith("tools.faults.add(a: int, b: int)")


def test_an_upstream_that_crashes_is_reported_and_comes_back(server):
    data, _ = run(server, "tools.faults.crash()")
    assert not data["success"] and "ToolError" in data["error"], data
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        data, _ = run(server, "tools.faults.add(a=2, b=2)")
        if data["success"]:
            break
        time.sleep(0.5)
    assert data["success"] and data["result"] == {"total": 4}, data


def test_the_executions_timeout_runs_through_its_calls(server):
    started = time.monotonic()
    data, _ = run(server, "tools.faults.hang()", timeout=1.5)
    assert data["error_type"] == "timeout", data
    assert time.monotonic() - started < 1.5 + scaled(3.5)
    [call] = data["tool_calls"]
    assert call["tool"] == "hang" and not call["ok"] and "cancelled" in call["error"], call


def test_refusals_teach_and_are_security_events(server):
    data, _ = run(server, "tools.faults.record(item='x')")
    assert not data["success"] and "not allowed" in data["error"] and "allow_writes" in data["error"], data
    assert any(e["kind"] == "tool_refused" and e["source"] == "server" for e in data["security_events"])
    data, _ = run(server, "tools.faults.no_such_tool()")
    assert not data["success"] and "has no 'no_such_tool'" in data["error"] and "add" in data["error"], data
    data, _ = run(server, "tools.broken.anything()")
    assert not data["success"], data
    data, _ = run(server, "result = []\nfor i in range(25):\n    try:\n        result.append(tools.faults.add(a=i, b=0)['total'])\n"
                          "    except ToolError as e:\n        result.append(str(e))")
    assert data["success"] and data["result"][:20] == list(range(20)), data
    assert all("call budget of 20" in item for item in data["result"][20:]), data


def test_calls_past_the_budget_grow_neither_the_answer_nor_the_audit_log(server):
    """A snippet that keeps calling after its budget is spent: every call is refused,
    but only the first is a record, a security event and an audit line; the rest are
    counted in one event (before, each added an event: 1.9 MB of answer in 5 s)."""
    data, _ = run(server, "refused = 0\nfor i in range(400):\n    try:\n        tools.faults.add(a=i, b=0)\n"
                          "    except ToolError as e:\n        refused += 1\nresult = refused")
    assert data["success"] and data["result"] == 380, data
    assert len(data["tool_calls"]) == 21, len(data["tool_calls"])
    budget_events = [e["detail"] for e in data["security_events"] if "budget" in e["detail"]]
    assert budget_events == ["the call budget of 20 tool calls per execution is spent: do more per call, or "
                             "split the work over several executions",
                             "379 more calls past the budget were refused"], budget_events
    lines = [json.loads(line) for line in server.audit_log.read_text().splitlines()]
    mine = [r["event"] for r in lines if r.get("execution_id") == data["execution_id"]]
    assert mine.count("tool_call") == 21 and "execution" in mine, mine   # (one id for all of them)


def test_unique_items_are_checked_without_stalling_the_server(server):
    """`set[int]` makes uniqueItems: jsonschema compared 18,000 mixed items pair by pair
    in the server's event loop, and every other request waited 24 s. Now the big call
    is refused at once and the server answers meanwhile."""
    assert run(server, "result = tools.faults.distinct(tags=[3, 1, 2])")[0]["result"] == {"result": 3}
    data, _ = run(server, "try:\n    tools.faults.distinct(tags=[1, 2, 2.0])\nexcept ToolError as e:\n    result = str(e)")
    assert "non-unique" in data["result"], data
    flood = ("xs = []\nfor i in range(9000):\n    xs.append(i)\n    xs.append(str(i))\n"
             "try:\n    tools.faults.distinct(tags=xs)\nexcept ToolError as e:\n    result = str(e)")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        big = pool.submit(run, server, flood, 60)
        time.sleep(scaled(1.5))   # the big call is on its way, or being checked
        started = time.monotonic()
        assert run(server, "result = 1")[0]["result"] == 1
        waited = time.monotonic() - started
        data, _ = big.result()
    assert "is not of type 'integer'" in data["result"], data
    assert waited < scaled(10), f"the server stalled for {waited:.1f} s while checking one call's arguments"


def test_a_pattern_that_backtracks_badly_does_not_stall_the_server(server):
    """The upstream's own `pattern` (`^(a+)+$`) ran on the snippet's string in the
    server's event loop for hours. Now the check is interrupted at its deadline, the
    call refused, and the server answers meanwhile."""
    assert run(server, "result = tools.faults.code(value='aaa')")[0]["result"] == {"result": "aaa"}
    evil = "try:\n    tools.faults.code(value='a' * 40 + '!')\nexcept ToolError as e:\n    result = str(e)"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        stuck = pool.submit(run, server, evil, 60)
        time.sleep(scaled(1.0))   # the call is on its way, or being checked
        started = time.monotonic()
        assert run(server, "result = 1")[0]["result"] == 1
        waited = time.monotonic() - started
        data, _ = stuck.result()
    assert "take longer than 1 s to check against the tool's inputSchema: send less per call" in data["result"], data
    assert waited < scaled(10), f"the server stalled for {waited:.1f} s while checking one call's arguments"


@pytest.mark.parametrize("arguments, needle", [
    ("text={1, 2}", "must be JSON values"),
    ("text=object()", "must be JSON values"),
    ("text='x' * 200_000", "more than the 131072 a call may send"),
])
def test_arguments_that_cannot_travel_are_refused_in_the_sandbox(server, arguments, needle):
    data, _ = run(server, f"try:\n    tools.faults.echo({arguments})\nexcept ToolError as e:\n    result = str(e)")
    assert data["success"] and needle in data["result"], data
    assert data["tool_calls"] == []                      # nothing was sent


def test_tools_in_a_session(server):
    created, _ = server.call("create_session", {})
    handle = created["session_id"]
    # a tool function or `tools` itself kept from an earlier call works in a later one
    # (it used the earlier call's nonce: the fork server took it for a forgery and
    # ended the session)
    for code, expected in (("first = tools.faults.add(a=1, b=2)['total']\nadd = tools.faults.add\nkept = tools\n"
                            "first", 3),
                           ("tools.faults.add(a=first, b=10)['total']", 13),
                           ("add(a=first, b=20)['total']", 23),
                           ("kept.faults.add(a=first, b=30)['total']", 33)):
        data, _ = server.call("execute_code", {"code": code, "session_id": handle})
        assert data["success"] and data["result"] == expected, data
        assert len(data["tool_calls"]) == 1 and not data["session_ended"]
    server.call("close_session", {"session_id": handle})


def test_a_tool_added_upstream_is_followed(server):
    """tools/list_changed: the new tool is callable from the next execution on."""
    assert run(server, "tools.faults.grow()")[0]["result"] == {"result": "grew"}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        data, _ = run(server, "tools.faults.grown()")
        if data["success"]:
            break
        time.sleep(0.2)
    assert data["success"] and data["result"] == {"result": "grown"}, data


@pytest.mark.parametrize("later", [0.0, 0.5], ids=["during the call", "after the call"])
def test_our_clients_hear_that_the_tools_changed(tmp_path, later):
    """An upstream's new tool reaches execute_code's description, and a client that
    called execute_code gets notifications/tools/list_changed (newer clients hear it on
    a subscriptions/listen stream: the same publication, sandbox/mcp/server.py). A change
    after the call answered reaches the client too: what the server remembers is the
    client's connection, not the request that ended."""
    def description(listing: dict) -> str:
        return next(t["description"] for t in listing["result"]["tools"] if t["name"] == "execute_code")

    with RawServer({"SANDBOX_TOOL_SERVERS": tool_servers_file(tmp_path)}) as raw:
        raw.initialize()
        before = description(raw.request("tools/list", timeout=60))
        grew = raw.call_tool("execute_code", {"code": f"tools.faults.grow(later={later})"}, timeout=60)
        assert grew["result"]["structuredContent"]["result"] == {"result": "grew"}, grew
        heard = lambda: any(json.loads(line).get("method") == "notifications/tools/list_changed"  # noqa: E731
                            for line in raw.lines)
        if not heard():   # (it may come before the call's own answer)
            raw.wait_for(lambda m: m.get("method") == "notifications/tools/list_changed", 60)
        after = description(raw.request("tools/list"))
    assert "faults.grown(" not in before and "faults.grown(" in after, after


def test_a_client_on_the_newest_protocol_hears_the_change_on_a_listen_stream(tmp_path):
    """The SDK's high-level client negotiates MCP 2026-07-28 (server/discover) and opens a
    subscriptions/listen stream for tools/list_changed: the change an upstream makes after
    the call answered arrives there, and tools/list then shows the new stub."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command, *args = server_command()   # (this interpreter: an ordinary user's run has no .venv)
    params = StdioServerParameters(command=command, args=args,
                                   env=server_env({"SANDBOX_TOOL_SERVERS": tool_servers_file(tmp_path)}))

    async def scenario():
        async with Client(params) as client:
            async with client.listen(tools_list_changed=True) as events:
                answer = await client.call_tool("execute_code", {"code": "tools.faults.grow(later=0.3)"})
                with anyio.fail_after(60):
                    async for event in events:
                        break
            listing = await client.list_tools()
            description = next(t.description for t in listing.tools if t.name == "execute_code")
            return client.protocol_version, answer.structured_content, type(event).__name__, description

    version, answer, event, description = anyio.run(scenario)
    assert version == "2026-07-28", version
    assert answer["success"] and answer["result"] == {"result": "grew"}, answer
    assert event == "ToolsListChanged" and "faults.grown(" in description, (event, description)


def test_an_upstream_gets_none_of_the_servers_environment(server):
    data, _ = run(server, "tools.faults.environment()")
    assert data["success"], data
    names = data["result"] if isinstance(data["result"], list) else data["result"]["result"]
    assert "PATH" in names and not [n for n in names if n.startswith("SANDBOX_") or "TOKEN" in n], names


def test_a_tool_that_calls_back_into_a_sandbox(server):
    """The upstream is this very server (another process of it): it is only a tool;
    the nested sandbox has no tools of its own, so nothing recurses further."""
    data, _ = run(server, "nested = tools.sandbox.execute_code(code='result = 6 * 7')\n"
                          "try:\n"
                          "    tools.sandbox.execute_code(code='tools.sandbox.execute_code(code=\"1\")')\n"
                          "    deeper = 'recursed'\n"
                          "except ToolError as e:\n"
                          "    deeper = str(e)\n"
                          "result = [nested['result'], deeper]")
    assert data["success"] and data["result"][0] == 42, data
    assert "NameError" in data["result"][1] and "tools" in data["result"][1], data


def test_validate_code_knows_the_tools(server):
    data, _ = server.call("validate_code", {"code": "tools.time.get_current_time(timezone='UTC')\n"
                                                    "tools.time.no_such()\ntools.faults.record(item='x')\n"
                                                    "tools.nowhere.x()"})
    messages = [e["message"] for e in data["validation"]["errors"]]
    assert 1 not in [e["line"] for e in data["validation"]["errors"]]   # the good call
    assert any("no tool 'no_such'" in m for m in messages), messages
    assert any("record is not allowed" in m for m in messages), messages
    assert any("tools.nowhere is not a tool server" in m for m in messages), messages


def test_info_the_description_and_the_audit_log(server):
    info, _ = server.call("get_sandbox_info")
    status = {s["server"]: s for s in info["tool_servers"]}
    assert status["time"]["status"] == "ready" and "get_current_time" in status["time"]["tools"]
    assert status["broken"]["status"].startswith("failed"), status["broken"]
    assert "record" in status["faults"]["not_exposed"]
    assert any(stub.startswith("tools.time.get_current_time(timezone: str)") for stub in info["tool_stubs"])
    assert "tools.time.get_current_time(timezone: str)" in server.tools["execute_code"].description
    secret = f"do-not-log-{time.time_ns()}"
    run(server, f"tools.faults.echo(text='{secret}')")
    text = server.audit_log.read_text()
    assert secret not in text
    calls = [json.loads(line) for line in text.splitlines() if '"tool_call"' in line]
    assert any(c["tool"] == "echo" and len(c["arguments_sha256"]) == 64 for c in calls), calls[-3:]


def test_forged_frames_with_restricted_python_off(server):
    """A snippet that writes tool_call frames itself: out of turn, malformed or
    with another nonce, the fork server ends the run; the server keeps serving."""
    if server.mode == "rp":
        pytest.skip("with RestrictedPython on a snippet cannot write to the result pipe")
    forge = ("import json, os, struct\n"
             "def frame(header):\n"
             "    head = json.dumps(header).encode()\n"
             "    body = struct.pack('>I', len(head)) + head\n"
             "    os.write(4, struct.pack('>I', len(body)) + body)\n")
    for header in ({"kind": "tool_call", "nonce": "guess", "call_id": 1, "server": "faults", "tool": "add",
                    "arguments": {"a": 1, "b": 1}},
                   {"kind": "tool_call", "nonce": "guess", "call_id": "1", "server": 5, "tool": [], "arguments": []}):
        data, _ = run(server, forge + f"frame({header!r})\nimport time\ntime.sleep(5)", timeout=10)
        assert data["error_type"] == "internal_error" and "tool call out of turn or malformed" in data["error"], data
        assert data["tool_calls"] == []
    # a flood of calls without waiting for answers: the second one is out of turn
    data, _ = run(server, "from sandbox import tools_object\n" if False else
                  "import json, os, struct, sys\n"
                  "channel = sys.modules['sandbox.codemode.tools_object']._CHANNEL\n"
                  "for i in range(50):\n"
                  "    head = json.dumps({'kind': 'tool_call', 'nonce': channel.nonce, 'call_id': i + 1,\n"
                  "                       'server': 'faults', 'tool': 'add', 'arguments': {'a': i, 'b': 0}}).encode()\n"
                  "    body = struct.pack('>I', len(head)) + head\n"
                  "    os.write(4, struct.pack('>I', len(body)) + body)\n"
                  "import time\ntime.sleep(5)", timeout=10)
    assert data["error_type"] == "internal_error" and "out of turn" in data["error"], data
    assert len(data["tool_calls"]) <= 1
    # a call sent before the answer to the one before was read: answers must not pile up
    data, _ = run(server, "import json, os, struct, sys, time\n"
                          "channel = sys.modules['sandbox.codemode.tools_object']._CHANNEL\n"
                          "def call(i):\n"
                          "    head = json.dumps({'kind': 'tool_call', 'nonce': channel.nonce, 'call_id': i,\n"
                          "                       'server': 'faults', 'tool': 'echo', 'arguments': {'text': 'x' * 100000}}).encode()\n"
                          "    body = struct.pack('>I', len(head)) + head\n"
                          "    os.write(4, struct.pack('>I', len(body)) + body)\n"
                          "call(1)\ntime.sleep(2)\ncall(2)\ntime.sleep(5)", timeout=15)
    assert data["error_type"] == "internal_error" and "out of turn" in data["error"], data
    assert run(server, "tools.faults.add(a=1, b=1)")[0]["result"] == {"total": 2}


def test_deeply_nested_arguments_are_refused_with_what_to_do(server):
    """Arguments that nest deeper than protocol.MAX_NESTING: through `tools`, a
    ToolError that says to flatten them (and no call is made)."""
    nested = "x = 'leaf'\nfor i in range(100):\n    x = [x]\n"
    data, _ = run(server, nested + "try:\n    tools.faults.echo(text=x)\nexcept ToolError as e:\n"
                                   "    result = str(e)\n")
    assert data["success"] and "flatten" in data["result"] and "64 levels" in data["result"], data
    assert data["tool_calls"] == []
    assert run(server, "x = [[['three levels']]]\nresult = tools.faults.echo(text=str(x))")[0]["success"]


def test_an_answer_nested_too_deep_is_a_tool_error_not_a_hang(server):
    """An upstream's JSON answer nested past the recursion limit must not kill the
    task that performs the call (the snippet would wait for its timeout)."""
    for depth in (100, 5000):
        data, _ = run(server, f"try:\n    tools.faults.nested(depth={depth})\nexcept ToolError as e:\n"
                              "    result = str(e)", timeout=scaled(10))
        assert data["success"] and "nested deeper than 64 levels" in data["result"], data
    assert run(server, "result = tools.faults.nested(depth=3)")[0]["result"] == [[[]]]


def test_forged_deep_arguments_end_their_run_alone(server):
    """Forged by a snippet with RestrictedPython off at a depth the fork server
    could still decode but the server, deeper in its stack, could not (980
    here), deep arguments must not make the server give up on the fork server
    (failing every execution in flight and every session): the fork server
    refuses the frame (protocol.split_sectioned) and ends that run alone, and a
    session opened before lives on."""
    if server.mode == "rp":
        pytest.skip("with RestrictedPython on a snippet cannot write to the result pipe")
    session = server.call("create_session", {})[0]["session_id"]
    assert server.call("execute_code", {"code": "kept = 41", "session_id": session})[0]["success"]
    for depth in (300, 980):
        data, _ = run(server, "import os, struct, sys\n"
                              "channel = sys.modules['sandbox.codemode.tools_object']._CHANNEL\n"
                              "head = ('{\"kind\": \"tool_call\", \"nonce\": \"%s\", \"call_id\": 1, "
                              "\"server\": \"faults\", \"tool\": \"echo\", \"arguments\": {\"text\": ' "
                              f"% channel.nonce + '[' * {depth} + ']' * {depth} + '}}}}').encode()\n"
                              "body = struct.pack('>I', len(head)) + head\n"
                              "os.write(4, struct.pack('>I', len(body)) + body)\n"
                              "import time\ntime.sleep(5)", timeout=10)
        assert data["error_type"] == "internal_error" and "nests deeper than 64 levels" in data["error"], (depth, data)
    kept = server.call("execute_code", {"code": "result = kept + 1", "session_id": session})[0]
    assert kept["success"] and kept["result"] == 42, kept


def test_a_streamable_http_upstream_with_a_header(tmp_path):
    """This server over HTTP, reached with its bearer token; the same URL with a
    wrong token fails and is reported, and the rest keeps working."""
    from test_cli import TOKEN, http_server
    with http_server() as (_process, url):
        path = tmp_path / "servers.json"
        path.write_text(json.dumps({"mcpServers": {
            "remote": {"url": url, "headers": {"Authorization": f"Bearer {TOKEN}"}, "tools": ["execute_code"],
                       "allow_writes": True},
            "wrong_token": {"url": url, "headers": {"Authorization": "Bearer not-the-token"}}}}))
        with blocking_session({"SANDBOX_TOOL_SERVERS": str(path)}, start_timeout=120.0) as server:
            info, _ = server.call("get_sandbox_info")
            status = {s["server"]: s["status"] for s in info["tool_servers"]}
            assert status["remote"] == "ready" and status["wrong_token"].startswith("failed"), status
            data, _ = run(server, "tools.remote.execute_code(code='result = 5 * 5')['result']")
            assert data["success"] and data["result"] == 25, data


def test_a_kept_tool_function_in_a_call_without_tools_says_so():
    """A session's call that has no tools (the server's code mode offers none now):
    a tool function kept from an earlier call raises a ToolError that says so, and
    writes nothing on the result pipe (a frame out of turn would end the session)."""
    from sandbox.codemode import tools_object
    tools_object.start_call("nonce-of-an-earlier-call")
    kept = tools_object.build({"faults": {"add": "Add two integers."}})
    tools_object.start_call(None)
    with pytest.raises(tools_object.ToolError, match="this call has no tools"):
        kept.faults.add(a=1, b=2)


def _peak_memory(pid: int) -> int:
    """The process's peak resident set so far, in bytes (VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) << 10


def _serving_again(server) -> dict:
    """An answer from the fault server once it is connected again: the cut ended its
    connection, and the upstream reconnects after a short pause."""
    deadline = time.monotonic() + 120
    while True:
        data, _ = run(server, "tools.faults.add(a=1, b=2)")
        if data["success"] or time.monotonic() > deadline:
            return data
        time.sleep(0.5)


@contextmanager
def _fault_server_over_http(*flags):
    from test_cli import free_port
    port = free_port()
    process = subprocess.Popen([sys.executable, str(HERE / "tool_servers" / "fault_server.py"), "--http", str(port), *flags],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "the fault server over HTTP exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the fault server over HTTP did not start"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("transport, call", [
    ("stdio", "tools.faults.flood(megabytes=256)"),   # one well-formed line, 256 MB long
    ("stdio", "tools.faults.endless()"),              # a line that never ends
    ("http-events", "tools.faults.big(megabytes=64)"),
    ("http-json", "tools.faults.big(megabytes=64)"),
])
def test_an_answer_past_the_cap_is_cut_as_its_bytes_arrive(tmp_path, transport, call):
    """The server stops reading an upstream's answer at the cap, whatever the upstream
    goes on sending: the snippet gets the SANDBOX_TOOL_RESULT_MAX error, not the call's
    timeout (which is long here, so the verdict cannot depend on the machine's speed),
    the server's memory does not grow with what was sent, and the upstream serves again."""
    with contextlib.ExitStack() as stack:
        if transport == "stdio":
            faults = {"command": sys.executable, "args": [str(HERE / "tool_servers" / "fault_server.py")]}
        else:
            faults = {"url": stack.enter_context(_fault_server_over_http(*(["--json"] if transport == "http-json" else [])))}
        path = tmp_path / "servers.json"
        path.write_text(json.dumps({"mcpServers": {"faults": faults}}))
        server = stack.enter_context(blocking_session({
            "SANDBOX_TOOL_SERVERS": str(path), "SANDBOX_TOOL_RESULT_MAX": "64k", "SANDBOX_TOOL_CALL_TIMEOUT": "250"},
            start_timeout=120.0))
        before = _peak_memory(server.pid)
        data, _ = server.call("execute_code", {"code": "try:\n    " + call + "\nexcept ToolError as e:\n    result = str(e)",
                                               "timeout": 280}, timeout=300)
        assert data["success"] and "SANDBOX_TOOL_RESULT_MAX" in data["result"], data
        assert "did not answer within" not in data["result"], data
        grown = _peak_memory(server.pid) - before
        assert grown < 48 << 20, f"the server's peak memory grew by {grown >> 20} MB"
        again = _serving_again(server)
        assert again["success"] and again["result"] == {"total": 3}, again


def test_a_cut_fails_the_other_calls_on_that_connection_with_the_reason(tmp_path):
    """A call waiting on an upstream whose connection a cut ends (another execution's
    answer passed the cap) hears why, and that it can call again."""
    path = tmp_path / "servers.json"
    marks = tmp_path / "marks"
    path.write_text(json.dumps({"mcpServers": {"faults": {
        "command": sys.executable, "args": [str(HERE / "tool_servers" / "fault_server.py")],
        "env": {"FAULT_SERVER_MARKS": str(marks)}}}}))
    with blocking_session({"SANDBOX_TOOL_SERVERS": str(path), "SANDBOX_TOOL_RESULT_MAX": "64k",
                           "SANDBOX_TOOL_CALL_TIMEOUT": "250"}, start_timeout=120.0) as server:
        catch = "try:\n    {}\nexcept ToolError as e:\n    result = str(e)"
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(server.call, "execute_code", {"code": catch.format("tools.faults.hang()"), "timeout": 280},
                                  300)
            deadline = time.monotonic() + 120
            while not (marks.exists() and "hang" in marks.read_text()):
                assert time.monotonic() < deadline and not waiting.done(), "the hanging call never reached the upstream"
                time.sleep(0.2)
            cut, _ = server.call("execute_code", {"code": catch.format("tools.faults.big()"), "timeout": 280}, 300)
            bystander, _ = waiting.result()
        for data in (cut, bystander):
            assert data["success"] and "passed" in data["result"] and "SANDBOX_TOOL_RESULT_MAX" in data["result"], data
        assert bystander["result"].startswith("tools.faults.hang:") and "can be made again" in bystander["result"]
        assert _serving_again(server)["result"] == {"total": 3}

"""The command line: `run`, `check`, `serve --transport http` (bearer token), and the
refusal to start when SANDBOX_REQUIRE names a layer this host does not have."""

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_client import LAUNCHER, server_env, structured  # noqa: E402

TOKEN = "test-token-" + "x" * 40
LAYERS = {"namespaces", "seccomp", "landlock", "privilege_drop", "rlimits", "restricted_python"}


def cli(*args, env=None, stdin=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(LAUNCHER), *args],
        env=server_env(env), input=stdin, capture_output=True, text=True, timeout=timeout, cwd="/",
    )


# ----------------------------------------------------------------------------- run


def test_run_file_prints_the_json_result(tmp_path):
    script = tmp_path / "snippet.py"
    script.write_text("result = 2 + 2\nprint(f'The answer is: {result}')\n")
    done = cli("run", str(script))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["success"] is True and result["result"] == 4
    assert result["stdout"] == "The answer is: 4\n"


def test_run_reads_standard_input():
    done = cli("run", "-", stdin="result = sum(range(10))\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == 45


def test_run_exits_1_when_the_snippet_fails():
    done = cli("run", "-", stdin="x = 1 / 0\n")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["success"] is False and result["error_type"] == "runtime_error"


def test_run_applies_the_configured_defaults():
    done = cli("run", "-", stdin="while True:\n    pass\n", env={"SANDBOX_TIMEOUT": "1"})
    assert done.returncode == 1
    assert json.loads(done.stdout)["error_type"] == "timeout"


def test_run_of_a_missing_file_is_a_usage_error():
    done = cli("run", "/nonexistent/snippet.py")
    assert done.returncode == 2 and "cannot read" in done.stderr and done.stdout == ""


# ----------------------------------------------------------------------------- check


def test_check_lists_every_layer():
    done = cli("check")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    claim = [line for line in lines if line.startswith("python layer: ")]
    assert claim == ["python layer: holds on its own in these profiles; the kernel layers are a second, "
                     "independent boundary"]
    lines = [line for line in lines if line not in claim]
    assert {line.split()[0] for line in lines} == LAYERS
    for line in lines:
        assert line.split()[1] in ("active", "INACTIVE")


def test_check_says_what_the_python_layer_claims_with_data_science():
    pytest.importorskip("pandas")
    done = cli("check", "--json", env={"SANDBOX_ENABLE_DATA_SCIENCE": "true"})
    report = json.loads(done.stdout)
    assert report["python_layer"].startswith("defence in depth")
    assert [w["setting"] for w in report["weakened_by"]] == ["SANDBOX_ENABLE_DATA_SCIENCE"]


def test_check_names_the_doors_that_only_the_kernel_layers_confine():
    done = cli("check", "--json", env={"SANDBOX_ENABLE_FILESYSTEM": "true", "SANDBOX_ENABLE_NETWORK": "true"})
    claim = json.loads(done.stdout)["python_layer"]
    assert claim.startswith("holds on its own in these profiles except at the doors"), claim
    assert "pathlib" in claim and "Landlock" in claim and "egress proxy" in claim, claim


def test_check_says_the_extra_imports_are_unaudited():
    """pydantic.ImportString and uvicorn.importer resolve "module.attribute" strings with the real
    import system: a package the operator adds is not covered by the Python layer's claim."""
    done = cli("check", "--json", env={"SANDBOX_ALLOWED_IMPORTS": "pydantic,packaging.*"})
    claim = json.loads(done.stdout)["python_layer"]
    assert claim.startswith("holds on its own"), claim
    assert "extra imports the operator added (packaging.*, pydantic): they are not audited" in claim, claim


def test_check_lists_the_operators_mounts(tmp_path):
    data = tmp_path.resolve()
    done = cli("check", "--json", env={"SANDBOX_MOUNTS": f"{data}:/data"})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["mounts"] == [{"host": str(data), "sandbox": "/data", "mode": "ro"}]
    assert "SANDBOX_MOUNTS: /data (ro)" in report["layers"]["namespaces"]["detail"]
    assert [w["value"] for w in report["weakened_by"]] == ["/data:ro"]


def test_check_json_and_required_layers():
    done = cli("check", "--json")
    assert done.returncode == 0
    report = json.loads(done.stdout)
    assert set(report["layers"]) == LAYERS and report["missing_required"] == []
    inactive = sorted(name for name, layer in report["layers"].items() if not layer["active"])
    for name in inactive:
        assert report["layers"][name]["detail"], f"{name} is inactive without a reason"


def test_check_exits_1_when_a_required_layer_is_missing():
    env = {"SANDBOX_REQUIRE": "landlock,rlimits", "SANDBOX_UNSAFE_DISABLE_LAYERS": "landlock"}
    done = cli("check", env=env)
    assert done.returncode == 1
    assert "MISSING: landlock" in done.stdout
    landlock = next(line for line in done.stdout.splitlines() if line.startswith("landlock"))
    assert "INACTIVE" in landlock and "SANDBOX_UNSAFE_DISABLE_LAYERS" in landlock


def test_serve_refuses_to_start_without_a_required_layer():
    env = {"SANDBOX_REQUIRE": "landlock", "SANDBOX_UNSAFE_DISABLE_LAYERS": "landlock"}
    done = subprocess.run(
        [sys.executable, str(LAUNCHER)], env=server_env(env), stdin=subprocess.PIPE,
        capture_output=True, text=True, timeout=120, cwd="/",
    )
    assert done.returncode == 1
    assert "refusing to start" in done.stderr and "landlock" in done.stderr
    assert done.stdout == ""


def test_a_start_refused_for_a_missing_layer_reaches_the_client_as_an_answer_it_can_show():
    """Not "Connection closed": initialize completes, the tools carry the problem, every
    call answers with it, and the server exits 1 when the client leaves."""
    from mcp_client import open_session

    async def scenario():
        env = {"SANDBOX_REQUIRE": "landlock", "SANDBOX_UNSAFE_DISABLE_LAYERS": "landlock"}
        async with open_session(env) as server:
            answer = await server.session.call_tool("execute_code", {"code": "1"})
            return server.tools, answer

    tools, answer = anyio.run(scenario)
    assert "could not start" in tools["execute_code"].description
    text = answer.content[0].text
    assert answer.is_error and "could not start" in text and "SANDBOX_REQUIRE" in text and "landlock" in text, text


def test_require_all_starts_when_every_layer_is_active():
    report = json.loads(cli("check", "--json").stdout)
    everything_active = all(layer["active"] for layer in report["layers"].values())
    done = cli("run", "-", stdin="result = 1\n", env={"SANDBOX_REQUIRE": "all"})
    if everything_active:
        assert done.returncode == 0 and json.loads(done.stdout)["result"] == 1
    else:
        assert done.returncode == 1 and "refusing to start" in done.stderr


# ----------------------------------------------------------------------------- HTTP transport


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def http_server(*extra_args, env=None, connect="127.0.0.1"):
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(LAUNCHER), "serve", "--transport", "http", "--port", str(port), *extra_args],
        env=server_env({"SANDBOX_API_TOKEN": TOKEN, **(env or {})}),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/",
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, process.communicate()[1].decode()
            try:
                socket.create_connection((connect, port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "HTTP server did not start"
                time.sleep(0.1)
        yield process, f"http://{connect}:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def post(url: str, headers: dict) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    request = urllib.request.Request(
        url, data=body, method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


async def call_over_http(url: str, token: str):
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                result = await session.call_tool("execute_code", {"code": "result = 2 + 2"})
                return {tool.name for tool in tools.tools}, result


def test_http_requires_the_bearer_token():
    with http_server() as (process, url):
        assert post(url, {}) == 401
        assert post(url, {"Authorization": "Bearer wrong-token"}) == 401
        assert post(url, {"Authorization": f"Basic {TOKEN}"}) == 401
        assert post(url, {"Authorization": f"Bearer {TOKEN}x"}) == 401
        assert post(url.replace("/mcp", "/anything"), {}) == 401
        tools, result = anyio.run(call_over_http, url, TOKEN)
        assert tools == {"execute_code", "validate_code", "get_sandbox_info", "create_session", "close_session"}
        assert not result.is_error and structured(result)["result"] == 4


def test_http_refuses_to_start_without_a_token():
    done = cli("serve", "--transport", "http", env={"SANDBOX_API_TOKEN": ""})
    assert done.returncode == 2 and "SANDBOX_API_TOKEN" in done.stderr
    done = cli("serve", "--transport", "http", env={"SANDBOX_API_TOKEN": "short"})
    assert done.returncode == 2 and "SANDBOX_API_TOKEN" in done.stderr and "short" not in done.stderr


def test_http_binds_non_loopback_only_with_the_explicit_option():
    done = cli("serve", "--transport", "http", env={"SANDBOX_API_TOKEN": TOKEN, "SANDBOX_HTTP_HOST": "0.0.0.0"})
    assert done.returncode == 2 and "--host" in done.stderr and "SANDBOX_HTTP_HOST" in done.stderr
    with http_server("--host", "0.0.0.0") as (process, url):
        assert post(url, {}) == 401  # reached over loopback; the token is still required
    assert "not a loopback address" in process.stderr.read().decode()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_http_loopback_hosts_need_no_option(host):
    with http_server("--host", host) as (process, url):
        assert post(url, {"Authorization": f"Bearer {TOKEN}"}) != 401


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2", "0.0.0.0"])
def test_http_refuses_foreign_host_and_origin_for_any_bind(bind):
    """DNS rebinding: a page on evil.example whose name resolves to this server's address.
    Checked for every bind address, not only the loopback spellings the SDK knows."""
    with http_server("--host", bind, connect=bind if bind != "0.0.0.0" else "127.0.0.1") as (process, url):
        auth = {"Authorization": f"Bearer {TOKEN}"}
        port = url.split(":")[2].split("/")[0]
        assert post(url, {**auth, "Host": "evil.example"}) == 403
        assert post(url, {**auth, "Host": f"evil.example:{port}"}) == 403
        assert post(url, {**auth, "Origin": "null"}) == 403
        assert post(url, {**auth, "Origin": "http://evil.example"}) == 403
        assert post(url, {"Host": "evil.example"}) == 403  # refused before the token is looked at
        own = url.rsplit("/mcp", 1)[0]
        assert post(url, {**auth, "Origin": own}) not in (401, 403)
        assert post(url, auth) not in (401, 403)


def test_http_allowed_hosts_setting_adds_names():
    with http_server("--host", "127.0.0.2", connect="127.0.0.2",
                     env={"SANDBOX_HTTP_ALLOWED_HOSTS": "sandbox.internal"}) as (process, url):
        port = url.split(":")[2].split("/")[0]
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert post(url, {**auth, "Host": f"sandbox.internal:{port}"}) not in (401, 403)
        assert post(url, {**auth, "Host": f"evil.example:{port}"}) == 403


def test_http_refusals_are_json_rpc_and_advertise_no_oauth():
    with http_server() as (process, url):
        base = url.rsplit("/mcp", 1)[0]
        request = urllib.request.Request(url, data=b"{}", method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=10)
        except urllib.error.HTTPError as error:
            body, header = json.loads(error.read()), error.headers.get("WWW-Authenticate")
            assert error.code == 401
        assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32001
        assert "Authorization: Bearer" in body["error"]["message"]
        assert header == 'Bearer realm="mcp-server-python-sandbox"'  # no resource_metadata: no OAuth
        for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server",
                     "/.well-known/oauth-protected-resource/mcp"):
            try:
                urllib.request.urlopen(base + path, timeout=10)
            except urllib.error.HTTPError as error:
                assert error.code == 404 and "does not offer OAuth" in error.read().decode()
        for _ in range(3):
            post(url, {"Authorization": "Bearer wrong"})
    stderr = process.stderr.read().decode()
    assert stderr.count("refused (logged once per address)") == 1, stderr[-2000:]
    assert "127.0.0.1" in stderr


@pytest.mark.parametrize("kind", ["websocket", "something-new"])
def test_the_http_gate_lets_nothing_but_http_through(kind):
    """MCP speaks plain HTTP: a WebSocket (which uvicorn would serve if a websockets
    package were installed) or a scope type of the future never reaches the app,
    even with the token and this server's own Host."""
    from sandbox.mcp.http_gate import HttpGate, allowed_hosts
    reached, sent = [], []

    async def app(scope, receive, send):
        reached.append(scope["type"])

    async def send(message):
        sent.append(message)

    gate = HttpGate(app, TOKEN, allowed_hosts("127.0.0.1", 8765))
    headers = [(b"host", b"127.0.0.1:8765"), (b"authorization", f"Bearer {TOKEN}".encode())]
    anyio.run(gate, {"type": kind, "path": "/mcp", "headers": headers}, None, send)
    assert reached == []
    assert sent == ([{"type": "websocket.close", "code": 1008}] if kind == "websocket" else [])
    anyio.run(gate, {"type": "http", "path": "/mcp", "headers": headers}, None, send)
    assert reached == ["http"]   # the same request as plain HTTP gets through


def test_the_http_gate_caps_the_body_before_the_app_reads_it(monkeypatch):
    """A body the server would hold in memory whole: refused by its Content-Length
    before a byte is read, and a chunked one (no length) stops at the cap."""
    from sandbox.mcp import http_gate
    monkeypatch.setattr(http_gate, "MAX_MESSAGE_BYTES", 1000)
    reached, sent = [], []

    async def app(scope, receive, send):
        reached.append(scope["type"])
        while (await receive()).get("more_body"):
            pass

    async def send(message):
        sent.append(message)

    chunks = iter([{"type": "http.request", "body": b"x" * 600, "more_body": True}] * 3)

    async def receive():
        return next(chunks)

    gate = http_gate.HttpGate(app, TOKEN, http_gate.allowed_hosts("127.0.0.1", 8765))
    headers = [(b"host", b"127.0.0.1:8765"), (b"authorization", f"Bearer {TOKEN}".encode())]
    for length, status in ((b"1001", 413), (b"-1", 400), (b"1e9", 400)):
        sent.clear()
        anyio.run(gate, {"type": "http", "path": "/mcp", "headers": [*headers, (b"content-length", length)]},
                  receive, send)
        assert reached == [] and sent[0]["status"] == status, sent
    assert b"SANDBOX_MAX_CODE_SIZE" in sent[-1]["body"] or status == 400
    with pytest.raises(http_gate.BodyTooLarge):
        anyio.run(gate, {"type": "http", "path": "/mcp", "headers": headers}, receive, send)
    assert reached == ["http"]


def test_a_huge_content_length_is_refused_by_the_real_server_at_once():
    with http_server() as (process, url):
        port = int(url.split(":")[2].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {10 ** 12}\r\n\r\n".encode())
            answer = b""
            while b"}}" not in answer and (chunk := s.recv(4096)):
                answer += chunk
            answer = answer.decode()
        assert answer.startswith("HTTP/1.1 413") and "SANDBOX_MAX_CODE_SIZE" in answer, answer
        tools, result = anyio.run(call_over_http, url, TOKEN)   # and it keeps serving
        assert structured(result)["result"] == 4


def test_log_lines_write_terminal_controls_as_escapes(capsys):
    """The server's log carries text from elsewhere (an upstream's error, why a session
    ended) to a terminal or a client's log view: ESC ] 52 there would write the clipboard."""
    import logging

    from sandbox import cli
    root = logging.getLogger()
    kept = root.handlers[:], root.level
    try:
        cli._setup_logging("info")
        logging.getLogger("sandbox.test").warning("tool server x: %s", "died \x1b]52;c;cHduZWQ=\x07 \u202eexe.txt")
    finally:
        root.handlers[:], level = kept
        root.setLevel(level)
    line = capsys.readouterr().err
    assert "died \\x1b]52;c;cHduZWQ=\\x07 \\u202eexe.txt" in line and "\x1b" not in line, line

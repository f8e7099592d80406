"""One run with the official MCP Inspector CLI against bin/mcp-server-python-sandbox: a client
that is not ours must list the tools and get `result = 2 + 2` back as 4.

The Inspector is installed with npm into build/inspector (or a temporary directory
when the checkout is read-only) the first time; skipped only when npm is absent.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_client import LAUNCHER, REPO_ROOT, server_env  # noqa: E402
from npm_packages import installed  # noqa: E402

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"


@pytest.fixture(scope="module")
def inspector() -> str:
    return installed("inspector", INSPECTOR, "mcp-inspector")


def inspect(inspector: str, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [inspector, "--cli", sys.executable, str(LAUNCHER), *arguments],
        env=server_env(), capture_output=True, text=True, timeout=300, cwd=tempfile.gettempdir(),
    )


def test_inspector_lists_the_tools(inspector):
    done = inspect(inspector, "--method", "tools/list")
    assert done.returncode == 0, done.stderr
    tools = {tool["name"]: tool for tool in json.loads(done.stdout)["tools"]}
    assert set(tools) == {"execute_code", "validate_code", "get_sandbox_info", "create_session", "close_session"}
    assert "outputSchema" in tools["execute_code"]


def test_inspector_executes_code(inspector):
    done = inspect(inspector, "--method", "tools/call", "--tool-name", "execute_code", "--tool-arg", "code=result = 2 + 2")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["isError"] is False
    assert answer["structuredContent"]["result"] == 4
    assert answer["content"][0]["text"] == "result: 4"


def test_inspector_over_http_with_the_token_header(inspector):
    """The README's HTTP command, as written: --transport http and the bearer token header."""
    import secrets
    import socket
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = secrets.token_urlsafe(32)
    server = subprocess.Popen([sys.executable, str(LAUNCHER), "serve", "--transport", "http", "--port", str(port)],
                              env=server_env({"SANDBOX_API_TOKEN": token}), stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/")
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"
        done = subprocess.run([inspector, "--cli", url, "--transport", "http", "--header",
                               f"Authorization: Bearer {token}", "--method", "tools/list"],
                              env=server_env(), capture_output=True, text=True, timeout=300, cwd=tempfile.gettempdir())
        assert done.returncode == 0, done.stderr
        assert {tool["name"] for tool in json.loads(done.stdout)["tools"]} == {
            "execute_code", "validate_code", "get_sandbox_info", "create_session", "close_session"}
        refused = subprocess.run([inspector, "--cli", url, "--transport", "http", "--method", "tools/list"],
                                 env=server_env(), capture_output=True, text=True, timeout=300,
                                 cwd=tempfile.gettempdir())
        assert refused.returncode != 0
    finally:
        server.terminate()
        server.wait(15)


def test_the_readme_http_lines_run_as_written(inspector):
    """README.md's "Over HTTP" lines in bash, from the checkout: the token, the server, and the
    Inspector at the version the tests pin (npx -y fetches that one; here it is installed
    already), on a free port instead of 8765, with a wait for the server to listen."""
    import re
    import socket

    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("### Over HTTP\n", 1)[1]
    lines = section.split("```sh\n", 1)[1].split("```", 1)[0].replace("\\\n", "").splitlines()
    export, serve, npx = lines
    assert export.startswith("export SANDBOX_API_TOKEN=") and serve.split("#")[0].rstrip().endswith(" &")
    assert npx.startswith(f"npx -y {INSPECTOR} --cli http://127.0.0.1:8765/mcp ")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = "\n".join([
        "set -e", export, serve, "server=$!", "trap 'kill $server; wait $server || true' EXIT",
        f"until (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; do sleep 0.1; done",
        npx.replace(f"npx -y {INSPECTOR}", inspector).replace("127.0.0.1:8765", f"127.0.0.1:{port}"),
    ])
    path = f"{Path(sys.executable).parent}:{server_env()['PATH']}"
    done = subprocess.run(["bash", "-c", script], env=server_env({"SANDBOX_HTTP_PORT": str(port), "PATH": path}),
                          capture_output=True, text=True, timeout=300, cwd=str(REPO_ROOT))
    assert done.returncode == 0, done.stderr[-3000:]
    listing = json.loads(done.stdout[done.stdout.index("{"):])
    assert {tool["name"] for tool in listing["tools"]} == {
        "execute_code", "validate_code", "get_sandbox_info", "create_session", "close_session"}
    assert re.search(r"serving MCP over HTTP at http://127\.0\.0\.1:\d+/mcp", done.stderr)

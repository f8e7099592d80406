"""The stdio server's life as a supervisor and a person see it: SIGTERM and Ctrl-C
(SIGINT) stop it promptly with every sandbox process gone, even while the client
keeps stdin open; a person typing into it gets one line on stderr saying what it
speaks; a platform other than Linux gets a clear message, not an import error."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from mcp_client import LAUNCHER, REPO_ROOT, descendants, server_env, wait_until
from slowness import scaled

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "lifecycle-test", "version": "1"}}}


def start() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(LAUNCHER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=server_env(), cwd="/")


def send(process, message) -> dict:
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_the_server_promptly_with_stdin_open(signum):
    process = start()
    try:
        assert send(process, INITIALIZE)["result"]["serverInfo"]["name"] == "mcp-server-python-sandbox"
        process.stdin.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n").encode())
        answer = send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                "params": {"name": "execute_code", "arguments": {"code": "result = 1"}}})
        assert answer["result"]["structuredContent"]["success"], answer
        sandbox = descendants(process.pid)
        assert sandbox, "no fork server or pool"
        started = time.monotonic()
        process.send_signal(signum)
        returncode = process.wait(120)  # stdin is still open: nothing may wait for it
        elapsed = time.monotonic() - started
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert returncode == 128 + signum, process.stderr.read().decode()[-2000:]
    assert elapsed < scaled(2), f"took {elapsed:.2f} s"  # typically 0.2-0.4 s here
    wait_until(lambda: not any(alive(pid) for pid in sandbox), 60)
    assert not [pid for pid in sandbox if alive(pid)], "sandbox processes outlived the server"


def test_a_person_typing_gets_one_line_saying_what_this_is():
    process = start()
    try:
        process.stdin.write(b"hello\nwhat is this?\n")
        process.stdin.flush()
        assert send(process, INITIALIZE)["result"]["serverInfo"]["name"] == "mcp-server-python-sandbox"
        process.stdin.close()
        process.wait(20)
        out = process.stdout.read().decode()
        err = process.stderr.read().decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert err.count("speaks MCP (JSON-RPC") == 1, err[-2000:]
    assert "MCP client" in err
    for line in out.splitlines():  # stdout stays JSON-RPC only
        assert json.loads(line)["jsonrpc"] == "2.0"


def test_other_platforms_get_a_clear_message():
    code = ("import sys\nsys.platform = 'darwin'\nfrom sandbox.cli import main\nraise SystemExit(main(['check']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**server_env(), "PYTHONPATH": str(REPO_ROOT)}, cwd="/")
    assert done.returncode == 2
    assert "needs Linux" in done.stderr and "darwin" in done.stderr and "WSL2" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""

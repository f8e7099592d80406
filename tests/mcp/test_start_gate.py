"""The server answers `initialize` before the sandbox has started; a call that arrives
first waits, says so in progress notifications, and then runs, or answers with the
problem when the start failed.

The start is held on an event the test sets, so no verdict depends on how fast the
machine starts a fork server.
"""

import asyncio
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sandbox.cli import runner_config  # noqa: E402
from sandbox.config import Settings  # noqa: E402
from sandbox.forkserver.runner import LayerUnavailable, Runner  # noqa: E402
from sandbox.mcp import start_gate  # noqa: E402
from sandbox.mcp.server import build_server  # noqa: E402
from sandbox.namespaces import PROXY_URL  # noqa: E402


@pytest.fixture(autouse=True)
def frequent_notices(monkeypatch):
    monkeypatch.setattr(start_gate, "NOTICE_INTERVAL", 0.05)


def held_server(start_then):
    """A server whose runner starts only once the returned event is set, and then does
    `start_then(runner)`; the start failures it tells are collected in the returned list."""
    runner = Runner(runner_config(Settings(pool_size=0)))
    release = asyncio.Event()
    failures = []

    async def held_start() -> None:
        await release.wait()
        await start_then(runner)

    runner.start = held_start
    server = build_server(Settings(pool_size=0), runner, proxy_url=PROXY_URL, on_start_failure=failures.append)
    return server, release, failures


async def call_while_held(server, release, name, arguments):
    """initialize with the start held; call `name` and wait for its first progress
    notification before the start is let go. Returns (the answer, every progress
    notification, the tools listed after it)."""
    progress = []
    with anyio.fail_after(120):   # (a server whose initialize waits for the start never answers it)
        async with Client(server, mode="legacy") as client:   # initialize: answered with the start held
            return await held_call(client, release, name, arguments, progress)


async def held_call(client, release, name, arguments, progress):
    first_notice = asyncio.Event()

    async def on_progress(value, total, message):
        progress.append((value, total, message))
        first_notice.set()

    assert not release.is_set()
    call = asyncio.ensure_future(client.call_tool(name, arguments, progress_callback=on_progress))
    await first_notice.wait()
    assert not call.done()
    release.set()
    answer = await call
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    return answer, progress, tools


def test_a_call_before_the_start_waits_says_so_and_runs():
    server, release, failures = held_server(lambda runner: Runner.start(runner))
    answer, progress, tools = anyio.run(call_while_held, server, release, "execute_code", {"code": "result = 2 + 2"})
    assert not answer.is_error and answer.structured_content["result"] == 4, answer
    assert failures == []
    waiting = [message for _, _, message in progress if "waiting" in message]
    assert waiting and "for the sandbox to start" in waiting[0], progress
    values = [value for value, _, _ in progress]
    assert values == sorted(values), f"progress went back: {values}"
    assert "could not start" not in tools["execute_code"].description


def test_a_call_before_a_failed_start_answers_with_the_problem():
    async def refuse(runner):
        raise LayerUnavailable([("landlock", "disabled for this test")])

    server, release, failures = held_server(refuse)
    answer, progress, tools = anyio.run(call_while_held, server, release, "execute_code", {"code": "1"})
    text = answer.content[0].text
    assert answer.is_error and "could not start" in text and "SANDBOX_REQUIRE" in text and "landlock" in text, text
    assert progress and "waiting" in progress[0][2]
    assert [type(exc) for exc in failures] == [LayerUnavailable]
    assert "could not start" in tools["execute_code"].description

"""SANDBOX_RATE_LIMIT: executions per minute, on a fake clock (no test waits for time to pass).

The window itself, then execute_code's answer over the limit, with a runner that only
records what it was asked to run: a call over the limit never reaches it, and a call
already running when the limit is reached finishes untouched."""

from __future__ import annotations

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from sandbox.mcp import rate_limit
from sandbox.mcp.audit import AuditLog  # noqa: E402
from sandbox.config import Settings  # noqa: E402
from sandbox.mcp.rate_limit import RateLimit  # noqa: E402
from sandbox.mcp.tool_handlers import SandboxTools  # noqa: E402
from sandbox.namespaces import PROXY_URL  # noqa: E402


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_off_by_default_and_zero_admits_everything():
    assert Settings().rate_limit == 0
    limit = RateLimit(0, Clock())
    assert all(limit.admit() is None for _ in range(10000))


def test_the_window_slides_and_says_how_long_to_wait():
    clock = Clock()
    limit = RateLimit(3, clock)
    for _ in range(3):                      # at 0, 10 and 20 s
        assert limit.admit() is None
        clock.now += 10
    assert limit.admit() == 30.0            # at 30 s: the first leaves the window at 60 s
    assert limit.admit() == 30.0            # a refused call is not counted
    clock.now += 30
    assert limit.admit() is None            # at 60 s the first has left; this one is counted
    assert limit.admit() == 10.0            # the next to leave is the one from 10 s


def test_the_message_says_when_to_retry_and_names_the_setting():
    message = rate_limit.refusal(3, 39.2)
    assert "retry in 40 s" in message and "SANDBOX_RATE_LIMIT" in message and "3 executions a minute" in message


class RecordingRunner:
    """Runs nothing: each execute waits until the test lets it finish."""

    def __init__(self):
        self.requests = []
        self.release = asyncio.Event()

    def layers(self) -> dict:
        return {}

    async def execute(self, request, on_output=None, session=None, tool_session=None) -> dict:
        self.requests.append(request.code)
        await self.release.wait()
        return {"success": True, "result": request.code, "stdout": "", "stderr": ""}


def test_a_call_over_the_limit_is_refused_before_it_runs_and_a_running_one_finishes():
    async def scenario():
        runner = RecordingRunner()
        tools = SandboxTools(Settings(rate_limit=2, max_concurrency=4), runner, AuditLog(None), proxy_url=PROXY_URL)
        clock = Clock()
        tools.rate.clock = clock

        def call(code):
            return asyncio.ensure_future(tools.execute(code, 30, True, [], "128m", False))

        first, second = call("1"), call("2")
        while len(runner.requests) < 2:
            await asyncio.sleep(0)
        # over the limit while both still run: answered at once (were it run, it would wait
        # for the release like the others; the timeout is only a safety net)
        refused = await asyncio.wait_for(call("3"), 30)
        clock.now += 61
        runner.release.set()
        done = [await first, await second]
        later = await call("4")                       # the window has moved on
        return runner.requests, refused, done, later

    requests, refused, done, later = asyncio.run(scenario())
    assert requests == ["1", "2", "4"]
    data = refused.structured_content
    assert refused.is_error and data["error_type"] == "rate_limited", data
    assert "retry in 60 s" in data["error"] and "SANDBOX_RATE_LIMIT" in data["error"]
    assert "retry in 60 s" in refused.content[0].text
    assert all(not result.is_error and result.structured_content["success"] for result in done)
    assert not later.is_error

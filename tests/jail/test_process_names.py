"""Every sandbox process says in ps what it is (sandbox/process_names.py): the
fork server, its cloner, a pooled child, the execution a child runs, a
session's child between calls. Read from /proc/<pid>/cmdline and comm of the
live processes, as ps and top do."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_client import name_of  # noqa: E402
from runner_harness import BASIC, MiB, descendants  # noqa: E402

from sandbox import process_names  # noqa: E402
from sandbox.process_names import title_of  # noqa: E402
from sandbox.forkserver.runner import ExecRequest, Runner, RunnerConfig  # noqa: E402

WAIT = "import time\ntime.sleep(60)"


def request(code: str, execution_id: str) -> ExecRequest:
    return ExecRequest(code=code, timeout=60, memory_limit=128 * MiB, allowed_modules=frozenset(BASIC),
                       execution_id=execution_id)


def titles(zygote: int) -> dict[int, str]:
    return {pid: title_of(pid) for pid in [zygote] + descendants(zygote)}


async def wait_for_title(zygote: int, wanted: str) -> int:
    """The pid of the process below the fork server (or it) titled `wanted` (two minutes
    at most: a safety net on a loaded machine, not a measure)."""
    for _ in range(2400):
        found = [pid for pid, title in titles(zygote).items() if title == wanted]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no process is titled {wanted!r}: {titles(zygote)}")


def test_each_process_is_named_for_its_role_and_the_execution_it_runs():
    async def scenario():
        runner = Runner(RunnerConfig(max_timeout=60, max_memory=512 * MiB, pool_size=2))
        await runner.start()
        try:
            zygote = runner.fork_server_pid()
            server = f"(server pid {os.getpid()})"
            assert title_of(zygote) == f"sandbox: fork server {server}", title_of(zygote)
            assert name_of(zygote) == "sandbox-forksrv"
            cloner = await wait_for_title(zygote, f"sandbox: cloner {server}")
            assert name_of(cloner) == "sandbox-cloner"
            pooled = await wait_for_title(zygote, f"sandbox: pooled child {server}")
            assert name_of(pooled) == "sandbox"
            running = asyncio.ensure_future(runner.execute(request(WAIT, "0123abcd")))
            child = await wait_for_title(zygote, f"sandbox: execution 0123abcd {server}")
            assert name_of(child) == "sandbox"
            # the fork server's boot line and its configuration are gone from every process
            assert not [t for t in titles(zygote).values() if not t.startswith("sandbox: ") or "ctl_fd" in t], \
                titles(zygote)
            running.cancel()
        finally:
            await runner.aclose()

    asyncio.run(scenario())


def test_a_sessions_child_is_named_for_its_call_and_between_calls():
    async def scenario():
        runner = Runner(RunnerConfig(max_timeout=60, max_memory=512 * MiB, pool_size=1))
        await runner.start()
        try:
            zygote = runner.fork_server_pid()
            server = f"(server pid {os.getpid()})"
            assert (await runner.open_session("s1"))["ok"]
            answer = await runner.execute(request("x = 1", "feed01"), session="s1")
            assert answer["success"], answer
            child = await wait_for_title(zygote, f"sandbox: session, between calls {server}")
            running = asyncio.ensure_future(runner.execute(request(WAIT, "feed02"), session="s1"))
            assert await wait_for_title(zygote, f"sandbox: session, execution feed02 {server}") == child
            running.cancel()
        finally:
            await runner.aclose()

    asyncio.run(scenario())


def test_an_execution_id_reaches_the_title_as_letters_and_digits_only():
    assert process_names.execution("ab\x1b]0;owned\x07cd ef", session=False) == "execution ab0ownedcdef"
    assert process_names.execution("a" * 500, session=True) == "session, execution " + "a" * 64


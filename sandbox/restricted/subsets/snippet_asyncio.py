"""The snippet's `asyncio` module (a subset, module_subsets.SUBSETS["asyncio"]): the
real coroutine helpers, and asyncio.run without a loop factory of the caller's, whose
loop reports its own errors in the snippet's terms. The loop itself is a denied type
(module_subsets.DENIED_TYPES): it never reaches the snippet."""

from __future__ import annotations

import asyncio
import sys

from sandbox.restricted.subsets import snippet_traceback


def run(main, *, debug=None):
    """asyncio.run, with the loop's errors (an exception in a callback, a task's
    exception never retrieved) reported by the snippet's frames rather than by
    asyncio's logger with the sandbox's."""
    if not asyncio.iscoroutine(main):
        raise ValueError(f"a coroutine was expected, got {type(main).__name__}: asyncio.run(main())")

    async def quietly():
        asyncio.get_running_loop().set_exception_handler(_report_loop_error)
        return await main
    return asyncio.run(quietly(), debug=debug)


def _report_loop_error(loop, context: dict) -> None:
    exc = context.get("exception")
    detail = snippet_traceback.describe(exc) if exc is not None else "\n"
    sys.stderr.write(f"asyncio: {str(context.get('message', 'error'))[:200]}\n{detail}")


def values() -> dict:
    """The names module_subsets.SUBSETS["asyncio"] lists (those this Python has)."""
    from sandbox.restricted.subsets.registry import SUBSETS
    found = {name: getattr(asyncio, name) for name in SUBSETS["asyncio"] if hasattr(asyncio, name)}
    return dict(found, run=run)

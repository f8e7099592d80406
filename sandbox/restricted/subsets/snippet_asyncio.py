"""The snippet's `asyncio` module (a subset): the real coroutine helpers, and
asyncio.run without a loop factory of the caller's, whose loop reports its own errors
in the snippet's terms. The loop itself is a denied type: it never reaches the snippet.

asyncio (47 modules) is imported when a snippet first imports the subset, not with
this module: the fork server, which loads the other subsets, does not load it
(registry.PRELOADED)."""

from __future__ import annotations

import sys

from sandbox.restricted.subsets import snippet_traceback
from sandbox.restricted.subsets.subset import Subset


def run(main, *, debug=None):
    """asyncio.run, with the loop's errors (an exception in a callback, a task's
    exception never retrieved) reported by the snippet's frames rather than by
    asyncio's logger with the sandbox's."""
    import asyncio
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
    """The real module's names, with run() above in place of its own."""
    import asyncio
    return dict(vars(asyncio), run=run)


SUBSET = Subset(
    # coroutines on a private event loop; the loop itself never reaches the snippet (denied_types)
    "asyncio", ("run", "gather", "sleep", "wait_for", "wait", "create_task", "as_completed", "shield",
                "current_task", "Queue", "LifoQueue", "PriorityQueue", "QueueEmpty", "QueueFull", "Lock", "Event",
                "Semaphore", "BoundedSemaphore", "Condition", "TimeoutError", "CancelledError", "InvalidStateError",
                "iscoroutine", "iscoroutinefunction", "FIRST_COMPLETED", "FIRST_EXCEPTION", "ALL_COMPLETED",
                "timeout", "TaskGroup"),
    "the rest of asyncio reaches the event loop: subprocesses, sockets, threads and file descriptors",
    lambda execution: values(), denied_types=("asyncio.AbstractEventLoop",))

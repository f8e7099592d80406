"""async def, await and async comprehensions under the RestrictedPython layer alone: code
as agents write it runs, a top-level await runs as in a notebook, and no event loop,
frame or context reaches the snippet."""

from __future__ import annotations

import io
import sys

import pytest

from sandbox.restricted import run as restricted

from rp_calls import BASIC, run, ok, blocked


# --------------------------------------------------------------------- async def / await (asyncio's subset)
def test_async_code_as_agents_write_it():
    code = ("import asyncio\nasync def fetch(i, delay=0):\n    await asyncio.sleep(delay)\n    return {'id': i, 'v': i * i}\n"
            "async def pairs(n):\n    for i in range(n):\n        yield i, -i\n"
            "async def main():\n    rows = await asyncio.gather(*(fetch(i) for i in range(4)))\n"
            "    sem = asyncio.Semaphore(2)\n    async with sem:\n        one = await asyncio.wait_for(fetch(9), timeout=60)\n"
            "    seen = []\n    async for a, b in pairs(3):\n        seen.append(a - b)\n"
            "    firsts = [x async for x in pairs(2)]\n    q = asyncio.Queue()\n    await q.put('job')\n"
            "    task = asyncio.create_task(fetch(5))\n    done, pending = await asyncio.wait({task})\n"
            "    try:\n        await asyncio.wait_for(asyncio.sleep(5), timeout=0.01)\n        late = False\n"
            "    except asyncio.TimeoutError:\n        late = True\n"
            "    return [[r['v'] for r in rows], one['v'], seen, firsts, await q.get(), len(done), task.result()['v'], late]\n"
            "result = asyncio.run(main())")
    assert ok(code)[0] == [[0, 1, 4, 9], 81, [0, 2, 4], [[0, 0], [1, -1]], "job", 1, 25, True]


@pytest.mark.parametrize("code", [
    "import asyncio\nasync def m():\n    return asyncio.current_task().get_loop()\nasyncio.run(m())",
    "import asyncio\nasync def m():\n    t = asyncio.create_task(asyncio.sleep(0))\n    await t\n    return t.get_loop()\nasyncio.run(m())",
    "import asyncio\nasync def m():\n    g = asyncio.gather(asyncio.sleep(0))\n    await g\n    return g.get_loop()\nasyncio.run(m())",
    "import asyncio\nasync def m():\n    return asyncio.current_task().get_stack()\nasyncio.run(m())",
    "import asyncio\nasync def m():\n    asyncio.current_task().print_stack()\nasyncio.run(m())",
    "import asyncio\nasync def m():\n    return asyncio.current_task().get_coro().cr_frame\nasyncio.run(m())",
    "import asyncio\nasync def m():\n    pass\nc = m()\nc.cr_frame",
    "import asyncio\nasync def m():\n    pass\ngetattr(m(), 'cr_code')",
    "async def g():\n    yield 1\ng().ag_frame",
    "import asyncio\nasyncio.Lock()._loop",
    "import asyncio\nasyncio.Queue()._get_loop()",
    "import asyncio\nasyncio.get_event_loop()",
    "import asyncio\nasyncio.get_running_loop",
    "import asyncio\nasyncio.new_event_loop()",
    "import asyncio\nasyncio.create_subprocess_exec",
    "import asyncio\nasyncio.create_subprocess_shell('id')",
    "import asyncio\nasyncio.to_thread",
    "import asyncio\nasyncio.open_connection",
    "import asyncio\nasyncio.start_unix_server",
    "import asyncio\nasyncio.events",
    "import asyncio\nasyncio.subprocess",
    "import asyncio\nasyncio.base_events",
    "from asyncio import events",
    "import asyncio.subprocess",
    "import asyncio\nasyncio.run.__globals__",
    "import asyncio\nasync def m():\n    pass\nasyncio.run(m(), loop_factory=object)",
    "import asyncio\nclass Q(asyncio.Queue):\n    pass\nQ()._loop",
    "class C:\n    async def __getattr__(self, n):\n        return 1",
    "async def f(_getattr_):\n    pass",
    "async def f(*, _write_=None):\n    pass",
    "async def f():\n    _tmp0 = 1",
])
def test_async_code_reaches_no_event_loop_frame_or_process(code):
    blocked(code, error_types=("security_violation", "syntax_error", "runtime_error"))


@pytest.mark.parametrize("code", [
    # Task.get_context is 3.12+ (before, an AttributeError): iterating the Context gave decimal's
    # ContextVar, and a value of another type set there crashed the interpreter (ISV-058)
    "import asyncio, decimal\ndecimal.getcontext()\nasync def m():\n    return asyncio.current_task().get_context()\n"
    "asyncio.run(m())",
    "import asyncio, decimal\ndecimal.getcontext()\nasync def w():\n    pass\nasync def m():\n"
    "    t = asyncio.create_task(w())\n    names = [v.name for v in t.get_context()]\n    await t\n    return names\n"
    "result = asyncio.run(m())",
])
def test_a_task_hands_out_no_context(code):
    reply = blocked(code, error_types=("security_violation", "runtime_error"))
    assert "decimal_context" not in str(reply.get("result")), reply
    if sys.version_info >= (3, 12):
        assert reply["error_type"] == "security_violation" and "contextvars" in reply["error"], reply


@pytest.mark.parametrize("code", [
    "import contextvars\nctx = contextvars.copy_context()",
    "import contextvars\nv = contextvars.ContextVar('v')",
    "import contextvars\nfor v in contextvars.copy_context():\n    pass",
])
def test_no_context_object_reaches_the_snippet_whatever_the_module_list(code):
    """The guard refuses the type, so an operator's SANDBOX_ALLOWED_IMPORTS=contextvars opens nothing."""
    reply = blocked(code, allowed=BASIC | {"contextvars"})
    assert "contextvars" in reply["error"], reply


def test_a_callback_the_loop_calls_gets_no_loop_and_errors_stay_in_the_snippets_terms():
    code = ("import asyncio\nasync def m():\n    t = asyncio.create_task(asyncio.sleep(0))\n    got = []\n"
            "    t.add_done_callback(lambda f: got.append(f.get_loop()))\n    await t\n    await asyncio.sleep(0)\n"
            "    return got\nresult = asyncio.run(m())")
    reply, out, err = run(code)
    assert reply["success"] and reply["result"] == [], reply
    assert reply["security_events"][0]["kind"] == "attribute_blocked"
    assert "Exception in callback" in err and ".py" not in err, err


def test_async_comprehensions_unpack_tuples_through_the_guard():
    code = ("import asyncio\nasync def pairs(n):\n    for i in range(n):\n        yield (i, (i * 2, -i))\n"
            "async def main():\n    flat = [a + b async for a, (b, c) in pairs(3)]\n"
            "    table = {k: v async for k, v in pairs(2)}\n    return flat, table\n"
            "result = asyncio.run(main())")
    assert ok(code)[0] == [[0, 3, 6], {"0": [0, 0], "1": [2, -1]}]   # (the answer is JSON)


@pytest.mark.parametrize("code", [
    "async def m():\n    return [str(a) async for a, b in aleaky]\nimport asyncio\nasyncio.run(m())",
    "async def m():\n    return [str(b) async for a, (b, c) in aleaky]\nimport asyncio\nasyncio.run(m())",
])
def test_async_comprehension_tuple_targets_are_vetted(code):
    """An async iterator (a library's, here a stand-in) that hands over pairs holding a
    class the policy denies: each element is vetted as it is unpacked (str() keeps it
    from being vetted later, on its way out)."""
    import types

    class _Pairs:
        def __init__(self, items):
            self.items = list(items)

        def __aiter__(self):
            return self

        async def __anext__(self):
            if not self.items:
                raise StopAsyncIteration
            return self.items.pop(0)

    out = io.StringIO()
    items = [(1, (types.FunctionType, 2))] if "(b, c)" in code else [(types.FunctionType, 1)]
    reply = restricted.execute(code, restricted=True, allowed_modules=BASIC, stdout=out, stderr=out,
                               names={"aleaky": _Pairs(items)})
    assert not reply["success"] and reply["error_type"] == "security_violation", reply


@pytest.mark.parametrize("unrestricted", [False, True])
def test_a_top_level_await_runs_as_in_a_notebook(unrestricted):
    code = ("import asyncio\nasync def double(i):\n    await asyncio.sleep(0)\n    return i * 2\n"
            "doubled = await asyncio.gather(*(double(i) for i in range(3)))\n"
            "async def rows():\n    yield 1\n    yield 2\ntotal = 0\nasync for row in rows():\n    total += row\n"
            "lock = asyncio.Lock()\nasync with lock:\n    print(doubled, total)\nawait double(21)")
    result, out = ok(code, unrestricted=unrestricted)
    assert result == 42 and out == "[0, 2, 4] 3\n", (result, out)


@pytest.mark.parametrize("unrestricted", [False, True])
def test_a_top_level_await_fails_and_exits_as_other_code(unrestricted):
    reply, _, _ = run("import asyncio\nawait asyncio.sleep(0)\nraise KeyError('k')", unrestricted=unrestricted)
    assert reply["error_type"] == "runtime_error" and reply["line"] == 3 and "KeyError" in reply["error"], reply
    reply, _, _ = run("import asyncio, sys\nawait asyncio.sleep(0)\nsys.exit(0)", unrestricted=unrestricted)
    assert reply["success"], reply


def test_a_top_level_awaits_own_task_gives_no_event_loop():
    reply = blocked("import asyncio\nawait asyncio.sleep(0)\nasyncio.current_task().get_loop()",
                    error_types=("security_violation",))
    assert "EventLoop" in reply["error"], reply

"""The RestrictedPython layer: compile and run one snippet inside the hardened child.

This is the first wall, not the boundary: the kernel layers must hold even when this
layer is bypassed, and this layer must hold with the kernel layers off.

Contract (used by child.py):
    warm(extra_modules)                                     warm imports in the fork server
    execute(code, *, restricted, allowed_modules, stdout, stderr) -> dict   never raises
    validate(code, *, restricted, allowed_modules) -> dict                  never raises

The layer, by role (as RestrictedPython itself is laid out):
    private_names.py, subsets/, libraries/       the policy tables
    compiler.py, snippet_policy.py, compiled_names.py, tree_rewrites.py
                      parsing and compiling under the transformer subclass
    imports.py, module_policy.py, stdlib_stand_ins.py
                      module proxies, the import hook and the vetting of values
    guards/           the guards of one execution, builtins and globals
    safe_format.py    str.format and string.Formatter through the guards
    run.py            running a snippet (this module); validate.py checking one

What the snippet gets in restricted mode:
- code compiled by RestrictedPython's own transformer (``SnippetPolicy`` only adds what
  ordinary Python needs: ``+=`` on items and attributes, annotated assignments, a few more
  dunder methods, ``super().__init__``, ``nonlocal``) and run with RestrictedPython's guards;
- modules only through an import hook, and only as read-only ``ModuleProxy`` objects that
  never hand out another module the profile does not allow, nor a known gadget.
"""

from __future__ import annotations

import builtins
import contextlib
import dis
import enum
import gc
import importlib
import inspect
import sys
import types
from collections.abc import Callable, Iterable

from sandbox.restricted.libraries.policy import POLICY as library_policy
from sandbox import profiles
from sandbox.restricted.subsets import registry as subsets_registry
from sandbox.restricted.subsets import snippet_traceback
from sandbox.restricted.json_value import cap_text, reported_value
from sandbox.restricted.base import (
    MAX_EVENT_DETAIL,
    MAX_MESSAGE,
    MAX_VARIABLES,
    RESTRICTED_RECURSION_LIMIT,
    SNIPPET_FILENAME,
    SNIPPET_MODULE,
    LAST_VALUE,
)
from sandbox.restricted import interrupts
from sandbox.restricted.compiler import CompileError, compile_snippet
from sandbox.restricted.imports import Events, ModuleProxy, deny_types_of
from sandbox.restricted.guards import ExecutionContext, restricted_globals
from sandbox.restricted.validate import validate  # noqa: F401 - part of the contract

# The rest of the layer's face, for its callers (child.py, the tests): one import place.
from sandbox.restricted.base import MAX_EVENTS, SandboxAttributeError, SandboxImportError, SandboxRefused  # noqa: E402,F401


# --------------------------------------------------------------------------- execute

_ENUM_META = getattr(enum, "EnumType", None) or enum.EnumMeta


@contextlib.contextmanager
def _run_policy(ctx: "ExecutionContext"):
    """Checks placed inside library code generators while a restricted snippet runs:
    the enum functional API's names, the functions library_policy switches off.
    Undone afterwards (a pooled child pre-warms in restricted mode)."""
    original = _ENUM_META.__dict__["_create_"]

    def checked_create(cls, class_name, names, *args, **kwargs):
        # (by default enum names the module of the frame two up as the class's: with this
        # one in between, that would be enum itself, not the snippet's)
        kwargs["module"] = kwargs.get("module") or SNIPPET_MODULE
        return original(cls, class_name, ctx.check_enum_names(names), *args, **kwargs)

    _ENUM_META._create_ = checked_create
    try:
        with library_policy.switched_off(ctx.refuse_call) as ctx.switched_off:
            yield
    finally:
        ctx.switched_off = None
        _ENUM_META._create_ = original


def warm(extra_modules: Iterable[str] = ()) -> None:
    """In the fork server, once: import what every snippet may import (the basic profile,
    the snippet-side modules, ``extra_modules``) and settle the policy tables, so each
    child gets them by fork instead of by import."""
    preload(sorted(profiles.allowed_modules(["basic"])) + list(subsets_registry.PRELOADED) + list(extra_modules))


def preload(modules: Iterable[str]) -> None:
    """Import ``modules`` now (in the fork server, before any secret or snippet exists), so
    that each child gets them by fork instead of by import."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a missing or broken optional module is skipped
            pass
    library_policy.settle()


def _base_result() -> dict:
    return {"success": False, "result": None, "result_repr": None, "result_cut": False, "variables": [], "error": None,
            "error_type": None, "line": None, "traceback": None, "security_events": []}


class SessionState:
    """What a session keeps from one call to the next: the globals, and with
    RestrictedPython the guards' context (the classes the snippet made, its
    module proxies). Each call gets its own security events."""

    def __init__(self):
        self.globals: dict | None = None
        self.context: ExecutionContext | None = None


def _plain_module_globals() -> dict:
    """RestrictedPython off: the snippet runs as a script's __main__ does, in a module that
    sys.modules names (dataclasses looks a class's module up there to read its string
    annotations)."""
    module = types.ModuleType(SNIPPET_MODULE)
    module.__builtins__ = builtins
    sys.modules[SNIPPET_MODULE] = module
    return vars(module)


def execute(code: str, *, restricted: bool, allowed_modules: frozenset[str], stdout, stderr,
            files: str | None = None, session: SessionState | None = None, names: dict | None = None,
            finish: Callable[[], None] | None = None, interruptible: bool = False) -> dict:
    """Compile and run ``code``; return the result dict. Never raises. ``files`` says
    where the snippet's ``open`` reaches (snippet_files: the workspace, the scratch
    directory, or nowhere). With a
    ``session``, the globals of earlier calls are this call's. ``names`` are put in
    the globals (code mode's `tools` and `ToolError`). ``finish`` is the caller's work
    on what the snippet left (drawing its figures): it runs before the run's policy
    and redirects end, because it may call the snippet's code (a tick formatter).
    ``interruptible``: SIGINT raises KeyboardInterrupt in the snippet while it runs
    (a session's call at its time limit: interrupts.py)."""
    events = Events()
    try:
        return _execute(code, restricted, frozenset(allowed_modules or ()), stdout, stderr, events,
                        files, session, names, finish, interruptible)
    except BaseException as exc:  # noqa: BLE001 - last resort, e.g. MemoryError while reporting
        out = _base_result()
        out["error_type"] = "memory_limit" if isinstance(exc, MemoryError) else "runtime_error"
        out["error"] = cap_text(f"{type(exc).__name__} while reporting the result", MAX_MESSAGE)[0]
        out["security_events"] = events.items
        return out


@contextlib.contextmanager
def _collected_only_while_running():
    """The garbage collector on for the run (with the state it had before restored
    after): the child keeps it off otherwise, so that the snippet's finalizers (a
    generator's `finally`, dropped in a cycle) run only while the run's policy holds,
    never while the child reports or waits for a session's next call, nor while the
    next call compiles (a session's earlier cycles were collected there, with the
    policy's checks off). Entered inside the policy, left before it ends."""
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        if not was_enabled:
            gc.disable()


def _execute(code, restricted, allowed, stdout, stderr, events, files=None, session=None,
             names=None, finish=None, interruptible=False) -> dict:
    out = _base_result()
    out["security_events"] = events.items
    try:
        code_obj = compile_snippet(code, restricted)
    except CompileError as exc:
        for message in exc.rejected:
            events.add("compile_rejected", message)
        out.update(error=cap_text(exc.message, MAX_MESSAGE)[0], error_type=exc.error_type,
                   line=exc.line)
        return out

    if session is not None and session.globals is not None:
        glb, ctx = session.globals, session.context
        if ctx is not None:
            ctx.allowed, ctx.events = allowed, events
    elif restricted:
        ctx = ExecutionContext(allowed, events, files)
        glb = restricted_globals(ctx, stdout)
    else:
        ctx, glb = None, _plain_module_globals()
    if session is not None:
        session.globals, session.context = glb, ctx
    policy = _run_policy(ctx) if ctx is not None else contextlib.nullcontext()
    # `result` is reported when this call sets it: a session's earlier one stays a variable
    earlier_result = "result" in glb
    snippet_traceback.source["code"] = code

    failure = None
    # Reporting stays inside the redirect too: encoding the result may run the snippet's
    # __repr__/__str__, which may print. Whatever may run the snippet's code (a collection,
    # a value of a session's globals dropped) happens inside the policy too.
    with policy, _recursion_limit(RESTRICTED_RECURSION_LIMIT if restricted else None), \
            contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), _collected_only_while_running():
        glb.update(names or {})
        glb.pop(LAST_VALUE, None)
        try:
            with interrupts.raising(interruptible):
                _run(code_obj, glb)
        except SystemExit as exc:
            # sys.exit(0) / sys.exit() ends a script that went well, as in a terminal
            failure = None if exc.code in (None, 0) else exc
        except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt included
            failure = exc
        if failure is None:
            # (no local keeps the value: dropping the last reference to a snippet's object,
            # a started generator, runs its code, which must happen here, under the policy)
            reported = "result" if "result" in glb and (not earlier_result or _stores_result(code_obj)) \
                else LAST_VALUE
            out.update(success=True, **reported_value(glb.get(reported)))
        else:
            out.update(_describe_failure(failure, code, events.items))
            failure = None  # drop the frames it holds
        glb.pop(LAST_VALUE, None)
        out["variables"] = _variables(glb)
        if finish is not None:
            finish()
        for stream in (stdout, stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
    return out


def _run(code_obj, glb: dict) -> None:
    """exec(); a snippet with a top-level `await`, `async for` or `async with` (compiled
    as a coroutine) runs on an event loop of its own, as asyncio.run(main()) would."""
    if code_obj.co_flags & inspect.CO_COROUTINE:
        import asyncio  # (only for such a snippet: the child does not preload it)
        deny_types_of("asyncio")  # the loop stays out of reach, as after `import asyncio`
        asyncio.run(eval(code_obj, glb))  # noqa: S307 - the compiled snippet, as exec() above
    else:
        exec(code_obj, glb)  # noqa: S102


@contextlib.contextmanager
def _recursion_limit(limit: int | None):
    saved = sys.getrecursionlimit()
    if limit is not None:
        sys.setrecursionlimit(max(limit, saved))
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def _stores_result(code_obj) -> bool:
    """Whether the snippet's top level assigns `result`."""
    return any(i.opname in ("STORE_NAME", "STORE_GLOBAL") and i.argval == "result"
               for i in dis.get_instructions(code_obj))


def _variables(glb: dict) -> list[str]:
    names = sorted(
        name for name, value in glb.items()
        if isinstance(name, str) and name.isidentifier() and not name.startswith("_")
        and not isinstance(value, (ModuleProxy, types.ModuleType))
    )
    return names[:MAX_VARIABLES]


def _refused_anew(exc: BaseException, events: list) -> bool:
    """A refusal that library code raised again as type(e)(str(e)), which drops its mark
    (3.12's enum does, for an error in a member's __init__): one of this run's refusals,
    by its type and text. (A snippet that does the same gets what it would anyway.)"""
    return isinstance(exc, (SandboxAttributeError, SandboxImportError, SandboxRefused)) and any(
        event["detail"] == cap_text(str(exc), MAX_EVENT_DETAIL)[0] for event in events)


def _describe_failure(exc: BaseException, code: str, events: list = ()) -> dict:
    if isinstance(exc, MemoryError):
        error_type = "memory_limit"
    elif getattr(exc, "_sandbox_refused", False) is True or _refused_anew(exc, events):
        error_type = "security_violation"
    else:
        error_type = "runtime_error"
    frames = snippet_traceback.snippet_frames(exc)
    message = snippet_traceback.exception_text(exc)
    return {
        "error": cap_text(message, MAX_MESSAGE)[0],
        "error_type": error_type,
        "line": frames[-1][1] if frames else None,
        "traceback": cap_text(snippet_traceback.format_traceback(frames, message, code), MAX_MESSAGE)[0],
    }

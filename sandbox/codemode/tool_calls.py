"""Code mode: the tool calls of one execution, checked and performed by the
server (never by the child): the tool must be exposed, the call budget not
spent, the arguments valid against the tool's inputSchema; each call has its
own timeout and a cap on the bytes it returns, and every call still running
when the execution ends is cancelled with it.

The answer to the child is {"ok": true, "value": ..., "images": [...]} or
{"ok": false, "error": "..."}: the value is the tool's structuredContent, else
its text parsed as JSON, else the text.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from dataclasses import dataclass

from sandbox.config import DEFAULTS
from sandbox.wire import protocol

MAX_ERROR = 2000


@dataclass(frozen=True)
class Limits:
    budget: int = DEFAULTS.tool_call_budget                 # calls per execution
    call_timeout: float = DEFAULTS.tool_call_timeout        # seconds per call
    max_result_bytes: int = DEFAULTS.tool_result_max        # what one call may return to the snippet


class ToolSession:
    def __init__(self, registry, limits: Limits, audit=None, execution_id: str = ""):
        self.registry = registry
        self.limits = limits
        self.audit = audit
        self.execution_id = execution_id
        self.calls = 0
        self.over_budget = 0   # calls refused once the budget was spent
        self.records: list[dict] = []
        self.events: list[dict] = []
        self.tasks: set[asyncio.Task] = set()

    def spawn(self, coroutine) -> asyncio.Task:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def close(self) -> tuple[list, list]:
        """Cancel what still runs; (the calls, the security events)."""
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.over_budget > 1:
            self.events.append({"kind": "tool_refused", "source": "server",
                                "detail": f"{self.over_budget - 1} more calls past the budget were refused"})
        return self.records, self.events

    async def call(self, call: dict) -> dict:
        server, tool, arguments = str(call.get("server"))[:200], str(call.get("tool"))[:200], call.get("arguments")
        started = time.monotonic()
        record = {"server": server, "tool": tool, "ok": False, "milliseconds": 0}
        try:
            answer = await self._checked_call(server, tool, arguments)
            record["ok"] = bool(answer.get("ok"))
            if not record["ok"]:
                record["error"] = str(answer.get("error"))[:300]
            return answer
        except asyncio.CancelledError:
            record["error"] = "cancelled: the execution ended"
            raise
        finally:
            record["milliseconds"] = round((time.monotonic() - started) * 1000)
            # past the budget only the first refusal is recorded: a snippet looping on
            # refused calls must not grow the answer and the audit log without end
            if self.over_budget <= 1:
                self.records.append(record)
                self._audit(record, arguments)

    async def _checked_call(self, server: str, tool: str, arguments) -> dict:
        self.calls += 1
        if self.calls > self.limits.budget:
            self.over_budget += 1
            why = (f"the call budget of {self.limits.budget} tool calls per execution is spent: "
                   "do more per call, or split the work over several executions")
            return self._refuse(why) if self.over_budget == 1 else {"ok": False, "error": why}
        upstream, remote, why = self.registry.lookup(server, tool)
        if why and upstream is not None and upstream.reconnecting:   # a call just cut its connection
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(upstream.ready.wait(), self.limits.call_timeout)
            upstream, remote, why = self.registry.lookup(server, tool)
        if why:
            return self._refuse(why)
        problem = remote.arguments_problem(arguments)
        if problem:
            return self._refuse(f"tools.{server}.{tool}: bad arguments: {problem}; it takes {remote.call_form()}",
                                kind="tool_bad_arguments")
        asked = time.monotonic()
        try:
            result = await asyncio.wait_for(upstream.session.call_tool(remote.name, arguments),
                                            self.limits.call_timeout)
        except asyncio.TimeoutError:
            return {"ok": False, "error": f"tools.{server}.{tool} did not answer within "
                                          f"{self.limits.call_timeout:g} s"}
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the upstream's failure is the snippet's ToolError
            if upstream.cap.cut_since(asked):   # this call's answer, or another's on the same connection
                return {"ok": False, "error": f"tools.{server}.{tool}: an answer from {server} passed "
                                              f"{upstream.cap.limit} bytes, more than a call may return "
                                              f"(SANDBOX_TOOL_RESULT_MAX is {self.limits.max_result_bytes}), so "
                                              "the reading stopped and the connection was ended: ask the tool for "
                                              "less (a narrower query, a page of the result); a call that asked "
                                              "for little can be made again"}
            return {"ok": False, "error": f"tools.{server}.{tool} failed: {type(exc).__name__}: {exc}"[:MAX_ERROR]}
        return self._answer(server, tool, result)

    def _answer(self, server: str, tool: str, result) -> dict:
        texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
        if result.is_error:
            return {"ok": False, "error": ("\n".join(texts) or f"tools.{server}.{tool} reported an error")[:MAX_ERROR]}
        images = [{"mime_type": block.mime_type, "data": block.data}
                  for block in result.content if getattr(block, "type", None) == "image"]
        try:
            if result.structured_content is not None:
                value = result.structured_content
            elif len(texts) == 1:
                value = _json_or_text(texts[0])
            elif texts:
                value = [_json_or_text(t) for t in texts]
            else:
                value = None
            too_deep = protocol.nested_too_deep(value)
        except RecursionError:
            too_deep = True
        if too_deep:  # on its way to the snippet it would exhaust a recursive encoder or decoder
            return {"ok": False, "error": f"tools.{server}.{tool} returned JSON nested deeper than "
                                          f"{protocol.MAX_NESTING} levels: ask the tool for a flatter answer"}
        answer = {"ok": True, "value": value, "images": images}
        size = len(json.dumps(answer, ensure_ascii=False, default=str))
        if size > self.limits.max_result_bytes:
            return {"ok": False, "error": f"tools.{server}.{tool} returned {size} bytes, more than the "
                                          f"{self.limits.max_result_bytes} a call may (SANDBOX_TOOL_RESULT_MAX): "
                                          "ask the tool for less (a narrower query, a page of the result)"}
        return answer

    def _refuse(self, why: str, kind: str = "tool_refused") -> dict:
        self.events.append({"kind": kind, "detail": why[:300], "source": "server"})
        return {"ok": False, "error": why[:MAX_ERROR]}

    def _audit(self, record: dict, arguments) -> None:
        if self.audit is None:
            return
        encoded = json.dumps(arguments, sort_keys=True, default=str).encode()
        self.audit.tool_call(execution_id=self.execution_id, server=record["server"], tool=record["tool"],
                             arguments_sha256=hashlib.sha256(encoded).hexdigest(), ok=record.get("ok", False),
                             error=record.get("error"), milliseconds=record["milliseconds"])


def _json_or_text(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text

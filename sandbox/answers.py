"""The text block of an execute_code answer: what a language model needs and nothing
else. The outcome, stdout, stderr, the result, and for a failure its type, line,
the snippet's own traceback and what to do; no ids, timings, RSS or flags at their
defaults. Structured content keeps every field of the schema for clients that
read it."""

from __future__ import annotations

import json

from .limits_parse import format_size

# error_type -> what to do instead; {max_timeout} and {max_memory} are the server's ceilings.
HINTS = {
    "syntax_error": "fix the syntax at the line shown",
    "security_violation": "the sandbox refused this operation; the message says what to use instead "
                          "(get_sandbox_info lists the modules and profiles)",
    "timeout": "make the code do less per call, or pass a longer timeout (up to {max_timeout:g} s)",
    "memory_limit": "use less memory (smaller data, generators), or pass a larger memory_limit "
                    "(up to {max_memory})",
    "output_limit": "the snippet wrote far more output than can be returned: print less",
    "internal_error": "the sandbox failed, not the code: retry once; if it fails again, tell the operator",
    "invalid_argument": "fix the argument the message names",
    "isolation_unavailable": "call without use_container to run with the layers this host has",
}


def execution_text(result: dict, *, max_timeout: float, max_memory: int) -> str:
    lines: list[str] = []
    error_type = result.get("error_type")
    if not result.get("success"):
        where = f", line {result['line']}" if result.get("line") else ""
        if result.get("traceback"):
            lines += [f"error ({error_type}{where}):", result["traceback"]]
        else:
            lines.append(f"error ({error_type}{where}): {result.get('error') or 'no message'}")
    for stream in ("stdout", "stderr"):
        text = result.get(stream) or ""
        if text:
            lines += [f"{stream}:", text.rstrip("\n")]
    if result.get("success") and result.get("result") is not None:
        lines.append("result: " + _value(result["result"]))
    images = result.get("images") or []
    if images:
        lines.append(f"{len(images)} figure{'s' if len(images) != 1 else ''} returned as image content")
    for item in result.get("files") or []:
        lines.append(f"file {item['path']} ({item['size']:,} bytes) returned in structured content")
    if result.get("artifacts_error"):
        lines.append(f"files and figures could not be collected: {result['artifacts_error']}")
    hint = HINTS.get(error_type)
    if not result.get("success") and hint:
        lines.append("hint: " + hint.format(max_timeout=max_timeout, max_memory=format_size(max_memory)))
    if not lines:
        lines.append("ok (no output and no result: set `result = ...` or end with an expression to return a value)")
    return "\n".join(lines)


def _value(value) -> str:
    if isinstance(value, str):
        return value if "\n" not in value else "\n" + value
    return json.dumps(value, ensure_ascii=False)

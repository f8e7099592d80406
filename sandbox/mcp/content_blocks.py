"""A tool's answer as MCP content blocks: the structured result, the text block, and the
run's figures and files.

The text block is what a language model needs and nothing else: the outcome, stdout,
stderr, the result, and for a failure its type, line, the snippet's own traceback and
what to do; no ids, timings, RSS or flags at their defaults. Structured content keeps
every field of the schema for clients that read it."""

from __future__ import annotations

import base64
import json

from mcp.types import (BlobResourceContents, CallToolResult, EmbeddedResource, ImageContent, ResourceLink,
                       TextContent, TextResourceContents)

from sandbox.wire import image_check
from sandbox.limits_parse import format_size
from sandbox.wire.terminal_text import ACTING, terminal_safe

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
    "session_not_found": "create a new session with create_session and run everything it needs again",
    "rate_limited": "wait the seconds the message gives, then call again",
    "input_too_large": "send the data in parts over several calls of one session (create_session: its "
                       "workspace keeps the files), each call within the limit",
    "input_not_found": "run the code that wrote the file again and pass its new uri, or send the file's content",
}
SESSION_ENDED = ("the session ended with this error: its state (variables, imports, files) is gone; "
                 "create a new session with create_session to go on")
SESSION_KEPT = ("the session kept its state (variables, imports, files): go on from there; `del` what it no "
                "longer needs to free memory")
FRESH_CALL = ("each call starts fresh: names from earlier calls do not exist here; send everything this "
              "call needs, or keep state across calls with create_session")
EXIT_STATUS = ("the snippet ended with a non-zero exit status, which is reported as a failure: sys.exit(0) or "
               "reaching the end is success; set `result = ...` to return a value, print() to report")


def execution_text(result: dict, result_repr: str | None = None, *, max_timeout: float, max_memory: int) -> str:
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
        lines.append("result: " + _value(result["result"], result_repr))
    images = result.get("images") or []
    if images:
        lines.append(f"{len(images)} figure{'s' if len(images) != 1 else ''} returned as image content")
    for item in result.get("files") or []:
        where = item.get("returned_as", "")
        how = {"text": "as a text resource", "blob": "as a blob resource", "image": "as the figure's image",
               "link": f"as a link ({item.get('uri')}), readable with resources/read"}.get(where, where)
        lines.append(f"file {item['path']} ({item['size']:,} bytes) returned {how}"
                     + (f"; {item['note']}" if item.get("note") else ""))
    for item in result.get("files_refused") or []:
        lines.append(f"file {item['path']} not returned: {item['reason']}")
    lines += network_lines(result.get("network") or [])
    if result.get("artifacts_error"):
        lines.append(f"files and figures could not be collected: {result['artifacts_error']}")
    hint = HINTS.get(error_type)
    if not result.get("success") and hint:
        lines.append("hint: " + hint.format(max_timeout=max_timeout, max_memory=format_size(max_memory)))
    if result.get("session_ended") and result.get("success"):
        lines.append(f"the session ended after this call ({result.get('session_end_reason') or 'its process ended'}): "
                     "its state is gone; create a new session with create_session to go on")
    elif result.get("session_ended"):
        lines.append(SESSION_ENDED)
    elif result.get("session_id") and error_type in ("timeout", "memory_limit"):
        lines.append(SESSION_KEPT)
    elif str(result.get("error") or "").startswith("NameError") and not result.get("session_id"):
        lines.append("hint: " + FRESH_CALL)
    elif str(result.get("error") or "").startswith("SystemExit"):
        lines.append("hint: " + EXIT_STATUS)
    if result.get("session_memory"):
        lines.append(session_memory_line(result["session_memory"]))
    if not lines:
        lines.append("ok (no output and no result: set `result = ...` or end with an expression to return a value)")
    return "\n".join(lines)


def session_memory_line(memory: dict) -> str:
    """What the session holds, at a glance: `session memory: 212 MiB, 300 MiB left before its limit`."""
    line = f"session memory: {memory['resident_bytes'] / 2**20:.0f} MiB"
    if memory.get("headroom_bytes") is not None:
        line += f", {memory['headroom_bytes'] / 2**20:.0f} MiB left before its limit"
    return line


MAX_NETWORK_LINES = 5


def network_lines(connections: list) -> list[str]:
    """The connections the egress proxy refused or cut: a snippet may read a 403 as an
    ordinary answer, so the text says it came from the sandbox, and why."""
    refused = [c for c in connections if isinstance(c, dict) and (not c.get("allowed") or c.get("reason"))]
    lines = [f"network: {c.get('method') or 'connection to'} {c.get('host')}:{c.get('port')} "
             + ("refused" if not c.get("allowed") else "cut") + " by the sandbox's proxy"
             + (f" (HTTP {c['status']})" if c.get("status") else "") + f": {c.get('reason') or 'no reason given'}"
             for c in refused[:MAX_NETWORK_LINES]]
    if len(refused) > MAX_NETWORK_LINES:
        lines.append(f"network: {len(refused) - MAX_NETWORK_LINES} more refused (see network in the structured data)")
    return lines


def _value(value, text: str | None) -> str:
    """The result as Python shows it (its repr, made and cut in the child); a string
    that came whole as itself, for its lines to read as lines."""
    if isinstance(value, str) and (text is None or text == repr(value)):
        text = value
    elif text is None:  # an answer made without the child's repr
        text = json.dumps(value, ensure_ascii=False)
    return text if "\n" not in text else "\n" + text


# --------------------------------------------------------------------------- files and figures

# Extensions returned as text the model can read; everything else is binary. SVG is
# text/plain: a client must never render script a snippet wrote.
TEXT_TYPES = {".csv": "text/csv", ".tsv": "text/tab-separated-values", ".json": "application/json",
              ".jsonl": "application/jsonl", ".md": "text/markdown", ".txt": "text/plain", ".log": "text/plain",
              ".py": "text/x-python", ".html": "text/plain", ".xml": "application/xml", ".yaml": "application/yaml",
              ".yml": "application/yaml", ".toml": "application/toml", ".ini": "text/plain", ".svg": "text/plain",
              ".sql": "text/plain", ".tex": "text/plain"}
BINARY_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".pdf": "application/pdf",
                ".zip": "application/zip", ".parquet": "application/vnd.apache.parquet", ".npy": "application/octet-stream"}
INLINE_TEXT = 64 << 10     # larger text files become links
INLINE_BLOB = 256 << 10    # larger binary files become links
INLINE_IMAGE = 1 << 20     # larger figures become links


def mime_type(path: str) -> str:
    suffix = "." + path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    return TEXT_TYPES.get(suffix) or BINARY_TYPES.get(suffix) or "application/octet-stream"


def image_blocks(images: list[dict], store) -> list:
    """The run's figures: inline up to INLINE_IMAGE, else resource links into `store`."""
    blocks: list = []
    for image in images:
        data = base64.b64decode(image["base64"])
        if len(data) <= INLINE_IMAGE:
            blocks.append(ImageContent(type="image", data=image["base64"], mime_type="image/png"))
        else:
            uri = store.put("figure.png", "image/png", data)
            if uri:
                blocks.append(ResourceLink(type="resource_link", uri=uri, name="figure.png",
                                           mime_type="image/png", size=len(data)))
    return blocks


def file_blocks(result: dict, store) -> list:
    """The run's out/ files: small text files as embedded text resources, small binaries
    as blob resources, the rest as resource links that resources/read serves from `store`
    for a while; a PNG that is one of the run's figures (saved to out/ and still open, at
    any dpi) is already an image block, so it comes back once. Rewrites result["files"] to
    say where each went; the content is in the blocks only, never base64 in the data."""
    blocks: list = []
    described = []
    figures = {image.get("base64") for image in result.get("images") or () if isinstance(image, dict)}
    for item in result.get("files") or []:
        data = base64.b64decode(item["base64"])
        mime, note = mime_type(item["path"]), None
        if mime.startswith("image/") and (why := image_check.refusal(data)) is not None:
            # a client renders an image/* file it is sent: a decompression bomb would decode there
            mime, note = "application/octet-stream", f"not returned as {mime}: {why}"
        is_text = mime in TEXT_TYPES.values()
        text = plain_text(data) if is_text else None
        if is_text and text is None:
            note = "sent as bytes: it is not UTF-8, or holds characters a terminal acts on (ESC, bidi controls)"
        uri = store.put(item["path"], mime, data)
        entry = {"path": item["path"], "size": len(data), "mime_type": mime, "uri": uri, "returned_as": "link",
                 **({"note": note} if note else {})}
        if mime == "image/png" and (item["base64"] in figures or item.get("figure") is True):
            entry["returned_as"] = "image"
        elif text is not None and len(data) <= INLINE_TEXT:
            blocks.append(EmbeddedResource(type="resource", resource=TextResourceContents(
                uri=uri or f"sandbox://inline/{item['path']}", mime_type=mime, text=text)))
            entry["returned_as"] = "text"
        elif len(data) <= INLINE_BLOB:
            blocks.append(EmbeddedResource(type="resource", resource=BlobResourceContents(
                uri=uri or f"sandbox://inline/{item['path']}", mime_type=mime, blob=item["base64"])))
            entry["returned_as"] = "blob"
        elif uri:
            blocks.append(ResourceLink(type="resource_link", uri=uri, name=item["path"], mime_type=mime,
                                       size=len(data)))
        else:
            entry["returned_as"] = "not returned: larger than the file store"
        described.append(entry)
    result["files"] = described
    return blocks


def plain_text(data: bytes) -> str | None:
    """`data` as text for a client to show, or None: not UTF-8, or holding characters a
    terminal acts on (CR LF line ends are fine). Such a file goes as bytes, unchanged:
    a CLI client prints a text resource as it is, escapes and all."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if ACTING.search(text.replace("\r\n", "\n")) else text


def tool_result(data: dict, *, is_error: bool = False, text: str | None = None, blocks: list = ()) -> CallToolResult:
    """Structured content plus a text block (`text`, else the same dict as JSON; terminal
    controls written as escapes) and the run's figures and files as further content blocks."""
    text = json.dumps(data, ensure_ascii=False) if text is None else text
    content: list = [TextContent(type="text", text=terminal_safe(text))]
    return CallToolResult(content=content + list(blocks), structured_content=data, is_error=is_error)

"""Turning what a child did into the result the client sees.

Everything that comes from a child is hostile input: the result frame's header
is a declared message (wire/messages.py, decoded strictly), every section is checked against its declared kind and size
and the request's caps before it is decoded, file paths and image types are
validated, and when there is no usable frame the exit status decides the error.
Security events the child reports are labelled as the sandbox's, never taken as
the server's own. The fork server calls compose(); the server only relays.
"""

from __future__ import annotations

import base64
import json
import os
import signal
from dataclasses import dataclass

from sandbox.wire import image_check
from sandbox.wire import protocol
from sandbox.wire.image_check import PNG_SIGNATURE
from sandbox.wire.cutting import HeadTail
from sandbox.wire.messages import ExecuteResult, ValidationResult
from sandbox.restricted.base import MAX_EVENTS, MAX_VARIABLES

MAX_TEXT = 20_000          # error messages and tracebacks
OUT_PREFIX = "out/"
CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE}
NEAR_MEMORY_LIMIT = 48 << 20  # OpenBLAS asks for 32 MiB at a time


@dataclass
class ChildOutcome:
    """What the fork server observed about one execution (or, with `failure`, why
    no child could run it: the answer is built here all the same)."""
    execution_id: str
    op: str = "execute"
    failure: str | None = None          # no child ran: the fork failed, the fork server is gone
    frame: ExecuteResult | ValidationResult | None = None   # the result frame's header
    payload: bytes = b""                # its sections, undecoded
    result_cap: int = 1 << 20           # bytes of JSON the result value may take
    frame_error: str | None = None
    setup_error: dict | None = None
    status: int | None = None           # raw wait status of the snippet's process
    cpu_time: float = 0.0
    max_rss_bytes: int = 0
    stdout: HeadTail | None = None      # what the snippet wrote, cut for the context window
    stderr: HeadTail | None = None
    timed_out: bool = False
    interrupted: bool = False           # a session's call got KeyboardInterrupt at its time limit
    memory_at_timeout: tuple | None = None   # (data in use, its limit) in bytes, when killed for time
    output_flooded: bool = False
    cancelled: bool = False
    elapsed: float = 0.0
    timeout: float = 0.0
    capture_output: bool = True


def compose(o: ChildOutcome) -> dict:
    if o.op == "validate":
        return _validation(o)
    result = {
        "success": False,
        "execution_id": o.execution_id,
        "result": None,
        "stdout": o.stdout.text() if o.capture_output and o.stdout else "",
        "stderr": o.stderr.text() if o.capture_output and o.stderr else "",
        "stdout_truncated": bool(o.stdout and o.stdout.truncated),
        "stderr_truncated": bool(o.stderr and o.stderr.truncated),
        "stdout_bytes": o.stdout.total if o.stdout else 0,
        "stderr_bytes": o.stderr.total if o.stderr else 0,
        "execution_time": round(o.elapsed, 6),
        "cpu_time": round(o.cpu_time, 6),
        "max_rss_bytes": o.max_rss_bytes,
        "variables": [],
        "error": None,
        "error_type": None,
        "line": None,
        "security_events": [],
    }
    error = _limit_or_failure(o)
    if error is None:
        checked = check_execute_frame(o.frame, o.payload, o.result_cap)
        if isinstance(checked, str):
            error = ("internal_error", checked)
        else:
            result.update(checked)
            if o.interrupted and not checked["success"]:  # (the traceback shows where it stopped)
                result["error_type"] = "timeout"
                result["error"] = (f"execution exceeded the time limit of {o.timeout:g} s and was interrupted "
                                   "(KeyboardInterrupt); the session kept its state")
            return sanitize(result)
    result["error_type"], result["error"] = error
    if error[0] == "security_violation" and o.status is not None and _signal(o.status) == signal.SIGSYS:
        result["security_events"].append({"kind": "seccomp_kill", "detail": "killed by seccomp (SIGSYS)"})
    sig = _signal(o.status)
    if sig:
        result["signal"] = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
    return sanitize(result)


def _limit_or_failure(o: ChildOutcome):
    """An (error_type, message) when the run ended by a limit or a failure
    rather than with a result frame; None when the frame decides."""
    if o.failure:
        return ("internal_error", o.failure)
    if o.cancelled:
        return ("internal_error", "the execution was cancelled")
    if o.timed_out and o.interrupted:
        return ("timeout", f"execution exceeded the time limit of {o.timeout:g} s and did not stop within "
                f"{protocol.INTERRUPT_GRACE:g} s of the interrupt (KeyboardInterrupt caught, or C code that "
                "does not return to Python), so it was killed" + _at_memory_limit(o.memory_at_timeout))
    if o.timed_out:
        return ("timeout", f"execution exceeded the time limit of {o.timeout:g} s and was killed"
                + _at_memory_limit(o.memory_at_timeout))
    if o.output_flooded:
        return ("output_limit", "the snippet kept writing far past the output limit and was killed")
    if o.setup_error is not None:
        layer = str(o.setup_error.get("layer"))[:50]
        return ("internal_error", f"the sandbox could not apply the {layer} layer "
                f"({str(o.setup_error.get('error'))[:300]}); nothing was run")
    if o.frame is not None and o.frame_error is None:
        return None
    if o.frame_error:
        # the fork server killed the child for it: the kill's status says nothing more
        return ("internal_error", f"the sandbox child sent an invalid result ({o.frame_error})")
    sig = _signal(o.status)
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and o.timeout and o.cpu_time >= o.timeout):
        return ("timeout", f"execution exceeded the CPU time limit of {o.timeout:g} s and was killed")
    if sig == signal.SIGKILL:
        # not the fork server's kill (it would have said timeout, flood or cancel above)
        return ("internal_error", "the sandbox process was killed from outside (SIGKILL: the host's "
                                  "out-of-memory killer, or an operator); nothing ran to completion")
    if sig == signal.SIGSYS:
        return ("security_violation", "the snippet made a forbidden system call and was killed (seccomp)")
    if sig in CRASH_SIGNALS:
        name = signal.Signals(sig).name
        return ("runtime_error", f"the Python interpreter crashed ({name}); the sandbox contained it")
    if sig:
        return ("runtime_error", f"the snippet was killed by signal {sig}")
    code = os.WEXITSTATUS(o.status) if o.status is not None and os.WIFEXITED(o.status) else None
    return ("internal_error", f"the sandbox child exited (status {code}) without a result")


def _at_memory_limit(memory: tuple[int, int] | None) -> str:
    """What to say of a timeout that came while the snippet was near its memory limit:
    OpenBLAS (under numpy and scipy) retries a failed allocation of its 32 MiB buffers
    forever, so a BLAS call there spins until the time limit instead of raising MemoryError."""
    if memory is None or memory[1] - memory[0] > NEAR_MEMORY_LIMIT:
        return ""
    in_use, limit = (round(n / 2**20) for n in memory)
    return (f", within reach of its memory limit ({in_use} of {limit} MiB of data in use): some libraries "
            "(OpenBLAS, under numpy and scipy) retry a failed allocation until the time limit instead of "
            "raising MemoryError; if the code was not simply slow, pass a larger memory_limit")


def _signal(status: int | None) -> int:
    """The signal that ended the snippet's process; SIGXCPU also when its
    handler exited with 128 + SIGXCPU (PID 1 of a namespace ignores it by default)."""
    if status is None:
        return 0
    if os.WIFSIGNALED(status):
        return os.WTERMSIG(status)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 128 + signal.SIGXCPU:
        return signal.SIGXCPU
    return 0


def check_execute_frame(frame: ExecuteResult | dict, payload: bytes = b"", result_cap: int = 1 << 20) -> dict | str:
    """The result of an execution from its result frame and sections; a string describes
    a violation. A header still in its wire form is decoded first (strictly: see
    wire/messages.py). Nothing of the payload is decoded before its kind and size have
    been checked."""
    if not isinstance(frame, ExecuteResult):
        try:
            frame = ExecuteResult.from_frame(frame)
        except protocol.FrameError as exc:
            return str(exc)
    if frame.kind != "result":
        return "result frame has the wrong shape"
    if frame.error_type is not None and frame.error_type not in protocol.CHILD_ERROR_TYPES:
        return "result frame has an unknown error_type"
    if frame.success == (frame.error_type is not None):
        return "result frame success and error_type disagree"
    sections = _check_sections(frame.sections, len(payload), result_cap)
    if isinstance(sections, str):
        return sections
    checked = {
        "success": frame.success,
        "result": None,
        "variables": [v[:200] for v in frame.variables[:MAX_VARIABLES]],
        "error": _cap(frame.error),
        "error_type": frame.error_type,
        "line": frame.line,
        # reported by the child: a snippet with real Python can write anything here
        "security_events": [
            {"kind": _cap(str(e.get("kind")), 50), "detail": _cap(str(e.get("detail")), 500), "source": "sandbox"}
            for e in frame.security_events[:MAX_EVENTS]
        ],
        "images": [],
        "files": [],
        "images_truncated": frame.images_truncated,
        "files_truncated": frame.files_truncated,
    }
    if frame.traceback is not None:
        checked["traceback"] = _cap(frame.traceback)
    if frame.result_truncated:
        checked["result_truncated"] = True
    if frame.result_bytes is not None and 0 <= frame.result_bytes < 1 << 40:
        checked["result_bytes"] = frame.result_bytes  # the child's word: for the audit log only
    if frame.artifacts_error is not None:
        checked["artifacts_error"] = _cap(frame.artifacts_error, 300)
    if frame.files_refused:  # the child's report: shown escaped, never used as a path
        checked["files_refused"] = [
            {"path": ascii(str(item.get("path")))[1:-1][:300], "reason": _cap(str(item.get("reason")), 100)}
            for item in frame.files_refused[:protocol.MAX_REFUSED_FILES]]
    figure_files = set(frame.figure_files)   # out/ PNGs the child matched to an open figure
    view, offset = memoryview(payload), 0
    for section in sections:
        data = view[offset:offset + section["size"]]
        offset += section["size"]
        if section["kind"] == "result":
            value = _decode_result(data)
            if isinstance(value, str) and value.startswith("!"):
                return value[1:]
            checked["result"] = value[0]
        elif section["kind"] == "repr":
            try:
                checked["result_repr"] = bytes(data).decode("utf-8")
            except UnicodeDecodeError:
                return "result frame holds a repr that is not UTF-8"
        elif section["kind"] == "image":
            if bytes(data[:len(PNG_SIGNATURE)]) != PNG_SIGNATURE or image_check.refusal(data) is not None:
                return "result frame has an image that is not a PNG of a size a client may decode"
            checked["images"].append({"mime_type": "image/png", "base64": base64.b64encode(data).decode("ascii")})
        else:
            checked["files"].append({"path": section["path"], "size": section["size"],
                                     "base64": base64.b64encode(data).decode("ascii"),
                                     **({"figure": True} if section["path"] in figure_files else {})})
    if all(s["kind"] != "result" for s in sections):  # no JSON form within the cap: the repr stands for it
        checked["result"] = checked.get("result_repr")
    return checked


def _check_sections(sections, payload_size: int, result_cap: int) -> list | str:
    """Kinds, counts and sizes of the sections against the caps and the payload."""
    if len(sections) > 2 + protocol.MAX_IMAGES + protocol.MAX_OUTPUT_FILES:
        return "result frame sections are not a short list"
    checked, counts, file_bytes, image_bytes, paths = [], {"result": 0, "repr": 0, "image": 0, "file": 0}, 0, 0, set()
    for section in sections:
        if section.get("kind") not in counts:
            return "result frame has a section of no known kind"
        kind, size = section["kind"], section.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            return "result frame has a section without a valid size"
        counts[kind] += 1
        if kind in ("result", "repr") and (counts[kind] > 1 or size > result_cap):
            return f"result frame has more than one {kind}, or one larger than the output limit"
        if kind == "image":
            image_bytes += size
            if (counts[kind] > protocol.MAX_IMAGES or size > protocol.MAX_IMAGE_BYTES
                    or image_bytes > protocol.MAX_IMAGES_BYTES or section.get("mime_type") != "image/png"):
                return "result frame has too many images, too large, or one that is not a PNG"
        if kind == "file":
            file_bytes += size
            path = section.get("path")
            why = check_output_path(path)
            if why is not None:
                return f"result frame has a file with a refused path ({why})"
            if path in paths or counts[kind] > protocol.MAX_OUTPUT_FILES or file_bytes > protocol.MAX_OUTPUT_BYTES:
                return "result frame has a duplicate file, too many files or too many bytes of files"
            paths.add(path)
        checked.append({"kind": kind, "size": size, **({"path": section["path"]} if kind == "file" else {})})
    if sum(s["size"] for s in checked) != payload_size:
        return "result frame section sizes do not add up to the frame"
    return checked


def check_output_path(path) -> str | None:
    """Why a path the child reports under out/ is refused, or None: relative, under
    out/, no '.', '..' or empty parts, no control, format (bidi override) or
    surrogate characters, at most MAX_PATH characters."""
    if not isinstance(path, str) or not path.startswith(OUT_PREFIX) or len(path) > protocol.MAX_PATH:
        return f"not a path under out/ of at most {protocol.MAX_PATH} characters"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return "empty, '.' or '..' component"
    if protocol.unsafe_name(path):
        return "control, format or unassigned character"
    return None


def _decode_result(data: memoryview):
    """The result value's JSON (already within the cap) as a 1-tuple, or "!reason"."""
    try:
        value = json.loads(bytes(data).decode("utf-8"))
    except (ValueError, RecursionError, UnicodeDecodeError):
        return "!result frame holds a result that is not valid JSON"
    if protocol.nested_too_deep(value):
        return f"!result frame holds a result nested deeper than {protocol.MAX_NESTING} levels"
    return (value,)


def _validation(o: ChildOutcome) -> dict:
    frame = o.frame if o.frame_error is None and not o.payload else None
    if isinstance(frame, ValidationResult) and frame.validation is not None and frame.analysis is not None:
        validation = {**frame.validation, "valid": bool(frame.validation.get("valid"))}
        return sanitize({"execution_id": o.execution_id, "validation": validation, "analysis": frame.analysis,
                         "recommendations": list(frame.recommendations)})
    failure = _limit_or_failure(o) or ("internal_error", "the validator returned no usable answer")
    return sanitize({
        "execution_id": o.execution_id,
        "validation": {"valid": False, "errors": [{"line": None, "message": failure[1]}],
                       "message": f"validation failed: {failure[1]}"},
        "analysis": {"line_count": 0, "character_count": 0, "estimated_complexity": "unknown"},
        "recommendations": [],
        "error_type": failure[0],
    })


def _cap(text, limit: int = MAX_TEXT):
    if text is None:
        return None
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f"... [truncated {len(text) - limit} characters]"


def sanitize(value, _depth: int = 0):
    """Strings that came through JSON may hold lone surrogates, which cannot be
    encoded as UTF-8 on the MCP channel: escape them. Depth is bounded by the
    child's encoder; this guard only stops pathological frames."""
    if _depth > 200:
        return "<too deep>"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, list):
        return [sanitize(v, _depth + 1) for v in value]
    if isinstance(value, dict):
        return {sanitize(str(k), _depth + 1): sanitize(v, _depth + 1) for k, v in value.items()}
    return value

"""The audit log: one JSON line per tool call and per blocked operation.

Records describe *what happened*, never *what was run*: the code is kept only as
its SHA-256 and size, and no output, result, environment value or token is ever
written. The file is opened O_APPEND for each record (so log rotation needs no
signal) and created 0600. A failure to write is logged to stderr and swallowed:
auditing must not take the server down.
"""

import hashlib
import json
import logging
import os
from datetime import datetime, timezone

logger = logging.getLogger(__name__)

_MAX_DETAIL = 500  # a detail string comes from the sandbox: cap it


def code_digest(code: str) -> tuple[str, int]:
    """SHA-256 and UTF-8 size of a snippet: enough to correlate, nothing to leak."""
    data = code.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest(), len(data)


class AuditLog:
    def __init__(self, path: str | None):
        self.path = path
        self._failing = False

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def execution(
        self,
        *,
        execution_id: str,
        code: str,
        profiles: list[str],
        allowed_imports: list[str],
        timeout: float | None,
        memory_limit: int | None,
        use_container: bool,
        result: dict | None,
        outcome: str | None = None,
        output_sizes: dict | None = None,
        session_id: str | None = None,
    ) -> None:
        """One record for an execute_code call, then one per connection through the egress proxy
        and one per security event in its result.
        `output_sizes` are the full sizes of what the model got cut (stdout, stderr, result)."""
        if not self.enabled:
            return
        result = result or {}
        sha256, size = code_digest(code)
        self._write(
            {
                "event": "execution",
                "execution_id": execution_id,
                "code_sha256": sha256,
                "code_size": size,
                "profiles": profiles,
                "allowed_imports": allowed_imports,
                "limits": {"timeout": timeout, "memory": memory_limit},
                "use_container": use_container,
                "session_id": session_id,
                "outcome": outcome or ("success" if result.get("success") else "error"),
                "error_type": result.get("error_type"),
                "cpu_time": _number(result.get("cpu_time")),
                "max_rss_bytes": _number(result.get("max_rss_bytes")),
                "execution_time": _number(result.get("execution_time")),
                "output_bytes": {k: _number(v) for k, v in (output_sizes or {}).items()},
            }
        )
        for connection in result.get("network") or ():
            if isinstance(connection, dict):  # (the server's own proxy wrote it, not the sandbox)
                self._write({"event": "network", "execution_id": execution_id,
                             **{key: connection.get(key) for key in _CONNECTION_FIELDS}})
        for event in result.get("security_events") or ():
            if isinstance(event, dict):
                self.security(str(event.get("kind", "unknown")), str(event.get("detail", "")), execution_id,
                              source=str(event.get("source", "server")))

    def tool_call(self, *, execution_id: str, server: str, tool: str, arguments_sha256: str, ok: bool,
                  error: str | None, milliseconds: int) -> None:
        """One code-mode call: which tool, a hash of the arguments (never their values), the outcome."""
        if not self.enabled:
            return
        self._write({"event": "tool_call", "execution_id": execution_id, "server": server[:200], "tool": tool[:200],
                     "arguments_sha256": arguments_sha256, "ok": ok, "milliseconds": milliseconds,
                     **({"error": error[:_MAX_DETAIL]} if error else {})})

    def session(self, session_id: str, event: str, cause: str | None = None) -> None:
        """A session's creation and its end, with the cause."""
        if not self.enabled:
            return
        self._write({"event": f"session_{event}", "session_id": session_id,
                     **({"cause": cause[:_MAX_DETAIL]} if cause else {})})

    def validation(self, *, execution_id: str, code: str, profiles: list[str], result: dict | None, outcome: str) -> None:
        if not self.enabled:
            return
        sha256, size = code_digest(code)
        validation = (result or {}).get("validation") or {}
        self._write(
            {
                "event": "validation",
                "execution_id": execution_id,
                "code_sha256": sha256,
                "code_size": size,
                "profiles": profiles,
                "outcome": outcome,
                "valid": validation.get("valid"),
                "error_count": len(validation.get("errors") or ()),
            }
        )

    def security(self, kind: str, detail: str, execution_id: str, source: str = "server") -> None:
        """A blocked operation: a refused import, a missing layer, a seccomp kill... `source`
        says who saw it: the server, or the sandbox (whose word a snippet running real Python
        can forge)."""
        if not self.enabled:
            return
        self._write({"event": "security", "kind": kind[:100], "detail": detail[:_MAX_DETAIL],
                     "execution_id": execution_id, "source": source[:10]})

    def _write(self, record: dict) -> None:
        record = {"timestamp": datetime.now(timezone.utc).isoformat(timespec="milliseconds"), **record}
        line = (json.dumps(record, ensure_ascii=True, default=str) + "\n").encode("ascii")
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, line)  # one write per record: O_APPEND keeps concurrent lines whole
            finally:
                os.close(fd)
        except OSError as exc:
            if not self._failing:
                logger.error("audit log %s cannot be written: %s (records are being lost)", self.path, exc)
            self._failing = True
            return
        if self._failing:
            logger.warning("audit log %s is writable again", self.path)
            self._failing = False


_CONNECTION_FIELDS = ("host", "port", "address", "method", "allowed", "bytes_sent", "bytes_received",
                      "milliseconds", "reason", "status")


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

"""What each tool answers, as pydantic models: the output schemas tools/list publishes
(compacted) and every answer is checked against before it leaves the server."""

import logging
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from sandbox.wire import protocol

logger = logging.getLogger(__name__)

ErrorType = Literal[protocol.ERROR_TYPES]
_ERROR_TYPES = frozenset(protocol.ERROR_TYPES)


class SecurityEvent(BaseModel):
    kind: str
    detail: str = ""
    source: Literal["server", "sandbox"] = Field(
        "server", description='"sandbox": reported from inside the sandbox (by the RestrictedPython layer, or '
                              'forged by a snippet running real Python); "server": observed outside it')


class OutputFile(BaseModel):
    path: str = Field(description="path under the workspace, e.g. out/report.csv")
    size: int
    mime_type: str
    uri: str | None = Field(None, description="readable with resources/read for SANDBOX_FILE_TTL seconds")
    returned_as: str = Field(description='"text" or "blob" (an embedded resource block), "link" (a '
                                         'resource_link block), or "image" (a figure\'s image block)')
    note: str | None = Field(None, description="why it is not returned as its name says (an image too large for "
                                               "a client to decode goes as application/octet-stream)")


class RefusedFile(BaseModel):
    path: str
    reason: str


class NetworkConnection(BaseModel):
    host: str = Field(description="the host the snippet asked the egress proxy for")
    port: int
    allowed: bool
    address: str | None = Field(None, description="the address the proxy connected to")
    method: str | None = Field(None, description='"CONNECT" (HTTPS tunnel) or the HTTP method')
    bytes_sent: int = 0
    bytes_received: int = 0
    milliseconds: int | None = None
    reason: str | None = Field(None, description="why it was refused or cut")
    status: int | None = Field(None, description="the HTTP status the proxy refused it with (403: the "
                                                 "allow-list, 429: the connection limit, 4xx/502: malformed "
                                                 "or unreachable)")


class ToolCall(BaseModel):
    server: str
    tool: str
    ok: bool
    milliseconds: int = 0
    error: str | None = None


class ImageInfo(BaseModel):
    mime_type: str


class ExecutionResult(BaseModel):
    success: bool
    execution_id: str
    result: Any = Field(None, description="value of a top-level `result` variable, else of the last expression")
    stdout: str = ""
    stderr: str = ""
    execution_time: float = Field(0.0, description="wall-clock seconds")
    variables: list[str] = Field(default_factory=list, description="names the snippet defined")
    error: str | None = None
    error_type: ErrorType | None = None
    line: int | None = Field(None, description="line of the error in the snippet, when known")
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    cpu_time: float | None = None
    max_rss_bytes: int | None = None
    security_events: list[SecurityEvent] = Field(default_factory=list)
    traceback: str | None = None
    signal: str | None = Field(None, description="the signal that ended the snippet, when one did (e.g. SIGSEGV)")
    result_truncated: bool = Field(False, description="the result value exceeded the output limit and was cut")
    files: list[OutputFile] = Field(
        default_factory=list, description="files the snippet wrote under out/ (filesystem profile)"
    )
    files_truncated: bool = False
    images: list[ImageInfo] = Field(
        default_factory=list, description="matplotlib figures; each is also an image content block"
    )
    images_truncated: bool = False
    artifacts_error: str | None = Field(
        None, description="why figures or out/ files could not be collected (the result itself stands)")
    network: list[NetworkConnection] = Field(
        default_factory=list, description="connections through the egress proxy (network profile)")
    tool_calls: list[ToolCall] = Field(
        default_factory=list, description="calls the snippet made through `tools` (code mode)")
    session_id: str | None = Field(None, description="the session this call ran in")
    session_ended: bool = Field(False, description="the session ended with this call: its state is gone")
    session_end_reason: str | None = Field(None, description="why, when the call itself succeeded")
    session_memory: dict | None = Field(
        None, description="resident_bytes (its RSS) and headroom_bytes (left before its memory limit)")
    files_refused: list[RefusedFile] = Field(
        default_factory=list, description="entries under out/ not returned: symbolic links, FIFOs, devices, "
                                          "hard links, names with control characters")


class ValidationError_(BaseModel):
    line: int | None = None
    message: str


class Validation(BaseModel):
    valid: bool
    errors: list[ValidationError_] = Field(default_factory=list)
    message: str = ""


class CodeAnalysis(BaseModel):
    line_count: int
    character_count: int
    estimated_complexity: str


class ValidationResult(BaseModel):
    validation: Validation
    analysis: CodeAnalysis
    recommendations: list[str] = Field(default_factory=list)


class LayerInfo(BaseModel):
    active: bool
    detail: str = ""


class ProfileInfo(BaseModel):
    enabled: bool
    switch: str | None = Field(None, description="environment variable that enables this profile")
    modules: list[str] = Field(description="modules of this profile that are importable on this host")
    detail: str | None = Field(None, description="what the profile opens, when it is more than modules")


class TimeoutLimits(BaseModel):
    default: float
    max: float


class MemoryLimits(BaseModel):
    default: str
    default_bytes: int
    min_bytes: int
    max: str
    max_bytes: int


class Limits(BaseModel):
    timeout: TimeoutLimits
    memory_limit: MemoryLimits
    max_output_size: int = Field(description="bytes kept of stdout and of stderr, each")
    max_code_size: int
    max_input_size: int = Field(description="bytes of execute_code's files together (filesystem profile)")
    max_concurrency: int


class SessionLimits(BaseModel):
    open: int = Field(description="sessions open now")
    max_sessions: int
    idle_ttl: float = Field(description="seconds a session lives without a call")
    max_lifetime: float = Field(description="seconds a session lives at most")


class SessionCreated(BaseModel):
    session_id: str = Field(description="pass it as session_id to execute_code; close it with close_session")
    expires_in: float = Field(description="seconds until it ends unless used (each call restarts the idle clock)")
    idle_ttl: float
    max_lifetime: float
    profiles: list[str]
    limits: dict = Field(description="memory_limit (the whole session's), timeout per call (default, max)")


class SessionClosed(BaseModel):
    closed: bool
    message: str


class ServerInfo(BaseModel):
    name: str
    version: str


class InputFile(BaseModel):
    base64: str


class InputURI(BaseModel):
    uri: str = Field(max_length=200)   # a file an earlier run wrote, its uri in that answer's files


def file_content(value):
    return value.model_dump() if isinstance(value, (InputFile, InputURI)) else value


class WeakeningInfo(BaseModel):
    setting: str
    value: str
    source: str = Field(description='"environment", the path of the settings file, or "default"')
    opens: str


class MountInfo(BaseModel):
    path: str = Field(description="where snippets find the directory")
    mode: str = Field(description="ro (read-only) or rw")


class SandboxInfo(BaseModel):
    server: ServerInfo
    restricted_python: bool
    python_layer: str = Field(description="what the RestrictedPython layer claims with the enabled profiles")
    weakened_by: list[WeakeningInfo] = Field(
        description="settings that give snippets more than the defaults, and where each came from")
    profiles: dict[str, ProfileInfo]
    extra_imports: list[str] = Field(description="modules added by SANDBOX_ALLOWED_IMPORTS")
    allowed_modules: list[str]
    module_subsets: dict[str, list[str]] = Field(
        default_factory=dict, description="modules a snippet imports as a sandbox subset (these names only), "
                                          "where the whole module is not allowed")
    limits: Limits
    mounts: list[MountInfo] = Field(default_factory=list, description="host directories the operator mounted "
                                    "into every sandbox (SANDBOX_MOUNTS)")
    layers: dict[str, LayerInfo]
    strongest_isolation_available: bool = Field(description="whether execute_code(use_container=true) can run here")
    sessions: SessionLimits
    tool_servers: list[dict] = Field(
        default_factory=list, description="code mode: each upstream MCP server, its status and the tools exposed")
    tool_stubs: list[str] = Field(default_factory=list, description="code mode: what snippets can call")
    rules: str | None = Field(None, description="the RestrictedPython rules in full, with every sandbox subset")


def normalize_execution(raw: object, execution_id: str) -> tuple[dict, list[dict]]:
    """Keep the runner's answer to the declared schema: known keys, known error types.
    Figures come back apart, to become image content blocks rather than base64 in the data."""
    if not isinstance(raw, dict):
        raw = {"success": False, "error": "the sandbox returned no result", "error_type": "internal_error"}
    raw = dict(raw)
    # the server's id, not the runner's internal one: the audit log's records of one
    # execution (the execution, its tool calls, its refusals) must carry the same id
    raw["execution_id"] = execution_id
    if raw.get("error_type") is not None and raw.get("error_type") not in _ERROR_TYPES:
        raw["error_type"] = "internal_error"
    if not raw.get("success") and raw.get("error_type") is None:
        raw["error_type"] = "internal_error"
    images = [
        image for image in raw.pop("images", None) or ()
        if isinstance(image, dict) and isinstance(image.get("base64"), str)
        and image.get("mime_type") == "image/png"  # checked for the PNG signature by the fork server
    ]
    raw["images"] = [{"mime_type": image["mime_type"]} for image in images]
    try:
        return ExecutionResult.model_validate(raw).model_dump(mode="json"), images
    except ValidationError:
        logger.error("runner result for %s does not match the schema; reporting an internal error", execution_id)
        return ExecutionResult(
            success=False, execution_id=str(raw.get("execution_id")), error_type="internal_error",
            error="the sandbox returned a malformed result",
        ).model_dump(mode="json"), []


def refused_validation(code: str, message: str) -> dict:
    # Counting characters and newlines is not parsing: safe to do here.
    return ValidationResult(
        validation=Validation(valid=False, errors=[ValidationError_(line=None, message=message)], message=message),
        analysis=CodeAnalysis(line_count=code.count("\n") + 1, character_count=len(code), estimated_complexity="unknown"),
        recommendations=[],
    ).model_dump(mode="json")


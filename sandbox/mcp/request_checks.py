"""The checks a tool call passes before any child runs: limits within the server's
ceilings, sizes measured (never parsed), imports only narrowed. A refusal says what is
accepted and which setting the operator can change."""

import base64

from sandbox import profiles
from sandbox.config import MIN_MEMORY_LIMIT, MODULE_NAME, PROFILE_SWITCHES, Settings
from sandbox.limits_parse import SIZE_SYNTAX, format_size, parse_seconds, parse_size
from sandbox.mcp.file_store import FileExpired, FileStore, NotStoreURI


class RequestRefused(Exception):
    """A tool call turned down before any child runs."""

    def __init__(self, error_type: str, message: str, security_kind: str | None = None):
        super().__init__(message)
        self.error_type = error_type
        self.security_kind = security_kind  # set when the refusal is also a security event


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_timeout(value: object, settings: Settings) -> float:
    accepted = f"a number of seconds greater than 0 and at most {settings.max_timeout:g} (SANDBOX_MAX_TIMEOUT)"
    try:
        seconds = parse_seconds(value)
    except ValueError:
        seconds = None
    if seconds is None or not 0 < seconds <= settings.max_timeout:
        raise RequestRefused("invalid_argument", f"timeout must be {accepted}; got {_shown(value)}")
    return seconds


def check_memory_limit(value: object, settings: Settings) -> int:
    accepted = (
        f"{SIZE_SYNTAX}, from {format_size(MIN_MEMORY_LIMIT)} to "
        f"{format_size(settings.max_memory_limit)} (SANDBOX_MAX_MEMORY_LIMIT)"
    )
    try:
        size = parse_size(value)
    except ValueError:
        size = None
    if size is None or not MIN_MEMORY_LIMIT <= size <= settings.max_memory_limit:
        raise RequestRefused("invalid_argument", f"memory_limit must be {accepted}; got {_shown(value)}")
    return size


def check_code_size(code: str, settings: Settings) -> None:
    """Cheap on purpose: a length, never a parse."""
    limit = settings.max_code_size
    # A str of n characters is at most 4n bytes of UTF-8: skip encoding when it cannot matter.
    size = len(code) if len(code) > limit else len(code.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise RequestRefused(
            "invalid_argument",
            f"code is {size} bytes; the limit is {limit} bytes ({format_size(limit)}, SANDBOX_MAX_CODE_SIZE)",
        )


def check_input_files(files: dict | None, settings: Settings, store: FileStore) -> dict | None:
    """Input files need the filesystem profile; their bytes together, those named by a
    URI from `store` included, are held to SANDBOX_MAX_INPUT_SIZE. Returns every file as
    {"base64": ...} of its bytes, the form the request frame's cap is computed for. Names
    and contents are only measured and encoded here; the child writes them (and refuses
    bad names and bad base64)."""
    if not files:
        return None
    if not settings.enable_filesystem:
        raise RequestRefused(
            "invalid_argument",
            "files needs the filesystem profile, which is off; the operator can set SANDBOX_ENABLE_FILESYSTEM=true",
        )
    limit, total, measured = settings.max_input_size, 0, {}
    for name, content in files.items():
        if isinstance(content, str):
            data = content.encode("utf-8", "surrogatepass")
            size = len(data)
        elif isinstance(content, dict) and "uri" in content:
            data = _stored(content["uri"], name, store)
            size = len(data)
        elif isinstance(content, dict) and isinstance(content.get("base64"), str):
            data = content["base64"]
            size = len(data) * 3 // 4 - min(2, len(data) - len(data.rstrip("=")))   # what it decodes to
        else:
            raise RequestRefused("invalid_argument", f'files[{_shown(name)}]: give text, {{"base64": ...}} '
                                                     'or {"uri": ...}')
        total += size
        measured[name] = data
    if total > limit:
        raise RequestRefused(
            "input_too_large",
            f"files are {total} bytes together; the limit is {limit} bytes "
            f"({format_size(limit)}, SANDBOX_MAX_INPUT_SIZE). Send the data in parts over several calls of one "
            "session (create_session: its workspace keeps the files), each within the limit; a file an "
            "earlier run wrote can be passed as {\"uri\": ...} without copying its bytes, but it counts too",
        )
    return {name: {"base64": data if isinstance(data, str) else base64.b64encode(data).decode("ascii")}
            for name, data in measured.items()}


def _stored(uri: str, name: str, store: FileStore) -> bytes:
    try:
        return store.resolve(uri).data
    except NotStoreURI as exc:
        raise RequestRefused("invalid_argument", f"files[{_shown(name)}]: {exc}") from None
    except FileExpired as exc:
        raise RequestRefused("input_not_found", f"files[{_shown(name)}]: {exc}") from None


def narrow_imports(requested: list[str], allowed: frozenset[str], settings: Settings) -> frozenset[str]:
    """allowed_imports can only narrow the configured modules, never widen them."""
    if not requested:
        return allowed
    for name in requested:
        if not isinstance(name, str) or not (MODULE_NAME.fullmatch(name) or name in allowed):
            raise RequestRefused("invalid_argument", f"allowed_imports: {_shown(name)} is not a module name")
    refused = [name for name in dict.fromkeys(requested)
               if name not in allowed and not profiles.is_allowed(name, allowed)]   # (pkg.* is not a module name)
    if refused:
        reasons = "; ".join(f"{name} ({_why_not_allowed(name, settings)})" for name in refused)
        raise RequestRefused(
            "security_violation",
            f"allowed_imports asks for modules this server does not allow: {reasons}. "
            "allowed_imports can only narrow the modules the server's profiles allow; "
            "get_sandbox_info lists them.",
            security_kind="blocked_import",
        )
    return frozenset(requested)


def _why_not_allowed(name: str, settings: Settings) -> str:
    for profile, switch in PROFILE_SWITCHES.items():
        if profile not in settings.enabled_profiles and profiles.is_allowed(name, profiles.PROFILES[profile]):
            return f"in the {profile} profile, which is off; the operator can set {switch}=true"
    why = profiles.refusal_reason(name, network=settings.enable_network, filesystem=settings.enable_filesystem)
    if why is not None:
        return f"never allowed: {why}"
    return "not in the enabled profiles; the operator can add it with SANDBOX_ALLOWED_IMPORTS"


def describe_missing_layers(missing) -> str:
    """The message for use_container=true on a host that cannot provide every layer."""
    parts = "; ".join(f"{layer} ({reason or 'no reason given'})" for layer, reason in missing)
    return (
        "use_container=true asks for the strongest isolation this host offers, with every layer "
        f"active, but these layers are not available here: {parts}. There is no container runtime; "
        "run without use_container to accept the layers that are active (get_sandbox_info lists "
        "them), or move to a host that provides the missing ones."
    )




def session_gone_message(s: Settings, cause: str | None = None) -> str:
    """`cause`: why this handle's session ended, when this server still remembers."""
    if cause is not None:
        return f"this session has ended ({cause}); its state is gone: create a new one with create_session"
    return ("unknown or expired session: create a new one with create_session (a session ends when closed, "
            f"after {s.session_ttl:g} s without a call, after {s.session_max_lifetime:g} s at most, or when a "
            "call in it times out, runs out of memory or crashes; its state is then gone)")


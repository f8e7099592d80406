"""What a model reads before its first call: the tools' descriptions.

Every conversation pays for them (tools/list), so each says the rules a model needs
to get its first call right and points at get_sandbox_info for the rest: what runs,
what is refused and what to write instead, where files go, the limits.
"""

from sandbox import profiles
from sandbox.restricted.subsets import registry
from sandbox.config import Settings
from sandbox.limits_parse import format_size

MAX_STUBS_IN_DESCRIPTION = 40
# Longer lists are named by their setting or counted; get_sandbox_info shows them whole.
MAX_POLICY_IN_DESCRIPTION = 60
MAX_EXTRA_IN_DESCRIPTION = 50   # SANDBOX_ALLOWED_IMPORTS, likewise

# Modules a model reaches for first, named in the description; the rest of the basic
# profile is in get_sandbox_info.
BASIC_EXAMPLES = ("json", "re", "math", "datetime")
# Sandbox subsets a model reaches for first; get_sandbox_info lists them all.
SUBSET_EXAMPLES = ("sys", "io", "os")


def execute_description(s: Settings, stubs: list | None = None, *, proxy_url: str, scratch: bool = True) -> str:
    """execute_code's description. `scratch`: the sandbox has a private working
    directory, which only its mount namespace gives. `proxy_url`: where a snippet
    finds the egress proxy (the kernel side decides it)."""
    parts = [
        "Run Python 3 in a sandbox: a fresh process per call, so send all it needs"
        + (", or pass a session_id from create_session to keep globals" if s.max_sessions else "")
        + ". Return a value with `result = ...` or a final expression.",
        modules_note(s),
    ]
    if s.restricted_python:
        parts.append(RULES)
    parts.append(files_note(s, scratch))
    parts.append(network_note(s, proxy_url, short=True) if s.enable_network else "No network.")
    parts.append(
        f"Limits: timeout {s.timeout:g} s (max {s.max_timeout:g}), memory_limit {format_size(s.default_memory_limit)} "
        f"(max {format_size(s.max_memory_limit)}); stdout, stderr and result each keep {format_size(s.max_output_size)}.")
    parts.append("get_sandbox_info has every module and limit; errors say what to do.")
    if s.tool_servers:
        parts.append(code_mode_note(stubs or []))
    return " ".join(parts)


def modules_note(s: Settings) -> str:
    text = f"Imports: the pure standard library ({', '.join(BASIC_EXAMPLES)}, ...)"
    for name in s.enabled_profiles[1:]:
        if name not in ("filesystem", "network"):   # named with the files and network they give
            text += f"; {name.replace('_', ' ')}: {', '.join(_top_level(profiles.profile_modules_available(name)))}"
    if s.extra_imports:
        extra = ", ".join(s.extra_imports)
        text += f"; extra: {extra if len(extra) <= MAX_EXTRA_IN_DESCRIPTION else f'{len(s.extra_imports)} modules'}"
    if s.restricted_python:
        text += f"; subsets of {', '.join(SUBSET_EXAMPLES)}..."
    return text + "."


def _top_level(names) -> list[str]:
    """numpy, matplotlib: not matplotlib.pyplot too (it comes with its package)."""
    names = sorted(names)
    return [name for name in names if not any(name.startswith(other + ".") for other in names)]


# The RestrictedPython rules a model would otherwise learn one failed call at a time.
RULES = ("Refused (write instead): eval/exec/compile (the code itself), dunders but __name__/__class__/__dict__/"
         "__init__ (Base.__init__(self)), metaclasses but ABCMeta (__init_subclass__).")


def rules_detail() -> str:
    """The rules in full, with every sandbox subset and what it offers (get_sandbox_info)."""
    return ("ordinary Python runs (classes, _private names on your own objects, f-strings and .format, match, "
            "async/await with asyncio.run); refused, with what to use instead: eval/exec/compile/locals() (write "
            "the code directly; globals() is a copy of your names that assigns what you write into it), dunders "
            "other than __name__/__qualname__/__doc__/__module__/__class__ and your own objects' __dict__, "
            "__annotations__ and methods (Base.__init__(self)), metaclasses other than ABCMeta (use "
            "__init_subclass__), special methods assigned after the class is made (define them in the class "
            "body), a library class's private names or properties redefined in your subclass (override its "
            "methods), modules outside allowed_modules. "
            f"{', '.join(name for name in registry.SUBSETS if '.' not in name)} are sandbox subsets "
            "(sys.stderr, sys.exit, sys.exc_info, io.StringIO, os.path, logging to stderr, traceback.format_exc(), "
            "asyncio.gather, gzip.compress, zoneinfo.ZoneInfo, platform.python_version, ast.literal_eval, "
            "shlex.split, codecs.encode, mimetypes.guess_type, and in the working directory pathlib.Path, "
            "glob.glob, shutil.copy, tempfile.TemporaryDirectory...).")


def files_note(s: Settings, scratch: bool) -> str:
    if s.enable_filesystem:
        return "Files: a private workspace; `files` adds inputs; files under out/ come back."
    if scratch:
        return ("Files: open() reaches a scratch directory, gone after the call"
                + (" (figures come back as images)." if s.enable_data_science else "."))
    return "Files: open() is refused (no mount namespace here): keep data in memory (io.StringIO, io.BytesIO)."


def files_parameter(s: Settings) -> str:
    """The `files` parameter: its forms and its own limit, apart from the code's."""
    return (f'text, {{"base64"}} or {{"uri"}} of a run\'s out/ file; '
            f"{format_size(s.max_input_size)} in all")


def network_note(s: Settings, proxy_url: str, *, short: bool = False) -> str:
    """What the network profile lets a snippet reach. `short`: for the description,
    where a long allow-list is named by its setting."""
    reach = s.network_policy.describe()
    if short and len(reach) > MAX_POLICY_IN_DESCRIPTION:
        reach = "the hosts in SANDBOX_NETWORK_ALLOW"
    if short:
        return f"Network: HTTP(S) only, via the sandbox's proxy (urllib, requests) to {reach}."
    return (f"Network: HTTP and HTTPS only, through the sandbox's proxy ({proxy_url}, set in "
            "HTTP_PROXY/HTTPS_PROXY, so urllib.request and requests work unchanged; it speaks SOCKS5 too; "
            f"other sockets reach nothing), to {reach} (SANDBOX_NETWORK_ALLOW); at most "
            f"{s.network_max_connections} connections and {format_size(s.network_max_bytes)} per call.")


def code_mode_note(stubs: list) -> str:
    head = "Code mode: tools.<server>.<tool>(**arguments) returns the tool's result or raises ToolError."
    if not stubs:
        return head + " No tool server connected yet."
    if len(stubs) > MAX_STUBS_IN_DESCRIPTION:
        return head + f" {len(stubs)} tools are available: get_sandbox_info lists them (tool_stubs)."
    return head + " Available: " + "; ".join(stubs) + "."


def session_description(s: Settings) -> str:
    return (f"Keeps globals and files across execute_code calls given its session_id, until "
            f"{s.session_ttl:g} s idle, {s.session_max_lifetime:g} s old, close_session or a crash "
            f"(session_ended says so). "
            f"At most {s.max_sessions}; memory_limit covers all.")


CLOSE_SESSION = "End a session and its state."
VALIDATE_CODE = "Check Python against the sandbox's rules without running it."
SANDBOX_INFO = "This sandbox's profiles, modules, limits and active isolation layers."
USE_CONTAINER = "compatibility name; no container runs: true needs every layer active"

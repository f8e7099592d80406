"""Every setting of the server: one table (VARIABLES) of the SANDBOX_* environment variables,
each with its type, default, bounds, one-line doc and whether it weakens isolation. Reading
the environment, the `Settings` object, the start-up warning, get_sandbox_info's
"weakened_by", the README's settings table and server.json are all read from that table.

Precedence: the real environment, then the `.env` file, then the table's defaults.
The file is read only when the operator names it (SANDBOX_ENV_FILE or
`--env-file`): clients start MCP servers inside the user's project, and a `.env`
found in the working directory is the project's, not the operator's; it must not
be able to switch isolation off. A bad value raises `ConfigError`, whose message
names the variable, the value and what is accepted; the command line turns it
into exit code 2. Settings that weaken isolation are listed with where each came
from (`Settings.weakening`), logged at start and shown by get_sandbox_info.
"""

import os
import re
import sys
from dataclasses import dataclass, field, make_dataclass
from typing import Callable

from sandbox import env_file, host_mounts, install_source, network_allow, profiles, tool_servers
from sandbox.layer_names import ALL_LAYERS, KERNEL_LAYERS
from sandbox.limits_parse import SIZE_SYNTAX, format_size, parse_bool, parse_seconds, parse_size

# The largest MCP message either transport reads (a stdio line, an HTTP body), at
# least: bigger than any request within SANDBOX_MAX_CODE_SIZE's and SANDBOX_MAX_INPUT_SIZE's
# defaults, JSON escaping included; message_cap() raises it with those settings.
MAX_MESSAGE_BYTES = 256 << 20
JSON_ESCAPE_FACTOR = 6        # a control character is six characters of JSON (\u0001)

# Names of the isolation layers, as the fork server reports them.
LAYER_NAMES = ALL_LAYERS

# Below this, CPython itself cannot start a snippet reliably.
MIN_MEMORY_LIMIT = 16 << 20
MAX_MEMORY_CEILING = 1 << 40
MAX_TIMEOUT_CEILING = 86400.0
MIN_TOKEN_LENGTH = 32

# The optional module profiles and the switch that enables each; "basic" is always on.
PROFILE_SWITCHES = profiles.SWITCHES

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")

MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
MODULE_ENTRY = re.compile(rf"\*|{MODULE_NAME.pattern}(\.\*)?")   # SANDBOX_ALLOWED_IMPORTS: json, packaging.*


def default_concurrency() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# What makes a value weaker than the default, given (value, default).
def _set(value, default) -> bool:
    return bool(value)


def _off(value, default) -> bool:
    return not value


def _above(value, default) -> bool:
    return value > default


def _opens_private(policy, default) -> bool:
    return policy.opens_private


@dataclass(frozen=True)
class Variable:
    """One SANDBOX_* setting: the table row everything else reads."""
    name: str
    attribute: str | None      # the Settings field it sets (None: it is not a setting of its own)
    kind: str                  # how its text is read: a _Reader method (SANDBOX_ENV_FILE's: load_settings)
    default: object            # the typed value when unset; a function is called at start
    doc: str                   # one line, for the README and server.json
    bounds: tuple = ()         # the kind's limits: (lowest, highest) where a variable's name
                               # as highest means "at most that setting's value"; choices; layers
    opens: str = ""            # what a weaker value gives the snippet ("": never weakens)
    weaker: Callable = _set    # (value, default) -> does this value weaken isolation
    secret: bool = False       # never shown, in a message or a repr
    shown_default: str = ""    # the default as documented, where it is computed at start

    @property
    def documented_default(self) -> str:
        """The default as written in the README, server.json and .env.example ("" = empty)."""
        if self.shown_default:
            return self.shown_default
        value = self.default
        if isinstance(value, bool):
            return "true" if value else "false"
        if self.kind == "size":
            return format_size(value)
        if self.kind == "seconds":
            return f"{value:g}"
        if isinstance(value, (int, str)):
            return str(value)
        return ""


_SECONDS_MAX = (0.0, MAX_TIMEOUT_CEILING)

VARIABLES = {v.name: v for v in (
    Variable("SANDBOX_ENV_FILE", None, "env_file", "",
             "file of KEY=VALUE lines read at start (only when named); the real environment wins"),
    Variable("SANDBOX_TIMEOUT", "timeout", "seconds", 30.0,
             "default execute_code timeout, in seconds", bounds=(0.0, "SANDBOX_MAX_TIMEOUT")),
    Variable("SANDBOX_MAX_TIMEOUT", "max_timeout", "seconds", 300.0,
             "largest timeout a request may ask for, in seconds", bounds=_SECONDS_MAX,
             opens="longer runs than the default ceiling", weaker=_above),
    Variable("SANDBOX_MAX_OUTPUT_SIZE", "max_output_size", "size", 32 << 10,
             "what goes back to the model of stdout, of stderr and of the result: "
             "larger ones keep their head and tail, with a marker at the cut", bounds=(1 << 10, 64 << 20),
             opens="more output than the default ceiling", weaker=_above),
    Variable("SANDBOX_DEFAULT_MEMORY_LIMIT", "default_memory_limit", "size", 128 << 20,
             "default execute_code memory_limit", bounds=(MIN_MEMORY_LIMIT, "SANDBOX_MAX_MEMORY_LIMIT")),
    Variable("SANDBOX_MAX_MEMORY_LIMIT", "max_memory_limit", "size", 1 << 30,
             "largest memory_limit a request may ask for", bounds=(MIN_MEMORY_LIMIT, MAX_MEMORY_CEILING),
             opens="more memory than the default ceiling", weaker=_above),
    Variable("SANDBOX_MAX_CODE_SIZE", "max_code_size", "size", 1 << 20,
             "larger code is refused before any child is spawned", bounds=(1 << 10, 16 << 20),
             opens="larger snippets than the default ceiling", weaker=_above),
    Variable("SANDBOX_MAX_INPUT_SIZE", "max_input_size", "size", 32 << 20,
             "execute_code's files, all together (bytes, and files passed by URI count too); "
             "larger inputs are refused before any child is spawned", bounds=(1 << 10, 256 << 20),
             opens="larger inputs than the default ceiling", weaker=_above),
    Variable("SANDBOX_FILE_TTL", "file_ttl", "seconds", 600.0,
             "seconds a file a run left under out/ stays readable with resources/read", bounds=_SECONDS_MAX),
    Variable("SANDBOX_FILE_STORE_SIZE", "file_store_size", "size", 64 << 20,
             "memory kept for those files, all runs together (the oldest go first)", bounds=(1 << 20, 4 << 30)),
    Variable("SANDBOX_ENABLE_NETWORK", "enable_network", "boolean", False,
             "network profile: HTTP(S) out through the server's egress proxy",
             opens="HTTP(S) out through the egress proxy"),
    Variable("SANDBOX_NETWORK_ALLOW", "network_policy", "network_allow", network_allow.Policy(),
             "network profile: comma list of hosts (example.com), domains (.example.com), "
             "addresses or networks, each with an optional :port; empty = any public "
             "address. Loopback, private and link-local addresses only when named",
             opens="loopback, private or link-local addresses named in the network allow-list",
             weaker=_opens_private),
    Variable("SANDBOX_NETWORK_MAX_CONNECTIONS", "network_max_connections", "integer", 32,
             "network profile: connections one execution may open", bounds=(1, 10000)),
    Variable("SANDBOX_NETWORK_MAX_BYTES", "network_max_bytes", "size", 64 << 20,
             "network profile: bytes one execution may send and receive, together", bounds=(1 << 10, 64 << 30)),
    Variable("SANDBOX_ENABLE_FILESYSTEM", "enable_filesystem", "boolean", False,
             "filesystem profile: a private writable workspace", opens="a writable workspace and open()"),
    Variable("SANDBOX_MOUNTS", "mounts", "mounts", (),
             "comma list of host directories every sandbox sees, HOST:SANDBOX[:ro|rw] "
             "(/srv/data:/data:ro); ro is the default, rw needs the filesystem profile",
             opens="host directories mounted into every sandbox"),
    Variable("SANDBOX_TOOL_SERVERS", "tool_servers", "tool_servers", (),
             'code mode: a JSON file {"mcpServers": {...}} of MCP servers whose tools snippets '
             "call as tools.<server>.<tool>(...) (see the README)",
             opens="other MCP servers' tools callable from snippets (code mode)"),
    Variable("SANDBOX_TOOL_CALL_BUDGET", "tool_call_budget", "integer", 50,
             "code mode: tool calls one execution may make", bounds=(1, 10000)),
    Variable("SANDBOX_TOOL_CALL_TIMEOUT", "tool_call_timeout", "seconds", 30.0,
             "code mode: seconds one tool call may take", bounds=(0.0, 3600.0)),
    Variable("SANDBOX_TOOL_RESULT_MAX", "tool_result_max", "size", 1 << 20,
             "code mode: bytes one tool call may return to the snippet", bounds=(1 << 10, 16 << 20)),
    Variable("SANDBOX_MAX_SESSIONS", "max_sessions", "integer", 4,
             "sessions (create_session) open at once, each one process; 0 = no sessions", bounds=(0, 256)),
    Variable("SANDBOX_SESSION_TTL", "session_ttl", "seconds", 600.0,
             "seconds a session lives without a call", bounds=_SECONDS_MAX),
    Variable("SANDBOX_SESSION_MAX_LIFETIME", "session_max_lifetime", "seconds", 3600.0,
             "seconds a session lives at most (also its CPU time budget)", bounds=_SECONDS_MAX),
    Variable("SANDBOX_ENABLE_DATA_SCIENCE", "enable_data_science", "boolean", False,
             "data-science profile: numpy, pandas, ... when installed",
             opens="numpy, pandas, scipy, sympy, matplotlib (the Python layer is then defence in depth only)"),
    Variable("SANDBOX_ALLOWED_IMPORTS", "extra_imports", "module_list", (),
             "comma list of modules added to the enabled profiles; pkg.* adds pkg with "
             "its submodules (never one refused by name: os, sys, ...). The Python layer "
             "has not audited them: for them the kernel layers are what holds",
             opens="modules beyond the profiles"),
    Variable("SANDBOX_RESTRICTED_PYTHON", "restricted_python", "boolean", True,
             "compile snippets with RestrictedPython",
             opens="RestrictedPython off: the snippet runs real Python", weaker=_off),
    Variable("SANDBOX_REQUIRE", "require", "layers_or_all", frozenset(),
             'comma list of layers that must be active, or "all"', bounds=LAYER_NAMES),
    Variable("SANDBOX_UNSAFE_DISABLE_LAYERS", "disabled_layers", "layers", frozenset(),
             "TESTING ONLY: comma list of kernel layers to switch off", bounds=KERNEL_LAYERS,
             opens="kernel isolation layers switched off"),
    Variable("SANDBOX_MAX_CONCURRENCY", "max_concurrency", "integer", default_concurrency,
             "executions running at once; the rest queue", bounds=(1, 1024), shown_default="<CPU count>"),
    Variable("SANDBOX_RATE_LIMIT", "rate_limit", "integer", 0,
             "executions started per minute, per HTTP token or stdio client; over it a call is "
             "refused with when to retry (0 = no limit)", bounds=(0, 100000)),
    Variable("SANDBOX_AUDIT_LOG", "audit_log", "audit_path", None,
             "path of a JSON-lines audit log (off when empty)"),
    Variable("SANDBOX_POOL_SIZE", "pool_size", "integer", 2,
             "warm children kept per isolation profile (0 = off)", bounds=(0, 64)),
    Variable("SANDBOX_API_TOKEN", "api_token", "token", None,
             f"bearer token for the HTTP transport, {MIN_TOKEN_LENGTH}+ characters", secret=True),
    Variable("SANDBOX_HTTP_HOST", "http_host", "host", "127.0.0.1", "HTTP transport bind address"),
    Variable("SANDBOX_HTTP_PORT", "http_port", "integer", 8765, "HTTP transport port", bounds=(1, 65535)),
    Variable("SANDBOX_HTTP_ALLOWED_HOSTS", "http_allowed_hosts", "host_list", (),
             "comma list of extra host names clients use to reach the HTTP transport"),
    Variable("SANDBOX_LOG_LEVEL", "log_level", "choice", "info",
             "one of " + ", ".join(LOG_LEVELS), bounds=LOG_LEVELS),
)}

SETTINGS = tuple(v for v in VARIABLES.values() if v.attribute)


class ConfigError(ValueError):
    """A setting with a value the server cannot use."""


class _SettingsViews:
    """What the Settings object answers beyond its fields."""

    @property
    def weakening(self) -> tuple[dict, ...]:
        """The settings that give the snippet more than the defaults do, each with the
        value, where it came from and what it opens (the table's `opens` and `weaker`)."""
        found = []
        for v in SETTINGS:
            value = getattr(self, v.attribute)
            if v.opens and v.weaker(value, _default(v)):
                found.append({"setting": v.name, "value": _shown(value), "source": self.sources.get(v.name, "default"),
                              "opens": v.opens})
        return tuple(found)

    @property
    def enabled_profiles(self) -> tuple[str, ...]:
        switches = {
            "data_science": self.enable_data_science,
            "network": self.enable_network,
            "filesystem": self.enable_filesystem,
        }
        return ("basic",) + tuple(name for name, on in switches.items() if on)

    def allowed_modules(self) -> frozenset[str]:
        return frozenset(profiles.allowed_modules(self.enabled_profiles, self.extra_imports))


def message_cap(settings) -> int:
    """The largest MCP message the transports read with these settings: room for code and
    files at their limits, each character JSON-escaped at worst, never below the default."""
    largest = JSON_ESCAPE_FACTOR * (settings.max_code_size + settings.max_input_size) + (1 << 20)
    return max(MAX_MESSAGE_BYTES, largest)


def _default(v: Variable):
    return v.default() if callable(v.default) else v.default


def _shown(value) -> object:
    if isinstance(value, network_allow.Policy):
        return value.describe()
    if isinstance(value, tuple) and value and isinstance(value[0], host_mounts.Mount):
        return host_mounts.describe_inside(value)
    if isinstance(value, (frozenset, tuple)):
        return ",".join(sorted(getattr(item, "name", item) for item in value))
    return value


def _field(v: Variable):
    if callable(v.default):
        return field(default_factory=v.default)
    return field(default=v.default, repr=not v.secret)


Settings = make_dataclass(
    "Settings",
    [(v.attribute, type(_default(v)), _field(v)) for v in SETTINGS] + [
        ("env_file", str | None, field(default=None)),             # the .env file actually read, if any
        ("warnings", tuple, field(default=())),                    # non-fatal findings, logged once at start
        ("sources", dict, field(default_factory=dict, compare=False, repr=False)),  # variable -> where it came from
    ],
    bases=(_SettingsViews,),
    frozen=True,
)
Settings.__module__ = __name__
Settings.__doc__ = "The server's settings, one field per row of VARIABLES (see there)."

# Every default, for the parts that take a setting as an argument.
DEFAULTS = Settings()


def read_env_file(path: str) -> dict[str, str]:
    """The KEY=VALUE lines of a .env file (sandbox.env_file); a bad file is a ConfigError."""
    try:
        return env_file.read(path)
    except env_file.EnvFileError as exc:
        raise ConfigError(str(exc)) from None


def load_settings(environ=None, env_file: str | None = None) -> Settings:
    """Read, merge and validate the configuration. Raises ConfigError.

    ``env_file`` (the --env-file option) wins over SANDBOX_ENV_FILE; with neither, no
    file is read, whatever lies in the working directory."""
    environ = os.environ if environ is None else environ
    env_path = env_file or environ.get("SANDBOX_ENV_FILE", "")
    file_values: dict[str, str] = {}
    if env_path:
        if not os.path.exists(env_path) or os.path.isdir(env_path):
            raise ConfigError(f"SANDBOX_ENV_FILE={env_path!r}: no such file; "
                              "accepted: the path of a readable .env file")
        env_path = os.path.abspath(env_path)
        file_values = read_env_file(env_path)

    values = {k: v for k, v in file_values.items() if k.startswith("SANDBOX_")}
    sources = {k: env_path for k in values}
    for k, v in environ.items():
        if k.startswith("SANDBOX_"):
            values[k] = v
            sources[k] = "environment"
    warnings = tuple(
        f"unknown variable {name} ignored (known: see .env.example)" for name in sorted(values) if name not in VARIABLES
    )
    read = _Reader(values, own_files=(env_path,))
    typed = {v.attribute: read.value(v) for v in SETTINGS}
    settings = Settings(**typed, env_file=env_path or None, warnings=warnings, sources=sources)
    _check_extra_imports(settings)
    _check_libraries_installed(settings)
    return settings


def _check_extra_imports(settings: Settings) -> None:
    """SANDBOX_ALLOWED_IMPORTS may add modules, never dangerous ones (os, sys, ctypes, ...)."""
    if not settings.extra_imports:
        return
    refused = profiles.check_extra_imports(
        settings.extra_imports, network=settings.enable_network, filesystem=settings.enable_filesystem
    )
    if refused:
        reasons = "; ".join(_describe_refusal(item) for item in refused)
        raise ConfigError(
            f"SANDBOX_ALLOWED_IMPORTS={','.join(settings.extra_imports)!r} is refused: {reasons}; "
            "accepted: modules that give no access to the host (os, sys, subprocess, ctypes, "
            "importlib, builtins, ... never are; socket needs the network profile, io the filesystem one), "
            "and pkg.* for such a package with its submodules"
        )


def _check_libraries_installed(settings: Settings) -> None:
    """A profile switched on without its libraries, or an extra import that is not
    installed, stops the server with what to install; never a profile reported as
    enabled with nothing in it."""
    for profile in settings.enabled_profiles:
        missing = [name for name in profiles.REQUIRED_LIBRARIES.get(profile, ()) if not profiles.importable(name)]
        if missing:
            raise ConfigError(
                f"{PROFILE_SWITCHES[profile]}=true needs {', '.join(missing)}, which "
                f"{'is' if len(missing) == 1 else 'are'} not installed for {sys.executable}; "
                f"{install_source.with_extra(profiles.EXTRAS[profile])}, or switch the profile off")
    missing = [profiles.wildcard_package(name) or name for name in settings.extra_imports
               if not profiles.importable(profiles.wildcard_package(name) or name)]
    if missing:
        raise ConfigError(
            f"SANDBOX_ALLOWED_IMPORTS names {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
            f"not installed for {sys.executable}; {install_source.with_packages(missing)}, "
            f"or remove {'it' if len(missing) == 1 else 'them'} from the list")


def _describe_refusal(item) -> str:
    if isinstance(item, (tuple, list)) and len(item) == 2:
        return f"{item[0]} ({item[1]})"
    return str(item)


class _Reader:
    """Reads each variable of the table by its kind; each failure names its variable and
    what is accepted."""

    def __init__(self, values: dict[str, str], own_files=()):
        self.values = values
        self.own_files = own_files   # the server's files that no mount may hold (its .env)
        self.read: dict[str, object] = {}

    def value(self, v: Variable):
        if v.name not in self.read:
            raw = self.values.get(v.name)
            if raw is None or raw.strip() == "":
                self.read[v.name] = _default(v)
            else:
                self.read[v.name] = getattr(self, v.kind)(v, raw)
        return self.read[v.name]

    def _bounds(self, v: Variable) -> tuple[object, object, str]:
        """(lowest, highest, how the highest is said): a variable's name as the highest
        bound means that setting's value."""
        low, high = v.bounds
        if isinstance(high, str):
            value = self.value(VARIABLES[high])
            shown = format_size(value) if v.kind == "size" else f"{value:g}"
            return low, value, f"{high} ({shown})"
        return low, high, format_size(high) if v.kind == "size" else f"{high:g}"

    def _fail(self, v: Variable, value: str, accepted: str) -> ConfigError:
        shown = f"<{len(value)} characters>" if v.secret else repr(value)
        return ConfigError(f"{v.name}={shown} is invalid; accepted: {accepted}")

    def seconds(self, v: Variable, raw: str) -> float:
        above, at_most, said = self._bounds(v)
        accepted = f"seconds, greater than {above:g} and at most {said}"
        try:
            seconds = parse_seconds(raw)
        except ValueError:
            raise self._fail(v, raw, accepted) from None
        if not above < seconds <= at_most:
            raise self._fail(v, raw, accepted)
        return seconds

    def size(self, v: Variable, raw: str) -> int:
        at_least, at_most, said = self._bounds(v)
        accepted = f"{SIZE_SYNTAX}, from {format_size(at_least)} to {said}"
        try:
            size = parse_size(raw)
        except ValueError:
            raise self._fail(v, raw, accepted) from None
        if not at_least <= size <= at_most:
            raise self._fail(v, raw, accepted)
        return size

    def integer(self, v: Variable, raw: str) -> int:
        at_least, at_most = v.bounds
        text = raw.strip()
        if not (text.isascii() and text.isdigit()) or not at_least <= int(text) <= at_most:
            raise self._fail(v, raw, f"a whole number from {at_least} to {at_most}")
        return int(text)

    def boolean(self, v: Variable, raw: str) -> bool:
        try:
            return parse_bool(raw)
        except ValueError as exc:
            raise self._fail(v, raw, str(exc).removeprefix("expected ")) from None

    def choice(self, v: Variable, raw: str) -> str:
        if raw.strip().lower() not in v.bounds:
            raise self._fail(v, raw, "one of " + ", ".join(v.bounds))
        return raw.strip().lower()

    def module_list(self, v: Variable, raw: str) -> tuple[str, ...]:
        names = [part.strip() for part in raw.split(",") if part.strip()]
        for module in names:
            if not MODULE_ENTRY.fullmatch(module):
                raise self._fail(v, raw, "a comma-separated list of module names such as 'numpy,yaml', "
                                         "or a package with its submodules as 'packaging.*'")
        return tuple(dict.fromkeys(names))

    def layers(self, v: Variable, raw: str, allow_all: bool = False) -> frozenset[str]:
        names = {part.strip().lower() for part in raw.split(",") if part.strip()}
        if allow_all and names == {"all"}:
            return frozenset(v.bounds)
        if not names or names - set(v.bounds):
            accepted = ('"all" or ' if allow_all else "") + "a comma-separated list of: " + ", ".join(v.bounds)
            raise self._fail(v, raw, accepted)
        return frozenset(names)

    def layers_or_all(self, v: Variable, raw: str) -> frozenset[str]:
        return self.layers(v, raw, allow_all=True)

    def audit_path(self, v: Variable, raw: str) -> str:
        path = os.path.abspath(os.path.expanduser(raw.strip()))
        if os.path.isdir(path):
            raise self._fail(v, raw, "the path of a file (its directory is created if missing)")
        try:  # ~/.local/state on a fresh account: created, private
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        except OSError as exc:
            raise self._fail(v, raw, f"the path of a file in a directory this user can create "
                                     f"({exc.strerror})") from None
        return path

    def token(self, v: Variable, raw: str) -> str:
        token = raw.strip()
        if len(token) < MIN_TOKEN_LENGTH or any(c.isspace() or not c.isprintable() for c in token):
            raise self._fail(v, raw, f"at least {MIN_TOKEN_LENGTH} printable characters without spaces")
        return token

    def tool_servers(self, v: Variable, raw: str) -> tuple:
        try:
            return tool_servers.load(raw.strip())
        except tool_servers.ToolServersError as exc:
            raise self._fail(v, raw, f"{exc}; a readable JSON file in the desktop clients' format, "
                                     '{"mcpServers": {"name": {"command": ..., "args": [...]}}}') from None

    def network_allow(self, v: Variable, raw: str) -> network_allow.Policy:
        try:
            return network_allow.parse(raw)
        except network_allow.PolicyError as exc:
            raise self._fail(v, raw, f"{exc}; a comma list of example.com, .example.com, 203.0.113.7, "
                                     "10.0.0.0/8 or [2001:db8::1], each optionally with :port") from None

    def mounts(self, v: Variable, raw: str) -> tuple:
        filesystem = self.value(VARIABLES["SANDBOX_ENABLE_FILESYSTEM"])
        own = [*self.own_files, self.value(VARIABLES["SANDBOX_AUDIT_LOG"])]
        own += [self.values.get("SANDBOX_TOOL_SERVERS", "").strip()]
        try:
            return host_mounts.parse(raw, filesystem=filesystem, own_files=own)
        except host_mounts.MountError as exc:
            raise self._fail(v, raw, f"{exc}; the form is {host_mounts.SYNTAX}") from None

    def host_list(self, v: Variable, raw: str) -> tuple[str, ...]:
        names = tuple(part.strip().lower() for part in raw.split(",") if part.strip())
        if any(len(n) > 253 or any(c.isspace() or c in "/@:" for c in n) for n in names):
            raise self._fail(v, raw, "a comma-separated list of host names such as sandbox.internal")
        return names

    def host(self, v: Variable, raw: str) -> str:
        host = raw.strip()
        if len(host) > 253 or any(c.isspace() or c in "/@" for c in host):
            raise self._fail(v, raw, "an IP address or host name such as 127.0.0.1")
        return host

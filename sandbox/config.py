"""Every setting of the server, read once at start-up from SANDBOX_* environment
variables and an optional `.env` file, validated, and frozen into one `Settings` object.

Precedence: the real environment, then the `.env` file, then the defaults below.
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
from dataclasses import dataclass, field

from sandbox import install_source, profiles
from sandbox.egress import policy as egress_policy
from sandbox.layer_names import ALL_LAYERS, KERNEL_LAYERS
from sandbox.limits_parse import SIZE_SYNTAX, format_size, parse_bool, parse_seconds, parse_size

# The largest MCP message either transport reads (a stdio line, an HTTP body): bigger
# than any request within SANDBOX_MAX_CODE_SIZE's ceiling, JSON escaping included.
MAX_MESSAGE_BYTES = 256 << 20

# Names of the isolation layers, as Runner.layers() reports them.
LAYER_NAMES = ALL_LAYERS

# Below this, CPython itself cannot start a snippet reliably.
MIN_MEMORY_LIMIT = 16 << 20
MAX_MEMORY_CEILING = 1 << 40
MAX_TIMEOUT_CEILING = 86400.0
MIN_TOKEN_LENGTH = 32

# The optional module profiles and the switch that enables each; "basic" is always on.
PROFILE_SWITCHES = profiles.SWITCHES

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")

# name -> (default as written in .env.example, one-line description)
VARIABLES = {
    "SANDBOX_ENV_FILE": ("", "file of KEY=VALUE lines read at start (only when named); the real environment wins"),
    "SANDBOX_TIMEOUT": ("30", "default execute_code timeout, in seconds"),
    "SANDBOX_MAX_TIMEOUT": ("300", "largest timeout a request may ask for, in seconds"),
    "SANDBOX_MAX_OUTPUT_SIZE": ("32768", "what goes back to the model of stdout, of stderr and of the result: "
                                         "larger ones keep their head and tail, with a marker at the cut"),
    "SANDBOX_DEFAULT_MEMORY_LIMIT": ("128m", "default execute_code memory_limit"),
    "SANDBOX_MAX_MEMORY_LIMIT": ("1g", "largest memory_limit a request may ask for"),
    "SANDBOX_MAX_CODE_SIZE": ("1m", "larger code is refused before any child is spawned"),
    "SANDBOX_FILE_TTL": ("600", "seconds a file a run left under out/ stays readable with resources/read"),
    "SANDBOX_FILE_STORE_SIZE": ("64m", "memory kept for those files, all runs together (the oldest go first)"),
    "SANDBOX_ENABLE_NETWORK": ("false", "network profile: HTTP(S) out through the server's egress proxy"),
    "SANDBOX_NETWORK_ALLOW": ("", "network profile: comma list of hosts (example.com), domains (.example.com), "
                                  "addresses or networks, each with an optional :port; empty = any public "
                                  "address. Loopback, private and link-local addresses only when named"),
    "SANDBOX_NETWORK_MAX_CONNECTIONS": ("32", "network profile: connections one execution may open"),
    "SANDBOX_NETWORK_MAX_BYTES": ("64m", "network profile: bytes one execution may send and receive, together"),
    "SANDBOX_ENABLE_FILESYSTEM": ("false", "filesystem profile: a private writable workspace"),
    "SANDBOX_TOOL_SERVERS": ("", 'code mode: a JSON file {"mcpServers": {...}} of MCP servers whose tools snippets '
                                 "call as tools.<server>.<tool>(...) (see the README)"),
    "SANDBOX_TOOL_CALL_BUDGET": ("50", "code mode: tool calls one execution may make"),
    "SANDBOX_TOOL_CALL_TIMEOUT": ("30", "code mode: seconds one tool call may take"),
    "SANDBOX_TOOL_RESULT_MAX": ("1m", "code mode: bytes one tool call may return to the snippet"),
    "SANDBOX_MAX_SESSIONS": ("4", "sessions (create_session) open at once, each one process; 0 = no sessions"),
    "SANDBOX_SESSION_TTL": ("600", "seconds a session lives without a call"),
    "SANDBOX_SESSION_MAX_LIFETIME": ("3600", "seconds a session lives at most (also its CPU time budget)"),
    "SANDBOX_ENABLE_DATA_SCIENCE": ("false", "data-science profile: numpy, pandas, ... when installed"),
    "SANDBOX_ALLOWED_IMPORTS": ("", "comma list of modules added to the enabled profiles; pkg.* adds pkg with "
                                    "its submodules (never one refused by name: os, sys, ...). The Python layer "
                                    "has not audited them: for them the kernel layers are what holds"),
    "SANDBOX_RESTRICTED_PYTHON": ("true", "compile snippets with RestrictedPython"),
    "SANDBOX_REQUIRE": ("", 'comma list of layers that must be active, or "all"'),
    "SANDBOX_UNSAFE_DISABLE_LAYERS": ("", "TESTING ONLY: comma list of kernel layers to switch off"),
    "SANDBOX_MAX_CONCURRENCY": ("<CPU count>", "executions running at once; the rest queue"),
    "SANDBOX_RATE_LIMIT": ("0", "executions started per minute, per HTTP token or stdio client; over it a call is "
                                "refused with when to retry (0 = no limit)"),
    "SANDBOX_AUDIT_LOG": ("", "path of a JSON-lines audit log (off when empty)"),
    "SANDBOX_POOL_SIZE": ("2", "warm children kept per isolation profile (0 = off)"),
    "SANDBOX_API_TOKEN": ("", f"bearer token for the HTTP transport, {MIN_TOKEN_LENGTH}+ characters"),
    "SANDBOX_HTTP_HOST": ("127.0.0.1", "HTTP transport bind address"),
    "SANDBOX_HTTP_PORT": ("8765", "HTTP transport port"),
    "SANDBOX_HTTP_ALLOWED_HOSTS": ("", "comma list of extra host names clients use to reach the HTTP transport"),
    "SANDBOX_LOG_LEVEL": ("info", "one of " + ", ".join(LOG_LEVELS)),
}

_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
MODULE_ENTRY = re.compile(rf"\*|{MODULE_NAME.pattern}(\.\*)?")   # SANDBOX_ALLOWED_IMPORTS: json, packaging.*
_SECRET_VARIABLES = frozenset({"SANDBOX_API_TOKEN"})


class ConfigError(ValueError):
    """A setting with a value the server cannot use."""


@dataclass(frozen=True)
class Settings:
    timeout: float = 30.0
    max_timeout: float = 300.0
    max_output_size: int = 32 << 10
    default_memory_limit: int = 128 << 20
    max_memory_limit: int = 1 << 30
    max_code_size: int = 1 << 20
    file_ttl: float = 600.0
    file_store_size: int = 64 << 20
    enable_network: bool = False
    network_policy: egress_policy.Policy = egress_policy.Policy()
    network_max_connections: int = 32
    network_max_bytes: int = 64 << 20
    enable_filesystem: bool = False
    tool_servers: tuple = ()                 # tool_servers.ToolServer, from SANDBOX_TOOL_SERVERS
    tool_call_budget: int = 50
    tool_call_timeout: float = 30.0
    tool_result_max: int = 1 << 20
    max_sessions: int = 4
    session_ttl: float = 600.0
    session_max_lifetime: float = 3600.0
    enable_data_science: bool = False
    extra_imports: tuple[str, ...] = ()
    restricted_python: bool = True
    require: frozenset[str] = frozenset()
    disabled_layers: frozenset[str] = frozenset()  # test/diagnostic switch, logged loudly
    max_concurrency: int = 1
    rate_limit: int = 0                      # executions per minute; 0 = no limit
    audit_log: str | None = None
    pool_size: int = 2
    api_token: str | None = field(default=None, repr=False)
    http_host: str = "127.0.0.1"
    http_port: int = 8765
    http_allowed_hosts: tuple[str, ...] = ()
    log_level: str = "info"
    env_file: str | None = None  # the .env file actually read, if any
    warnings: tuple[str, ...] = ()  # non-fatal findings, logged once at start
    sources: dict = field(default_factory=dict, compare=False, repr=False)  # variable -> where it came from

    @property
    def weakening(self) -> tuple[dict, ...]:
        """The settings that give the snippet more than the defaults do, each with the
        value, where it came from and what it opens (one table: WEAKENING)."""
        found = []
        for name, (attribute, opens, is_weaker) in WEAKENING.items():
            value = getattr(self, attribute)
            if is_weaker(value):
                shown = (value.describe() if isinstance(value, egress_policy.Policy)
                         else ",".join(sorted(getattr(v, "name", v) for v in value))
                         if isinstance(value, (frozenset, tuple)) else value)
                found.append({"setting": name, "value": shown, "source": self.sources.get(name, "default"),
                              "opens": opens})
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

    def runner_config(self):
        from sandbox.egress import proxy as egress_proxy
        from sandbox.forkserver.runner import RunnerConfig

        # Pre-importing the data-science stack in the zygote turns a 1-3 s import into a fork.
        preload: list[str] = []
        if self.enable_data_science:
            preload = list(profiles.profile_modules_available("data_science"))
        return RunnerConfig(
            max_timeout=self.max_timeout,
            max_memory=self.max_memory_limit,
            max_output=self.max_output_size,
            network=self.enable_network,
            network_policy=self.network_policy,
            network_limits=egress_proxy.Limits(max_connections=self.network_max_connections,
                                               max_bytes=self.network_max_bytes),
            filesystem=self.enable_filesystem,
            preload=tuple(preload),
            pool_size=self.pool_size,
            require=self.require,
            disabled_layers=self.disabled_layers,
            restricted_python=self.restricted_python,
            session_max_lifetime=self.session_max_lifetime,
        )


def default_concurrency() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


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
    settings = _build(_Reader(values), warnings, env_path or None, sources)
    _check_extra_imports(settings)
    _check_libraries_installed(settings)
    return settings


def _build(read: "_Reader", warnings: tuple[str, ...], env_file: str | None, sources: dict) -> Settings:
    max_timeout = read.number(
        "SANDBOX_MAX_TIMEOUT", 300.0, 0.0, MAX_TIMEOUT_CEILING, "seconds, greater than 0 and at most 86400"
    )
    timeout = read.number(
        "SANDBOX_TIMEOUT", 30.0, 0.0, max_timeout, f"seconds, greater than 0 and at most SANDBOX_MAX_TIMEOUT ({max_timeout:g})"
    )
    max_memory = read.size(
        "SANDBOX_MAX_MEMORY_LIMIT", 1 << 30, MIN_MEMORY_LIMIT, MAX_MEMORY_CEILING,
    )
    default_memory = read.size("SANDBOX_DEFAULT_MEMORY_LIMIT", 128 << 20, MIN_MEMORY_LIMIT, max_memory)
    return Settings(
        timeout=timeout,
        max_timeout=max_timeout,
        max_output_size=read.size("SANDBOX_MAX_OUTPUT_SIZE", Settings.max_output_size, 1 << 10, 64 << 20),
        default_memory_limit=default_memory,
        max_memory_limit=max_memory,
        max_code_size=read.size("SANDBOX_MAX_CODE_SIZE", 1 << 20, 1 << 10, 16 << 20),
        file_ttl=read.number("SANDBOX_FILE_TTL", Settings.file_ttl, 0.0, MAX_TIMEOUT_CEILING,
                             "seconds, greater than 0 and at most 86400"),
        file_store_size=read.size("SANDBOX_FILE_STORE_SIZE", Settings.file_store_size, 1 << 20, 4 << 30),
        enable_network=read.boolean("SANDBOX_ENABLE_NETWORK", False),
        network_policy=read.network_policy("SANDBOX_NETWORK_ALLOW"),
        network_max_connections=read.integer("SANDBOX_NETWORK_MAX_CONNECTIONS", 32, 1, 10000),
        network_max_bytes=read.size("SANDBOX_NETWORK_MAX_BYTES", Settings.network_max_bytes, 1 << 10, 64 << 30),
        enable_filesystem=read.boolean("SANDBOX_ENABLE_FILESYSTEM", False),
        tool_servers=read.tool_servers("SANDBOX_TOOL_SERVERS"),
        tool_call_budget=read.integer("SANDBOX_TOOL_CALL_BUDGET", Settings.tool_call_budget, 1, 10000),
        tool_call_timeout=read.number("SANDBOX_TOOL_CALL_TIMEOUT", Settings.tool_call_timeout, 0.0, 3600.0,
                                      "seconds, greater than 0 and at most 3600"),
        tool_result_max=read.size("SANDBOX_TOOL_RESULT_MAX", Settings.tool_result_max, 1 << 10, 16 << 20),
        max_sessions=read.integer("SANDBOX_MAX_SESSIONS", Settings.max_sessions, 0, 256),
        session_ttl=read.number("SANDBOX_SESSION_TTL", Settings.session_ttl, 0.0, MAX_TIMEOUT_CEILING,
                                "seconds, greater than 0 and at most 86400"),
        session_max_lifetime=read.number("SANDBOX_SESSION_MAX_LIFETIME", Settings.session_max_lifetime, 0.0,
                                         MAX_TIMEOUT_CEILING, "seconds, greater than 0 and at most 86400"),
        enable_data_science=read.boolean("SANDBOX_ENABLE_DATA_SCIENCE", False),
        extra_imports=read.module_list("SANDBOX_ALLOWED_IMPORTS"),
        restricted_python=read.boolean("SANDBOX_RESTRICTED_PYTHON", True),
        require=read.layers("SANDBOX_REQUIRE", LAYER_NAMES, allow_all=True),
        disabled_layers=read.layers("SANDBOX_UNSAFE_DISABLE_LAYERS", KERNEL_LAYERS),
        max_concurrency=read.integer("SANDBOX_MAX_CONCURRENCY", default_concurrency(), 1, 1024),
        rate_limit=read.integer("SANDBOX_RATE_LIMIT", Settings.rate_limit, 0, 100000),
        audit_log=read.audit_path("SANDBOX_AUDIT_LOG"),
        pool_size=read.integer("SANDBOX_POOL_SIZE", 2, 0, 64),
        api_token=read.token("SANDBOX_API_TOKEN"),
        http_host=read.host("SANDBOX_HTTP_HOST", "127.0.0.1"),
        http_port=read.integer("SANDBOX_HTTP_PORT", 8765, 1, 65535),
        http_allowed_hosts=read.host_list("SANDBOX_HTTP_ALLOWED_HOSTS"),
        log_level=read.choice("SANDBOX_LOG_LEVEL", "info", LOG_LEVELS),
        env_file=env_file,
        warnings=warnings,
        sources=sources,
    )


_DEFAULTS = Settings()

# Settings that give a snippet more than the defaults: variable -> (Settings attribute,
# what it opens, the test on its value). The one list behind the start-up warning and
# get_sandbox_info's "weakened_by".
WEAKENING = {
    "SANDBOX_UNSAFE_DISABLE_LAYERS": ("disabled_layers", "kernel isolation layers switched off", bool),
    "SANDBOX_RESTRICTED_PYTHON": ("restricted_python", "RestrictedPython off: the snippet runs real Python",
                                  lambda on: not on),
    "SANDBOX_ENABLE_NETWORK": ("enable_network", "HTTP(S) out through the egress proxy", bool),
    "SANDBOX_TOOL_SERVERS": ("tool_servers", "other MCP servers' tools callable from snippets (code mode)", bool),
    "SANDBOX_NETWORK_ALLOW": ("network_policy", "loopback, private or link-local addresses named in the network "
                                                "allow-list", lambda policy: policy.opens_private),
    "SANDBOX_ENABLE_FILESYSTEM": ("enable_filesystem", "a writable workspace and open()", bool),
    "SANDBOX_ENABLE_DATA_SCIENCE": ("enable_data_science",
                                    "numpy, pandas, scipy, sympy, matplotlib (the Python layer is then "
                                    "defence in depth only)", bool),
    "SANDBOX_ALLOWED_IMPORTS": ("extra_imports", "modules beyond the profiles", bool),
    "SANDBOX_MAX_TIMEOUT": ("max_timeout", "longer runs than the default ceiling",
                            lambda v: v > _DEFAULTS.max_timeout),
    "SANDBOX_MAX_MEMORY_LIMIT": ("max_memory_limit", "more memory than the default ceiling",
                                 lambda v: v > _DEFAULTS.max_memory_limit),
    "SANDBOX_MAX_OUTPUT_SIZE": ("max_output_size", "more output than the default ceiling",
                                lambda v: v > _DEFAULTS.max_output_size),
    "SANDBOX_MAX_CODE_SIZE": ("max_code_size", "larger snippets than the default ceiling",
                              lambda v: v > _DEFAULTS.max_code_size),
}


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
    """Typed accessors over the merged SANDBOX_* values; each failure names its variable."""

    def __init__(self, values: dict[str, str]):
        self.values = values

    def _raw(self, name: str) -> str | None:
        value = self.values.get(name)
        return None if value is None or value.strip() == "" else value

    def _fail(self, name: str, value: str, accepted: str) -> ConfigError:
        shown = f"<{len(value)} characters>" if name in _SECRET_VARIABLES else repr(value)
        return ConfigError(f"{name}={shown} is invalid; accepted: {accepted}")

    def number(self, name: str, default: float, above: float, at_most: float, accepted: str) -> float:
        raw = self._raw(name)
        if raw is None:
            return default
        try:
            seconds = parse_seconds(raw)
        except ValueError:
            raise self._fail(name, raw, accepted) from None
        if not above < seconds <= at_most:
            raise self._fail(name, raw, accepted)
        return seconds

    def size(self, name: str, default: int, at_least: int, at_most: int) -> int:
        raw = self._raw(name)
        if raw is None:
            return default
        accepted = f"{SIZE_SYNTAX}, from {format_size(at_least)} to {format_size(at_most)}"
        try:
            size = parse_size(raw)
        except ValueError:
            raise self._fail(name, raw, accepted) from None
        if not at_least <= size <= at_most:
            raise self._fail(name, raw, accepted)
        return size

    def integer(self, name: str, default: int, at_least: int, at_most: int) -> int:
        raw = self._raw(name)
        if raw is None:
            return default
        accepted = f"a whole number from {at_least} to {at_most}"
        text = raw.strip()
        if not (text.isascii() and text.isdigit()) or not at_least <= int(text) <= at_most:
            raise self._fail(name, raw, accepted)
        return int(text)

    def boolean(self, name: str, default: bool) -> bool:
        raw = self._raw(name)
        if raw is None:
            return default
        try:
            return parse_bool(raw)
        except ValueError as exc:
            raise self._fail(name, raw, str(exc).removeprefix("expected ")) from None

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        raw = self._raw(name)
        if raw is None:
            return default
        if raw.strip().lower() not in choices:
            raise self._fail(name, raw, "one of " + ", ".join(choices))
        return raw.strip().lower()

    def module_list(self, name: str) -> tuple[str, ...]:
        raw = self._raw(name)
        if raw is None:
            return ()
        names = [part.strip() for part in raw.split(",") if part.strip()]
        for module in names:
            if not MODULE_ENTRY.fullmatch(module):
                raise self._fail(name, raw, "a comma-separated list of module names such as 'numpy,yaml', "
                                            "or a package with its submodules as 'packaging.*'")
        return tuple(dict.fromkeys(names))

    def layers(self, name: str, known: tuple[str, ...], allow_all: bool = False) -> frozenset[str]:
        raw = self._raw(name)
        if raw is None:
            return frozenset()
        names = {part.strip().lower() for part in raw.split(",") if part.strip()}
        if allow_all and names == {"all"}:
            return frozenset(known)
        if not names or names - set(known):
            accepted = ('"all" or ' if allow_all else "") + "a comma-separated list of: " + ", ".join(known)
            raise self._fail(name, raw, accepted)
        return frozenset(names)

    def audit_path(self, name: str) -> str | None:
        raw = self._raw(name)
        if raw is None:
            return None
        path = os.path.abspath(os.path.expanduser(raw.strip()))
        if os.path.isdir(path):
            raise self._fail(name, raw, "the path of a file (its directory is created if missing)")
        try:  # ~/.local/state on a fresh account: created, private
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        except OSError as exc:
            raise self._fail(name, raw, f"the path of a file in a directory this user can create "
                                        f"({exc.strerror})") from None
        return path

    def token(self, name: str) -> str | None:
        raw = self._raw(name)
        if raw is None:
            return None
        token = raw.strip()
        if len(token) < MIN_TOKEN_LENGTH or any(c.isspace() or not c.isprintable() for c in token):
            raise self._fail(name, raw, f"at least {MIN_TOKEN_LENGTH} printable characters without spaces")
        return token

    def tool_servers(self, name: str) -> tuple:
        raw = self._raw(name)
        if raw is None:
            return ()
        from sandbox.codemode import tool_servers
        try:
            return tool_servers.load(raw.strip())
        except tool_servers.ToolServersError as exc:
            raise self._fail(name, raw, f"{exc}; a readable JSON file in the desktop clients' format, "
                                        '{"mcpServers": {"name": {"command": ..., "args": [...]}}}') from None

    def network_policy(self, name: str) -> egress_policy.Policy:
        raw = self._raw(name)
        if raw is None:
            return egress_policy.Policy()
        try:
            return egress_policy.parse(raw)
        except egress_policy.PolicyError as exc:
            raise self._fail(name, raw, f"{exc}; a comma list of example.com, .example.com, 203.0.113.7, "
                                        "10.0.0.0/8 or [2001:db8::1], each optionally with :port") from None

    def host_list(self, name: str) -> tuple[str, ...]:
        raw = self._raw(name)
        if raw is None:
            return ()
        names = tuple(part.strip().lower() for part in raw.split(",") if part.strip())
        if any(len(n) > 253 or any(c.isspace() or c in "/@:" for c in n) for n in names):
            raise self._fail(name, raw, "a comma-separated list of host names such as sandbox.internal")
        return names

    def host(self, name: str, default: str) -> str:
        raw = self._raw(name)
        if raw is None:
            return default
        host = raw.strip()
        if len(host) > 253 or any(c.isspace() or c in "/@" for c in host):
            raise self._fail(name, raw, "an IP address or host name such as 127.0.0.1")
        return host


def read_env_file(path: str) -> dict[str, str]:
    """Parse KEY=VALUE lines: comments, blank lines, `export `, single or double quotes.

    Only double-quoted values know escapes (\\n, \\t, \\", \\\\). Variables are not
    expanded: a .env file is data, not a shell script.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"SANDBOX_ENV_FILE={path!r} cannot be read ({exc}); accepted: a readable UTF-8 file") from None
    values: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith("export "):
            text = text[len("export "):].lstrip()
        key, sep, rest = text.partition("=")
        key = key.strip()
        if not sep or not _ENV_KEY.fullmatch(key):
            raise ConfigError(f"{path}, line {number}: expected KEY=VALUE; accepted: KEY=VALUE, # comments, blank lines")
        try:
            values[key] = _env_value(rest.strip())
        except ValueError as exc:
            raise ConfigError(f"{path}, line {number}: {exc}") from None
    return values


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def _env_value(text: str) -> str:
    if not text or text[0] not in "\"'":
        # Unquoted: a " #" starts a comment.
        return text.split(" #", 1)[0].rstrip()
    quote = text[0]
    out: list[str] = []
    i = 1
    while i < len(text):
        char = text[i]
        if char == quote:
            tail = text[i + 1:].strip()
            if tail and not tail.startswith("#"):
                raise ValueError(f"unexpected text after the closing quote: {tail[:20]!r}")
            return "".join(out)
        if char == "\\" and quote == '"' and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], "\\" + text[i + 1]))
            i += 2
            continue
        out.append(char)
        i += 1
    raise ValueError(f"missing closing {quote}")

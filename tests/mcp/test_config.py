"""Configuration: the size/time parsers, the .env reader, every SANDBOX_* variable,
and the start-up refusal (exit 2, a message naming the variable) of bad values."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp_client import LAUNCHER, REPO_ROOT, server_env  # noqa: E402

from sandbox.config import (  # noqa: E402
    LAYER_NAMES,
    VARIABLES,
    ConfigError,
    Settings,
    default_concurrency,
    load_settings,
    read_env_file,
)
from sandbox.cli import runner_config  # noqa: E402
from sandbox.limits_parse import format_size, parse_bool, parse_seconds, parse_size  # noqa: E402

# The ordinary-user run has no numpy or pandas: the data-science profile cannot be on there.
HAVE_DATA_SCIENCE = all(importlib.util.find_spec(m) for m in ("numpy", "pandas"))


def load(env=None, tmp_path=None):
    """load_settings with only `env` as the environment, run from `tmp_path` (whose
    ./.env, if any, must make no difference)."""
    old = os.getcwd()
    os.chdir(str(tmp_path) if tmp_path else "/")
    try:
        return load_settings(dict(env or {}))
    finally:
        os.chdir(old)


# ----------------------------------------------------------------------------- parsers


@pytest.mark.parametrize(
    "text, expected",
    [
        ("64m", 64 << 20), ("1g", 1 << 30), ("512k", 512 << 10), ("1048576", 1048576), (1048576, 1048576),
        ("128M", 128 << 20), ("1.5g", 3 << 29), (" 2 mb ", 2 << 20), ("1GiB", 1 << 30), ("0", 0), ("7b", 7),
    ],
)
def test_parse_size_accepts(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["lots", "", "-1", -5, "1x", "m", "1.2.3m", True, None, [1], "١٢m", "9" * 40])
def test_parse_size_refuses(text):
    with pytest.raises(ValueError, match="k/m/g"):
        parse_size(text)


def test_format_size_is_the_shortest_exact_spelling():
    assert format_size(128 << 20) == "128m"
    assert format_size(1 << 30) == "1g"
    assert format_size(1536 << 10) == "1536k"
    assert format_size(1000) == "1000"


@pytest.mark.parametrize("value, expected", [(30, 30.0), ("2.5", 2.5), (0.1, 0.1), ("-1", -1.0)])
def test_parse_seconds(value, expected):
    assert parse_seconds(value) == expected


@pytest.mark.parametrize("value", ["abc", "inf", "nan", True, None, "", [3], float("inf")])
def test_parse_seconds_refuses(value):
    with pytest.raises(ValueError):
        parse_seconds(value)


def test_parse_bool():
    for text in ("1", "true", "YES", " on "):
        assert parse_bool(text) is True
    for text in ("0", "false", "No", "off"):
        assert parse_bool(text) is False
    with pytest.raises(ValueError, match="true or false"):
        parse_bool("maybe")


# ----------------------------------------------------------------------------- .env reader


def test_env_file_syntax(tmp_path):
    env = tmp_path / "x.env"
    env.write_text(
        "# a comment\n"
        "\n"
        "SANDBOX_TIMEOUT=12\n"
        "export SANDBOX_POOL_SIZE = 3\n"
        "SANDBOX_AUDIT_LOG='/tmp/a b.log'  # trailing comment\n"
        'SANDBOX_API_TOKEN="x\\"y\\n#not a comment"\n'
        "SANDBOX_LOG_LEVEL=debug # comment\n"
        "SANDBOX_ALLOWED_IMPORTS=\n"
        "OTHER=a#b\n"
    )
    assert read_env_file(str(env)) == {
        "SANDBOX_TIMEOUT": "12",
        "SANDBOX_POOL_SIZE": "3",
        "SANDBOX_AUDIT_LOG": "/tmp/a b.log",
        "SANDBOX_API_TOKEN": 'x"y\n#not a comment',
        "SANDBOX_LOG_LEVEL": "debug",
        "SANDBOX_ALLOWED_IMPORTS": "",
        "OTHER": "a#b",
    }


@pytest.mark.parametrize("line", ["NOEQUALS", "1BAD=x", "A='unterminated", 'A="x" trailing'])
def test_env_file_errors_name_the_line(tmp_path, line):
    env = tmp_path / "bad.env"
    env.write_text(f"SANDBOX_TIMEOUT=1\n{line}\n")
    with pytest.raises(ConfigError, match="line 2"):
        read_env_file(str(env))


HOSTILE_DOTENV = ("SANDBOX_UNSAFE_DISABLE_LAYERS=namespaces,seccomp,landlock,privilege_drop,rlimits\n"
                  "SANDBOX_RESTRICTED_PYTHON=false\nSANDBOX_ENABLE_NETWORK=yes\n"
                  "SANDBOX_ALLOWED_IMPORTS=colorsys\nSANDBOX_MAX_TIMEOUT=86400\n")


def test_dotenv_in_working_directory_is_never_read(tmp_path):
    """An IDE starts the server inside the user's project: that project's .env must
    not switch isolation off (it once turned every layer off and ran snippets as uid 0)."""
    (tmp_path / ".env").write_text(HOSTILE_DOTENV)
    settings = load({}, tmp_path)
    assert settings == load({}, None)
    assert settings.env_file is None and settings.weakening == ()
    assert settings.restricted_python and not settings.disabled_layers


def test_named_env_file_is_read_and_reported_with_its_path(tmp_path):
    named = tmp_path / "ops.env"
    named.write_text(HOSTILE_DOTENV)
    settings = load({"SANDBOX_ENV_FILE": str(named), "SANDBOX_ENABLE_FILESYSTEM": "1"}, tmp_path)
    found = {item["setting"]: item for item in settings.weakening}
    assert set(found) == {"SANDBOX_UNSAFE_DISABLE_LAYERS", "SANDBOX_RESTRICTED_PYTHON", "SANDBOX_ENABLE_NETWORK",
                          "SANDBOX_ALLOWED_IMPORTS", "SANDBOX_MAX_TIMEOUT", "SANDBOX_ENABLE_FILESYSTEM"}
    assert found["SANDBOX_RESTRICTED_PYTHON"]["source"] == str(named)
    assert found["SANDBOX_ENABLE_FILESYSTEM"]["source"] == "environment"
    assert found["SANDBOX_MAX_TIMEOUT"]["value"] == 86400.0


def test_limits_at_or_below_the_defaults_do_not_weaken(tmp_path):
    settings = load({"SANDBOX_MAX_TIMEOUT": "300", "SANDBOX_MAX_MEMORY_LIMIT": "256m",
                     "SANDBOX_RESTRICTED_PYTHON": "true"}, tmp_path)
    assert settings.weakening == ()


def test_environment_beats_dotenv(tmp_path):
    named = tmp_path / "x.env"
    named.write_text("SANDBOX_TIMEOUT=7\nSANDBOX_POOL_SIZE=5\n")
    settings = load({"SANDBOX_TIMEOUT": "9", "SANDBOX_ENV_FILE": str(named)}, tmp_path)
    assert settings.timeout == 9.0  # from the environment
    assert settings.pool_size == 5  # from the file


def test_sandbox_env_file_points_elsewhere(tmp_path):
    other = tmp_path / "custom.env"
    other.write_text("SANDBOX_MAX_CONCURRENCY=3\n")
    (tmp_path / ".env").write_text("SANDBOX_MAX_CONCURRENCY=9\n")
    assert load({"SANDBOX_ENV_FILE": str(other)}, tmp_path).max_concurrency == 3


def test_missing_explicit_env_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="SANDBOX_ENV_FILE"):
        load({"SANDBOX_ENV_FILE": str(tmp_path / "absent.env")}, tmp_path)


def test_non_sandbox_keys_in_dotenv_are_ignored(tmp_path):
    (tmp_path / ".env").write_text("PATH=/evil\nSANDBOX_TIMEOUT=3\n")
    settings = load({"SANDBOX_ENV_FILE": str(tmp_path / ".env")}, tmp_path)
    assert settings.timeout == 3.0
    assert "PATH" not in repr(settings)


# ----------------------------------------------------------------------------- defaults and values


def test_defaults():
    s = load()
    assert (s.timeout, s.max_timeout) == (30.0, 300.0)
    assert s.max_output_size == 32768
    assert (s.default_memory_limit, s.max_memory_limit) == (128 << 20, 1 << 30)
    assert s.max_code_size == 1 << 20
    assert not (s.enable_network or s.enable_filesystem or s.enable_data_science)
    assert s.extra_imports == () and s.restricted_python is True and s.require == frozenset()
    assert s.max_concurrency == default_concurrency() >= 1
    assert s.audit_log is None and s.pool_size == 2 and s.api_token is None
    assert (s.http_host, s.http_port, s.log_level) == ("127.0.0.1", 8765, "info")
    assert s.enabled_profiles == ("basic",)


def test_every_value_is_read(tmp_path):
    s = load(
        {
            "SANDBOX_TIMEOUT": "5", "SANDBOX_MAX_TIMEOUT": "60", "SANDBOX_MAX_OUTPUT_SIZE": "64k",
            "SANDBOX_DEFAULT_MEMORY_LIMIT": "64m", "SANDBOX_MAX_MEMORY_LIMIT": "512m", "SANDBOX_MAX_CODE_SIZE": "100k",
            "SANDBOX_ENABLE_NETWORK": "true", "SANDBOX_ENABLE_FILESYSTEM": "1",
            "SANDBOX_ENABLE_DATA_SCIENCE": "on" if HAVE_DATA_SCIENCE else "off",
            "SANDBOX_ALLOWED_IMPORTS": "socket, json ,json", "SANDBOX_RESTRICTED_PYTHON": "false",
            "SANDBOX_REQUIRE": "seccomp,landlock", "SANDBOX_MAX_CONCURRENCY": "3",
            "SANDBOX_AUDIT_LOG": str(tmp_path / "audit.log"), "SANDBOX_POOL_SIZE": "0",
            "SANDBOX_API_TOKEN": "t" * 40, "SANDBOX_HTTP_HOST": "::1", "SANDBOX_HTTP_PORT": "9000",
            "SANDBOX_LOG_LEVEL": "WARNING", "SANDBOX_UNSAFE_DISABLE_LAYERS": "landlock",
        }
    )
    assert (s.timeout, s.max_timeout, s.max_output_size) == (5.0, 60.0, 65536)
    assert (s.default_memory_limit, s.max_memory_limit, s.max_code_size) == (64 << 20, 512 << 20, 100 << 10)
    assert s.enabled_profiles == ("basic",) + (("data_science",) if HAVE_DATA_SCIENCE else ()) + (
        "network", "filesystem")
    assert s.extra_imports == ("socket", "json")
    assert s.restricted_python is False
    assert s.require == {"seccomp", "landlock"}
    assert (s.max_concurrency, s.pool_size, s.http_port, s.http_host) == (3, 0, 9000, "::1")
    assert s.audit_log == str(tmp_path / "audit.log")
    assert s.api_token == "t" * 40 and "t" * 40 not in repr(s)
    assert s.log_level == "warning"
    assert s.disabled_layers == {"landlock"}
    config = runner_config(s)
    assert (config.max_timeout, config.max_memory, config.max_output) == (60.0, 512 << 20, 65536)
    assert (config.network, config.filesystem, config.pool_size) == (True, True, 0)
    assert config.require == {"seccomp", "landlock"}
    assert config.disabled_layers == {"landlock"} and config.restricted_python is False
    assert {"socket", "json", "math", "pathlib"} <= s.allowed_modules()


DOCUMENTED = [v for v in VARIABLES.values() if v.attribute and v.documented_default and not v.shown_default]


@pytest.mark.parametrize("variable", DOCUMENTED, ids=lambda v: v.name)
def test_each_documented_default_reads_back_as_the_default(variable):
    """The default the README and server.json show is the one the server uses, and lies
    within the variable's own bounds."""
    read = load({variable.name: variable.documented_default})
    assert getattr(read, variable.attribute) == getattr(Settings(), variable.attribute)


def test_the_runner_takes_its_defaults_from_the_settings():
    from sandbox.forkserver.runner import RunnerConfig

    built, default = runner_config(Settings()), RunnerConfig()
    for name in ("max_timeout", "max_memory", "pool_size", "restricted_python", "network_policy",
                 "network_limits", "session_max_lifetime"):
        assert getattr(built, name) == getattr(default, name), name


def test_require_all_means_every_layer():
    assert load({"SANDBOX_REQUIRE": "all"}).require == frozenset(LAYER_NAMES)


def test_empty_values_mean_default():
    assert load({"SANDBOX_TIMEOUT": "", "SANDBOX_AUDIT_LOG": " "}) == load()


def test_unknown_variables_are_warnings_not_errors():
    s = load({"SANDBOX_TIMOUT": "5"})
    assert s.timeout == 30.0
    assert any("SANDBOX_TIMOUT" in w for w in s.warnings)


# Each variable with a value the server must refuse. The message names the variable.
BAD_VALUES = {
    "SANDBOX_TIMEOUT": ["abc", "0", "-1", "301", "inf"],
    "SANDBOX_MAX_TIMEOUT": ["0", "x", "1e9"],
    "SANDBOX_MAX_OUTPUT_SIZE": ["lots", "10", "1t"],
    "SANDBOX_DEFAULT_MEMORY_LIMIT": ["lots", "1m", "2g"],
    "SANDBOX_MAX_MEMORY_LIMIT": ["lots", "8m", "-1"],
    "SANDBOX_MAX_CODE_SIZE": ["big", "10", "1g"],
    "SANDBOX_MAX_INPUT_SIZE": ["big", "10", "1g"],
    "SANDBOX_ENABLE_NETWORK": ["maybe"],
    "SANDBOX_MOUNTS": ["relative:/data", "/:/data", "/proc:/data", "/nonexistent-mount-source:/data",
                       "/usr/share:/data:rw", "/usr/share:/data:xx", "/usr/share:/tmp/data", "/usr/share"],
    "SANDBOX_NETWORK_ALLOW": ["exa$mple.com", "example.com:0", "example.com:http", "[::1", "10.0.0.0/40",
                              "a..b", "host:1:2:x"],
    "SANDBOX_NETWORK_MAX_CONNECTIONS": ["0", "lots", "-3"],
    "SANDBOX_NETWORK_MAX_BYTES": ["0", "many", "100"],
    "SANDBOX_ENABLE_FILESYSTEM": ["2"],
    "SANDBOX_TOOL_SERVERS": ["/nonexistent/servers.json", "/etc/hostname", "/"],
    "SANDBOX_TOOL_CALL_BUDGET": ["0", "lots", "100000"],
    "SANDBOX_TOOL_CALL_TIMEOUT": ["0", "-1", "2h"],
    "SANDBOX_TOOL_RESULT_MAX": ["0", "1", "1g"],
    "SANDBOX_MAX_SESSIONS": ["-1", "1000", "some"],
    "SANDBOX_RATE_LIMIT": ["-1", "1000000", "fast", "1.5"],
    "SANDBOX_SESSION_TTL": ["0", "-5", "1e9", "forever"],
    "SANDBOX_SESSION_MAX_LIFETIME": ["0", "2d", "x"],
    "SANDBOX_ENABLE_DATA_SCIENCE": ["yesplease"],
    # (timeit, doctest, rlcompleter run strings as unrestricted Python; unittest, pydoc and
    # logging.config import any module by name; logging and warnings read files)
    "SANDBOX_ALLOWED_IMPORTS": ["os", "json,subprocess", "ctypes", "importlib.util", "not a module", "socket",
                                "timeit", "doctest", "rlcompleter", "unittest", "unittest.mock", "pydoc",
                                "logging", "logging.config", "warnings", "zoneinfo", "antigravity",
                                # a wildcard: never alone, never on a package refused by name
                                "*", "json,*", "os.*", "sys.*", "importlib.*", "subprocess.*", "ctypes.*",
                                "numpy.ctypeslib.*", "socket.*", "*.json", "json.*.x", "json*", ".*"],
    "SANDBOX_RESTRICTED_PYTHON": ["nah"],
    "SANDBOX_REQUIRE": ["everything", "seccomp,docker"],
    "SANDBOX_UNSAFE_DISABLE_LAYERS": ["restricted_python", "all"],
    "SANDBOX_MAX_CONCURRENCY": ["0", "-2", "many", "1.5"],
    "SANDBOX_AUDIT_LOG": ["/dev/null/audit.log", "/tmp"],
    "SANDBOX_POOL_SIZE": ["-1", "1000", "x"],
    "SANDBOX_API_TOKEN": ["short", "has spaces in it but is long enough ......"],
    "SANDBOX_HTTP_HOST": ["a b", "user@host"],
    "SANDBOX_HTTP_ALLOWED_HOSTS": ["a b", "evil.example:80", "x/y"],
    "SANDBOX_FILE_TTL": ["0", "-1", "1e9", "soon"],
    "SANDBOX_FILE_STORE_SIZE": ["0", "1k", "8g", "lots"],
    "SANDBOX_HTTP_PORT": ["0", "65536", "http"],
    "SANDBOX_LOG_LEVEL": ["loud"],
    "SANDBOX_ENV_FILE": ["/nonexistent-dir/.env"],
}


def test_every_variable_has_bad_value_cases():
    assert set(BAD_VALUES) == set(VARIABLES)


@pytest.mark.parametrize("name, value", [(n, v) for n, values in BAD_VALUES.items() for v in values])
def test_bad_value_is_refused_naming_the_variable(name, value):
    with pytest.raises(ConfigError) as caught:
        load({name: value})
    assert name in str(caught.value)
    assert "accepted" in str(caught.value)


def test_limits_are_checked_against_each_other():
    with pytest.raises(ConfigError, match="SANDBOX_TIMEOUT.*SANDBOX_MAX_TIMEOUT"):
        load({"SANDBOX_MAX_TIMEOUT": "10", "SANDBOX_TIMEOUT": "20"})
    with pytest.raises(ConfigError, match="SANDBOX_DEFAULT_MEMORY_LIMIT.*512m"):
        load({"SANDBOX_MAX_MEMORY_LIMIT": "512m", "SANDBOX_DEFAULT_MEMORY_LIMIT": "1g"})


def test_profile_modules_are_accepted_as_extras_only_with_their_profile():
    with pytest.raises(ConfigError, match="socket"):
        load({"SANDBOX_ALLOWED_IMPORTS": "socket"})
    assert "socket" in load({"SANDBOX_ALLOWED_IMPORTS": "socket", "SANDBOX_ENABLE_NETWORK": "1"}).extra_imports


def test_a_package_with_its_submodules_is_one_entry():
    settings = load({"SANDBOX_ALLOWED_IMPORTS": "packaging.*,colorsys"})
    assert settings.extra_imports == ("packaging.*", "colorsys")
    assert {"packaging", "packaging.*", "colorsys"} <= settings.allowed_modules()


@pytest.mark.parametrize("value, says", [
    ("*", "'*' alone would admit every module"),
    ("os.*", "os itself is refused: process, environment and file system control"),
    ("importlib.*", "importlib itself is refused: imports any module"),
    ("socket.*", "socket itself is refused: only available with the network profile"),
    ("setuptools.*", "setuptools itself is refused: imports any module named in a string"),
    ("pkg_resources.*", "pkg_resources itself is refused: imports any module named in a string"),
])
def test_a_wildcard_that_would_open_a_door_stops_the_server_saying_why(value, says):
    with pytest.raises(ConfigError) as caught:
        load({"SANDBOX_ALLOWED_IMPORTS": value})
    assert says in str(caught.value) and "pkg.* for such a package with its submodules" in str(caught.value)


def test_a_wildcard_on_a_package_that_is_not_installed_says_what_to_install():
    with pytest.raises(ConfigError, match="names no_such_package_here.*, which is not installed"):
        load({"SANDBOX_ALLOWED_IMPORTS": "no_such_package_here.*"})


def test_dangerous_extra_import_message_says_why():
    with pytest.raises(ConfigError) as caught:
        load({"SANDBOX_ALLOWED_IMPORTS": "json,os"})
    message = str(caught.value)
    assert "SANDBOX_ALLOWED_IMPORTS" in message and "os (" in message and "json (" not in message


def test_token_value_never_appears_in_the_message():
    secret = "s3cr3t-but-too-short"
    with pytest.raises(ConfigError) as caught:
        load({"SANDBOX_API_TOKEN": secret})
    assert secret not in str(caught.value)
    assert "SANDBOX_API_TOKEN" in str(caught.value)


# ----------------------------------------------------------------------------- .env.example


def test_env_example_documents_every_variable_with_its_default(tmp_path):
    text = (REPO_ROOT / ".env.example").read_text()
    for name in VARIABLES:
        assert name in text, f"{name} missing from .env.example"
    # Read as a .env file, the example gives the defaults (concurrency is left commented out).
    settings = load({"SANDBOX_ENV_FILE": str(REPO_ROOT / ".env.example")}, tmp_path)
    assert settings == Settings(
        max_concurrency=default_concurrency(), env_file=str(REPO_ROOT / ".env.example"), warnings=()
    )
    assert settings.weakening == ()


# ----------------------------------------------------------------------------- the real start-up


def start(env: dict, *args: str, cwd=None) -> subprocess.CompletedProcess:
    """Run the launcher the way a client would; `run` on a missing file stops right after
    the configuration is loaded and logged, so no sandbox is started. `serve` with a bad
    setting answers over stdio until the client leaves (here at once), then exits 2."""
    return subprocess.run(
        [sys.executable, str(LAUNCHER), *(args or ("run", "/nonexistent-file.py"))],
        env=server_env(env),
        cwd=str(cwd) if cwd else "/",
        input="",   # a client that leaves at once (a closed pipe): `serve` answers nothing and exits
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("name", sorted(BAD_VALUES))
def test_server_stops_with_exit_2_on_a_bad_value(name):
    value = BAD_VALUES[name][0]
    for command in (("run", "/nonexistent-file.py"), ("serve",)):
        done = start({name: value}, *command)
        assert done.returncode == 2, (name, done.stderr)
        assert name in done.stderr and "accepted" in done.stderr
        assert done.stdout == ""
        if name == "SANDBOX_API_TOKEN":
            assert value not in done.stderr


def test_server_refuses_dangerous_allowed_imports_at_start():
    done = start({"SANDBOX_ALLOWED_IMPORTS": "os"}, "serve")
    assert done.returncode == 2
    assert "SANDBOX_ALLOWED_IMPORTS" in done.stderr and "os" in done.stderr


def test_unknown_variable_is_a_warning_on_stderr():
    done = start({"SANDBOX_TIMOUT": "5"})
    assert "SANDBOX_TIMOUT" in done.stderr and "unknown" in done.stderr
    assert done.returncode == 2  # only because the file to run does not exist
    assert "cannot read /nonexistent-file.py" in done.stderr


def test_dotenv_file_is_read_only_when_named_and_environment_wins(tmp_path):
    (tmp_path / ".env").write_text("SANDBOX_HTTP_PORT=notaport\n")
    done = start({}, cwd=tmp_path)  # ./.env alone is not read
    assert "SANDBOX_HTTP_PORT" not in done.stderr and "cannot read /nonexistent-file.py" in done.stderr
    done = start({}, "--env-file", str(tmp_path / ".env"), "run", "/nonexistent-file.py", cwd=tmp_path)
    assert done.returncode == 2 and "SANDBOX_HTTP_PORT='notaport'" in done.stderr
    done = start({"SANDBOX_ENV_FILE": str(tmp_path / ".env"), "SANDBOX_HTTP_PORT": "8080"}, cwd=tmp_path)
    assert "SANDBOX_HTTP_PORT" not in done.stderr
    assert "cannot read /nonexistent-file.py" in done.stderr


def test_weakening_settings_are_logged_at_start_with_their_source(tmp_path):
    named = tmp_path / "ops.env"
    named.write_text("SANDBOX_RESTRICTED_PYTHON=false\n")
    done = start({"SANDBOX_ENV_FILE": str(named), "SANDBOX_ENABLE_NETWORK": "yes"})
    assert "SANDBOX_RESTRICTED_PYTHON=False weakens isolation" in done.stderr
    assert f"set by {named}" in done.stderr
    assert "SANDBOX_ENABLE_NETWORK=True weakens isolation" in done.stderr and "set by environment" in done.stderr


def test_python_dash_m_sandbox_is_the_same_command_line():
    done = subprocess.run(
        [sys.executable, "-m", "sandbox", "run", "/nonexistent-file.py"],
        env={**server_env({"SANDBOX_TIMEOUT": "zero"}), "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True, text=True, timeout=60, cwd="/",
    )
    assert done.returncode == 2 and "SANDBOX_TIMEOUT='zero'" in done.stderr


def test_launcher_is_executable():
    assert os.access(LAUNCHER, os.X_OK)
    assert LAUNCHER.read_text().startswith("#!/usr/bin/env python3\n")


# ----------------------------------------------------------------------------- honest start-up

MISSING = """
import sys
for name in sys.argv[2].split(","):
    sys.modules[name] = None  # as if not installed
from sandbox.cli import main
raise SystemExit(main(["run", sys.argv[1]]))
"""


def start_without(modules: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", MISSING, "/nonexistent-file.py", modules],
                          env={**server_env(env), "PYTHONPATH": str(REPO_ROOT)}, cwd="/",
                          capture_output=True, text=True, timeout=60)


def test_data_science_profile_without_its_libraries_stops_the_server():
    done = start_without("numpy,pandas", {"SANDBOX_ENABLE_DATA_SCIENCE": "true"})
    assert done.returncode == 2, done.stderr
    assert "SANDBOX_ENABLE_DATA_SCIENCE=true needs numpy, pandas" in done.stderr
    assert f"make -C {REPO_ROOT} install-datascience" in done.stderr  # started from this checkout
    if HAVE_DATA_SCIENCE:  # numpy present: only the hidden one is named
        done = start_without("pandas", {"SANDBOX_ENABLE_DATA_SCIENCE": "true"})
        assert done.returncode == 2 and "needs pandas, which is not installed" in done.stderr


def test_extra_import_that_is_not_installed_stops_the_server():
    done = start({"SANDBOX_ALLOWED_IMPORTS": "colorsys,no_such_module_here"})
    assert done.returncode == 2
    assert "no_such_module_here, which is not installed" in done.stderr and "-m pip install" in done.stderr
    assert "colorsys" not in done.stderr.split("names", 1)[1].split("which", 1)[0]


def test_audit_log_directory_is_created_private(tmp_path):
    """The README's example (~/.local/state/...) must work on a fresh account."""
    path = tmp_path / "home" / ".local" / "state" / "audit.log"
    settings = load({"SANDBOX_AUDIT_LOG": str(path)}, tmp_path)
    assert settings.audit_log == str(path)
    assert (tmp_path / "home" / ".local" / "state").is_dir()
    assert oct((tmp_path / "home" / ".local" / "state").stat().st_mode & 0o777) == oct(0o700)


SERVE_WITHOUT = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # as if not installed
from sandbox.cli import main
raise SystemExit(main(["serve"]))
"""


def test_a_configuration_that_fails_reaches_the_client_as_an_answer_it_can_show():
    """Data science on without its libraries: the client still completes initialize, the
    tools are listed with the problem, and every call answers with it and the fix."""
    import anyio

    from mcp_client import open_session

    async def scenario():
        command = [sys.executable, "-c", SERVE_WITHOUT, "numpy,pandas"]
        env = {"SANDBOX_ENABLE_DATA_SCIENCE": "true", "PYTHONPATH": str(REPO_ROOT)}
        async with open_session(env, command=command) as server:
            answers = [await server.session.call_tool(name, {"code": "1"} if "code" in name else {})
                       for name in ("execute_code", "get_sandbox_info", "validate_code")]
            return server.session, server.tools, answers

    session, tools, answers = anyio.run(scenario)
    assert "execute_code" in tools and "SANDBOX_ENABLE_DATA_SCIENCE=true needs numpy" in tools["execute_code"].description
    for answer in answers:
        text = answer.content[0].text
        assert answer.is_error and "configuration failed" in text, text
        assert "SANDBOX_ENABLE_DATA_SCIENCE=true needs numpy, pandas" in text
        assert "install-datascience" in text and "switch the profile off" in text   # (a checkout's command)

"""Every client snippet in README.md as a user pastes it: the JSON is in the client's own
format (Claude Desktop's and Cursor's `mcpServers`, VS Code's `servers`), a `claude mcp add`
line is a command line Claude Code accepts, and the command it names, with the paths
replaced as the README says (/path/to/checkout: this checkout; its dist/: the .pyz and the
wheel built as `make dist` builds them), starts the server, which lists its tools and runs
`result = 2 + 2`. The README's `... check` command lines run as written too."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_client import REPO_ROOT, blocking_session, server_env
from sandbox.install_source import NAME, wheel_name

README = REPO_ROOT / "README.md"
PLACEHOLDER = "/path/to/checkout"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
TOOLS = {"execute_code", "validate_code", "get_sandbox_info", "create_session", "close_session"}
# The keys each client reads for a stdio server.
CLIENT_KEYS = {"mcpServers": {"command", "args", "env"},
               "servers": {"type", "command", "args", "env", "envFile", "cwd"}}


def fenced(language: str) -> list[tuple[int, str]]:
    """(line number, body) of each fenced block of `language` in the README."""
    text = README.read_text()
    return [(text.count("\n", 0, m.start()) + 1, m.group(2)) for m in FENCE.finditer(text) if m.group(1) == language]


def client_snippets() -> list[tuple[str, dict]]:
    """(where, {"format", "command", "args", "env"}) for each snippet that starts this server."""
    found = []
    for line, body in fenced("json"):
        config = json.loads(body)
        for key in CLIENT_KEYS.keys() & config.keys():
            for name, entry in config[key].items():
                argv = [entry.get("command", "")] + list(entry.get("args", []))
                if any(NAME in part for part in argv):
                    found.append((f"README.md:{line}:{key}:{name}", {"format": key, **entry}))
    for line, body in fenced("sh"):
        for number, text in enumerate(body.splitlines()):
            if text.startswith("claude mcp add "):
                found.append((f"README.md:{line + 1 + number}:claude-mcp-add", claude_mcp_add(text)))
    return found


def claude_mcp_add(line: str) -> dict:
    """`claude mcp add [-s scope] [-e KEY=value]... [-t stdio] NAME -- COMMAND [ARGS...]` as
    Claude Code reads it, as the stdio entry it writes."""
    words = shlex.split(line)
    assert words[:3] == ["claude", "mcp", "add"] and "--" in words, line
    options, command = words[3:words.index("--")], words[words.index("--") + 1:]
    env, names = {}, []
    while options:
        option = options.pop(0)
        if option in ("-s", "--scope"):
            assert options.pop(0) in ("local", "user", "project"), line
        elif option in ("-t", "--transport"):
            assert options.pop(0) == "stdio", line
        elif option in ("-e", "--env"):
            key, _, value = options.pop(0).partition("=")
            env[key] = value
        else:
            assert not option.startswith("-"), f"{option} is not an option of claude mcp add: {line}"
            names.append(option)
    assert len(names) == 1 and command, line
    return {"format": "claude mcp add", "command": command[0], "args": command[1:], "env": env}


SNIPPETS = client_snippets()


def test_the_readme_has_a_snippet_for_each_client():
    formats = {entry["format"] for _, entry in SNIPPETS}
    assert formats == {"mcpServers", "servers", "claude mcp add"}
    assert f"replace `{PLACEHOLDER}`" in README.read_text()


def test_snippets_are_in_the_clients_format():
    for where, entry in SNIPPETS:
        keys = set(entry) - {"format"}
        if entry["format"] in CLIENT_KEYS:
            assert keys <= CLIENT_KEYS[entry["format"]], f"{where}: {keys - CLIENT_KEYS[entry['format']]}"
        if entry["format"] == "servers":
            assert entry["type"] == "stdio", where
        if entry["format"] == "mcpServers":  # every client reads an args list; some versions require one
            assert isinstance(entry.get("args"), list), where
        assert isinstance(entry["command"], str) and entry["command"], where
        assert all(isinstance(a, str) for a in entry.get("args", [])), where
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in entry.get("env", {}).items()), where


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """What `make dist` puts in dist/: the .pyz and the wheel."""
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "build_pyz.py"), "--output",
                            str(out / "mcp-server-python-sandbox.pyz")], capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stderr[-3000:]
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(REPO_ROOT)],
                           capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stderr[-3000:]
    assert (out / wheel_name()).is_file(), list(out.iterdir())
    return out


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("home")


def substituted(text: str, dist: Path) -> str:
    """The paths as the README tells the user to fill them in."""
    return text.replace(f"{PLACEHOLDER}/dist/", f"{dist}/").replace(PLACEHOLDER, str(REPO_ROOT))


def user_env(home: Path, extra: "dict | None" = None) -> dict:
    """A user's environment: this Python (with the server's dependencies, as `make install`
    leaves .venv) and uv and pipx first on PATH, a home and caches of the test's own."""
    path = f"{home / 'bin'}:{Path(sys.executable).parent}:{server_env()['PATH']}"
    return server_env({"PATH": path, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
                       "UV_CACHE_DIR": str(home / "uv-cache"), "PIPX_HOME": str(home / "pipx"),
                       "PIPX_BIN_DIR": str(home / "bin"), **(extra or {})})


@pytest.mark.parametrize("where, entry", SNIPPETS, ids=[where for where, _ in SNIPPETS])
def test_snippet_starts_the_server(where, entry, dist, home):
    env = user_env(home, {k: substituted(v, dist) for k, v in entry.get("env", {}).items()})
    command = shutil.which(substituted(entry["command"], dist), path=env["PATH"])
    if command is None:
        pytest.skip(f"{entry['command']} is not installed here (the test extra installs uv and pipx)")
    argv = [command] + [substituted(a, dist) for a in entry.get("args", [])]
    for part in argv[1:]:
        if part.startswith("/"):
            assert os.path.exists(part), f"{where}: {part} does not exist (is the README's file name current?)"
    with blocking_session(env, command=argv, start_timeout=600) as server:
        assert set(server.tools) == TOOLS, where
        data, result = server.call("execute_code", {"code": "result = 2 + 2"})
        assert not result.is_error and data["result"] == 4, where


def check_lines() -> list[tuple[str, str]]:
    found = []
    for line, body in fenced("sh"):
        for number, text in enumerate(body.splitlines()):
            command = text.split("  #")[0].strip()
            if command.endswith(" check"):
                found.append((f"README.md:{line + 1 + number}", command))
    return found


CHECKS = check_lines()


def test_the_readme_shows_how_each_form_starts():
    commands = " ".join(command for _, command in CHECKS)
    for form in ("bin/mcp-server-python-sandbox", "uvx --from /path/to/checkout", "pipx install /path/to/checkout",
                 "dist/mcp-server-python-sandbox.pyz", f"uvx --from dist/{wheel_name()}"):
        assert form in commands, form


@pytest.mark.parametrize("where, command", CHECKS, ids=[where for where, _ in CHECKS])
def test_check_line_runs(where, command, dist, home):
    if ".venv/" in command and not (REPO_ROOT / ".venv").is_dir():
        pytest.skip("this checkout has no .venv (make install makes it)")
    for tool in ("uvx", "pipx"):
        if re.search(rf"(^|&& ){tool} ", command) and not shutil.which(tool, path=user_env(home)["PATH"]):
            pytest.skip(f"{tool} is not installed here (the test extra installs it)")
    line = substituted(command, dist).replace(" dist/", f" {dist}/")
    done = subprocess.run(["bash", "-c", line], env=user_env(home), cwd=str(REPO_ROOT), capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, f"{where}: {line}\n{done.stderr[-3000:]}"
    assert re.search(r"^seccomp\s+active", done.stdout, re.M), done.stdout

"""The package as people install it: the wheel's metadata (its own name, license,
Linux classifier, the console command), server.json written from the settings table,
and the README's one-line runs, `uvx --from WHEEL` and `pipx run --spec WHEEL`, which
build a fresh environment from the package index and answer `check`; a refusal there
names a command that works in that environment."""

from __future__ import annotations

import email
import json
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mcp_client import REPO_ROOT, server_env

NAME = "mcp-server-python-sandbox"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(REPO_ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "deprecated" not in done.stderr.lower(), done.stderr[-3000:]
    found = list(out.glob("mcp_server_python_sandbox-*.whl"))
    assert len(found) == 1, list(out.iterdir())
    return found[0]


def test_wheel_metadata(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.message_from_bytes(archive.read(info))
        entry_points = archive.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert metadata["Name"] == NAME
    assert metadata["License-Expression"] == "Apache-2.0"
    assert "Operating System :: POSIX :: Linux" in metadata.get_all("Classifier")
    # the package is not on the public index: no link to a registry page that does not exist
    assert not any("pypi.org" in url for url in metadata.get_all("Project-URL") or [])
    assert any(n.endswith("licenses/LICENSE") for n in names)
    assert f"{NAME} = sandbox.cli:main" in entry_points
    assert "sandbox/seccomp/policy.py" in names and "sandbox/restricted/libraries/policy.py" in names
    assert not any(n.startswith("tests/") for n in names)


def test_server_json_is_written_from_the_settings_table():
    done = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "server_json.py")], capture_output=True,
                          text=True, timeout=60, check=True)
    assert json.loads((REPO_ROOT / "server.json").read_text()) == json.loads(done.stdout), \
        "server.json is stale: python tools/server_json.py > server.json"
    package = json.loads(done.stdout)["packages"][0]
    assert package["identifier"] == NAME and package["transport"] == {"type": "stdio"}
    from sandbox.config import VARIABLES
    assert [v["name"] for v in package["environmentVariables"]] == list(VARIABLES)


def tool_env(tmp_path: Path, overrides: "dict | None" = None) -> dict:
    """uv and pipx with caches of their own, and uvx and pipx on PATH (the refusal names them)."""
    path = f"{Path(sys.executable).parent}:{server_env()['PATH']}"
    return server_env({"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"),
                       "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "PIPX_HOME": str(tmp_path / "pipx"),
                       "PIPX_BIN_DIR": str(tmp_path / "pipx-bin"), "PATH": path, **(overrides or {})})


def runs_check(command: list[str], tmp_path: Path) -> None:
    done = subprocess.run(command + ["check", "--json"], env=tool_env(tmp_path), capture_output=True, text=True,
                          timeout=900, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["layers"]["seccomp"]["active"] and report["missing_required"] == []


def tool(module: str) -> list[str]:
    probe = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"{module} is not installed here (the test extra installs it)")
    return [sys.executable, "-m", module]


def test_uvx_runs_the_wheel(wheel, tmp_path):
    runs_check(tool("uv") + ["tool", "run", "--from", str(wheel), NAME], tmp_path)


def test_pipx_runs_the_wheel(wheel, tmp_path):
    runs_check(tool("pipx") + ["run", "--spec", str(wheel), NAME], tmp_path)


TABULATE = "import tabulate\nresult = tabulate.tabulate([[1, 2]])\n"


def refusal_names_a_command_that_runs(command: list[str], tmp_path: Path, expected: str) -> None:
    """SANDBOX_ALLOWED_IMPORTS names a module the environment lacks: the server refuses to
    start and says how to start it with the module; that command then runs the snippet."""
    env = tool_env(tmp_path, {"SANDBOX_ALLOWED_IMPORTS": "tabulate"})
    refused = subprocess.run(command + ["run", "-"], input=TABULATE, env=env, capture_output=True, text=True,
                             timeout=900, cwd=str(tmp_path))
    assert refused.returncode == 2, refused.stderr[-3000:]
    named = re.search(r"start the server \(in your client's config too\) with: (.*?), or remove it", refused.stderr)
    assert named, refused.stderr[-3000:]
    assert named.group(1) == expected
    done = subprocess.run(shlex.split(named.group(1)) + ["run", "-"], input=TABULATE, env=env,
                          capture_output=True, text=True, timeout=900, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    answer = done.stdout[done.stdout.index("{\n"):]  # after what pipx prints on stdout about the module it adds
    assert json.loads(answer)["result"] == "-  -\n1  2\n-  -"


def test_uvx_refusal_names_the_uvx_command_with_the_module(wheel, tmp_path):
    refusal_names_a_command_that_runs(tool("uv") + ["tool", "run", "--from", str(wheel), NAME], tmp_path,
                                      f"uvx --from {wheel} --with tabulate {NAME}")


def test_pipx_refusal_names_the_pipx_command_with_the_module(wheel, tmp_path):
    refusal_names_a_command_that_runs(tool("pipx") + ["run", "--spec", str(wheel), NAME], tmp_path,
                                      f"pipx run --spec {wheel} --with tabulate {NAME}")

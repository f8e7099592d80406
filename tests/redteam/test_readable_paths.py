"""What the sandbox can read is built from the interpreter's installation and the
packages it imported, never from sys.path as such: a server started (python -m
sandbox) from a project directory holding a .env with the API token, with that
directory on PYTHONPATH, or from /, shows the snippet none of it. RestrictedPython
is off here: the kernel layers must hold alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_client import server_env  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-the-api-token-" + "z" * 30

PROBE = r"""
import os
def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        return []
def readable(path):
    try:
        with open(path, "rb") as f:
            return f.read(200).decode("utf-8", "replace")
    except OSError as exc:
        return type(exc).__name__
result = {
    "cwd_listing": listing("."),
    "secret": readable(SECRET_PATH),
    "secret_dir_exists": os.path.exists(SECRET_DIR),
    "root_entries": listing("/"),
    "home": [p for p in ("/root", "/home") if listing(p)],
    "passwd": readable("/etc/passwd"),
    "repo_files": [p for p in ("pyproject.toml", ".git", "Makefile") if os.path.exists(os.path.join(REPO, p))],
}
"""


def run_from(cwd: Path, secret_dir: Path) -> dict:
    code = (f"SECRET_PATH = {str(secret_dir / '.env')!r}\nSECRET_DIR = {str(secret_dir)!r}\n"
            f"REPO = {str(REPO)!r}\n" + PROBE)
    env = server_env({"SANDBOX_RESTRICTED_PYTHON": "false"})
    env["PYTHONPATH"] = os.pathsep.join([str(secret_dir), str(REPO)])
    done = subprocess.run([sys.executable, "-m", "sandbox", "run", "-"], input=code, env=env, cwd=str(cwd),
                          capture_output=True, text=True, timeout=120)
    answer = json.loads(done.stdout)
    assert answer["success"], answer
    return answer["result"]


@pytest.fixture
def project(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(f"SANDBOX_API_TOKEN={SECRET}\n")
    (project / "notes.txt").write_text("private\n")
    os.chmod(tmp_path, 0o755)
    return project


@pytest.mark.parametrize("start", ["project", "root"])
def test_start_directory_and_pythonpath_are_not_readable(project, start):
    cwd = project if start == "project" else Path("/")
    seen = run_from(cwd, project)
    assert SECRET not in json.dumps(seen)
    assert seen["secret"] in ("FileNotFoundError", "PermissionError") and not seen["secret_dir_exists"]
    assert ".env" not in seen["cwd_listing"] and "notes.txt" not in seen["cwd_listing"]
    assert seen["home"] == [] and seen["passwd"] in ("FileNotFoundError", "PermissionError")
    assert seen["repo_files"] == []  # the checkout's package dir only, never the checkout
    assert set(seen["root_entries"]) <= {"usr", "lib", "lib64", "tmp", "dev", "proc", "root", "work",
                                         "opt", "home", "srv", "var", "workspace"}

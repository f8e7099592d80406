"""The single-file install: tools/build_pyz.py builds a .pyz that runs `check`, `run`
and serves an MCP session, extracting its bundle once into a private cache."""

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_client import REPO_ROOT, blocking_session, server_env  # noqa: E402


@pytest.fixture(scope="module")
def pyz(tmp_path_factory):
    """Build the archive once for this module (pip installs the dependencies: ~30 s)."""
    output = tmp_path_factory.mktemp("dist") / "mcp-server-python-sandbox.pyz"
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "build_pyz.py"), "--output", str(output)],
        capture_output=True, text=True, timeout=600,
    )
    if done.returncode != 0:
        pytest.fail(f"build_pyz failed:\n{done.stdout}\n{done.stderr[-4000:]}")
    assert output.is_file() and f"built {output}" in done.stdout
    return output


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


def run_pyz(pyz, *args, cache, stdin=None, python=sys.executable, env=None):
    # -I: nothing from the checkout or the user's site-packages can stand in for the bundle.
    return subprocess.run(
        [python, "-I", str(pyz), *args],
        env=server_env({"XDG_CACHE_HOME": str(cache), **(env or {})}),
        input=stdin, capture_output=True, text=True, timeout=180, cwd="/",
    )


def test_archive_layout(pyz):
    import zipfile

    with zipfile.ZipFile(pyz) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("_bundle/manifest.json"))
    assert "__main__.py" in names
    for module in ("sandbox/cli.py", "sandbox/forkserver/runner.py", "mcp/__init__.py", "RestrictedPython/__init__.py"):
        assert f"_bundle/site/{module}" in names
    assert not any("__pycache__" in name for name in names)
    assert manifest["target"]["version"] == list(sys.version_info[:2])
    assert any(path.startswith("pydantic_core/") for path in manifest["compiled"])
    assert pyz.read_bytes().startswith(b"#!/usr/bin/env python3\n")


def test_pyz_check(pyz, cache):
    done = run_pyz(pyz, "check", "--json", cache=cache)
    assert done.returncode == 0, done.stderr
    assert {"namespaces", "seccomp", "landlock", "restricted_python"} <= set(json.loads(done.stdout)["layers"])


def test_pyz_run(pyz, cache):
    done = run_pyz(pyz, "run", "-", cache=cache, stdin="result = 2 + 2\nprint(f'The answer is: {result}')\n")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == 4 and result["stdout"] == "The answer is: 4\n"


def test_pyz_refuses_bad_configuration(pyz, cache):
    done = run_pyz(pyz, "run", "-", cache=cache, stdin="result = 1\n", env={"SANDBOX_TIMEOUT": "soon"})
    assert done.returncode == 2 and "SANDBOX_TIMEOUT" in done.stderr


def test_pyz_serves_an_mcp_session(pyz, cache):
    command = [sys.executable, "-I", str(pyz)]
    with blocking_session({"XDG_CACHE_HOME": str(cache)}, command=command) as server:
        assert set(server.tools) == {"execute_code", "validate_code", "get_sandbox_info", "create_session", "close_session"}
        data, result = server.call("execute_code", {"code": "import statistics\nresult = statistics.mean([1, 2, 3])"})
        assert not result.is_error and data["result"] == 2
        info, _ = server.call("get_sandbox_info")
        assert info["server"]["name"] == "mcp-server-python-sandbox"
        data, _ = server.call("validate_code", {"code": "import subprocess"})
        assert data["validation"]["valid"] is False


def test_bundle_is_extracted_once_into_a_private_directory_named_by_hash(pyz, cache):
    assert run_pyz(pyz, "check", cache=cache).returncode == 0
    root = cache / "mcp-server-python-sandbox"
    digest = hashlib.sha256(pyz.read_bytes()).hexdigest()
    assert [p.name for p in root.iterdir()] == [digest]  # no leftover staging directory
    bundle = root / digest
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE(bundle.stat().st_mode) == 0o700
    assert (bundle / "sandbox" / "cli.py").is_file()
    marker = bundle / ".mcp-server-python-sandbox-complete"
    first_seen = marker.stat().st_mtime_ns
    assert run_pyz(pyz, "check", cache=cache).returncode == 0
    assert marker.stat().st_mtime_ns == first_seen  # reused, not extracted again


def test_an_incomplete_bundle_is_replaced(pyz, cache):
    assert run_pyz(pyz, "check", cache=cache).returncode == 0
    bundle = next((cache / "mcp-server-python-sandbox").iterdir())
    (bundle / ".mcp-server-python-sandbox-complete").unlink()
    shutil.rmtree(bundle / "sandbox")  # as if a first start had been killed half-way
    done = run_pyz(pyz, "run", "-", cache=cache, stdin="result = 7\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == 7


def test_cache_directory_is_made_private(pyz, cache):
    root = cache / "mcp-server-python-sandbox"
    root.mkdir(parents=True, mode=0o755)
    os.chmod(root, 0o755)
    assert run_pyz(pyz, "check", cache=cache).returncode == 0
    assert stat.S_IMODE(root.stat().st_mode) == 0o700


def _other_python() -> "str | None":
    """Another working CPython 3.10+ than this one (PATH first, then a pyenv install)."""
    candidates = [shutil.which(f"python3.{minor}") for minor in range(10, 15) if minor != sys.version_info[1]]
    candidates += sorted(str(p) for p in Path(os.path.expanduser("~/.pyenv/versions")).glob("3.1*/bin/python3"))
    for python in filter(None, candidates):
        try:
            probe = subprocess.run([python, "-c", "import sys; print(sys.version_info[1])"],
                                   capture_output=True, text=True, timeout=30)
        except OSError:
            continue
        if probe.returncode == 0 and probe.stdout.strip() not in ("", str(sys.version_info[1])):
            if int(probe.stdout.strip()) >= 10:
                return python
    return None


def test_another_python_version_gets_a_clear_refusal(pyz, cache):
    python = _other_python()
    if python is None:
        pytest.skip("no other CPython 3.10+ here to try the archive with")
    done = run_pyz(pyz, "check", cache=cache, python=python)
    assert done.returncode != 0
    assert "was built for cpython 3." in done.stderr and "tools/build_pyz.py" in done.stderr


def test_pyz_starts_without_a_writable_home(pyz, tmp_path):
    """A service account with no home: the bundle goes to a private directory under
    $TMPDIR instead, and the server starts."""
    env = {k: v for k, v in server_env().items() if k != "XDG_CACHE_HOME"}
    env.update(HOME="/dev/null", TMPDIR=str(tmp_path))  # no usable home, as root too
    done = subprocess.run([sys.executable, "-I", str(pyz), "check"], env=env, capture_output=True, text=True,
                          timeout=180, cwd="/")
    assert done.returncode == 0, done.stderr[-2000:]
    root = tmp_path / f"mcp-server-python-sandbox-{os.getuid()}"
    assert root.is_dir() and stat.S_IMODE(root.stat().st_mode) == 0o700
    assert any(p.is_dir() for p in root.iterdir())

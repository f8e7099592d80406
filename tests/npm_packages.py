"""npm packages the tests run (the MCP Inspector, the reference memory server),
installed once into build/<name> (or a temporary directory when the checkout is
read-only); a test is skipped only when npm itself is absent. The test workers
of a run share the directory: one installs while the others wait on its lock."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


def npm_env(prefix: Path) -> dict:
    """npm with a cache it can write and the system's CA bundle trusted: the ordinary-user
    run has neither a home directory nor the root session's NODE_EXTRA_CA_CERTS."""
    env = dict(os.environ, npm_config_cache=str(prefix / ".npm-cache"), npm_config_update_notifier="false")
    if "NODE_EXTRA_CA_CERTS" not in env and os.path.exists(SYSTEM_CA_BUNDLE):
        env["NODE_EXTRA_CA_CERTS"] = SYSTEM_CA_BUNDLE
    return env


def installed(directory: str, package: str, binary: str) -> str:
    """The path of `binary` from `package`, installed if it is not there yet."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip(f"npm/node are not installed: {package} cannot run here")
    prefix = REPO_ROOT / "build" / directory
    try:
        prefix.mkdir(parents=True, exist_ok=True)
        if not os.access(prefix, os.W_OK):
            raise PermissionError(prefix)
    except OSError:
        prefix = Path(tempfile.gettempdir()) / f"mcp-server-python-sandbox-{directory}-{os.getuid()}"
        prefix.mkdir(parents=True, exist_ok=True)
    path = prefix / "node_modules" / ".bin" / binary
    # written after a whole install: a binary alone may be from one cut short
    stamp = prefix / f".installed-{package.replace('/', '+')}"
    with open(prefix / ".install-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (stamp.exists() and path.exists()):
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(prefix), package],
                capture_output=True, text=True, timeout=600, env=npm_env(prefix),
            )
            if done.returncode != 0:
                pytest.fail(f"npm install {package} failed:\n{done.stderr[-3000:]}")
            stamp.touch()
    return str(path)

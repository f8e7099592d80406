"""Fixtures of the red-team suite: the host canaries (one set for the session)
and one MCP server per mode, shared by every test of the folder:

* `rp_server`: the product as shipped (RestrictedPython on, every kernel layer);
* `norp_server`: SANDBOX_RESTRICTED_PYTHON=false, the kernel layers alone.

Both run with SANDBOX_CANARY_SECRET in their environment, a dedicated empty
working directory (watched), an audit log, and modest limits so the corpus
stays quick: default timeout 5 s, at most 10 s, 64 KiB of output.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
REPO = TESTS.parent
for path in (str(HERE), str(TESTS)):
    if path not in sys.path:
        sys.path.insert(0, path)

import hostcanary  # noqa: E402
from mcpsync import ServerGone, SyncServer  # noqa: E402

from redteam_lib import DEFAULT_TIMEOUT, MAX_OUTPUT, MAX_TIMEOUT  # noqa: E402


@pytest.fixture(scope="session")
def workdir():
    """A private directory for the servers' cwd and audit logs (removed afterwards)."""
    base = tempfile.mkdtemp(prefix="sbx-redteam-")
    os.chmod(base, 0o755)
    cwd = os.path.join(base, "server-cwd")
    os.mkdir(cwd)
    yield Path(base)
    import shutil
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def canaries(workdir):
    host = hostcanary.HostCanaries(str(workdir / "server-cwd")).start()
    yield host
    host.stop()


# "doors" modes: the network, filesystem and data-science profiles on, with RestrictedPython
# on ("doors") and off ("norp_doors"). A profile opens only its own door: every case must
# still be stopped, except the import sweep's probes of the modules these profiles allow.
# The network profile's door is its egress proxy, with the default policy (public
# addresses only): the host's listeners, its loopback and metadata addresses stay out of
# reach (tests/egress/test_egress.py tests the door itself).
# Without numpy and pandas (the ordinary-user run's environment) the data-science profile
# cannot be switched on: the server would refuse to start.
HAVE_DATA_SCIENCE = all(importlib.util.find_spec(m) for m in ("numpy", "pandas"))
DOORS_ENV = {"SANDBOX_ENABLE_FILESYSTEM": "true", "SANDBOX_ENABLE_NETWORK": "true",
             **({"SANDBOX_ENABLE_DATA_SCIENCE": "true"} if HAVE_DATA_SCIENCE else {})}
DOORS_MODES = ("doors", "norp_doors")


def _server_env(workdir: Path, restricted: bool, name: str) -> dict:
    return {
        **(DOORS_ENV if name in DOORS_MODES else {}),
        hostcanary.SECRET_NAME: hostcanary.SECRET_VALUE,
        "SANDBOX_TIMEOUT": str(DEFAULT_TIMEOUT),
        "SANDBOX_MAX_TIMEOUT": str(MAX_TIMEOUT),
        "SANDBOX_MAX_OUTPUT_SIZE": str(MAX_OUTPUT),
        "SANDBOX_RESTRICTED_PYTHON": "true" if restricted else "false",
        "SANDBOX_AUDIT_LOG": str(workdir / f"audit-{name}.jsonl"),
        "SANDBOX_LOG_LEVEL": "warning",
    }


class ServerHandle:
    """A SyncServer that is restarted when an attack (wrongly) took it down, so
    one failure does not cascade over the rest of the corpus."""

    def __init__(self, workdir: Path, restricted: bool, name: str):
        self.name = name
        self.restricted = restricted
        self.env = _server_env(workdir, restricted, name)
        self.audit_log = self.env["SANDBOX_AUDIT_LOG"]
        self.cwd = str(workdir / "server-cwd")
        self.server = SyncServer(self.env, cwd=self.cwd, request_timeout=MAX_TIMEOUT + 60)
        self.deaths: list[str] = []

    def ensure(self) -> SyncServer:
        if not self.server.alive():
            self.deaths.append(self.server.stderr_text()[-2000:])
            self.server.restart()
        return self.server

    def close(self) -> None:
        self.server.close()


@pytest.fixture(scope="session")
def rp_server(workdir, canaries):
    handle = ServerHandle(workdir, True, "rp")
    yield handle
    handle.close()


@pytest.fixture(scope="session")
def norp_server(workdir, canaries):
    handle = ServerHandle(workdir, False, "norp")
    yield handle
    handle.close()


@pytest.fixture(scope="session")
def doors_server(workdir, canaries):
    handle = ServerHandle(workdir, True, "doors")
    yield handle
    handle.close()


@pytest.fixture(scope="session")
def norp_doors_server(workdir, canaries):
    handle = ServerHandle(workdir, False, "norp_doors")
    yield handle
    handle.close()


@pytest.fixture(scope="session")
def servers(rp_server, norp_server, doors_server, norp_doors_server):
    return {"rp": rp_server, "norp": norp_server, "doors": doors_server, "norp_doors": norp_doors_server}


"""The clone into new namespaces and the id maps written from outside, on
their own (no other layer): what a child is right after libc.clone_process,
what the maps give it, and that its death empties its pid namespace. Each
scenario runs in a fresh single-threaded interpreter (tests/clone_cases.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile


from sandbox import namespaces
from sandbox import libc

CASES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "clone_cases.py")
IS_ROOT = os.geteuid() == 0
OUTER = (namespaces.SANDBOX_ID,) * 2 if IS_ROOT else (os.getuid(), os.getgid())
INSIDE = namespaces.INSIDE_ID


def case(name: str, *args: str):
    done = subprocess.run([sys.executable, CASES, name, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_child_is_pid_1_of_its_namespaces_with_one_mapped_id():
    got = case("identity")
    assert got["exited"] == 0 and got["payload"]["value"] == {
        "pid": 1, "ppid": 0,
        "uid_map": [str(INSIDE), str(OUTER[0]), "1"],
        "gid_map": [str(INSIDE), str(OUTER[1]), "1"],
        "interfaces": ["lo"]}  # an empty network namespace


def test_become_inside_leaves_no_host_identity_and_no_way_back():
    with tempfile.NamedTemporaryFile(prefix="sbx-clone-secret-", dir="/tmp") as secret:
        secret.write(b"ROOTONLY")
        secret.flush()
        os.chmod(secret.name, 0o600)
        got = case("become_inside", secret.name)["payload"]["value"]
    assert got["ids"] == [[INSIDE] * 3, [INSIDE] * 3]
    assert got["caps"] == [0, 0, 0, 0]
    assert got["setuid(0)"] != "ok"  # (a nested user namespace is seccomp's to refuse)
    if IS_ROOT:  # as an ordinary user the file is the user's own
        assert got["read root-only file"] == "PermissionError"


def test_without_the_id_map_the_child_cannot_take_an_id():
    payload = case("unmapped")["payload"]
    assert "Invalid argument" in payload.get("error", ""), payload


def test_killing_the_child_ends_every_process_of_its_namespace():
    got = case("kill_empties_namespace")
    assert got == {"ready": True, "grandchildren": 1, "alive after the reap": []}


def test_a_threaded_caller_is_refused():
    assert "single-threaded" in case("refuses_threads")


def test_clone_flags_make_every_namespace_network_included():
    """The network profile too: its way out is the proxy, never the host's namespace.
    Without a network namespace of its own, a child stays in the fork server's, the
    shared empty one (tests/jail/test_shared_network.py); every other namespace is new."""
    others = (libc.CLONE_NEWUSER, libc.CLONE_NEWPID, libc.CLONE_NEWNS, libc.CLONE_NEWIPC,
              libc.CLONE_NEWUTS)
    flags = namespaces.clone_flags()
    assert all(flags & flag for flag in others) and flags & libc.CLONE_NEWNET
    shared = namespaces.clone_flags(own_network=False)
    assert all(shared & flag for flag in others) and not shared & libc.CLONE_NEWNET

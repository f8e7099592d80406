"""The clone into new namespaces and the id maps written from outside, on
their own (no other layer): what a child is right after kernel.clone_process,
what the maps give it, and that its death empties its pid namespace."""

from __future__ import annotations

import json
import os
import select
import signal
import tempfile
import time

import pytest

from sandbox import kernel, namespaces, privileges

IS_ROOT = os.geteuid() == 0
OUTER = (65534, 65534) if IS_ROOT else (os.getuid(), os.getgid())


def clone_and_report(fn, *, network: bool = False, map_ids: bool = True):
    """Clone a child into new namespaces, map its ids as the zygote does, let it
    run fn() and return (fn's JSON value or error, the child's wait status)."""
    go_r, go_w = os.pipe()
    out_r, out_w = os.pipe()
    pid = kernel.clone_process(namespaces.clone_flags(network=network))
    if pid == 0:
        try:
            os.close(go_w)
            os.close(out_r)
            os.read(go_r, 1)
            try:
                payload = {"value": fn()}
            except BaseException as exc:  # noqa: BLE001 - the parent asserts
                payload = {"error": f"{type(exc).__name__}: {exc}"}
            os.write(out_w, json.dumps(payload).encode())
        finally:
            os._exit(0)
    os.close(go_r)
    os.close(out_w)
    if map_ids:
        namespaces.map_child_ids(pid, *OUTER, deny_setgroups=not IS_ROOT)
    os.write(go_w, b"1")
    os.close(go_w)
    assert select.select([out_r], [], [], 30)[0], "the cloned child did not answer"
    data = b""
    while chunk := os.read(out_r, 65536):
        data += chunk
    os.close(out_r)
    _, status = os.waitpid(pid, 0)
    return json.loads(data), status


def test_the_child_is_pid_1_of_its_namespaces_with_one_mapped_id():
    def inside():
        with open("/proc/self/uid_map") as f:
            uid_map = f.read().split()
        with open("/proc/self/gid_map") as f:
            gid_map = f.read().split()
        return {"pid": os.getpid(), "ppid": os.getppid(), "uid_map": uid_map, "gid_map": gid_map,
                "interfaces": sorted(name for _, name in __import__("socket").if_nameindex())}

    value, status = clone_and_report(inside)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    inside_id = str(namespaces.INSIDE_ID)
    assert value["value"] == {"pid": 1, "ppid": 0,
                              "uid_map": [inside_id, str(OUTER[0]), "1"],
                              "gid_map": [inside_id, str(OUTER[1]), "1"],
                              "interfaces": ["lo"]}  # an empty network namespace


def test_become_inside_leaves_no_host_identity_and_no_way_back():
    secret = tempfile.NamedTemporaryFile(prefix="sbx-clone-secret-", dir="/tmp", delete=False)
    secret.write(b"ROOTONLY")
    secret.close()
    os.chmod(secret.name, 0o600)

    def inside():
        def attempt(fn):
            try:
                fn()
                return "ok"
            except OSError as exc:
                return type(exc).__name__

        read = lambda: open(secret.name, "rb").read()  # noqa: E731 - host mount namespace copy
        inside_id = namespaces.INSIDE_ID
        privileges.become(inside_id, inside_id, clear_groups=IS_ROOT)
        privileges.drop_capabilities()
        caps = privileges.capability_status()
        return {"ids": [os.getresuid(), os.getresgid()],
                "caps": [caps[k] for k in ("CapPrm", "CapEff", "CapBnd", "CapAmb")],
                "read root-only file": attempt(read),
                "setuid(0)": attempt(lambda: os.setuid(0)),
                "unshare(user)": attempt(lambda: kernel.unshare(kernel.CLONE_NEWUSER | kernel.CLONE_NEWNS))}

    try:
        value, _ = clone_and_report(inside)
    finally:
        os.unlink(secret.name)
    inside_id = namespaces.INSIDE_ID
    got = value["value"]
    assert got["ids"] == [[inside_id] * 3, [inside_id] * 3]
    assert got["caps"] == [0, 0, 0, 0]
    assert got["setuid(0)"] != "ok"
    # the file is the host user's own when not root: only root's must be unreadable
    if IS_ROOT:
        assert got["read root-only file"] == "PermissionError"


def test_without_the_id_map_the_child_cannot_take_an_id():
    def inside():
        inside_id = namespaces.INSIDE_ID
        privileges.become(inside_id, inside_id, clear_groups=False)

    value, _ = clone_and_report(inside, map_ids=False)
    assert "error" in value and "Invalid argument" in value["error"], value


def test_killing_the_child_ends_every_process_of_its_namespace():
    ready_r, ready_w = os.pipe()
    pid = kernel.clone_process(namespaces.clone_flags(network=False))
    if pid == 0:
        os.close(ready_r)
        grandchild = os.fork()
        if grandchild == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            while True:
                time.sleep(1)
        os.write(ready_w, b"1")
        while True:
            time.sleep(1)
    os.close(ready_w)
    assert select.select([ready_r], [], [], 10)[0]
    os.close(ready_r)
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        grandchildren = [int(p) for p in f.read().split()]
    assert len(grandchildren) == 1
    pidfd = os.pidfd_open(pid)
    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(pidfd)
    # reaped only once its namespace was empty: the grandchild is gone already
    assert not os.path.exists(f"/proc/{grandchildren[0]}")


@pytest.mark.parametrize("network", [False, True])
def test_clone_flags_make_a_network_namespace_unless_the_profile_is_on(network):
    flags = namespaces.clone_flags(network=network)
    assert bool(flags & kernel.CLONE_NEWNET) is not network
    for flag in (kernel.CLONE_NEWUSER, kernel.CLONE_NEWPID, kernel.CLONE_NEWNS, kernel.CLONE_NEWIPC,
                 kernel.CLONE_NEWUTS):
        assert flags & flag

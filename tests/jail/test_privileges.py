"""Each test forks a child that drops privileges and then tries what it must
no longer be able to do; the child reports through a pipe and the parent
asserts. Each test also checks the same action works before the drop, so a
failure is known to come from the drop. No other sandbox layer is applied."""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import tempfile
import time

import pytest
from forked import child_value

from sandbox import privileges
from sandbox.privileges import (
    capability_status,
    drop_capabilities,
    become,
    set_no_new_privs,
    set_not_dumpable,
    set_parent_death_signal,
)

NOBODY = 65534
CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWUSER = 0x10000000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
PR_SET_CHILD_SUBREAPER = 36

libc = ctypes.CDLL(None, use_errno=True)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def attempt(fn) -> str:
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def _check(ret: int) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _unshare(flags: int) -> None:
    if hasattr(os, "unshare"):  # Python 3.12+
        os.unshare(flags)
    else:
        _check(libc.unshare(ctypes.c_int(flags)))


def _enter_user_namespace(extra_flags: int = 0) -> None:
    """Fresh user namespace (plus extra namespaces it owns), mapped to root
    inside; setgroups must be denied before an unprivileged gid_map."""
    uid, gid = os.geteuid(), os.getegid()
    _unshare(CLONE_NEWUSER | extra_flags)
    for name, text in (("setgroups", "deny"), ("gid_map", f"0 {gid} 1"),
                       ("uid_map", f"0 {uid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def _sethostname(name: bytes) -> None:
    _check(libc.sethostname(name, ctypes.c_size_t(len(name))))


def _mount(source, target, fstype, flags: int) -> None:
    _check(libc.mount(source, target, fstype, ctypes.c_ulong(flags), None))


def _umount(target: bytes) -> None:
    _check(libc.umount2(target, 0))


def _prctl_get(option: int) -> int:
    return libc.prctl(ctypes.c_int(option), ctypes.c_ulong(0), ctypes.c_ulong(0),
                      ctypes.c_ulong(0), ctypes.c_ulong(0))


def _read(path):
    with open(path, "rb") as f:
        f.read()


@pytest.fixture
def private_files():
    """A world-traversable directory with a root-only file and a public one,
    so a denial is due to the file's mode, not to the path leading to it."""
    d = tempfile.mkdtemp(prefix="privtest-")
    os.chmod(d, 0o755)
    secret, public = os.path.join(d, "secret"), os.path.join(d, "public")
    for path, mode in ((secret, 0o600), (public, 0o644)):
        with open(path, "w") as f:
            f.write("x")
        os.chmod(path, mode)
    yield secret, public
    for path in (secret, public):
        os.unlink(path)
    os.rmdir(d)


# --- become -------------------------------------------------------------------

@needs_root
def test_become_drops_root_for_good(private_files):
    secret, public = private_files

    def child():
        before = attempt(lambda: _read(secret))
        os.setgroups([0, 1, 2])  # something to drop
        become(NOBODY, NOBODY, clear_groups=True)
        st = capability_status()
        return {
            "before": before,
            "resuid": os.getresuid(), "resgid": os.getresgid(), "groups": os.getgroups(),
            "caps": [st["CapPrm"], st["CapEff"], st["CapAmb"]],
            "read secret": attempt(lambda: _read(secret)),
            "read public": attempt(lambda: _read(public)),
            "setuid(0)": attempt(lambda: os.setuid(0)),
            "setgid(0)": attempt(lambda: os.setgid(0)),
        }

    assert child_value(child) == {
        "before": "ok",
        "resuid": [NOBODY] * 3, "resgid": [NOBODY] * 3, "groups": [],
        "caps": [0, 0, 0],
        "read secret": "EACCES", "read public": "ok",
        "setuid(0)": "EPERM", "setgid(0)": "EPERM",
    }


def test_become_refuses_root():
    with pytest.raises(ValueError):
        become(0, 0, clear_groups=True)
    with pytest.raises(ValueError):
        become(1000, 0, clear_groups=False)


# --- drop_capabilities ----------------------------------------------------------

def test_drop_capabilities_in_user_namespace(tmp_path):
    target = str(tmp_path).encode()

    def child():
        _enter_user_namespace(CLONE_NEWUTS | CLONE_NEWNS)
        # Control: all capabilities over the namespaces this process owns.
        before = capability_status()
        _mount(None, b"/", None, MS_REC | MS_PRIVATE)  # nothing leaks to the host
        control = {
            "sethostname": attempt(lambda: _sethostname(b"sandbox-a")),
            "mount": attempt(lambda: (_mount(b"none", target, b"tmpfs", 0), _umount(target))),
        }
        drop_capabilities()
        after = capability_status()
        return {
            "before": [before[k] for k in ("CapPrm", "CapEff", "CapBnd")],
            "control": control,
            "caps": {k: after[k] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
            "securebits": _prctl_get(privileges.PR_GET_SECUREBITS),
            "sethostname": attempt(lambda: _sethostname(b"sandbox-b")),
            "mount": attempt(lambda: _mount(b"none", target, b"tmpfs", 0)),
        }

    got = child_value(child)
    assert all(got.pop("before")), "the user namespace should have granted capabilities"
    assert got.pop("control") == {"sethostname": "ok", "mount": "ok"}
    assert got.pop("securebits") == privileges.SECURE_BITS_LOCKED
    assert got == {
        "caps": {k: 0 for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
        "sethostname": "EPERM", "mount": "EPERM",
    }


def test_nested_user_namespace_regains_nothing_over_ours():
    # Creating a user namespace needs no capability, and the new one comes with
    # a full set whatever the bounding set was; those capabilities only cover
    # namespaces it owns, not the ones set up before (seccomp denies unshare).
    def child():
        _enter_user_namespace(CLONE_NEWUTS)
        drop_capabilities()
        _unshare(CLONE_NEWUSER)
        return {"CapEff": capability_status()["CapEff"] != 0,
                "sethostname": attempt(lambda: _sethostname(b"sandbox-c"))}

    assert child_value(child) == {"CapEff": True, "sethostname": "EPERM"}


@needs_root
def test_drop_capabilities_as_host_root(private_files):
    secret, _ = private_files
    os.chown(secret, NOBODY, NOBODY)  # root reads it only through CAP_DAC_OVERRIDE

    def child():
        before = attempt(lambda: _read(secret))
        drop_capabilities()
        st = capability_status()
        return {
            "before": before,
            "uid": os.getuid(),
            "caps": [st[k] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")],
            "read other uid's 0600 file": attempt(lambda: _read(secret)),
            "chown": attempt(lambda: os.chown(secret, 0, 0)),
        }

    assert child_value(child) == {
        "before": "ok", "uid": 0, "caps": [0] * 5,
        "read other uid's 0600 file": "EACCES", "chown": "EPERM",
    }


# --- prctl flags ----------------------------------------------------------------

def test_no_new_privs():
    def child():
        before = capability_status()["NoNewPrivs"]
        set_no_new_privs()
        set_no_new_privs()  # idempotent
        return [before, capability_status()["NoNewPrivs"],
                _prctl_get(privileges.PR_GET_NO_NEW_PRIVS)]

    assert child_value(child) == [0, 1, 1]


def test_not_dumpable():
    def child():
        before = _prctl_get(privileges.PR_GET_DUMPABLE)
        set_not_dumpable()
        return [before, _prctl_get(privileges.PR_GET_DUMPABLE)]

    assert child_value(child) == [1, 0]


def test_parent_death_signal_is_set():
    def child():
        got = ctypes.c_int(-1)
        libc.prctl(ctypes.c_int(privileges.PR_GET_PDEATHSIG), ctypes.byref(got))
        before = got.value
        set_parent_death_signal()
        libc.prctl(ctypes.c_int(privileges.PR_GET_PDEATHSIG), ctypes.byref(got))
        after_default = got.value
        set_parent_death_signal(signal.SIGTERM)
        libc.prctl(ctypes.c_int(privileges.PR_GET_PDEATHSIG), ctypes.byref(got))
        return [before, after_default, got.value]

    assert child_value(child) == [0, int(signal.SIGKILL), int(signal.SIGTERM)]


def _orphaned_grandchild_status(use_pdeathsig: bool) -> dict:
    """Child T becomes a subreaper and forks M; M forks G; G (optionally) sets
    the parent-death signal, tells T it is ready, then sleeps. M exits, so G is
    reparented to T, which reaps it and reports how it ended."""

    def child():
        _check(libc.prctl(ctypes.c_int(PR_SET_CHILD_SUBREAPER), ctypes.c_ulong(1),
                          ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)))
        r, w = os.pipe()  # grandchild -> us: its pid
        ready_r, ready_w = os.pipe()  # grandchild -> middle: signal armed
        middle = os.fork()
        if middle == 0:
            try:
                grandchild = os.fork()
                if grandchild == 0:
                    try:
                        if use_pdeathsig:
                            set_parent_death_signal(signal.SIGKILL)
                        os.write(w, b"%d" % os.getpid())
                        os.write(ready_w, b"!")
                        time.sleep(3)
                    finally:
                        os._exit(7)
                # Middle: wait until the grandchild armed the signal, then die.
                os.close(ready_w)
                os.read(ready_r, 1)
            finally:
                os._exit(0)
        for fd in (w, ready_r, ready_w):
            os.close(fd)
        grandchild = int(os.read(r, 64))
        os.close(r)
        os.waitpid(middle, 0)
        pid, status = os.waitpid(grandchild, 0)  # reparented to us, the subreaper
        # killed by the signal, or left to end its sleep: how it ended says which
        return {"signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None}

    return child_value(child)


def test_parent_death_signal_fires():
    assert _orphaned_grandchild_status(True) == {
        "signal": int(signal.SIGKILL), "exit": None}


def test_without_parent_death_signal_orphan_survives():
    # Control for the test above: the same setup without the prctl.
    assert _orphaned_grandchild_status(False) == {"signal": None, "exit": 7}


def test_capability_status_reports_current_process():
    st = capability_status()
    assert st["Uid"][0] == os.getuid() and st["Gid"][0] == os.getgid()
    assert set(st["Groups"]) == set(os.getgroups())
    assert st["NoNewPrivs"] in (0, 1) and st["Seccomp"] in (0, 1, 2)
    if os.geteuid() == 0:
        assert st["CapEff"] != 0

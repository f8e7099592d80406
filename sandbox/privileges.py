"""Dropping privileges in the forked child: uid/gid, capabilities, prctl flags.

The child never calls execve, so nothing here may rely on exec to shed
privileges: capabilities are cleared explicitly (a process in a fresh user
namespace holds all of them there) and every step is verified afterwards,
raising if the kernel did not do what was asked (fail closed).
"""

from __future__ import annotations

import ctypes
import os
import signal

from sandbox import libc
from sandbox.libc import prctl as _prctl

# <linux/prctl.h>
PR_SET_PDEATHSIG = 1
PR_GET_PDEATHSIG = 2
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
PR_GET_SECUREBITS = 27
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4

# <linux/securebits.h>
SECBIT_NOROOT = 1 << 0
SECBIT_NOROOT_LOCKED = 1 << 1
SECBIT_NO_SETUID_FIXUP = 1 << 2
SECBIT_NO_SETUID_FIXUP_LOCKED = 1 << 3
SECBIT_KEEP_CAPS_LOCKED = 1 << 5  # KEEP_CAPS itself (1 << 4) stays off
SECBIT_NO_CAP_AMBIENT_RAISE = 1 << 6
SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED = 1 << 7
SECURE_BITS_LOCKED = (
    SECBIT_NOROOT | SECBIT_NOROOT_LOCKED
    | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED
    | SECBIT_KEEP_CAPS_LOCKED
    | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED
)

CAP_SETPCAP = 8
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_CAP_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _status() -> dict[str, str]:
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            out[key] = value.strip()
    return out


def capability_status() -> dict:
    """The calling process's credentials as the kernel reports them:
    {'CapInh': int, ..., 'CapAmb': int, 'NoNewPrivs': int, 'Seccomp': int,
     'Uid': (real, effective, saved, fs), 'Gid': (...), 'Groups': [...]}."""
    st = _status()
    out: dict = {name: int(st[name], 16) for name in _CAP_SETS}
    for name in ("NoNewPrivs", "Seccomp"):
        out[name] = int(st.get(name, "0"))
    out["Uid"] = tuple(int(v) for v in st["Uid"].split())
    out["Gid"] = tuple(int(v) for v in st["Gid"].split())
    out["Groups"] = [int(v) for v in st.get("Groups", "").split()]
    return out


def become(uid: int, gid: int, *, clear_groups: bool) -> None:
    """Take uid/gid for good (real, effective, saved), and no supplementary
    groups when clear_groups (an unprivileged user namespace cannot drop them:
    setgroups is denied there). Groups first: once the uid changes, setgroups
    and setresgid may no longer be allowed. Verified afterwards; capabilities
    are dropped separately (drop_capabilities)."""
    if uid == 0 or gid == 0:
        raise ValueError("become: the target uid/gid must not be 0")
    if clear_groups:
        os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise RuntimeError(f"become: ids are {os.getresuid()} / {os.getresgid()}")
    if clear_groups and os.getgroups():
        raise RuntimeError(f"become: supplementary groups remain: {os.getgroups()}")


def _cap_last_cap() -> int:
    with open("/proc/sys/kernel/cap_last_cap") as f:
        return int(f.read())


# Read once, by the process children are cloned from: a child drops its bounding set
# before its own /proc is mounted, and every child would read the same number.
CAP_LAST_CAP = _cap_last_cap()


def _lock_securebits() -> None:
    # Needs CAP_SETPCAP; a process that has no capability to drop may lack it.
    try:
        _prctl(PR_SET_SECUREBITS, SECURE_BITS_LOCKED)
    except OSError as e:
        if e.errno == 1 and not capability_status()["CapEff"] & (1 << CAP_SETPCAP):
            return
        raise


def _clear_capsets() -> None:
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()  # version 3: two structs, caps 0-31 and 32-63, all zero
    if libc.libc.capset(ctypes.byref(header), ctypes.byref(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")


def drop_bounding_set() -> None:
    """Empty the capability bounding set (needs CAP_SETPCAP: as root, before
    the uid changes). One prctl per capability: dropping one already gone is no
    error. Without CAP_SETPCAP every drop is refused, which is no failure when the
    set is empty already."""
    try:
        for cap in range(CAP_LAST_CAP + 1):
            _prctl(PR_CAPBSET_DROP, cap)
    except PermissionError:
        if capability_status()["CapBnd"]:
            raise


def drop_capabilities() -> None:
    """Drop every capability of the calling process: bounding set, ambient,
    inheritable, permitted, effective; lock the securebits so root-ness cannot
    bring them back. The bounding set and securebits need CAP_SETPCAP, so they
    go before the effective set is cleared."""
    drop_bounding_set()
    _lock_securebits()
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    _clear_capsets()
    st = capability_status()
    left = {name: st[name] for name in _CAP_SETS if st[name]}
    if left:
        raise RuntimeError(f"drop_capabilities: capabilities remain: {left}")


def set_no_new_privs() -> None:
    """No privilege gain through execve ever again; required by seccomp and
    Landlock for an unprivileged process. Idempotent."""
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    if _prctl(PR_GET_NO_NEW_PRIVS) != 1:
        raise RuntimeError("PR_SET_NO_NEW_PRIVS did not stick")


def set_not_dumpable() -> None:
    """No core dumps, no ptrace attach by same-uid processes, /proc/<pid>
    files owned by root."""
    _prctl(PR_SET_DUMPABLE, 0)
    if _prctl(PR_GET_DUMPABLE) != 0:
        raise RuntimeError("PR_SET_DUMPABLE 0 did not stick")


def set_parent_death_signal(sig: int = signal.SIGKILL) -> None:
    """Get ``sig`` when the parent thread dies. Cleared by any later change of
    euid/egid/fsuid/fsgid, and useless if the parent is already gone: call it
    after the last credential change, then check the parent is still alive
    (a pipe or the expected getppid())."""
    _prctl(PR_SET_PDEATHSIG, int(sig))
    got = ctypes.c_int(-1)
    _prctl(PR_GET_PDEATHSIG, ctypes.addressof(got))
    if got.value != int(sig):
        raise RuntimeError(f"PR_SET_PDEATHSIG: kernel reports {got.value}, wanted {int(sig)}")

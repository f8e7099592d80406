"""Thin ctypes wrappers for the few libc calls the standard library lacks
(clone into new namespaces, unshare, mount, umount2, pivot_root, sethostname, prctl)."""

from __future__ import annotations

import ctypes
import os
import platform
import signal

_libc = ctypes.CDLL(None, use_errno=True)

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MNT_DETACH = 0x2

PR_SET_DUMPABLE = 4

_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
_CLONE = {"x86_64": 56, "aarch64": 220}

# The clone call must run with the GIL held, like os.fork: a PyDLL call keeps it.
_libc_gil = ctypes.PyDLL(None, use_errno=True)
_libc_gil.syscall.restype = ctypes.c_long


def _check(ret: int, what: str) -> int:
    if ret == -1:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return ret


def clone_process(namespaces: int) -> int:
    """fork() into new namespaces: the child starts in them (with CLONE_NEWPID
    it is PID 1 of its own pid namespace, which unshare cannot give the caller).
    Python's fork bookkeeping runs around the raw system call exactly as
    os.fork runs it; the caller must be single-threaded. Returns 0 in the child."""
    pythonapi = ctypes.pythonapi
    pythonapi.PyOS_BeforeFork()
    pid = _libc_gil.syscall(ctypes.c_long(_CLONE[platform.machine()]),
                            ctypes.c_ulong(namespaces | signal.SIGCHLD),
                            ctypes.c_void_p(0), ctypes.c_void_p(0), ctypes.c_void_p(0), ctypes.c_void_p(0))
    if pid == 0:
        pythonapi.PyOS_AfterFork_Child()
        return 0
    err = ctypes.get_errno()
    pythonapi.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, f"clone: {os.strerror(err)}")
    return pid


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: None if s is None else os.fsencode(s)
    _check(
        _libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
        f"mount {target}",
    )


def umount2(target: str, flags: int) -> None:
    _check(_libc.umount2(os.fsencode(target), ctypes.c_int(flags)), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    nr = _PIVOT_ROOT[platform.machine()]
    _check(_libc.syscall(ctypes.c_long(nr), os.fsencode(new_root), os.fsencode(put_old)), "pivot_root")


def sethostname(name: str) -> None:
    raw = name.encode()
    _check(_libc.sethostname(raw, ctypes.c_size_t(len(raw))), "sethostname")


def set_dumpable(on: bool) -> None:
    _check(_libc.prctl(ctypes.c_int(PR_SET_DUMPABLE), ctypes.c_ulong(int(on)), ctypes.c_ulong(0),
                       ctypes.c_ulong(0), ctypes.c_ulong(0)), "prctl(PR_SET_DUMPABLE)")


def drop_bounding_set() -> None:
    """PR_CAPBSET_DROP every capability (needs CAP_SETPCAP, so: while still root)."""
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        _check(_libc.prctl(ctypes.c_int(24), ctypes.c_ulong(cap), ctypes.c_ulong(0),
                           ctypes.c_ulong(0), ctypes.c_ulong(0)), "prctl(PR_CAPBSET_DROP)")


def close_range_from(first: int) -> None:
    """Close every descriptor >= first (close_range, with a portable fallback)."""
    try:
        _check(_libc.close_range(ctypes.c_uint(first), ctypes.c_uint(0xFFFFFFFF), ctypes.c_int(0)), "close_range")
    except (OSError, AttributeError):
        os.closerange(first, os.sysconf("SC_OPEN_MAX"))


"""The one ctypes handle on libc, and thin wrappers for the few calls the
standard library lacks: clone into new namespaces, unshare, mount, umount2,
pivot_root, sethostname, close_range, prctl and raw system calls. Every other
module reaches the kernel through this one."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import signal

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.prctl.restype = ctypes.c_int

CLONE_NEWTIME = 0x00000080    # Linux 5.6: unshare() only (the caller's children, or setns into it)
CLONE_PARENT = 0x00008000     # the new process is the caller's sibling (sandbox/forkserver/cloner.py)
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

_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
_CLONE = {"x86_64": 56, "aarch64": 220}
_OPENAT2 = 437  # the same on x86_64 and aarch64
RESOLVE_NO_SYMLINKS = 0x04


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


# The clone call must run with the GIL held, like os.fork: a PyDLL call keeps it.
_libc_gil = ctypes.PyDLL(None, use_errno=True)
_libc_gil.syscall.restype = ctypes.c_long


def _check(ret: int, what: str) -> int:
    if ret == -1:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return ret


def prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    """prctl(2), every argument passed as an unsigned long (it is variadic)."""
    return _check(libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg2), ctypes.c_ulong(arg3),
                             ctypes.c_ulong(arg4), ctypes.c_ulong(arg5)), f"prctl({option})")


PR_SET_NAME = 15


def set_process_name(name: bytes) -> None:
    """This thread's name in ps and /proc/<pid>/comm (at most 15 bytes)."""
    buffer = ctypes.create_string_buffer(name[:15])
    prctl(PR_SET_NAME, ctypes.addressof(buffer))


def syscall(nr: int, *args, what: str = "") -> int:
    """A raw system call; int arguments are passed as longs, ctypes objects
    (byref, pointers) as they are. Raises OSError with the kernel's errno."""
    argv = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    return _check(libc.syscall(ctypes.c_long(nr), *argv), what or f"syscall {nr}")


def clone_process(namespaces: int) -> int:
    """fork() into new namespaces: the child starts in them (with CLONE_NEWPID
    it is PID 1 of its own pid namespace, which unshare cannot give the caller).
    Python's fork bookkeeping runs around the raw system call exactly as
    os.fork runs it, but libc's does not (its locks are not taken and reset as
    fork() does): with another thread inside malloc at that moment, the child
    would deadlock. So the caller must be single-threaded, and is checked.
    Returns 0 in the child."""
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:
        raise RuntimeError(f"clone_process needs a single-threaded caller ({threads} threads here)")
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


def children_of_self() -> list[int]:
    """The pids of this (single-threaded) process's children, zombies included;
    [] where /proc cannot tell (a kernel without CONFIG_PROC_CHILDREN)."""
    pid = os.getpid()
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(child) for child in f.read().split()]
    except OSError:
        return []


def open_no_symlinks(path: str, flags: int) -> int:
    """openat2 with RESOLVE_NO_SYMLINKS: ELOOP if any component of the path is
    a symlink (a path that was a realpath when checked stays one when opened)."""
    how = _OpenHow(flags, 0, RESOLVE_NO_SYMLINKS)
    try:
        return syscall(_OPENAT2, -100, ctypes.c_char_p(os.fsencode(path)), ctypes.byref(how),
                       ctypes.sizeof(how), what=f"openat2 {path}")
    except OSError as exc:
        if exc.errno != errno.ENOSYS:
            raise
        return os.open(path, flags | os.O_NOFOLLOW)  # kernels before 5.6: the last component only


def unshare(flags: int) -> None:
    _check(libc.unshare(ctypes.c_int(flags)), "unshare")


def setns(fd: int, nstype: int) -> None:
    _check(libc.setns(ctypes.c_int(fd), ctypes.c_int(nstype)), "setns")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: None if s is None else os.fsencode(s)
    _check(
        libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
        f"mount {target}",
    )


def umount2(target: str, flags: int) -> None:
    _check(libc.umount2(os.fsencode(target), ctypes.c_int(flags)), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    syscall(_PIVOT_ROOT[platform.machine()], os.fsencode(new_root), os.fsencode(put_old), what="pivot_root")


def sethostname(name: str) -> None:
    raw = name.encode()
    _check(libc.sethostname(raw, ctypes.c_size_t(len(raw))), "sethostname")


def close_range_from(first: int) -> None:
    """Close every descriptor >= first (close_range, with a portable fallback)."""
    try:
        _check(libc.close_range(ctypes.c_uint(first), ctypes.c_uint(0xFFFFFFFF), ctypes.c_int(0)), "close_range")
    except (OSError, AttributeError):
        os.closerange(first, os.sysconf("SC_OPEN_MAX"))


MADV_COLLAPSE = 25          # Linux 6.1
HUGE_PAGE = 2 << 20
DENSE_ENOUGH = 7 / 8        # of a 2 MB range resident: collapsing it then adds at most 256 KB


def collapse_to_huge_pages() -> int:
    """Back the densely populated parts of this process's private anonymous memory
    (the heap, the allocator's arenas) with 2 MB pages; return the bytes collapsed.

    For the fork server, before the cloner is forked: every clone copies the page
    table of this memory and every child's exit tears its copy down, one entry per
    4 KB page (most of a data-science child's CPU, bench/README.md); a 2 MB page is one
    entry. A child that writes into one gets it split back, in its own page table only.
    Best effort: MADV_COLLAPSE works whatever the THP mode but 'never'; elsewhere (an
    older kernel, no THP) nothing changes. Sparse ranges are left alone, so that
    memory does not grow."""
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    pages = HUGE_PAGE // os.sysconf("SC_PAGE_SIZE")
    resident = ctypes.create_string_buffer(pages)
    collapsed = 0
    with open("/proc/self/maps") as maps:
        regions = [line.split() for line in maps]
    for fields in regions:
        if fields[1] != "rw-p" or (len(fields) > 5 and fields[5] != "[heap]"):
            continue  # (files, stacks and shared memory stay as they are)
        start, end = (int(bound, 16) for bound in fields[0].split("-"))
        for address in range(-(-start // HUGE_PAGE) * HUGE_PAGE, end - HUGE_PAGE + 1, HUGE_PAGE):
            if libc.mincore(address, HUGE_PAGE, resident) != 0:
                continue
            if sum(byte & 1 for byte in resident.raw) < pages * DENSE_ENOUGH:
                continue
            if libc.madvise(address, HUGE_PAGE, MADV_COLLAPSE) == 0:
                collapsed += HUGE_PAGE
    return collapsed

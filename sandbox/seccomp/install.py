"""Installing a filter and probing for seccomp support, through ctypes."""

from __future__ import annotations

import ctypes
import errno
import os

from sandbox.libc import prctl, syscall
from sandbox.seccomp import bpf
from sandbox.seccomp.policy import (SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, SECCOMP_RET_KILL_PROCESS,
                     UnsupportedArchitecture, build_filter, normalize_arch,
                     syscall_number)

PR_GET_SECCOMP = 21
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_GET_ACTION_AVAIL = 2
SECCOMP_FILTER_FLAG_TSYNC = 1


class sock_filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8),
                ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class sock_fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(sock_filter))]


def install_filter(program: bytes) -> None:
    """Set PR_SET_NO_NEW_PRIVS, then install `program` for the whole process.

    Uses seccomp(SECCOMP_SET_MODE_FILTER, TSYNC) so that every thread gets the
    filter (a forked child normally has one thread, but a silent per-thread
    filter would be a hole). Falls back to prctl(PR_SET_SECCOMP) where the
    seccomp() syscall is unknown. Raises OSError with the kernel's errno.
    """
    n = len(program) // bpf.INSN_SIZE
    if len(program) % bpf.INSN_SIZE or not 0 < n <= bpf.BPF_MAXINSNS:
        raise ValueError(f"not a seccomp program: {len(program)} bytes")
    buf = ctypes.create_string_buffer(bytes(program), len(program))
    fprog = sock_fprog(n, ctypes.cast(buf, ctypes.POINTER(sock_filter)))

    # The kernel refuses a filter from a task without CAP_SYS_ADMIN unless
    # no_new_privs is set; it must be set anyway so privileges never return.
    prctl(PR_SET_NO_NEW_PRIVS, 1)

    try:
        nr = syscall_number("seccomp")
    except (KeyError, UnsupportedArchitecture):
        nr = None
    if nr is not None:
        try:
            rc = syscall(nr, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, ctypes.byref(fprog),
                         what="seccomp(SECCOMP_SET_MODE_FILTER)")
        except OSError as exc:
            if exc.errno != errno.ENOSYS:
                raise
        else:
            if rc > 0:  # TSYNC: the id of a thread that could not be synchronized
                raise OSError(errno.EBUSY, f"seccomp: thread {rc} could not be synchronized")
            return
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))


def _status_field(name: str) -> str | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _action_errno(action: int) -> int:
    """seccomp(SECCOMP_GET_ACTION_AVAIL): 0 if the kernel knows the action,
    else the errno (EOPNOTSUPP: unknown action; EPERM/ENOSYS: seccomp() is
    itself refused, e.g. by a filter already in place)."""
    value = ctypes.c_uint32(action)
    try:
        syscall(syscall_number("seccomp"), SECCOMP_GET_ACTION_AVAIL, 0, ctypes.byref(value))
    except OSError as exc:
        return exc.errno
    return 0


def seccomp_status() -> tuple[bool, str]:
    """Whether a filter can be installed here, and a one-line reason."""
    try:
        arch = normalize_arch(None)
        build_filter(arch=arch)
    except UnsupportedArchitecture as exc:
        return False, str(exc)

    mode = _status_field("Seccomp")
    if mode is None:
        return False, "kernel without seccomp (no Seccomp: line in /proc/self/status)"
    if mode == "1":
        # Strict mode: any further syscall but read/write/exit would kill us.
        return False, "process is already in seccomp strict mode"
    try:
        prctl(PR_GET_SECCOMP)
    except OSError as exc:
        return False, f"prctl(PR_GET_SECCOMP) failed: {os.strerror(exc.errno)}"
    for action in (SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO, SECCOMP_RET_ALLOW):
        err = _action_errno(action)
        if err == errno.EOPNOTSUPP:
            return False, f"seccomp filter mode lacks the return action {action:#x}"
        if err:
            return False, f"seccomp() is unusable here: {os.strerror(err)}"
    filters = _status_field("Seccomp_filters")
    state = "no filter yet" if mode == "0" else f"{filters or 'some'} filter(s) already stacked"
    return True, f"seccomp filter mode available on {arch} ({state})"

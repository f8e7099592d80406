"""Landlock: restrict the calling process's filesystem, TCP and IPC reach.

Best effort by ABI (see research notes, pitfall 24): every access right the
running kernel knows is *handled*, so whatever is not granted by a rule is
denied. Read paths get READ_FILE | READ_DIR (no EXECUTE: the child never
calls execve; loading extension modules with mmap(PROT_EXEC) needs only
READ_FILE); write paths additionally get the write, create and remove rights,
except creating device nodes (MAKE_CHAR/MAKE_BLOCK), which no snippet needs.
The domain is inherited by children and cannot be lifted.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from typing import Iterable

from sandbox import libc
from sandbox.privileges import set_no_new_privs


# Same numbers on x86_64 and aarch64 (both use the generic table for new calls).
SYS_landlock_create_ruleset = 444
SYS_landlock_add_rule = 445
SYS_landlock_restrict_self = 446

LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_RULE_NET_PORT = 2

# <linux/landlock.h> filesystem rights
ACCESS_FS_EXECUTE = 1 << 0
ACCESS_FS_WRITE_FILE = 1 << 1
ACCESS_FS_READ_FILE = 1 << 2
ACCESS_FS_READ_DIR = 1 << 3
ACCESS_FS_REMOVE_DIR = 1 << 4
ACCESS_FS_REMOVE_FILE = 1 << 5
ACCESS_FS_MAKE_CHAR = 1 << 6
ACCESS_FS_MAKE_DIR = 1 << 7
ACCESS_FS_MAKE_REG = 1 << 8
ACCESS_FS_MAKE_SOCK = 1 << 9
ACCESS_FS_MAKE_FIFO = 1 << 10
ACCESS_FS_MAKE_BLOCK = 1 << 11
ACCESS_FS_MAKE_SYM = 1 << 12
ACCESS_FS_REFER = 1 << 13  # ABI 2
ACCESS_FS_TRUNCATE = 1 << 14  # ABI 3
ACCESS_FS_IOCTL_DEV = 1 << 15  # ABI 5

ACCESS_NET_BIND_TCP = 1 << 0  # ABI 4
ACCESS_NET_CONNECT_TCP = 1 << 1  # ABI 4

SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

_FS_ABI1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
# Rights that make sense on a file; the kernel rejects the others (EINVAL)
# in a rule whose fd is not a directory.
_FILE_RIGHTS = (
    ACCESS_FS_EXECUTE | ACCESS_FS_WRITE_FILE | ACCESS_FS_READ_FILE
    | ACCESS_FS_TRUNCATE | ACCESS_FS_IOCTL_DEV
)
_READ_RIGHTS = ACCESS_FS_READ_FILE | ACCESS_FS_READ_DIR
_WRITE_RIGHTS = (
    _READ_RIGHTS | ACCESS_FS_WRITE_FILE | ACCESS_FS_REMOVE_DIR | ACCESS_FS_REMOVE_FILE
    | ACCESS_FS_MAKE_DIR | ACCESS_FS_MAKE_REG | ACCESS_FS_MAKE_SOCK
    | ACCESS_FS_MAKE_FIFO | ACCESS_FS_MAKE_SYM
    | ACCESS_FS_REFER | ACCESS_FS_TRUNCATE | ACCESS_FS_IOCTL_DEV
)

# Highest ABI whose rights this module knows (7 only adds audit-log flags).
MAX_KNOWN_ABI = 7


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _NetPortAttr(ctypes.Structure):
    _pack_ = 1  # packed in the kernel header: 16 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # packed in the kernel header: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _syscall(nr: int, *args: int) -> int:
    return libc.syscall(nr, *args, what=f"landlock syscall {nr}")


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is unavailable
    (not built in: ENOSYS; built but not enabled at boot: EOPNOTSUPP)."""
    try:
        return _syscall(SYS_landlock_create_ruleset, 0, 0, LANDLOCK_CREATE_RULESET_VERSION)
    except OSError as e:
        if e.errno in (errno.ENOSYS, errno.EOPNOTSUPP):
            return 0
        raise


def _fs_rights(abi: int) -> int:
    rights = _FS_ABI1
    if abi >= 2:
        rights |= ACCESS_FS_REFER
    if abi >= 3:
        rights |= ACCESS_FS_TRUNCATE
    if abi >= 5:
        rights |= ACCESS_FS_IOCTL_DEV
    return rights


def _ruleset_attr(abi: int) -> tuple[_RulesetAttr, int]:
    """The attribute and the size to pass: older kernels reject fields they
    do not know unless they are left out of the size."""
    attr = _RulesetAttr(handled_access_fs=_fs_rights(abi))
    size = 8
    if abi >= 4:
        size = 16
        # handled: every bind, and every connect but to the ports given a rule, is denied
        attr.handled_access_net = ACCESS_NET_BIND_TCP | ACCESS_NET_CONNECT_TCP
    if abi >= 6:
        size = 24
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    return attr, size


def _add_path_rule(ruleset_fd: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # nothing there to grant
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= _FILE_RIGHTS
        rule = _PathBeneathAttr(allowed_access=rights, parent_fd=fd)
        _syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH,
                 ctypes.addressof(rule), 0)
    finally:
        os.close(fd)


def _add_port_rule(ruleset_fd: int, port: int) -> None:
    rule = _NetPortAttr(allowed_access=ACCESS_NET_CONNECT_TCP, port=port)
    _syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_NET_PORT, ctypes.addressof(rule), 0)


def restrict(read_paths: Iterable[str], write_paths: Iterable[str] = (), *,
             connect_ports: Iterable[int] = ()) -> int:
    """Confine the calling process (and its future children) to reading
    beneath ``read_paths`` and reading/writing beneath ``write_paths``; deny
    every TCP bind, and every TCP connect but to ``connect_ports`` (ABI >= 4;
    the network profile's proxy port); from ABI 6 on, forbid
    signals and abstract unix sockets towards processes outside the domain.

    Returns the ABI used (0: Landlock unavailable, nothing done). Paths that do
    not exist are skipped. Any other failure raises OSError: fail closed.
    Sets PR_SET_NO_NEW_PRIVS, which landlock_restrict_self requires.
    """
    abi = min(abi_version(), MAX_KNOWN_ABI)
    if abi == 0:
        return 0
    handled = _fs_rights(abi)
    attr, size = _ruleset_attr(abi)
    ruleset_fd = _syscall(SYS_landlock_create_ruleset, ctypes.addressof(attr), size, 0)
    try:
        for path in read_paths:
            _add_path_rule(ruleset_fd, os.fspath(path), _READ_RIGHTS & handled)
        for path in write_paths:
            _add_path_rule(ruleset_fd, os.fspath(path), _WRITE_RIGHTS & handled)
        if abi >= 4:
            for port in connect_ports:
                _add_port_rule(ruleset_fd, port)
        set_no_new_privs()
        _syscall(SYS_landlock_restrict_self, ruleset_fd, 0)
    finally:
        os.close(ruleset_fd)
    return abi

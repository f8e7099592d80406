"""Seccomp-BPF for the sandboxed child: a syscall allow-list, its compiler and
installer. Pure Python (ctypes), for x86_64 and aarch64.

    program = build_filter(allow_inet=False)   # bytes: struct sock_filter[]
    install_filter(program)                    # last step of the hardening

See policy.py for the rules and why they are what they are.
"""

from sandbox.seccomp.install import install_filter, seccomp_status
from sandbox.seccomp.policy import (SYSCALLS, UnsupportedArchitecture, build_filter,
                     syscall_number)

__all__ = [
    "SYSCALLS",
    "UnsupportedArchitecture",
    "build_filter",
    "install_filter",
    "seccomp_status",
    "syscall_number",
]

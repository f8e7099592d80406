"""The syscall policy of the sandboxed child, compiled to a BPF program.

An allow-list: the filter is installed last in a forked CPython child that
never execs, so its syscall surface is small and fixed. Layout of the program:

1. arch != target arch            -> KILL_PROCESS (i386/x32 numbers differ)
2. x86_64: nr >= 0x40000000 (x32) -> KILL_PROCESS
3. a binary search over the syscall number; every leaf is either a single
   RET or an inline argument check (clone, socket, ioctl, prctl, file modes, ...)
4. unlisted numbers               -> ERRNO(ENOSYS), so new syscalls fail soft

Argument checks load only the low 32 bits of an argument (offset 16 + 8*i on
little-endian). The kernel truncates int arguments, so the high word must be
ignored, or `(0x123 << 32) | TIOCSTI` would slip past (CVE-2019-10063).
"""

from __future__ import annotations

import errno
import os
import stat

from sandbox.seccomp import bpf
from sandbox.seccomp.syscalls_aarch64 import SYSCALLS_AARCH64
from sandbox.seccomp.syscalls_x86_64 import SYSCALLS_X86_64

SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": SYSCALLS_X86_64,
    "aarch64": SYSCALLS_AARCH64,
}

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_ARCH_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}
X32_SYSCALL_BIT = 0x40000000

# Return actions (linux/seccomp.h).
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

# struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; }
OFF_NR, OFF_ARCH = 0, 4


def arg_lo(i: int) -> int:
    """Offset of the low 32 bits of argument i (the arch check guarantees
    little-endian)."""
    return 16 + 8 * i


def ERRNO(e: int) -> int:
    return SECCOMP_RET_ERRNO | (e & 0xFFFF)


ALLOW = SECCOMP_RET_ALLOW
KILL = SECCOMP_RET_KILL_PROCESS
EPERM = ERRNO(errno.EPERM)
ENOSYS = ERRNO(errno.ENOSYS)
EAFNOSUPPORT = ERRNO(errno.EAFNOSUPPORT)
DEFAULT_ACTION = ENOSYS


class UnsupportedArchitecture(RuntimeError):
    """The filter is only built for x86_64 and aarch64."""


# --- constants used by the argument rules -----------------------------------

# CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET, plus NEWTIME
# (0x80, which for clone() overlaps the exit-signal byte; no valid signal has it).
CLONE_NAMESPACE_FLAGS = 0x7E020080
CLONE_THREAD = 0x00010000

AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10

TIOCSTI, TIOCLINUX = 0x5412, 0x541C

F_SETPIPE_SZ = 1031
SOL_SOCKET = 1
# SO_ATTACH_FILTER, SO_ATTACH_BPF, SO_ATTACH_REUSEPORT_CBPF, SO_ATTACH_REUSEPORT_EBPF
SOCKET_FILTER_OPTIONS = (26, 50, 51, 52)

# A file the snippet makes set-user-id or set-group-id keeps that mode on the host (an rw
# SANDBOX_MOUNTS directory), where any user who runs it takes the sandbox's uid or gid. So
# no mode argument may carry those bits, whatever the path. The calls that take a mode, by
# the index of that argument. open/openat read the mode only with O_CREAT or O_TMPFILE,
# and glibc passes 0 otherwise, so the bits are refused whatever the flags. creat, mknod
# and mknodat stay unlisted (ENOSYS); openat2 hides its mode in a struct (FIXED_RULES).
SET_ID_BITS = stat.S_ISUID | stat.S_ISGID
MODE_ARGUMENT = {
    "chmod": 1, "fchmod": 1, "fchmodat": 2, "fchmodat2": 2,
    "open": 2, "openat": 3, "mkdir": 1, "mkdirat": 2,
}

PRCTL_ALLOWED = (
    15,          # PR_SET_NAME (threading names threads)
    16,          # PR_GET_NAME
    3,           # PR_GET_DUMPABLE
    23,          # PR_CAPBSET_READ
    39,          # PR_GET_NO_NEW_PRIVS
    21,          # PR_GET_SECCOMP
    0x53564D41,  # PR_SET_VMA (glibc >= 2.39 names its anonymous mappings)
)

# --- the lists ----------------------------------------------------------------

# Refused with EPERM: the well-known escape / privilege / kernel-attack surface,
# memory that no rlimit counts (memfd_create), and host facts (sysinfo: uptime,
# process count, RAM; times: its answer is the clock ticks since the host's boot,
# which no time namespace moves, as it moves the clocks: namespaces.enter_private_clocks).
# All of it would already get ENOSYS from the default; the explicit EPERM gives
# clear diagnostics and documents intent. Names missing on an arch are skipped.
# (numpy's OpenBLAS calls mbind at import and carries on after the EPERM.)
DENIED = """
    execve execveat fork vfork
    ptrace process_vm_readv process_vm_writev kcmp pidfd_getfd pidfd_open
    process_madvise
    bpf perf_event_open userfaultfd io_uring_setup io_uring_enter io_uring_register
    keyctl add_key request_key
    mount umount2 mount_setattr move_mount open_tree open_tree_attr fsopen fsconfig
    fsmount fspick pivot_root chroot unshare setns
    open_by_handle_at name_to_handle_at
    kexec_load kexec_file_load init_module finit_module delete_module reboot
    swapon swapoff acct quotactl quotactl_fd syslog
    personality modify_ldt iopl ioperm
    settimeofday clock_settime clock_adjtime adjtimex sethostname setdomainname
    mbind set_mempolicy migrate_pages move_pages
    setuid setgid setreuid setregid setresuid setresgid setgroups setfsuid setfsgid
    capset seccomp landlock_create_ruleset landlock_add_rule landlock_restrict_self
    memfd_secret lookup_dcookie fanotify_init uselib vhangup
    chown fchown lchown fchownat
    memfd_create sysinfo times
""".split()

# Allowed unconditionally: what a forked CPython that never execs needs
# (checked with strace over json/re/decimal/threads/asyncio/sqlite3/ctypes/numpy:
# nothing outside this list and the rules below was called).
ALLOWED = """
    read write readv writev pread64 pwrite64 preadv pwritev preadv2 pwritev2 lseek
    close close_range newfstatat fstat stat lstat statx
    readlink readlinkat getdents64 getcwd chdir fchdir dup dup2 dup3 pipe
    pipe2 umask access faccessat faccessat2 ftruncate truncate fsync fdatasync
    fallocate unlink unlinkat rmdir rename renameat renameat2 link
    linkat symlink symlinkat utimensat flock
    poll ppoll select pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait
    epoll_pwait epoll_pwait2 eventfd eventfd2 copy_file_range
    sendfile splice tee
    mmap munmap mprotect mremap madvise brk msync mincore mlock munlock
    rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigtimedwait
    rt_sigsuspend sigaltstack kill tgkill tkill restart_syscall pause alarm
    setitimer getitimer timer_create timer_settime timer_gettime timer_delete
    timer_getoverrun timerfd_create timerfd_settime timerfd_gettime
    futex futex_waitv set_robust_list get_robust_list rseq sched_yield
    sched_getaffinity sched_setaffinity sched_getparam sched_getscheduler
    sched_get_priority_max sched_get_priority_min getpriority setpriority
    gettid set_tid_address exit exit_group arch_prctl
    clock_gettime clock_getres clock_nanosleep nanosleep gettimeofday time
    getrandom getpid getppid getpgrp getpgid getsid setsid setpgid getuid geteuid
    getgid getegid getresuid getresgid getgroups uname getrlimit
    setrlimit getrusage wait4 waitid
    getsockname getpeername sendto recvfrom recvmsg recvmmsg
    shutdown getsockopt connect bind listen accept accept4
    statfs fstatfs membarrier
""".split()


# --- argument rules -----------------------------------------------------------
# Each rule returns a self-contained block of instructions that ends in RETs.

def _clone_rule(label: bpf.LabelMaker, allow_inet: bool) -> list:
    # No namespaces, and no new processes: only threads (CLONE_THREAD) pass,
    # so fork() and fork bombs get EPERM while threading works.
    deny = label("clone_deny")
    return [
        bpf.ld_abs(arg_lo(0)),
        bpf.jset(CLONE_NAMESPACE_FLAGS, jt=deny),
        bpf.jset(CLONE_THREAD, jf=deny),
        bpf.ret(ALLOW),
        bpf.Label(deny),
        bpf.ret(EPERM),
    ]


def _socket_rule(label: bpf.LabelMaker, allow_inet: bool) -> list:
    allow, refuse = label("sock_allow"), label("sock_refuse")
    block = [bpf.ld_abs(arg_lo(0)), bpf.jeq(AF_UNIX, jt=allow)]
    if allow_inet:
        # (no netlink: the egress proxy resolves names, the sandbox has nothing to ask)
        block += [
            bpf.jeq(AF_INET, jt=allow),
            bpf.jeq(AF_INET6, jt=allow),
        ]
    return block + [
        bpf.Label(refuse),
        bpf.ret(EAFNOSUPPORT),
        bpf.Label(allow),
        bpf.ret(ALLOW),
    ]


def _socketpair_rule(label: bpf.LabelMaker, allow_inet: bool) -> list:
    refuse = label("sockpair_refuse")
    return [
        bpf.ld_abs(arg_lo(0)),
        bpf.jeq(AF_UNIX, jf=refuse),
        bpf.ret(ALLOW),
        bpf.Label(refuse),
        bpf.ret(EAFNOSUPPORT),
    ]


def _ioctl_rule(label: bpf.LabelMaker, allow_inet: bool) -> list:
    # TIOCSTI/TIOCLINUX push input into a terminal (CVE-2017-5226).
    deny = label("ioctl_deny")
    return [
        bpf.ld_abs(arg_lo(1)),
        bpf.jeq(TIOCSTI, jt=deny),
        bpf.jeq(TIOCLINUX, jt=deny),
        bpf.ret(ALLOW),
        bpf.Label(deny),
        bpf.ret(EPERM),
    ]


def _prctl_rule(label: bpf.LabelMaker, allow_inet: bool) -> list:
    # Everything else (PR_SET_DUMPABLE, PR_SET_SECUREBITS, PR_CAP_AMBIENT, ...)
    # could undo part of the hardening.
    allow = label("prctl_allow")
    block = [bpf.ld_abs(arg_lo(0))]
    block += [bpf.jeq(option, jt=allow) for option in PRCTL_ALLOWED]
    return block + [bpf.ret(EPERM), bpf.Label(allow), bpf.ret(ALLOW)]


def _prlimit64_rule(label: bpf.LabelMaker, allow_inet: bool) -> list:
    # Own process only (pid 0): per-request limits are lowered after seccomp.
    deny = label("prlimit_deny")
    return [
        bpf.ld_abs(arg_lo(0)),
        bpf.jeq(0, jf=deny),
        bpf.ret(ALLOW),
        bpf.Label(deny),
        bpf.ret(EPERM),
    ]


def _fcntl_rule(label: bpf.LabelMaker, allow_inet: bool) -> list:
    # A pipe grown to 1 MiB holds memory no rlimit counts; at the default 64 KiB,
    # RLIMIT_NOFILE bounds what pipes can park.
    deny = label("fcntl_deny")
    return [
        bpf.ld_abs(arg_lo(1)),
        bpf.jeq(F_SETPIPE_SZ, jt=deny),
        bpf.ret(ALLOW),
        bpf.Label(deny),
        bpf.ret(EPERM),
    ]


def _setsockopt_rule(label: bpf.LabelMaker, allow_inet: bool) -> list:
    # Socket filters are BPF programs loaded into the kernel by the snippet.
    allow, deny = label("sockopt_allow"), label("sockopt_deny")
    return [
        bpf.ld_abs(arg_lo(1)),
        bpf.jeq(SOL_SOCKET, jf=allow),
        bpf.ld_abs(arg_lo(2)),
        *[bpf.jeq(option, jt=deny) for option in SOCKET_FILTER_OPTIONS],
        bpf.Label(allow),
        bpf.ret(ALLOW),
        bpf.Label(deny),
        bpf.ret(EPERM),
    ]


def _sendmsg_rule(label: bpf.LabelMaker, allow_inet: bool) -> list:
    # sendmsg can carry file descriptors (SCM_RIGHTS); fds parked in flight on a
    # socket keep pipes and buffers alive that no rlimit counts. BPF cannot read
    # the control message, so the call goes; plain send()/sendto() stay. The
    # network profile too: names are resolved by the egress proxy, so glibc's
    # resolver (which sends with sendmmsg) never runs in the sandbox.
    return [bpf.ret(EPERM)]


def _mode_rule(index: int):
    """The rule of a call whose argument `index` is a file mode: no set-id bits."""
    def rule(label: bpf.LabelMaker, allow_inet: bool) -> list:
        deny = label("set_id_deny")
        return [
            bpf.ld_abs(arg_lo(index)),
            bpf.jset(SET_ID_BITS, jt=deny),
            bpf.ret(ALLOW),
            bpf.Label(deny),
            bpf.ret(EPERM),
        ]
    return rule


ARG_RULES = {
    "clone": _clone_rule,
    "socket": _socket_rule,
    "socketpair": _socketpair_rule,
    "ioctl": _ioctl_rule,
    "prctl": _prctl_rule,
    "prlimit64": _prlimit64_rule,
    "fcntl": _fcntl_rule,
    "setsockopt": _setsockopt_rule,
    "sendmsg": _sendmsg_rule,
    "sendmmsg": _sendmsg_rule,
    **{name: _mode_rule(index) for name, index in MODE_ARGUMENT.items()},
}
# clone3 passes flags, openat2 the mode, inside a struct that BPF cannot read. ENOSYS
# (not EPERM) makes glibc fall back to clone() and a caller of openat2 to openat, whose
# arguments the filter checks (CPython and glibc never call openat2 themselves; the
# child's own libc.open_no_symlinks runs before the filter, and falls back on ENOSYS).
FIXED_RULES = {"clone3": ENOSYS, "openat2": ENOSYS}


# --- compilation --------------------------------------------------------------

def normalize_arch(arch: str | None) -> str:
    arch = arch or os.uname().machine
    arch = _ARCH_ALIASES.get(arch, arch)
    if arch not in SYSCALLS:
        raise UnsupportedArchitecture(
            f"no seccomp policy for architecture {arch!r} (supported: x86_64, aarch64)")
    return arch


def syscall_number(name: str, arch: str | None = None) -> int:
    """The number of syscall `name` on `arch` (default: the host); KeyError
    if that architecture has no such call."""
    return SYSCALLS[normalize_arch(arch)][name]


def actions(arch: str | None = None) -> dict[int, int | str]:
    """The policy as data: syscall number -> RET value, or the name of an
    argument rule. Numbers not in the map get DEFAULT_ACTION."""
    table = SYSCALLS[normalize_arch(arch)]
    out: dict[int, int | str] = {}
    for name in DENIED:
        if name in table:
            out[table[name]] = EPERM
    for name in ALLOWED:
        if name in table:
            out[table[name]] = ALLOW
    for name, action in FIXED_RULES.items():
        out[table[name]] = action
    for name in ARG_RULES:
        if name in table:  # open, chmod, mkdir: x86_64 only
            out[table[name]] = name
    overlap = {n for n in DENIED if n in ALLOWED or n in ARG_RULES or n in FIXED_RULES}
    if overlap:  # a programming error in this file
        raise AssertionError(f"syscalls both denied and allowed: {sorted(overlap)}")
    return out


def _segments(action_map: dict[int, int | str]) -> list[tuple[int, int | str]]:
    """Split the number line [0, 2**32) into (start, action) runs; runs of the
    same action are merged, the gaps get the default."""
    segs: list[tuple[int, int | str]] = [(0, DEFAULT_ACTION)]
    for nr in sorted(action_map):
        for start, action in ((nr, action_map[nr]), (nr + 1, DEFAULT_ACTION)):
            if segs[-1][0] == start:
                segs[-1] = (start, action)
            elif segs[-1][1] != action:
                segs.append((start, action))
    # An override at `nr` may have left (nr, X) followed by an equal run.
    merged: list[tuple[int, int | str]] = []
    for start, action in segs:
        if merged and merged[-1][1] == action:
            continue
        merged.append((start, action))
    return merged


def _search(segs, label: bpf.LabelMaker, allow_inet: bool) -> list:
    """Binary search over the runs with unsigned JGE on the syscall number
    (held in A). Leaves are inlined, so no jump ever leaves its subtree."""
    if len(segs) == 1:
        action = segs[0][1]
        if isinstance(action, str):
            return ARG_RULES[action](label, allow_inet)
        return [bpf.ret(action)]
    mid = len(segs) // 2
    upper = label("ge")
    return ([bpf.jge(segs[mid][0], jt=upper)]
            + _search(segs[:mid], label, allow_inet)
            + [bpf.Label(upper)]
            + _search(segs[mid:], label, allow_inet))


def build_program(*, allow_inet: bool = False, arch: str | None = None) -> list:
    """The policy as an unassembled list of instructions and labels."""
    arch = normalize_arch(arch)
    label = bpf.LabelMaker()
    arch_ok = label("arch_ok")
    prog = [
        bpf.ld_abs(OFF_ARCH),
        bpf.jeq(AUDIT_ARCH[arch], jt=arch_ok),
        bpf.ret(KILL),
        bpf.Label(arch_ok),
        bpf.ld_abs(OFF_NR),
    ]
    if arch == "x86_64":
        native = label("native")
        prog += [
            bpf.jge(X32_SYSCALL_BIT, jf=native),
            bpf.ret(KILL),
            bpf.Label(native),
        ]
    return prog + _search(_segments(actions(arch)), label, allow_inet)


def build_filter(*, allow_inet: bool = False, arch: str | None = None) -> bytes:
    """The packed struct sock_filter[] for `arch` (default: the host)."""
    return bpf.assemble(build_program(allow_inet=allow_inet, arch=arch))

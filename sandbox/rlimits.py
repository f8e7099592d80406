"""Resource limits (setrlimit) for the sandboxed child.

Two entry points:

* ``apply_hard_limits`` sets the configured maximum once, as soft and hard
  limits, while the child is still being set up. It is made of two halves:
  ``apply_inherited_limits``, the limits that are the same for every child and
  harmless to the process children are cloned from (which applies them once:
  fork inherits them), and ``apply_own_limits``, those a child must set itself
  (its CPU time and memory count from its own start; the process count is
  checked against the uid at every clone).
* ``lower_limits`` applies one request's (smaller) limits later, even under
  seccomp, and can only ever go down.

Lowering a limit never fails. Raising a hard limit needs CAP_SYS_RESOURCE,
which the sandboxed child does not have (and which a root user in a container
often lacks too), so ``apply_hard_limits`` is only meant for values at or below
the current limits; it raises ``ValueError`` otherwise and callers must treat
that as a failed setup (fail closed).

Memory: the forked child already owns the interpreter's pages, so the memory
budget is counted on top of a baseline measured in the child (``memory_baseline``).
RLIMIT_DATA (private writable mappings: heap, anonymous mmaps, thread stacks;
Linux >= 4.7) is the real limit; RLIMIT_AS is a looser backstop for what
RLIMIT_DATA does not count (shared anonymous mappings).
"""

from __future__ import annotations

import _thread
import math
import resource
from dataclasses import dataclass

# RLIMIT_AS sits this far above the RLIMIT_DATA budget: it also counts shared
# libraries and reservations, so it must not be the limit that trips first.
AS_SLACK_BYTES = 256 * 2**20

# Default glibc thread stacks are 8 MiB of private writable memory each, all
# charged to RLIMIT_DATA; 256 KiB is plenty for Python threads.
THREAD_STACK_BYTES = 256 * 1024

_INF = resource.RLIM_INFINITY

# The limits no setting changes (the CPU time and memory come from the settings).
FILE_SIZE_BYTES = 16 << 20
OPEN_FILES = 64
PROCESSES = 32


@dataclass(frozen=True)
class Limits:
    """Resource budget of one execution."""

    cpu_seconds: int
    """CPU time: SIGXCPU (catchable) at this many seconds, SIGKILL one second later."""
    memory_bytes: int
    """Memory on top of the baseline (RLIMIT_DATA; RLIMIT_AS gets extra slack)."""
    file_size_bytes: int
    """Largest file the code may write (RLIMIT_FSIZE; EFBIG beyond it)."""
    open_files: int
    """Highest file descriptor number + 1 (RLIMIT_NOFILE)."""
    processes: int
    """Processes and threads of the real uid (RLIMIT_NPROC), the caller included.
    Not enforced for host uid 0 (even mapped into a fresh user namespace) nor
    for holders of CAP_SYS_RESOURCE/CAP_SYS_ADMIN in the initial user
    namespace; counted across the whole host for that uid unless the child sits
    in its own user namespace. So: drop to a non-root uid, then unshare."""
    memlock_bytes: int = 0
    """Lockable memory (RLIMIT_MEMLOCK); 0 forbids mlock."""
    stack_bytes: int | None = None
    """Main thread stack (RLIMIT_STACK); None leaves it alone. Thread stacks are
    sized by threading.stack_size, not by this limit (glibc reads it at start)."""


def _set(res: int, soft: int, hard: int) -> None:
    resource.setrlimit(res, (soft, hard))


def _clamp(value: int, ceiling: int) -> int:
    """min() where RLIM_INFINITY means no ceiling."""
    if ceiling == _INF:
        return value
    if value == _INF:
        return ceiling
    return min(value, ceiling)


def _lower(res: int, soft: int, hard: int) -> None:
    """Set (soft, hard) but never above the current ones: the hard limit wins
    over the request, and the soft one is not raised either (that would, for
    instance, eat the SIGXCPU grace second)."""
    cur_soft, cur_hard = resource.getrlimit(res)
    new_hard = _clamp(hard, cur_hard)
    _set(res, _clamp(_clamp(soft, cur_soft), new_hard), new_hard)


def memory_baseline() -> tuple[int, int]:
    """(VmData, VmSize) of the calling process in bytes, from /proc/self/status."""
    values = {}
    with open("/proc/self/status", "rb") as f:
        for line in f:
            key, _, rest = line.partition(b":")
            if key in (b"VmData", b"VmSize"):
                values[key] = int(rest.split()[0]) * 1024  # reported in kB
    return values[b"VmData"], values[b"VmSize"]


def _memory(limits: Limits, baseline_data: int, baseline_as: int) -> tuple[int, int]:
    return (
        baseline_data + limits.memory_bytes,
        baseline_as + limits.memory_bytes + AS_SLACK_BYTES,
    )


def limit_threads() -> None:
    """Small thread stacks, so that threads fit in the RLIMIT_DATA budget."""
    _thread.stack_size(THREAD_STACK_BYTES)


def limit_cpu(seconds: int) -> None:
    # Soft: SIGXCPU, which code may catch; hard: SIGKILL, which it cannot.
    _set(resource.RLIMIT_CPU, seconds, seconds + 1)


def allow_more_cpu(seconds: int) -> None:
    """A session's next call: `seconds` of CPU on top of what the process has
    used so far (raising the soft limit, never past the hard one, needs no
    privilege); the hard limit, set once, caps the whole session."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(usage.ru_utime + usage.ru_stime) + seconds
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard - 1)
    _set(resource.RLIMIT_CPU, soft, hard)


def limit_memory(data_bytes: int, as_bytes: int) -> None:
    _set(resource.RLIMIT_DATA, data_bytes, data_bytes)
    _set(resource.RLIMIT_AS, as_bytes, as_bytes)


def limit_file_size(size: int) -> None:
    # CPython ignores SIGXFSZ at startup, so an oversized write raises EFBIG.
    _set(resource.RLIMIT_FSIZE, size, size)


def limit_open_files(count: int) -> None:
    _set(resource.RLIMIT_NOFILE, count, count)


def limit_processes(count: int) -> None:
    _set(resource.RLIMIT_NPROC, count, count)


def limit_memlock(size: int) -> None:
    _set(resource.RLIMIT_MEMLOCK, size, size)


def limit_stack(size: int) -> None:
    _set(resource.RLIMIT_STACK, size, size)


def forbid_core_msgqueue_rtprio() -> None:
    """No core dumps (they would write the child's memory to disk), no POSIX
    message queue memory, no real-time priority."""
    for res in (resource.RLIMIT_CORE, resource.RLIMIT_MSGQUEUE, resource.RLIMIT_RTPRIO):
        _set(res, 0, 0)


def apply_hard_limits(limits: Limits, *, baseline_data: int = 0, baseline_as: int = 0) -> None:
    """Set every limit, soft and hard, to the configured maximum.

    Only for values at or below the current limits: raising a hard limit needs
    CAP_SYS_RESOURCE and raises ValueError without it (treat as fatal).
    ``baseline_data``/``baseline_as`` come from ``memory_baseline()`` taken in
    the child; left at 0 the memory limit is absolute.
    """
    apply_inherited_limits(limits)
    apply_own_limits(limits, baseline_data=baseline_data, baseline_as=baseline_as)


def apply_inherited_limits(limits: Limits) -> None:
    """The limits a long-lived process can hold while it clones children that
    inherit them: no core dumps, message queues, real-time priority or locked
    memory, small thread stacks, at most `open_files` descriptors (the cloner
    holds a handful)."""
    limit_threads()
    forbid_core_msgqueue_rtprio()
    limit_memlock(limits.memlock_bytes)
    limit_open_files(limits.open_files)


def apply_own_limits(limits: Limits, *, baseline_data: int = 0, baseline_as: int = 0) -> None:
    """The limits each child sets itself: CPU time (counted per process, and a
    cloner would use it up), file size (the cloner's stderr may be a log file),
    processes (as an ordinary user the cloner's clones count against it), the
    main stack, and memory from the child's own baseline."""
    limit_cpu(limits.cpu_seconds)
    limit_file_size(limits.file_size_bytes)
    limit_processes(limits.processes)
    if limits.stack_bytes is not None:
        limit_stack(limits.stack_bytes)
    # Memory last, so that nothing above runs into it.
    limit_memory(*_memory(limits, baseline_data, baseline_as))


def lower_limits(limits: Limits, *, baseline_data: int, baseline_as: int) -> None:
    """Apply one request's limits; each is clamped to the current soft and
    hard limits, so a request can lower but never raise them (not even with
    CAP_SYS_RESOURCE), and asking for more than allowed is not an error.
    Uses only setrlimit/prlimit64 on the calling process, which the seccomp
    policy allows."""
    data_bytes, as_bytes = _memory(limits, baseline_data, baseline_as)
    _lower(resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1)
    _lower(resource.RLIMIT_FSIZE, limits.file_size_bytes, limits.file_size_bytes)
    _lower(resource.RLIMIT_NOFILE, limits.open_files, limits.open_files)
    _lower(resource.RLIMIT_NPROC, limits.processes, limits.processes)
    _lower(resource.RLIMIT_MEMLOCK, limits.memlock_bytes, limits.memlock_bytes)
    if limits.stack_bytes is not None:
        _lower(resource.RLIMIT_STACK, limits.stack_bytes, limits.stack_bytes)
    _lower(resource.RLIMIT_DATA, data_bytes, data_bytes)
    _lower(resource.RLIMIT_AS, as_bytes, as_bytes)


def current_limits() -> dict[str, tuple[int, int]]:
    """{'RLIMIT_CPU': (soft, hard), ...} for every limit this platform has;
    RLIM_INFINITY is reported as -1."""
    return {
        name: resource.getrlimit(getattr(resource, name))
        for name in sorted(dir(resource))
        if name.startswith("RLIMIT_")
    }

"""Each test forks a child that applies the limits and runs into them; the
child reports through a pipe (or dies by a signal) and the parent asserts.
No other sandbox layer is applied."""

from __future__ import annotations

import ctypes
import errno
import mmap
import os
import resource
import signal
import threading
import time

import pytest
from forked import run_in_child, run_in_child_with_cpu

from sandbox.rlimits import (
    AS_SLACK_BYTES,
    Limits,
    apply_hard_limits,
    current_limits,
    lower_limits,
    memory_baseline,
)

MiB = 2**20


def child_value(fn, timeout: float = 30.0):
    payload, status = run_in_child(fn, timeout, own_fds_only=True)
    assert payload is not None, f"child sent nothing, wait status {status:#x}"
    assert "error" not in payload, payload.get("tb", payload)
    assert os.waitstatus_to_exitcode(status) == 0
    return payload["value"]


def generous(**overrides) -> Limits:
    """Limits loose enough not to interfere, with the ones under test overridden."""
    values = dict(cpu_seconds=60, memory_bytes=1024 * MiB, file_size_bytes=1024 * MiB,
                  open_files=256, processes=4096)
    values.update(overrides)
    return Limits(**values)


def apply(limits: Limits) -> None:
    data, vsize = memory_baseline()
    apply_hard_limits(limits, baseline_data=data, baseline_as=vsize)


# --- memory -----------------------------------------------------------------

def test_memory_limit_big_allocation_fails_small_works():
    def child():
        apply(generous(memory_bytes=64 * MiB))
        small = bytearray(16 * MiB)
        del small
        try:
            bytearray(256 * MiB)
            return "allocated"
        except MemoryError:
            return "MemoryError"

    assert child_value(child) == "MemoryError"


def test_memory_limit_growing_list_hits_memory_error_near_limit():
    def child():
        apply(generous(memory_bytes=64 * MiB))
        chunks = []
        try:
            while len(chunks) < 4096:  # 4 GiB: far beyond the limit
                chunks.append(bytearray(MiB))
            return {"outcome": "no error", "mib": len(chunks)}
        except MemoryError:
            n = len(chunks)
            chunks.clear()
            return {"outcome": "MemoryError", "mib": n}

    got = child_value(child)
    assert got["outcome"] == "MemoryError"
    # The budget is 64 MiB on top of the baseline. Free heap the forked process
    # already had (counted in its baseline) is reused first, so a busy parent
    # lets the child reach somewhat more; the limit still stops it long before 4 GiB.
    assert 40 <= got["mib"] <= 192, got


def test_memory_limits_set_from_baseline():
    def child():
        data, vsize = memory_baseline()
        apply_hard_limits(generous(memory_bytes=64 * MiB), baseline_data=data, baseline_as=vsize)
        return {"data": data, "vsize": vsize,
                "RLIMIT_DATA": resource.getrlimit(resource.RLIMIT_DATA),
                "RLIMIT_AS": resource.getrlimit(resource.RLIMIT_AS)}

    got = child_value(child)
    assert got["data"] > 0 and got["vsize"] >= got["data"]
    assert got["RLIMIT_DATA"] == [got["data"] + 64 * MiB] * 2
    assert got["RLIMIT_AS"] == [got["vsize"] + 64 * MiB + AS_SLACK_BYTES] * 2


def test_address_space_backstop_stops_shared_anonymous_mapping():
    # MAP_SHARED|MAP_ANONYMOUS is not counted by RLIMIT_DATA: RLIMIT_AS must stop it.
    size = 64 * MiB + AS_SLACK_BYTES + 64 * MiB

    def child(limited):
        if limited:
            apply(generous(memory_bytes=64 * MiB))
        try:
            m = mmap.mmap(-1, size)  # shared anonymous
            m.close()
            return "mapped"
        except OSError as e:
            return errno.errorcode[e.errno]

    assert child_value(lambda: child(False)) == "mapped"  # control
    assert child_value(lambda: child(True)) == "ENOMEM"


def test_threads_fit_under_memory_limit_thanks_to_stack_size():
    def child(default_stacks):
        apply(generous(memory_bytes=64 * MiB))
        if default_stacks:
            threading.stack_size(0)  # back to glibc's default (8 MiB here)
        gate = threading.Event()
        threads = []
        try:
            for _ in range(20):
                t = threading.Thread(target=gate.wait)
                t.start()
                threads.append(t)
            return len(threads)
        except RuntimeError:  # "can't start new thread"
            return len(threads)
        finally:
            gate.set()
            for t in threads:
                t.join()

    assert child_value(lambda: child(False)) == 20
    # Control: with default stacks the same 20 threads do not fit, which is
    # what the stack size in apply_hard_limits is for.
    if resource.getrlimit(resource.RLIMIT_STACK)[0] >= 8 * MiB:
        assert child_value(lambda: child(True)) < 20


# --- CPU ----------------------------------------------------------------------

def _busy(ignore_xcpu: bool):
    def child():
        apply(generous(cpu_seconds=1))
        if ignore_xcpu:
            signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        while True:
            pass
    return child


# (CPU seconds, not the wall clock: a loaded machine stretches the one, not the other)

def test_cpu_limit_kills_busy_loop_with_sigxcpu():
    payload, status, cpu = run_in_child_with_cpu(_busy(False), timeout=120, own_fds_only=True)
    assert payload is None
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU
    assert cpu < 1.5, cpu   # at the soft limit, 1 s


def test_cpu_hard_limit_kills_code_that_ignores_sigxcpu():
    payload, status, cpu = run_in_child_with_cpu(_busy(True), timeout=120, own_fds_only=True)
    assert payload is None
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert 1.5 < cpu < 3.0, cpu  # hard limit = soft + 1 s


# --- file size ------------------------------------------------------------------

def _write_2mib(path: str) -> dict:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    block = b"x" * (256 * 1024)
    try:
        for _ in range(8):
            os.write(fd, block)
        return {"outcome": "written"}
    except OSError as e:
        return {"outcome": errno.errorcode[e.errno], "size": os.fstat(fd).st_size}
    finally:
        os.close(fd)


def test_file_size_limit_gives_efbig(tmp_path):
    path = str(tmp_path / "big")

    def child():
        # CPython sets SIGXFSZ to SIG_IGN at startup, so the write fails with EFBIG.
        assert signal.getsignal(signal.SIGXFSZ) == signal.SIG_IGN
        apply(generous(file_size_bytes=MiB))
        return _write_2mib(path)

    assert child_value(child) == {"outcome": "EFBIG", "size": MiB}


def test_file_size_limit_kills_with_default_sigxfsz(tmp_path):
    path = str(tmp_path / "big")

    def child():
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        apply(generous(file_size_bytes=MiB))
        return _write_2mib(path)

    payload, status = run_in_child(child, own_fds_only=True)
    assert payload is None
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXFSZ


# --- descriptors, processes, core -------------------------------------------------

def test_open_files_limit_gives_emfile():
    def child():
        apply(generous(open_files=32))
        fds = []
        try:
            for _ in range(64):
                fds.append(os.open("/dev/null", os.O_RDONLY))
            return {"outcome": "opened", "max_fd": max(fds)}
        except OSError as e:
            return {"outcome": errno.errorcode[e.errno], "max_fd": max(fds)}

    got = child_value(child)
    assert got == {"outcome": "EMFILE", "max_fd": 31}


def _unshare_user_namespace() -> None:
    flags = 0x10000000  # CLONE_NEWUSER
    if hasattr(os, "unshare"):  # Python 3.12+
        os.unshare(flags)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


@pytest.mark.skipif(os.geteuid() != 0, reason="drops from root to uid 65534 first")
def test_process_limit_in_user_namespace():
    # RLIMIT_NPROC is never enforced for host uid 0, not even mapped into a fresh
    # user namespace (the kernel exempts INIT_USER), so the child first becomes
    # an unprivileged uid, then unshares a user namespace so that only its own
    # processes count, not every process of that uid on the host.
    def child():
        os.setgroups([])
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)
        _unshare_user_namespace()
        apply(generous(processes=4))
        kids, outcome = [], "all forked"
        try:
            for _ in range(10):
                pid = os.fork()
                if pid == 0:
                    time.sleep(30)
                    os._exit(0)
                kids.append(pid)
        except OSError as e:
            outcome = errno.errorcode[e.errno]
        finally:
            for pid in kids:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        return {"outcome": outcome, "forked": len(kids)}

    # The caller counts as one: 3 more processes fit under 4, the 4th fork fails.
    assert child_value(child) == {"outcome": "EAGAIN", "forked": 3}


def test_core_msgqueue_rtprio_memlock_zero_and_stack():
    def child():
        apply(generous(stack_bytes=4 * MiB))
        return current_limits()

    got = child_value(child)
    for name in ("RLIMIT_CORE", "RLIMIT_MSGQUEUE", "RLIMIT_RTPRIO", "RLIMIT_MEMLOCK"):
        assert got[name] == [0, 0], name
    assert got["RLIMIT_STACK"] == [4 * MiB] * 2
    assert got["RLIMIT_CPU"] == [60, 61]
    assert got["RLIMIT_NOFILE"] == [256, 256]
    assert got["RLIMIT_NPROC"] == [4096, 4096]
    assert got["RLIMIT_FSIZE"] == [1024 * MiB] * 2


def _become_nobody() -> None:
    """Test setup: shed root's capabilities (CAP_IPC_LOCK, CAP_SYS_RESOURCE)
    that override the limit under test."""
    if os.getuid() == 0:
        os.setgroups([])
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)


def test_memlock_limit_blocks_mlock():
    def child(limited):
        _become_nobody()
        if limited:
            apply(generous(memlock_bytes=0))
        else:
            resource.setrlimit(resource.RLIMIT_MEMLOCK, (MiB, MiB))
        libc = ctypes.CDLL(None, use_errno=True)
        buf = mmap.mmap(-1, 64 * 1024, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        addr = ctypes.c_void_p(ctypes.addressof(ctypes.c_char.from_buffer(buf)))
        ret = libc.mlock(addr, ctypes.c_size_t(64 * 1024))
        err = ctypes.get_errno()
        return "locked" if ret == 0 else errno.errorcode[err]

    assert child_value(lambda: child(False)) == "locked"  # control
    assert child_value(lambda: child(True)) in ("ENOMEM", "EPERM")


# --- per-request lowering -------------------------------------------------------

def test_lower_limits_lowers_and_clamps_to_hard_limit():
    def child():
        data, vsize = memory_baseline()
        apply_hard_limits(generous(cpu_seconds=10, open_files=64, memory_bytes=128 * MiB,
                                   file_size_bytes=8 * MiB, processes=100,
                                   stack_bytes=8 * MiB),
                          baseline_data=data, baseline_as=vsize)
        before = current_limits()
        # Ask for more than the hard limits everywhere: nothing may go up.
        lower_limits(generous(cpu_seconds=1000, open_files=4096, memory_bytes=4096 * MiB,
                              file_size_bytes=4096 * MiB, processes=100000, memlock_bytes=MiB,
                              stack_bytes=resource.RLIM_INFINITY),
                     baseline_data=data, baseline_as=vsize)
        after_raise = current_limits()
        # And lower some.
        lower_limits(generous(cpu_seconds=2, open_files=16, memory_bytes=32 * MiB,
                              file_size_bytes=MiB, processes=50),
                     baseline_data=data, baseline_as=vsize)
        after_lower = current_limits()
        return {"data": data, "vsize": vsize, "before": before,
                "after_raise": after_raise, "after_lower": after_lower}

    got = child_value(child)
    assert got["after_raise"] == got["before"]
    low = got["after_lower"]
    assert low["RLIMIT_CPU"] == [2, 3]
    assert low["RLIMIT_NOFILE"] == [16, 16]
    assert low["RLIMIT_FSIZE"] == [MiB, MiB]
    assert low["RLIMIT_NPROC"] == [50, 50]
    assert low["RLIMIT_DATA"] == [got["data"] + 32 * MiB] * 2
    assert low["RLIMIT_AS"] == [got["vsize"] + 32 * MiB + AS_SLACK_BYTES] * 2


def test_lower_limits_never_raises_soft_limit():
    def child():
        resource.setrlimit(resource.RLIMIT_NOFILE, (20, 40))
        lower_limits(generous(open_files=100), baseline_data=0, baseline_as=0)
        first = resource.getrlimit(resource.RLIMIT_NOFILE)
        lower_limits(generous(open_files=30), baseline_data=0, baseline_as=0)
        return [first, resource.getrlimit(resource.RLIMIT_NOFILE)]

    # Any process may raise its soft limit up to the hard one; lower_limits
    # does not: neither value goes up, and a smaller request lowers both.
    assert child_value(child) == [[20, 40], [20, 30]]


def test_apply_hard_limits_refuses_to_raise_without_cap_sys_resource():
    def child():
        _become_nobody()
        resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32))
        try:
            apply(generous(open_files=64))
            return "raised"
        except ValueError:
            return ["ValueError", resource.getrlimit(resource.RLIMIT_NOFILE)]

    assert child_value(child) == ["ValueError", [32, 32]]

"""One execution's processes and the order in which they harden themselves.

The zygote forks STAGE 1 and hands it a ChildSpec; from there:

  stage 1  (host pid namespace)  new session, parent-death signal, fd and
           environment hygiene, unshare the namespaces; forks stage 2 and
           waits for it, relaying its status to the zygote. When the zygote
           closes the kill pipe (the result arrived, a limit was hit), it kills
           stage 2; its exit comes only after every process of the namespace is
           gone, so the zygote's answer never precedes the snippet's end.
  stage 2  (PID 1 of the new pid namespace)  builds the private root
           (mounts.py), forks stage 3, then drops everything it holds and
           does nothing but reap (a minimal init).
  stage 3  (PID 2: the snippet)  privilege drop, rlimits, no_new_privs,
           Landlock, seccomp last; reports "ready", waits for one request,
           runs it, writes one result frame and exits.

Every step that fails is fatal for this execution (fail closed): a layer the
host offers is never silently skipped. Which layers the host offers at all is
decided once, by the zygote's probe, and arrives here as spec.layers.
"""

from __future__ import annotations

import io
import math
import os
import select
import signal
import sys
from dataclasses import dataclass, replace

from . import artifacts, cutting, kernel, landlock, mounts, namespaces, privileges, protocol, restricted, rlimits, seccomp

SETUP_FAILED = 121  # exit status of a stage that could not apply a layer
SANDBOX_NICE = 10   # every sandbox process runs below the server and the fork server

# The fds stage 3 works with; everything else is closed before the snippet.
# KILL_FD is stage 1's alone: the read end of the zygote's kill pipe.
STDIN, STDOUT, STDERR, REQUEST_FD, RESULT_FD, KILL_FD = 0, 1, 2, 3, 4, 5
MAX_REQUEST = 64 << 20
MAX_VARIABLE_NAME = 200
CHILD_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    # numerical libraries: one thread each, or RLIMIT_NPROC/DATA break them
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": "/tmp",
}


@dataclass(frozen=True)
class ChildSpec:
    layers: frozenset          # layers to apply: namespaces, privilege_drop, rlimits, landlock, seccomp
    network: bool
    hard_limits: object        # rlimits.Limits: the configured maxima
    seccomp_program: bytes | None
    zygote_pid: int
    filesystem: bool = False   # the filesystem profile: a writable /workspace, the snippet's cwd
    workspace_size: int = 64 << 20
    sandbox_uid: int = 65534
    sandbox_gid: int = 65534
    tmp_size: int = 16 << 20
    tmp_inodes: int = 4096
    readable: tuple = ()       # mounts.readable_paths(), computed once by the zygote


@dataclass(frozen=True)
class ChildPipes:
    """The child's ends: request and kill (read), result/stdout/stderr (write)."""
    request: int
    result: int
    stdout: int
    stderr: int
    kill: int


def stage1(spec: ChildSpec, pipes: ChildPipes) -> None:
    """Entry point in the freshly forked child. Never returns."""
    try:
        _reset_signals()
        os.setsid()
        # Every sandbox process runs below the server and the fork server: a
        # snippet (or a pool refill) never delays another request's answer.
        os.nice(SANDBOX_NICE)
        privileges.set_parent_death_signal(signal.SIGKILL)
        if os.getppid() != spec.zygote_pid:
            os._exit(SETUP_FAILED)
        _move_pipes_low(pipes)
        kernel.close_range_from(KILL_FD + 1)
        os.environ.clear()
        os.environ.update(CHILD_ENV)
        if "namespaces" in spec.layers:
            flags = namespaces.execution_flags(network=spec.network)
            if _is_root():
                kernel.unshare(flags)
            else:
                uid, gid = os.getuid(), os.getgid()
                kernel.unshare(kernel.CLONE_NEWUSER | flags)
                namespaces.write_id_maps(uid, gid)
        alive_r, alive_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(alive_w)
            os.close(KILL_FD)
            _stage2(spec, alive_r)
        # Only the snippet may hold the pipes: their EOF tells the zygote it is gone.
        for fd in (alive_r, STDIN, STDOUT, STDERR, REQUEST_FD, RESULT_FD):
            os.close(fd)
        privileges.set_not_dumpable()
        os._exit(_relay_status(_wait_or_kill(pid)))
    except BaseException as exc:  # noqa: BLE001 - a stage must never unwind into the zygote
        _setup_failed("namespaces", exc)


def _wait_or_kill(pid: int) -> int:
    """Stage 1: wait for stage 2; kill it first when the zygote closes the kill
    pipe. The init's exit completes only once its namespace is empty."""
    pidfd = os.pidfd_open(pid)
    readable, _, _ = select.select([KILL_FD, pidfd], [], [])
    if KILL_FD in readable:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return status


def _stage2(spec: ChildSpec, alive_r: int) -> None:
    """PID 1 of the sandbox: build the filesystem view, fork the snippet, reap."""
    layer = "namespaces"
    try:
        privileges.set_parent_death_signal(signal.SIGKILL)
        _exit_if_closed(alive_r)
        os.close(alive_r)
        if "namespaces" in spec.layers:
            mounts.build_root(spec.readable, tmp_size=spec.tmp_size, tmp_inodes=spec.tmp_inodes,
                              workspace_size=spec.workspace_size if spec.filesystem else 0)
        init_pid = os.getpid()  # 1 inside a new pid namespace
        pid = os.fork()
        if pid == 0:
            _stage3(spec, init_pid)
        kernel.close_range_from(0)
        layer = "privilege_drop"
        _drop_privileges(spec, keep_pdeathsig=True)
        if spec.seccomp_program is not None:
            layer = "seccomp"
            seccomp.install_filter(spec.seccomp_program)
    except BaseException as exc:  # noqa: BLE001
        _setup_failed(layer, exc)
    _reap_until(pid)


def _stage3(spec: ChildSpec, parent_pid: int) -> None:
    """The snippet's process: finish hardening, then serve one request."""
    layer = "privilege_drop"
    try:
        _drop_privileges(spec, keep_pdeathsig=False)
        privileges.set_parent_death_signal(signal.SIGKILL)
        if os.getppid() != parent_pid:
            os._exit(SETUP_FAILED)
        null = os.open("/dev/null", os.O_RDONLY)  # inside the private root now
        os.dup2(null, STDIN)
        os.close(null)
        baseline = rlimits.memory_baseline()
        if "rlimits" in spec.layers:
            layer = "rlimits"
            rlimits.apply_hard_limits(spec.hard_limits, baseline_data=baseline[0], baseline_as=baseline[1])
        if "landlock" in spec.layers:
            layer = "landlock"
            writable = ["/tmp"] if "namespaces" in spec.layers else []
            if spec.filesystem and "namespaces" in spec.layers:
                writable.append(artifacts.WORKSPACE)
            devices = [f"/dev/{d}" for d in mounts.DEVICES]
            landlock.restrict(list(spec.readable) + devices, writable,
                              allow_tcp=spec.network)
        if spec.seccomp_program is not None:
            layer = "seccomp"
            seccomp.install_filter(spec.seccomp_program)
    except BaseException as exc:  # noqa: BLE001
        _setup_failed(layer, exc)
    _prewarm()
    protocol.write_frame_fd(RESULT_FD, protocol.encode_sectioned({"kind": "ready"}))
    _serve_one_request(spec, baseline)


PREWARM_CODE = "x = [1, 2]\nresult = len(x) + 2"


def _prewarm() -> None:
    """A pooled child, already fully hardened, runs a fixed snippet of ours
    before it reports ready: the copy-on-write faults of compiling and running
    code are then paid before the request, not on its clock. restricted.execute
    builds its state afresh per call, so nothing of this run is visible to the
    request. Skipped when the request is already waiting (no pool)."""
    waiting, _, _ = select.select([REQUEST_FD], [], [], 0)
    if waiting:
        return
    sink = io.StringIO()
    restricted.execute(PREWARM_CODE, restricted=True, allowed_modules=frozenset(), stdout=sink, stderr=sink)


def _serve_one_request(spec: ChildSpec, baseline) -> None:
    request = None
    try:
        request = protocol.read_frame_fd(REQUEST_FD, MAX_REQUEST)
        os.close(REQUEST_FD)  # nothing left to read there: don't hand the snippet an fd
        if "rlimits" in spec.layers:
            _lower_limits(spec, request, baseline)
        stdout, stderr = _stream(STDOUT), _stream(STDERR)
        sys.stdout, sys.stderr = stdout, stderr
        allowed = frozenset(request.get("allowed_modules", ()))
        if spec.filesystem and "namespaces" in spec.layers:
            os.chdir(artifacts.WORKSPACE)
            try:
                artifacts.write_input_files(request.get("files") or {})
                artifacts.make_out_dir()
            except (artifacts.BadInputFile, OSError) as exc:
                _write_error("runtime_error", f"invalid input file: {exc}"[:500], request)
                os._exit(0)
        if request.get("op") == "validate":
            reply = restricted.validate(request["code"], restricted=request.get("restricted", True),
                                        allowed_modules=allowed)
            frame = protocol.encode_sectioned({"kind": "result", "nonce": request.get("nonce"), **reply})
        else:
            reply = restricted.execute(request["code"], restricted=request.get("restricted", True),
                                       allowed_modules=allowed, stdout=stdout, stderr=stderr,
                                       open_files=spec.filesystem and "namespaces" in spec.layers)
            images, files, extra = _artifacts(spec)
            for stream in (stdout, stderr):
                try:
                    stream.flush()
                except BaseException:  # noqa: BLE001 - a closed or broken stream loses nothing else
                    pass
            reply.update(extra, kind="result", nonce=request.get("nonce"))
            frame = _result_frame(reply, images, files, int(request.get("max_output", 1 << 20)))
        protocol.write_frame_fd(RESULT_FD, frame)
        # EOF now, not after the kernel has torn down our address space at exit
        kernel.close_range_from(STDOUT)
    except MemoryError:
        _write_error("memory_limit", "the sandbox ran out of memory while reporting the result",
                     request)
    except BaseException as exc:  # noqa: BLE001
        _write_error("internal_error", f"the sandbox child failed: {type(exc).__name__}",
                     request)
    os._exit(0)


def _result_frame(reply: dict, images: list, files: list, max_result: int) -> bytes:
    """The result as a sectioned frame: the value's JSON, then each PNG and each
    out/ file as raw bytes. A value larger than the output limit becomes its repr,
    cut head and tail (marked result_truncated)."""
    value = reply.pop("result", None)
    encoded = protocol.dumps(value)
    reply["result_bytes"] = len(encoded)
    if len(encoded) > max_result:
        # as text, head and tail; a quarter of the cap leaves room for JSON escapes
        encoded = protocol.dumps(cutting.cut_text(repr(value), max_result // 4)[0])
        reply["result_truncated"] = True
    reply["variables"] = [v[:MAX_VARIABLE_NAME] for v in reply.get("variables") or ()]
    sections = [encoded] + images + [data for _, data in files]
    listing = ([{"kind": "result", "size": len(encoded)}]
               + [{"kind": "image", "mime_type": "image/png", "size": len(data)} for data in images]
               + [{"kind": "file", "path": path, "size": len(data)} for path, data in files])
    header = {**reply, "sections": listing}
    if len(protocol.dumps(header)) > protocol.MAX_RESULT_HEADER:  # very long unicode names
        header.update(variables=[], security_events=header.get("security_events", [])[:5])
    return protocol.encode_sectioned(header, sections)


def _artifacts(spec: ChildSpec) -> tuple[list, list, dict]:
    """Figures and out/ files of the run, and what to say about them; a failure
    while collecting them never hides the result, and is reported, not dropped."""
    images, files, extra = [], [], {}
    try:
        images, truncated = artifacts.render_figures()
        extra["images_truncated"] = truncated
        if spec.filesystem and "namespaces" in spec.layers:
            files, truncated, refused = artifacts.collect_output_files()
            extra["files_truncated"] = truncated
            if refused:
                extra["files_refused"] = [{"path": path, "reason": why} for path, why in refused]
    except BaseException as exc:  # noqa: BLE001
        extra["artifacts_error"] = f"{type(exc).__name__}: {exc}"[:300]
    return images, files, extra


def _lower_limits(spec: ChildSpec, request: dict, baseline) -> None:
    """Per-request limits may only go down from the hard limits set in advance."""
    hard = spec.hard_limits
    timeout = float(request.get("timeout", hard.cpu_seconds))
    memory = int(request.get("memory_limit", hard.memory_bytes))
    wanted = replace(hard, cpu_seconds=min(hard.cpu_seconds, math.ceil(timeout) + 1),
                     memory_bytes=min(hard.memory_bytes, memory))
    rlimits.lower_limits(wanted, baseline_data=baseline[0], baseline_as=baseline[1])


def _stream(fd: int) -> io.TextIOWrapper:
    # Line-buffered so that output printed before a kill still reaches the
    # zygote; backslashreplace so lone surrogates never break the encoding.
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace",
                            line_buffering=True)


def _write_error(error_type: str, message: str, request) -> None:
    try:
        nonce = request.get("nonce") if isinstance(request, dict) else None
        protocol.write_frame_fd(RESULT_FD, protocol.encode_sectioned(
            {"kind": "result", "nonce": nonce, "success": False, "error_type": error_type, "error": message}))
    except BaseException:  # noqa: BLE001
        pass


def _drop_privileges(spec: ChildSpec, *, keep_pdeathsig: bool) -> None:
    """As root: become the unprivileged sandbox uid, then (for the snippet)
    enter a user namespace of its own so it owns nothing it can reach. As an
    ordinary user: the capabilities held in our own user namespace go."""
    if "privilege_drop" not in spec.layers:
        return
    if _is_root():
        # the bounding set can only be emptied while CAP_SETPCAP is held
        kernel.drop_bounding_set()
        privileges.drop_to_user(spec.sandbox_uid, spec.sandbox_gid)
        if keep_pdeathsig:  # stage 2, the init: uid drop + no_new_privs is enough, it never execs
            privileges.set_parent_death_signal(signal.SIGKILL)
            privileges.set_no_new_privs()
            privileges.set_not_dumpable()
            return
        if "namespaces" in spec.layers:
            # a fresh user namespace gives CAP_SETPCAP there, which the bounding
            # set drop needs, and a private RLIMIT_NPROC count
            namespaces.enter_user_namespace(spec.sandbox_uid, spec.sandbox_gid)
            privileges.drop_capabilities()
        privileges.set_no_new_privs()
    else:
        if "namespaces" in spec.layers:
            privileges.drop_capabilities()
        privileges.set_no_new_privs()
        if keep_pdeathsig:
            privileges.set_parent_death_signal(signal.SIGKILL)
    privileges.set_not_dumpable()


def _reap_until(snippet_pid: int) -> None:
    """The init's only job: reap everything, exit with the snippet's status."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(SETUP_FAILED)
        except InterruptedError:
            continue
        if pid == snippet_pid:
            os._exit(_relay_status(status))


def _relay_status(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else SETUP_FAILED


def _setup_failed(layer: str, exc: BaseException) -> None:
    try:
        detail = f"{type(exc).__name__}: {exc}"[:500]
        protocol.write_frame_fd(RESULT_FD, protocol.encode_sectioned(
            {"kind": "setup_error", "layer": layer, "error": detail}))
    except BaseException:  # noqa: BLE001
        pass
    os._exit(SETUP_FAILED)


def _exit_if_closed(fd: int) -> None:
    """The parent holds the write end open; EOF means it is already gone."""
    readable, _, _ = select.select([fd], [], [], 0)
    if readable:
        os._exit(SETUP_FAILED)


def _move_pipes_low(pipes: ChildPipes) -> None:
    """Place the pipes at fds 1..5 (stdin is re-opened later as /dev/null)."""
    # dup everything above the target range first so no dup2 clobbers a source
    temp = [os.dup(fd) for fd in (pipes.stdout, pipes.stderr, pipes.request, pipes.result, pipes.kill)]
    for target, fd in zip((STDOUT, STDERR, REQUEST_FD, RESULT_FD, KILL_FD), temp):
        os.dup2(fd, target)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, STDIN)  # (null and the temporaries are closed by the caller's close_range)


def _reset_signals() -> None:
    # the zygote may have handlers installed; the snippet starts from defaults
    # (SIGPIPE and SIGXFSZ stay ignored, as CPython sets them: a write to a
    # closed pipe or past RLIMIT_FSIZE raises instead of killing silently)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def _is_root() -> bool:
    return os.geteuid() == 0

"""One execution's process, and the order in which it hardens itself.

The fork server clones the child straight into its new namespaces
(libc.clone_process), writes the child's id maps from outside
(namespaces.map_child_ids) and lets it go. The child is PID 1 of its pid
namespace and runs the snippet itself: seccomp refuses fork, so there is
nothing to reap, and its death takes everything in the namespace with it.

After fd and environment hygiene (start), HARDENING runs in order; a step
that fails is fatal for this execution (fail closed) and the layer named in
the table is reported. Steps marked TEMPLATE run once in the cloner, before
it clones anything, and are inherited; a child cloned without it (the
start-up probe, or after the cloner is gone) runs them itself. A layer the host does not offer is never silently
skipped: which layers apply was decided once by the fork server's probe and
arrives as spec.layers. Then the child pre-warms, reports "ready", waits for
one request, runs it, writes one result frame and exits.
"""

from __future__ import annotations

import fcntl
import gc
import io
import math
import os
import select
import signal
import socket
import sys
from dataclasses import dataclass, replace

from sandbox import artifacts, landlock, mounts, namespaces, privileges, process_names, profiles, rlimits, seccomp
from sandbox.wire import cutting
from sandbox import libc
from sandbox.wire import protocol
from sandbox.wire.messages import RESULT_FRAMES, ChildOrder, ExecuteResult, RunRequest, ValidationResult
from sandbox.restricted import run as restricted
from sandbox.restricted import interrupts, snippet_files
from sandbox.codemode import tools_object
from sandbox.wire.protocol import GO_FD, REQUEST_FD, RESULT_FD, STDERR, STDIN, STDOUT, FORK_SERVER_FD

SETUP_FAILED = 121  # exit status of a child that could not apply a layer
SANDBOX_NICE = 10   # every sandbox process runs below the server and the fork server
MAX_VARIABLE_NAME = 200
CHILD_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    **profiles.LIBRARY_ENV,
    "MPLCONFIGDIR": "/tmp",
}

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@dataclass(frozen=True)
class ChildSpec:
    layers: frozenset          # layers to apply: namespaces, privilege_drop, rlimits, landlock, seccomp
    network: bool
    hard_limits: object        # rlimits.Limits: the configured maxima
    seccomp_program: bytes | None
    host_root: bool            # the fork server runs as root (inside the user namespace, uids say nothing)
    filesystem: bool           # the filesystem profile: a writable /workspace, the snippet's cwd
    workspace_size: int
    readable: tuple            # mounts.readable_paths(), computed once by the fork server
    empty_network_shared: bool  # the fork server sits in an empty network namespace children may share
    host_mounts: tuple = ()     # mounts.PinnedMount of SANDBOX_MOUNTS, pinned by the fork server
    max_request: int = protocol.MAX_REQUEST   # the request frame's cap (protocol.request_frame_cap)

    @property
    def namespaced(self) -> bool:
        return "namespaces" in self.layers

    @property
    def own_network(self) -> bool:
        """A network namespace of the child's own: always with the network profile, and
        whenever a layer the shared empty one relies on is off (namespaces.py)."""
        return self.network or not (self.empty_network_shared and {"landlock", "seccomp"} <= self.layers)


@dataclass(frozen=True)
class ChildPipes:
    """The child's ends: request and go (read), result/stdout/stderr (write),
    and the fork server's pidfd."""
    request: int
    result: int
    stdout: int
    stderr: int
    go: int
    fork_server: int


def _enter_namespaces(spec: ChildSpec) -> None:
    """Once the fork server has mapped the ids: open the mount sources, take the
    inside uid/gid, replace the filesystem view with the private root
    (mounts.py). As root the clone left us host uid 0: it only looks up the
    sources (under /root, say); nothing is created with it, and a file
    created by an id unmapped in the namespace would be refused anyway. The
    capabilities of the new user namespace stay until the privilege drop."""
    if os.read(GO_FD, 1) != b"1":
        raise RuntimeError("the fork server did not map the user namespace's ids")
    namespaces.enter_private_clocks()
    if spec.network:
        _hand_over_proxy_listener()
    sources = mounts.open_sources(spec.readable)
    host_sources = mounts.open_host_sources(spec.host_mounts)
    inside = namespaces.INSIDE_ID
    privileges.become(inside, inside, clear_groups=spec.host_root)
    _arm_parent_death()
    mounts.build_root(sources, workspace_size=spec.workspace_size if spec.filesystem else 0,
                      host_fds=host_sources, pinned=spec.host_mounts)
    snippet_files.set_mounts((pin.mount.sandbox, pin.mount.writable) for pin in spec.host_mounts)


def _hand_over_proxy_listener() -> None:
    """The network profile: the loopback of our own network namespace and a
    listening socket on it, passed to the fork server over the go channel (a Unix
    socket) for the server's egress proxy. No copy stays here, so the port is
    the proxy's; the snippet can neither accept on it nor bind it again."""
    listener = namespaces.open_proxy_listener()
    go = socket.socket(fileno=GO_FD)
    try:
        socket.send_fds(go, [b"L"], [listener.fileno()])
    finally:
        go.detach()
        listener.close()


def _drop_privileges(spec: ChildSpec) -> None:
    """Every capability (of the child's own user namespace: it never had any on
    the host), no_new_privs, not dumpable. Without namespaces, root becomes the
    unprivileged sandbox uid here."""
    if not spec.namespaced and spec.host_root:
        privileges.drop_bounding_set()  # needs CAP_SETPCAP: while still root
        privileges.become(namespaces.SANDBOX_ID, namespaces.SANDBOX_ID, clear_groups=True)
        _arm_parent_death()
    if spec.namespaced or spec.host_root:
        privileges.drop_capabilities()
    privileges.set_no_new_privs()
    privileges.set_not_dumpable()


def _limit_inherited_resources(spec: ChildSpec) -> None:
    rlimits.apply_inherited_limits(spec.hard_limits)


def _limit_resources(spec: ChildSpec) -> None:
    global _BASELINE
    _BASELINE = rlimits.memory_baseline()
    rlimits.apply_own_limits(spec.hard_limits, baseline_data=_BASELINE[0], baseline_as=_BASELINE[1])


def _restrict_paths(spec: ChildSpec) -> None:
    writable = ["/tmp"] if spec.namespaced else []
    if spec.filesystem and spec.namespaced:
        writable.append(artifacts.WORKSPACE)
    devices = [f"/dev/{d}" for d in mounts.DEVICES]
    writable += [f"/dev/{d}" for d in mounts.SINK_DEVICES]  # (a file: write and truncate, nothing else)
    operator_read = [pin.mount.sandbox for pin in spec.host_mounts if not pin.mount.writable]
    writable += [pin.mount.sandbox for pin in spec.host_mounts if pin.mount.writable]
    proxy_port = [namespaces.PROXY_ADDRESS[1]] if spec.network else []
    landlock.restrict(list(spec.readable) + devices + operator_read, writable, connect_ports=proxy_port)


def _filter_syscalls(spec: ChildSpec) -> None:
    seccomp.install_filter(spec.seccomp_program)


TEMPLATE = "template"   # once, in the process children are cloned from: inherited by each
CHILD = "child"         # in every child, after the template's steps

# The hardening of one execution, in order: (layer, where, step). Each step takes
# the spec; the layer is the one reported when the step fails. A child cloned
# from a process that did not run the template's steps (no cloner) runs them itself.
HARDENING = (
    ("rlimits", TEMPLATE, _limit_inherited_resources),
    ("namespaces", CHILD, _enter_namespaces),
    ("privilege_drop", CHILD, _drop_privileges),
    ("rlimits", CHILD, _limit_resources),
    ("landlock", CHILD, _restrict_paths),
    ("seccomp", CHILD, _filter_syscalls),
)


def prepare_template(spec: ChildSpec) -> None:
    """The template's steps, in the process children are cloned from. Raises
    when one fails: that process must then not serve as a template."""
    for layer, where, step in HARDENING:
        if where == TEMPLATE and layer in spec.layers:
            step(spec)

_BASELINE = (0, 0)  # memory in use when the limits were set: they count from it


def run(spec: ChildSpec, pipes: ChildPipes, *, from_template: bool = False) -> None:
    """Entry point in the freshly cloned child; `from_template` when the process it
    was cloned from ran prepare_template. Never returns."""
    try:
        _start(spec, pipes)
    except BaseException as exc:  # noqa: BLE001 - a child must never unwind into the fork server
        _setup_failed("startup", exc)
    for layer, where, step in HARDENING:
        if layer not in spec.layers or (where == TEMPLATE and from_template):
            continue
        try:
            step(spec)
        except BaseException as exc:  # noqa: BLE001
            _setup_failed(layer, exc)
    try:
        libc.close_range_from(GO_FD)
        signal.signal(signal.SIGXCPU, _cpu_limit_reached)
    except BaseException as exc:  # noqa: BLE001
        _setup_failed("startup", exc)
    _prewarm()
    protocol.write_frame_fd(RESULT_FD, protocol.encode_sectioned({"kind": "ready"}))
    _serve(spec, _BASELINE)


def _start(spec: ChildSpec, pipes: ChildPipes) -> None:
    """Hygiene before any layer: signals, session, priority, parent-death
    signal, the fds (only ours survive), the environment."""
    _reset_signals()
    # Collections run only inside a run (restricted.execute turns them on): a cycle the
    # snippet dropped is finalized under the run's policy, never while reporting.
    gc.disable()
    process_names.name(process_names.POOLED)
    os.setsid()
    # Every sandbox process runs below the server and the fork server: a
    # snippet (or a pool refill) never delays another request's answer.
    os.nice(SANDBOX_NICE)
    _move_pipes_low(pipes)
    libc.close_range_from(FORK_SERVER_FD + 1)
    _arm_parent_death()
    os.environ.clear()
    os.environ.update(CHILD_ENV)
    if spec.network:  # urllib, http.client users, requests, httpx, curl: all through the proxy
        os.environ.update({name: namespaces.PROXY_URL for name in PROXY_VARIABLES})


def _arm_parent_death() -> None:
    """SIGKILL when the fork server dies. Any change of uid disarms it, so it is armed
    again after each; the fork server may have died before, which its pidfd tells."""
    privileges.set_parent_death_signal(signal.SIGKILL)
    if select.select([FORK_SERVER_FD], [], [], 0)[0]:
        os._exit(SETUP_FAILED)


def _cpu_limit_reached(signum, frame) -> None:
    """PID 1 of a namespace ignores SIGXCPU by default: end as the kernel would."""
    os._exit(128 + signal.SIGXCPU)


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


def _serve(spec: ChildSpec, baseline) -> None:
    """One request, or, when the first one opens a session, every request of
    that session in turn: the globals (and the workspace) stay, the limits are
    the session's. A snippet's exception (a MemoryError, the KeyboardInterrupt of
    a timeout) is its call's answer; a failure of the child's own ends the
    process, and with it the session."""
    session = None
    stdout, stderr = _stream(STDOUT), _stream(STDERR)
    while True:
        order = None
        try:
            order = ChildOrder.from_frame(protocol.read_frame_fd(REQUEST_FD, spec.max_request))
            interrupts.new_call()
            process_names.name(process_names.VALIDATION if order.op == "validate" else
                               process_names.execution(order.request.execution_id or "", order.session))
            if order.session:
                session = session or restricted.SessionState()
            elif not order.request.tools:  # (code mode reads its answers on it)
                os.close(REQUEST_FD)  # nothing left to read there: don't hand the snippet an fd
            if "rlimits" in spec.layers:
                _lower_limits(spec, order.request, baseline, in_session=session is not None)
            sys.stdout, sys.stderr = stdout, stderr
            protocol.write_frame_fd(RESULT_FD, _run_request(spec, order, stdout, stderr, session))
            if session is None:
                # EOF now, not after the kernel has torn down our address space at exit
                libc.close_range_from(STDOUT)
                break
            process_names.name(process_names.SESSION_IDLE)
        except MemoryError:
            _write_error("memory_limit", "the sandbox ran out of memory while reporting the result",
                         order)
            break
        except BaseException as exc:  # noqa: BLE001
            _write_error("internal_error", f"the sandbox child failed: {type(exc).__name__}",
                         order)
            break
    os._exit(0)


def _run_request(spec: ChildSpec, order: ChildOrder, stdout, stderr, session) -> bytes:
    """The result frame."""
    request = order.request
    allowed = frozenset(request.allowed_modules)
    workspace = spec.filesystem and spec.namespaced
    files = (snippet_files.WORKSPACE_FILES if workspace
             else snippet_files.SCRATCH_FILES if spec.namespaced else None)
    if files == snippet_files.SCRATCH_FILES:
        os.makedirs(snippet_files.WORKDIR, exist_ok=True)
        os.chdir(snippet_files.WORKDIR)
    if workspace:
        os.chdir(artifacts.WORKSPACE)
        try:
            artifacts.write_input_files(request.files or {})
            artifacts.make_out_dir()
        except (artifacts.BadInputFile, OSError) as exc:
            failed = RESULT_FRAMES.get(order.op, ExecuteResult)(
                nonce=order.nonce, success=False, error_type="runtime_error", error=f"invalid input file: {exc}"[:500])
            return protocol.encode_sectioned(failed.to_frame())
    if order.op == "validate":
        reply = restricted.validate(request.code, restricted=request.restricted,
                                    allowed_modules=allowed, tools=request.tools, files=files)
        report = ValidationResult(nonce=order.nonce, validation=reply["validation"], analysis=reply["analysis"],
                                  recommendations=tuple(reply["recommendations"]))
        return protocol.encode_sectioned(report.to_frame())
    names = None
    tools_object.start_call(order.nonce if request.tools else None)
    if request.tools:  # code mode: answers to its calls come on the request channel
        names = {"tools": tools_object.build(request.tools), "ToolError": tools_object.ToolError}
    collected = []
    reply = restricted.execute(request.code, restricted=request.restricted,
                               allowed_modules=allowed, stdout=stdout, stderr=stderr,
                               files=files, session=session, names=names, interruptible=session is not None,
                               finish=lambda: collected.append(_artifacts(spec, remove_files=session is not None)))
    images, files, extra = collected[0] if collected else ([], [], {})
    for stream in (stdout, stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a closed or broken stream loses nothing else
            pass
    reply.update(extra, nonce=order.nonce)
    return _result_frame(reply, images, files, request.max_output, out_dir=spec.filesystem and spec.namespaced)


def _result_frame(reply: dict, images: list, files: list, max_result: int, out_dir: bool = False) -> bytes:
    """The result as a sectioned frame: the value's JSON, its repr (what the model reads),
    then each PNG and each out/ file as raw bytes. Both forms of the value are held to the
    output cap: the repr is cut once, head and tail (marked result_truncated), and a JSON
    form larger than the cap, or one with a string cut, is left out for the repr to stand for."""
    value = reply.pop("result", None)
    text = reply.pop("result_repr", None)
    encoded = protocol.dumps(value)
    reply["result_bytes"] = len(encoded)
    values: list[tuple[str, bytes]] = []
    if not reply.pop("result_cut", False) and len(encoded) <= max_result:
        values.append(("result", encoded))
    if isinstance(text, str):
        text, reply["result_truncated"] = cutting.fit_text(text, max_result, out_dir)
        values.append(("repr", text.encode("utf-8", "backslashreplace")))
    elif not values:  # no repr to stand for a value too large (a run that ended without one)
        values.append(("result", protocol.dumps(None)))
    reply["variables"] = tuple(v[:MAX_VARIABLE_NAME] for v in reply.get("variables") or ())
    sections = [data for _, data in values] + images + [data for _, data in files]
    listing = ([{"kind": kind, "size": len(data)} for kind, data in values]
               + [{"kind": "image", "mime_type": "image/png", "size": len(data)} for data in images]
               + [{"kind": "file", "path": path, "size": len(data)} for path, data in files])
    reply["security_events"] = tuple(reply.get("security_events") or ())
    reply["files_refused"] = tuple(reply.get("files_refused") or ())
    reply["figure_files"] = tuple(reply.get("figure_files") or ())
    header = ExecuteResult(**reply, sections=tuple(listing)).to_frame()
    if len(protocol.dumps(header)) > protocol.MAX_RESULT_HEADER:  # very long unicode names
        header.update(variables=[], security_events=header["security_events"][:5])
    return protocol.encode_sectioned(header, sections)


def _artifacts(spec: ChildSpec, *, remove_files: bool) -> tuple[list, list, dict]:
    """Figures and out/ files of the run, and what to say about them; a failure
    while collecting them never hides the result, and is reported, not dropped.
    In a session, out/ files returned are removed: each comes back once."""
    images, files, extra, errors = [], [], {}, []
    try:  # out/ first: a figure saved there is matched while it is still open
        if spec.filesystem and "namespaces" in spec.layers:
            files, truncated, refused = artifacts.collect_output_files(remove=remove_files)
            extra["files_truncated"] = truncated
            if refused:
                extra["files_refused"] = [{"path": path, "reason": why} for path, why in refused]
    except BaseException as exc:  # noqa: BLE001
        errors.append(f"{type(exc).__name__}: {exc}")
    try:
        if files:
            extra["figure_files"] = artifacts.figures_saved_as(files)
        images, truncated, refused_figures = artifacts.render_figures()
        extra["images_truncated"] = truncated
        errors[:0] = refused_figures
    except BaseException as exc:  # noqa: BLE001
        errors.insert(0, f"{type(exc).__name__}: {exc}")
    if errors:
        extra["artifacts_error"] = "; ".join(errors)[:300]
    return images, files, extra


def _lower_limits(spec: ChildSpec, request: RunRequest, baseline, *, in_session: bool) -> None:
    """Per-request limits may only go down from the hard limits set in advance.
    In a session CPU time adds up over its calls: each call gets its timeout on
    top of what the session used so far, up to the hard limit."""
    hard = spec.hard_limits
    timeout = float(request.timeout)
    memory = int(request.memory_limit)
    cpu = math.ceil(timeout) + 1
    if in_session:  # (room for the interrupt's grace: the fork server's kill decides, not this limit)
        rlimits.allow_more_cpu(cpu + math.ceil(protocol.INTERRUPT_GRACE))
        cpu = hard.cpu_seconds
    wanted = replace(hard, cpu_seconds=min(hard.cpu_seconds, cpu), memory_bytes=min(hard.memory_bytes, memory))
    rlimits.lower_limits(wanted, baseline_data=baseline[0], baseline_as=baseline[1])


def _stream(fd: int) -> io.TextIOWrapper:
    # Line-buffered so that output printed before a kill still reaches the
    # fork server; backslashreplace so lone surrogates never break the encoding.
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace",
                            line_buffering=True)


def _write_error(error_type: str, message: str, order: ChildOrder | None) -> None:
    try:
        nonce, op = (order.nonce, order.op) if order is not None else (None, "execute")
        failed = RESULT_FRAMES.get(op, ExecuteResult)(nonce=nonce, success=False, error_type=error_type, error=message)
        protocol.write_frame_fd(RESULT_FD, protocol.encode_sectioned(failed.to_frame()))
    except BaseException:  # noqa: BLE001
        pass


def _setup_failed(layer: str, exc: BaseException) -> None:
    try:
        detail = f"{type(exc).__name__}: {exc}"[:500]
        protocol.write_frame_fd(RESULT_FD, protocol.encode_sectioned(
            {"kind": "setup_error", "layer": layer, "error": detail}))
    except BaseException:  # noqa: BLE001
        pass
    os._exit(SETUP_FAILED)


def _move_pipes_low(pipes: ChildPipes) -> None:
    """Place the pipes at fds 1..6 and /dev/null at 0."""
    # copy everything above the target range first so no dup2 clobbers a source
    sources = (pipes.stdout, pipes.stderr, pipes.request, pipes.result, pipes.go, pipes.fork_server)
    temp = [fcntl.fcntl(fd, fcntl.F_DUPFD, FORK_SERVER_FD + 1) for fd in sources]
    for target, fd in zip((STDOUT, STDERR, REQUEST_FD, RESULT_FD, GO_FD, FORK_SERVER_FD), temp):
        os.dup2(fd, target)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, STDIN)  # (null and the temporaries are closed by the caller)


def _reset_signals() -> None:
    # the fork server may have handlers installed; the snippet starts from defaults
    # (SIGPIPE and SIGXFSZ stay ignored, as CPython sets them: a write to a
    # closed pipe or past RLIMIT_FSIZE raises instead of killing silently)
    for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    interrupts.arm()  # SIGINT: the interrupt of a session's call at its time limit
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


#!/usr/bin/env python3
"""Where the time of one execution goes: a timestamped timeline of warm-pool
and no-pool executions, py-spy samples of the MCP server and the zygote under
load, and the start-up split. Used to write bench/README.md.

    python bench/timeline.py                 # timeline + py-spy + start-up
    python bench/timeline.py --only timeline --runs 50

No file under sandbox/ is touched. The timeline comes from wrappers installed
at run time: in this process (the runner's send and receive), and in the
zygote, which is started with a boot line that wraps the zygote's and the
child's functions before `sandbox.zygote.main()` runs. The children write
their timestamps (CLOCK_MONOTONIC, the same clock in every pid namespace) to
their stderr pipe just before the result frame; the zygote adds its own to the
result. Wrapping costs a few microseconds per event, so the figures slightly
overstate the real ones.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _p in (str(ROOT), str(ROOT / "tests")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

RESULTS = ROOT / "bench" / "results"
TRIVIAL = "result = 2 + 2"
NS = 1e-6  # ns -> ms

# ----------------------------------------------------------------------------- zygote-side wrappers

TRACE_SRC = r'''
def _bench_trace_install():
    import json as _json, os as _os, time as _time
    import sandbox.child as C, sandbox.kernel as K, sandbox.mounts as M, sandbox.landlock as L
    import sandbox.rlimits as R, sandbox.protocol as P, sandbox.namespaces as NS, sandbox.zygote as Z
    import sandbox.outcome as O, sandbox.seccomp as S, sandbox.restricted as RP, sandbox.privileges as PV
    now = _time.monotonic_ns
    cpu = _time.process_time_ns
    EV = []
    ACTIVE = [False]        # True in a child (stage 1 and below)
    SPAWNS = []             # (begin, end, why) of every fork the zygote did
    STATE = {"why": "request", "ctl": 0}

    GOT = [False]           # the child has read its request

    def wrap(mod, attr, label=None, after_request=False):
        f = getattr(mod, attr, None)
        if f is None:
            return
        label = label or attr
        def w(*a, **k):
            if not ACTIVE[0] or (after_request and not GOT[0]):
                return f(*a, **k)
            EV.append((label + ">", now(), cpu()))
            try:
                return f(*a, **k)
            finally:
                EV.append((label + "<", now(), cpu()))
        setattr(mod, attr, w)

    def entry(mod, attr, label, reset=False):
        f = getattr(mod, attr)
        def w(*a, **k):
            if reset:
                EV.clear()
                ACTIVE[0] = True
                GOT[0] = False
            EV.append((label, now(), cpu()))
            return f(*a, **k)
        setattr(mod, attr, w)

    entry(C, "stage1", "s1.start", reset=True)
    entry(C, "_stage2", "s2.start")
    entry(C, "_stage3", "s3.start")
    wrap(K, "unshare", "unshare")
    wrap(K, "close_range_from", "close_range")
    wrap(M, "build_root", "mounts")
    wrap(C, "_drop_privileges", "drop_privileges")
    wrap(NS, "enter_user_namespace", "user_namespace")
    wrap(K, "drop_bounding_set", "drop_bounding_set")
    wrap(PV, "drop_to_user", "drop_to_user")
    wrap(PV, "drop_capabilities", "drop_capabilities")
    wrap(R, "memory_baseline", "rlimits_baseline")
    wrap(R, "apply_hard_limits", "rlimits")
    wrap(L, "restrict", "landlock")
    wrap(S, "install_filter", "seccomp")
    wrap(P, "read_frame_fd", "request_read")
    o_read = P.read_frame_fd
    def read_frame_fd(*a, **k):
        r = o_read(*a, **k)
        GOT[0] = True
        return r
    P.read_frame_fd = read_frame_fd
    wrap(C, "_lower_limits", "lower_limits")
    wrap(RP, "execute", "execute", after_request=True)
    wrap(C, "_artifacts", "artifacts")

    orig_fork = _os.fork
    def fork():
        if not ACTIVE[0]:
            return orig_fork()
        EV.append(("fork>", now(), cpu()))
        pid = orig_fork()
        EV.append(("fork<" if pid else "forked", now(), cpu()))
        return pid
    _os.fork = fork

    orig_write = P.write_frame_fd
    def write_frame_fd(fd, obj):
        kind = obj.get("kind") if isinstance(obj, dict) else None
        if ACTIVE[0] and kind == "result":
            EV.append(("result_write>", now(), cpu()))
            try:
                _os.write(2, ("\n@@BENCHTRACE " + _json.dumps(EV) + "\n").encode())
            except OSError:
                pass
            return orig_write(fd, obj)
        if ACTIVE[0]:
            EV.append((f"frame_{kind}>", now(), cpu()))
        r = orig_write(fd, obj)
        if ACTIVE[0]:
            EV.append((f"frame_{kind}<", now(), cpu()))
        return r
    P.write_frame_fd = write_frame_fd

    # ---- the zygote
    Zy = Z.Zygote
    def zmark(c, name, t=None):
        tr = getattr(c, "_bt", None)
        if tr is None:
            tr = c._bt = {}
        tr.setdefault(name, t or now())

    o_spawn = Zy.spawn
    def spawn(self, *a, **k):
        t0 = now()
        c = o_spawn(self, *a, **k)
        t1 = now()
        SPAWNS.append((t0, t1, STATE["why"]))
        del SPAWNS[:-200]
        if c is not None:
            zmark(c, "spawn>", t0)
            zmark(c, "spawn<", t1)
        return c
    Zy.spawn = spawn

    o_refill = Zy.refill_pool
    def refill_pool(self):
        STATE["why"] = "refill"
        try:
            return o_refill(self)
        finally:
            STATE["why"] = "request"
    Zy.refill_pool = refill_pool

    o_read_control = Zy.read_control
    def read_control(self):
        STATE["ctl"] = now()
        return o_read_control(self)
    Zy.read_control = read_control

    o_start = Zy.start_request
    def start_request(self, message):
        t0 = STATE["ctl"] or now()
        t1 = now()
        o_start(self, message)
        for c in self.children.values():
            if c.request is message:
                zmark(c, "ctl_wake", t0)
                zmark(c, "start_request", t1)
                zmark(c, "start_request<")
                if c.request_w is None:
                    zmark(c, "request_written")
    Zy.start_request = start_request

    o_write_request = Zy.write_request
    def write_request(self, c):
        o_write_request(self, c)
        if c.request is not None and c.request_w is None:
            zmark(c, "request_written")
    Zy.write_request = write_request

    o_result_bytes = Zy.on_result_bytes
    def on_result_bytes(self, c, data):
        t = now()
        state, had = c.state, c.result_frame is not None
        o_result_bytes(self, c, data)
        if state == "starting" and c.state != "starting":
            zmark(c, "ready_seen", t)
        if not had and c.result_frame is not None:
            zmark(c, "result_seen", t)
    Zy.on_result_bytes = on_result_bytes

    o_close_fd = Zy.close_fd
    def close_fd(self, c, fd):
        if fd in c.open_fds:
            kind = {c.result_r: "result", c.stdout_r: "stdout", c.stderr_r: "stderr"}.get(fd, "fd")
            zmark(c, "eof_" + kind)
        return o_close_fd(self, c, fd)
    Zy.close_fd = close_fd

    o_on_exit = Zy.on_exit
    def on_exit(self, c):
        zmark(c, "exit_seen")
        return o_on_exit(self, c)
    Zy.on_exit = on_exit

    o_outcome_of = Zy.outcome_of
    def outcome_of(self, c):
        zmark(c, "compose")
        STATE["last"] = (dict(getattr(c, "_bt", {})), c.pid)
        return o_outcome_of(self, c)
    Zy.outcome_of = outcome_of

    o_compose = O.compose
    def compose(o):
        result = o_compose(o)
        last = STATE.pop("last", None)
        if last is not None and isinstance(result, dict):
            tr, pid = last
            t0 = tr.get("ctl_wake", tr.get("spawn>", 0))
            result["_bench_zygote"] = {"events": tr, "pid": pid, "send": now(),
                                       "spawns": [s for s in SPAWNS if s[1] >= t0]}
        return result
    O.compose = compose

_bench_trace_install()
'''


# Experiments: candidate changes to sandbox/, applied at run time in the
# zygote to measure what they would buy (`--variants`). Not instrumentation:
# each is a proposal, spelled out as a diff in bench/README.md.
VARIANTS = {
    "base": "",
    # refill the pool only while no request is in flight (or when it is empty)
    "defer": r'''
import sandbox.zygote as Z
_orig = Z.Zygote.refill_pool
def refill_pool(self):
    busy = any(c.request is not None and c.state in ("starting", "ready", "running") for c in self.children.values())
    idle = sum(1 for c in self.children.values()
               if c.request is None and c.status is None and c.state in ("starting", "ready"))
    if busy and idle > 0:
        return
    return _orig(self)
Z.Zygote.refill_pool = refill_pool
''',
    # when no warm child is ready, hand the request to the oldest child still
    # hardening instead of forking yet another one
    "claim": r'''
import sandbox.zygote as Z
_orig = Z.Zygote.take_ready
def take_ready(self):
    c = _orig(self)
    if c is not None:
        return c
    starting = [c for c in self.children.values()
                if c.state == "starting" and c.request is None and c.status is None]
    return min(starting, key=lambda c: c.started) if starting else None
Z.Zygote.take_ready = take_ready
''',
    # a pooled child, hardened, runs a fixed snippet before it reports ready,
    # so the request does not pay the copy-on-write faults of compile + exec
    "prewarm": r'''
import io, select, sandbox.child as C, sandbox.protocol as P, sandbox.restricted as RP
_orig = P.write_frame_fd
def write_frame_fd(fd, obj):
    if isinstance(obj, dict) and obj.get("kind") == "ready":
        ready, _, _ = select.select([C.REQUEST_FD], [], [], 0)
        if not ready:
            sink = io.StringIO()
            RP.execute("x = [1, 2]; result = len(x) + 2", restricted=True, allowed_modules=frozenset(),
                       stdout=sink, stderr=sink)
    return _orig(fd, obj)
P.write_frame_fd = write_frame_fd
''',
    # compute the bind-mount / Landlock path list once in the zygote instead of
    # twice per execution (stage 2's build_root and stage 3's Landlock rules)
    "paths": r'''
import sandbox.mounts as M
_orig = M.readable_paths
_cache = {}
def readable_paths(*, network):
    if network not in _cache:
        _cache[network] = list(_orig(network=network))
    return list(_cache[network])
M.readable_paths = readable_paths
readable_paths(network=False)
readable_paths(network=True)
''',
    # PROTOTYPE of a design change: no separate init; the snippet process is
    # PID 1 of its pid namespace (seccomp already forbids it to fork, so there
    # is nothing to reap). One fork, one Python process and one exit fewer.
    "merge23": r'''
import os, signal, sandbox.child as C, sandbox.mounts as M, sandbox.privileges as PV
def _stage2(spec, alive_r):
    try:
        PV.set_parent_death_signal(signal.SIGKILL)
        C._exit_if_closed(alive_r)
        os.close(alive_r)
        if "namespaces" in spec.layers:
            M.build_root(network=spec.network, tmp_size=spec.tmp_size, tmp_inodes=spec.tmp_inodes,
                         workspace_size=spec.workspace_size if spec.filesystem else 0)
    except BaseException as exc:
        C._setup_failed("namespaces", exc)
    C._stage3(spec, os.getppid())
C._stage2 = _stage2
''',
    # freeze the zygote's heap out of the collector's reach before forking
    "gcfreeze": r'''
import gc, sandbox.zygote as Z
_orig = Z.Zygote.prepare
def prepare(self):
    gc.collect()
    gc.freeze()
    return _orig(self)
Z.Zygote.prepare = prepare
''',
}


def variant_source(names: str) -> str:
    import textwrap
    parts = []
    for name in names.split("+"):
        body = VARIANTS[name]
        if body:
            parts.append("def _bench_variant():\n" + textwrap.indent(body, "    ") + "\n_bench_variant()\n")
    return "\n".join(parts)


def traced_boot(variant: str = "base") -> str:
    from sandbox import runner
    tail = "from sandbox.zygote import main; main()"
    if tail not in runner.BOOT:
        raise RuntimeError("sandbox.runner.BOOT changed shape; update bench/timeline.py")
    return runner.BOOT.replace(tail, "exec(" + repr(TRACE_SRC + "\n" + variant_source(variant)) + "); " + tail)


# ----------------------------------------------------------------------------- runner-side wrappers


class RunnerClock:
    """Stamps, in this process, when a request frame is encoded and when its
    answer frame has been read off the zygote socket."""

    def __init__(self):
        from sandbox import protocol, runner
        self.sent, self.received = {}, {}
        original_encode, original_read = protocol.encode, runner._read_message
        clock = self

        def encode(obj):
            if isinstance(obj, dict) and obj.get("op") in ("execute", "validate"):
                clock.sent[obj.get("id")] = time.monotonic_ns()
            return original_encode(obj)

        async def read_message(reader):
            message = await original_read(reader)
            clock.received[message.get("id")] = time.monotonic_ns()
            return message

        protocol.encode = encode
        runner._read_message = read_message


def child_events(result: dict) -> dict:
    """First occurrence of each child event, from the trace line on stderr."""
    text = result.get("stderr") or ""
    match = re.search(r"@@BENCHTRACE (\[.*\])", text)
    events: dict = {}
    if match:
        for name, t, cpu in json.loads(match.group(1)):
            events.setdefault(name, t)
            events.setdefault("cpu:" + name, cpu)
    return events


PHASES_POOL = [
    # (label, start event, end event); z: = zygote, c: = child, r: = runner
    ("runner: request encoded -> zygote woken (socket IPC)", "r:sent", "z:ctl_wake"),
    ("zygote: pick pooled child, write request", "z:ctl_wake", "z:request_written"),
    ("child wakes, reads request frame", "z:request_written", "c:request_read<"),
    ("child: lower rlimits, set up streams", "c:request_read<", "c:execute>"),
    ("RestrictedPython compile + exec + result", "c:execute>", "c:execute<"),
    ("child: artifacts, flush, rusage, encode frame", "c:execute<", "c:result_write>"),
    ("result frame -> zygote sees it (pipe IPC)", "c:result_write>", "z:result_seen"),
    ("zygote: wait for pipe EOF (child closes fds)", "z:result_seen", "z:compose"),
    ("zygote: compose result, encode", "z:compose", "z:send"),
    ("zygote -> runner (socket IPC, asyncio read)", "z:send", "r:received"),
    ("runner: future -> caller", "r:received", "r:returned"),
]
PHASES_SPAWN = [
    ("zygote: pipes + fork() (parent side)", "z:spawn>", "z:spawn<"),
    ("stage 1 scheduled after fork", "z:spawn>", "c:s1.start"),
    ("stage 1: setsid, fds, env (before unshare)", "c:s1.start", "c:unshare>"),
    ("stage 1: unshare(mnt,pid,net,ipc,uts)", "c:unshare>", "c:unshare<"),
    ("stage 1: fork stage 2", "c:unshare<", "c:s2.start"),
    ("stage 2: private root (mounts, pivot_root)", "c:mounts>", "c:mounts<"),
    ("stage 2: fork stage 3", "c:mounts<", "c:s3.start"),
    ("stage 3: drop privileges (+ user namespace)", "c:drop_privileges>", "c:drop_privileges<"),
    ("  of which: user namespace + id maps", "c:user_namespace>", "c:user_namespace<"),
    ("stage 3: rlimits (baseline + apply)", "c:rlimits_baseline>", "c:rlimits<"),
    ("stage 3: landlock", "c:landlock>", "c:landlock<"),
    ("stage 3: seccomp", "c:seccomp>", "c:seccomp<"),
    ("stage 3: write ready frame", "c:frame_ready>", "c:frame_ready<"),
    ("fork -> ready (whole hardening)", "z:spawn>", "c:frame_ready<"),
    ("stage 3 ready -> request read", "c:frame_ready<", "c:request_read<"),
]


def timeline_of(result: dict, sent_ns: int, received_ns: int, called_ns: int, returned_ns: int) -> dict:
    z = result.get("_bench_zygote") or {}
    ev = {"r:called": called_ns, "r:sent": sent_ns, "r:received": received_ns, "r:returned": returned_ns}
    ev.update({"z:" + k: v for k, v in (z.get("events") or {}).items()})
    ev["z:send"] = z.get("send")
    ev.update({"c:" + k: v for k, v in child_events(result).items()})
    ev["_spawns"] = z.get("spawns") or []
    return ev


SAME_PROCESS = {("c:unshare>", "c:unshare<"), ("c:mounts>", "c:mounts<"), ("c:drop_privileges>", "c:drop_privileges<"),
                ("c:user_namespace>", "c:user_namespace<"), ("c:rlimits_baseline>", "c:rlimits<"),
                ("c:landlock>", "c:landlock<"), ("c:seccomp>", "c:seccomp<"), ("c:frame_ready>", "c:frame_ready<"),
                ("c:request_read<", "c:execute>"), ("c:execute>", "c:execute<"), ("c:execute<", "c:result_write>"),
                ("c:s1.start", "c:unshare>"), ("c:frame_ready<", "c:request_read<")}


def phase_table(timelines: list, phases: list) -> list:
    rows = []
    for label, a, b in phases:
        values = [(t[b] - t[a]) * NS for t in timelines if t.get(a) and t.get(b)]
        row = {"phase": label, "from": a, "to": b, "n": len(values),
               "median_ms": statistics.median(values) if values else None,
               "p90_ms": sorted(values)[int(0.9 * (len(values) - 1))] if values else None}
        if (a, b) in SAME_PROCESS:
            ca, cb = "c:cpu:" + a[2:], "c:cpu:" + b[2:]
            cpu = [(t[cb] - t[ca]) * NS for t in timelines if t.get(ca) is not None and t.get(cb) is not None]
            # process CPU clocks tick at scheduler-tick resolution on this kind of VM: use the mean
            row["cpu_mean_ms"] = statistics.fmean(cpu) if cpu else None
        rows.append(row)
    return rows


async def run_timeline(pool: int, runs: int, pace: float, log, variant: str = "base") -> dict:
    from sandbox import profiles, runner as runner_mod
    from sandbox.runner import ExecRequest, Runner, RunnerConfig
    clock = RunnerClock()
    original_boot = runner_mod.BOOT
    runner_mod.BOOT = traced_boot(variant)
    runner = Runner(RunnerConfig(pool_size=pool, max_timeout=60))
    try:
        await runner.start()
    finally:
        runner_mod.BOOT = original_boot
    request = ExecRequest(code=TRIVIAL, timeout=30.0, memory_limit=128 << 20,
                          allowed_modules=frozenset(profiles.allowed_modules(["basic"])))
    from run import CpuMeter  # bench/run.py
    timelines, totals = [], []
    meter = CpuMeter(None, runner.zygote_pid())
    cpu = None
    try:
        await asyncio.sleep(1.0)
        for i in range(runs + 5):
            if i == 5:
                meter.start()
            if pace:
                await asyncio.sleep(pace)
            called = time.monotonic_ns()
            result = await runner.execute(request)
            returned = time.monotonic_ns()
            if not result.get("success"):
                raise RuntimeError(f"execution failed: {result.get('error_type')}: {result.get('error')}")
            if i < 5:
                continue
            rid = result["execution_id"]
            timelines.append(timeline_of(result, clock.sent.get(rid), clock.received.get(rid), called, returned))
            totals.append((returned - called) * NS)
        await asyncio.sleep(0.3)
        cpu = meter.stop(runs)["cpu_ms_per_call"]
    finally:
        await runner.aclose()
    spawn_rows = phase_table(timelines, PHASES_SPAWN) if pool == 0 else []
    # in the pool case, did a refill fork run inside this request's window?
    overlapping = 0
    for t in timelines:
        if any(s[2] == "refill" and s[0] < t["r:returned"] and s[1] > t["r:sent"] for s in t["_spawns"]):
            overlapping += 1
    refill_ms = [(s[1] - s[0]) * NS for t in timelines for s in t["_spawns"] if s[2] == "refill"]
    # a request served by a child forked for it (the pool was empty) rather than a warm one
    fresh = sum(1 for t in timelines if t.get("z:spawn>") and t.get("z:ctl_wake") and t["z:spawn>"] >= t["z:ctl_wake"])
    log(f"  timeline {variant} pool={pool} pace={pace}: median total {statistics.median(totals):.2f} ms")
    return {"variant": variant, "pool": pool, "runs": len(timelines), "pace_s": pace,
            "total_ms": {"median": statistics.median(totals), "p90": sorted(totals)[int(0.9 * (len(totals) - 1))]},
            "phases": phase_table(timelines, PHASES_POOL), "spawn_phases": spawn_rows,
            "refill_fork_in_window": overlapping, "cpu_ms_per_execution": cpu, "fresh_child_requests": fresh,
            "refill_fork_ms_median": statistics.median(refill_ms) if refill_ms else None,
            "example": {k: v for k, v in timelines[len(timelines) // 2].items() if k != "_spawns"}}


# ----------------------------------------------------------------------------- py-spy


# py-spy's idle detection does not work in this VM (every thread is sampled,
# blocked or not): drop the samples whose innermost frame is a blocking wait.
IDLE_LEAVES = {"EpollSelector.select", "select", "Condition.wait", "ThreadedChildWatcher._do_waitpid",
               "WorkerThread.run", "Queue.get", "Event.wait", "_wait_for_tstate_lock", "Thread.join"}


def _pyspy_aggregate(path: str, rate: int, top: int = 18) -> dict:
    """Collapsed stacks -> self and inclusive sample counts per function (busy samples only)."""
    self_counts, incl_counts, total, idle = Counter(), Counter(), 0, 0
    files = Counter()
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            n = int(count)
            frames = [fr for fr in stack.split(";") if fr and not fr.startswith("process ")
                      and not fr.startswith("thread ")]
            if not frames:
                continue
            if _short(frames[-1]).split(" (")[0] in IDLE_LEAVES:
                idle += n
                continue
            total += n
            self_counts[_short(frames[-1])] += n
            for fr in set(_short(x) for x in frames):
                incl_counts[fr] += n
            files[_area(frames[-1])] += n
    return {"samples": total, "idle_samples_dropped": idle, "rate_hz": rate, "cpu_s": total / rate,
            "self_top": [(k, v, v / total) for k, v in self_counts.most_common(top)] if total else [],
            "inclusive_top": [(k, v, v / total) for k, v in incl_counts.most_common(top)] if total else [],
            "self_by_area": [(k, v, v / total) for k, v in files.most_common()] if total else []}


def _short(frame: str) -> str:
    # "func (path/to/file.py:123)" -> "func (file.py)"
    m = re.match(r"(.*) \((.*?):?(\d+)?\)$", frame)
    if not m:
        return frame
    return f"{m.group(1)} ({m.group(2).split('site-packages/')[-1].split('/main/')[-1]})"


AREAS = [("pydantic", "pydantic"), ("mcp_types", "mcp (types, wire models)"), ("/mcp/", "mcp (SDK)"),
         ("anyio", "anyio"), ("asyncio", "asyncio"), ("json", "json"), ("sandbox/", "sandbox (our code)"),
         ("selectors", "selectors"), ("logging", "logging"), ("uuid", "uuid"), ("typing", "typing"),
         ("<frozen", "importlib"), ("threading", "threading")]


def _area(frame: str) -> str:
    for needle, name in AREAS:
        if needle in frame:
            return name
    return "other"


async def run_pyspy(duration: float, log) -> dict:
    from mcp_client import descendants, open_session
    if shutil.which("py-spy") is None:
        return {"status": "py-spy not installed (pip install py-spy)"}
    out = {}
    env = {"SANDBOX_POOL_SIZE": "4", "SANDBOX_MAX_CONCURRENCY": "16", "SANDBOX_LOG_LEVEL": "warning"}
    async with open_session(env, timeout=60) as server:
        for _ in range(10):
            await server.call("execute_code", {"code": TRIVIAL})
        await asyncio.sleep(1.0)
        zygote = next((p for p in descendants(server.pid)
                       if _ppid(p) == server.pid), None)
        tmp = tempfile.mkdtemp(prefix="bench-pyspy-")
        rate = 250
        procs = {}
        for name, pid in (("server", server.pid), ("zygote", zygote)):
            if pid is None:
                continue
            path = os.path.join(tmp, f"{name}.txt")
            procs[name] = (path, subprocess.Popen(
                ["py-spy", "record", "--pid", str(pid), "--rate", str(rate), "--format", "raw",
                 "--output", path, "--duration", str(int(duration))],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        await asyncio.sleep(0.5)
        calls, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < duration - 1.0:
            await server.call("execute_code", {"code": TRIVIAL})
            calls += 1
        elapsed = time.perf_counter() - t0
        for name, (path, proc) in procs.items():
            _, err = await asyncio.to_thread(proc.communicate)
            if proc.returncode != 0 or not os.path.exists(path):
                out[name] = {"status": f"py-spy failed: {err.decode(errors='replace')[-300:]}"}
                continue
            agg = _pyspy_aggregate(path, rate)
            agg["cpu_ms_per_call"] = agg["cpu_s"] * 1000 / calls if calls else None
            out[name] = agg
        out["calls"] = calls
        out["calls_per_s"] = calls / elapsed
        log(f"  py-spy: {calls} calls in {elapsed:.1f} s")
    return out


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
        return int(data[data.rindex(")") + 2:].split()[1])
    except (OSError, ValueError):
        return None


# ----------------------------------------------------------------------------- perf: kernel vs Python


PERF_BUCKETS = [
    # (label, inclusive symbol); inclusive percentages overlap (a COW fault inside fork's caller...)
    ("page faults (all)", "exc_page_fault"),
    ("  of which copy-on-write (do_wp_page)", "do_wp_page"),
    ("fork: copy_process (page tables: dup_mmap)", "copy_process"),
    ("  of which dup_mmap", "dup_mmap"),
    ("process exit (do_exit)", "do_exit"),
    ("unshare (namespaces)", "ksys_unshare"),
    ("  of which network namespace (copy_net_ns)", "copy_net_ns"),
    ("  of which mount namespace copy (copy_mnt_ns)", "copy_mnt_ns"),
    ("mount(2)", "__x64_sys_mount"),
    ("pivot_root(2)", "__do_sys_pivot_root"),
    ("umount(2)", "__x64_sys_umount"),
    ("seccomp(2) / prctl install", "do_seccomp"),
    ("landlock_* syscalls", "landlock"),
    ("prlimit/setrlimit", "do_prlimit"),
    ("openat", "do_sys_openat2"),
    ("stat family", "__do_sys_newfstatat"),
    ("all syscalls (do_syscall_64)", "do_syscall_64"),
    ("Python interpreter (_PyEval_EvalFrameDefault incl.)", "_PyEval_EvalFrameDefault"),
]


async def run_perf(pool: int, seconds: float, log) -> dict:
    """perf record -g on the zygote and (inherited) every child it forks while
    trivial executions run paced; inclusive CPU per bucket per execution."""
    if shutil.which("perf") is None:
        return {"status": "perf not installed"}
    from sandbox import profiles
    from sandbox.runner import ExecRequest, Runner, RunnerConfig
    request = ExecRequest(code=TRIVIAL, timeout=30.0, memory_limit=128 << 20,
                          allowed_modules=frozenset(profiles.allowed_modules(["basic"])))
    runner = Runner(RunnerConfig(pool_size=pool, max_timeout=60))
    await runner.start()
    data = tempfile.mktemp(prefix="bench-perf-", suffix=".data")
    executions = 0
    try:
        await asyncio.sleep(1.0)
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-g",
                                 "-p", str(runner.zygote_pid()), "-o", data],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        await asyncio.sleep(0.5)
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            result = await runner.execute(request)
            if not result.get("success"):
                raise RuntimeError(f"execution failed: {result.get('error')}")
            executions += 1
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)
        perf.send_signal(2)
        _, err = await asyncio.to_thread(perf.communicate)
    finally:
        await runner.aclose()
    report = subprocess.run(["perf", "report", "-i", data, "--children", "--sort", "sym", "-g", "none",
                             "--stdio"], capture_output=True, text=True).stdout
    os.unlink(data)
    m = re.search(r"Event count \(approx\.\): (\d+)", report)
    if not m:
        return {"status": f"perf produced no samples: {err.decode(errors='replace')[-200:]}"}
    total_ms = int(m.group(1)) / 1e6  # cpu-clock counts nanoseconds
    inclusive = {}
    for line in report.splitlines():
        mm = re.match(r"\s+([\d.]+)%\s+([\d.]+)%\s+\[[k.]\]\s+(\S+)", line)
        if mm:
            inclusive.setdefault(mm.group(3), float(mm.group(1)))
    rows = []
    for label, symbol in PERF_BUCKETS:
        pct = inclusive.get(symbol)
        if pct is None and symbol == "landlock":
            pct = sum(v for k, v in inclusive.items() if k.startswith("__x64_sys_landlock") or
                      k.startswith("__do_sys_landlock"))
        rows.append({"bucket": label, "symbol": symbol, "percent": pct or 0.0,
                     "ms_per_execution": (pct or 0.0) / 100 * total_ms / max(executions, 1)})
    log(f"  perf pool={pool}: {executions} executions, {total_ms / max(executions, 1):.2f} ms CPU each "
        "(zygote + children)")
    return {"pool": pool, "executions": executions, "cpu_ms_per_execution": total_ms / max(executions, 1),
            "buckets": rows, "note": "perf cpu-clock, -g, attached to the zygote with inheritance: the zygote "
                                      "and every process it forks; inclusive percentages overlap"}


# ----------------------------------------------------------------------------- server under cProfile


SERVER_AREAS = [
    ("pydantic_core", "pydantic (validation/serialization, C)"), ("pydantic", "pydantic (Python)"),
    ("mcp_types", "mcp wire models"), ("mcp/server", "mcp server"), ("mcp/shared", "mcp JSON-RPC dispatch"),
    ("mcp/", "mcp other"), ("anyio", "anyio"), ("asyncio", "asyncio"), ("threading", "threads (stdio)"),
    ("json", "json"), ("sandbox/server.py", "sandbox/server.py"), ("sandbox/runner.py", "sandbox/runner.py"),
    ("sandbox/audit.py", "sandbox/audit.py"), ("sandbox/", "sandbox other"), ("logging", "logging"),
    ("uuid", "uuid"), ("select", "selectors / epoll"), ("socket", "socket I/O"),
]


def _server_area(key) -> str:
    filename, _, name = key
    text = f"{filename} {name}"
    for needle, area in SERVER_AREAS:
        if needle in text:
            return area
    return "other"


async def run_server_cprofile(calls: int, log) -> dict:
    """The MCP server's main thread under cProfile (CPU clock) while it
    answers `calls` trivial execute_code calls after a warm-up: the profiler
    is switched on by SIGUSR1 and off (and dumped) by SIGUSR2, so start-up and
    lazy imports stay out of the figures."""
    import pstats
    import signal as _signal
    from mcp_client import open_session
    env = {"SANDBOX_POOL_SIZE": "4", "SANDBOX_MAX_CONCURRENCY": "16", "SANDBOX_LOG_LEVEL": "warning"}
    path = tempfile.mktemp(prefix="bench-server-", suffix=".prof")
    launcher = str(ROOT / "bin" / "mcp-server-python-sandbox")
    boot = ("import cProfile, runpy, signal, sys, time\n"
            f"sys.argv = [{launcher!r}]\n"
            "p = cProfile.Profile(time.thread_time)\n"
            "signal.signal(signal.SIGUSR1, lambda *a: p.enable())\n"
            f"signal.signal(signal.SIGUSR2, lambda *a: (p.disable(), p.dump_stats({path!r})))\n"
            "runpy.run_path(sys.argv[0], run_name='__main__')\n")
    command = [sys.executable, "-c", boot]
    async with open_session(env, command=command, timeout=60) as server:
        for _ in range(20):
            await server.call("execute_code", {"code": TRIVIAL})
        await asyncio.sleep(0.5)
        os.kill(server.pid, _signal.SIGUSR1)
        await asyncio.sleep(0.1)
        for _ in range(calls):
            await server.call("execute_code", {"code": TRIVIAL})
        os.kill(server.pid, _signal.SIGUSR2)
        for _ in range(100):
            if os.path.exists(path):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.3)
    stats = pstats.Stats(path).stats
    os.unlink(path)
    per_area = defaultdict(float)
    per_func_self, per_func_cum = {}, {}
    for key, (cc, nc, tt, ct, callers) in stats.items():
        per_area[_server_area(key)] += tt
        name = f"{key[2]} ({key[0].split('site-packages/')[-1].split('/main/')[-1]}:{key[1]})"
        per_func_self[name] = tt
        per_func_cum[name] = ct
    total = sum(per_area.values())
    out = {"calls": calls, "profiled_main_thread_ms_per_call": total * 1000 / calls,
           "self_by_area_ms_per_call": sorted(((k, v * 1000 / calls) for k, v in per_area.items()),
                                              key=lambda kv: -kv[1]),
           "self_top_ms_per_call": sorted(((k, v * 1000 / calls) for k, v in per_func_self.items()),
                                          key=lambda kv: -kv[1])[:20],
           "cumulative_top_ms_per_call": sorted(((k, v * 1000 / calls) for k, v in per_func_cum.items()),
                                                key=lambda kv: -kv[1])[:45],
           "note": "main-thread CPU (time.thread_time) in a warm window; cProfile inflates Python-level "
                   "costs, compare areas rather than absolutes; the stdio reader/writer threads are not in it"}
    log(f"  server cProfile: {out['profiled_main_thread_ms_per_call']:.2f} ms main-thread CPU per call (profiled)")
    return out


# ----------------------------------------------------------------------------- start-up split


def run_startup(log) -> dict:
    def timed(argv, reps=3, **kw):
        values = []
        for _ in range(reps):
            t0 = time.perf_counter()
            subprocess.run(argv, capture_output=True, cwd=str(ROOT), **kw)
            values.append(time.perf_counter() - t0)
        return statistics.median(values)

    out = {
        "python -c pass": timed([sys.executable, "-c", "pass"]),
        "python -I -S -c pass (the zygote's interpreter start)": timed([sys.executable, "-I", "-S", "-c", "pass"]),
        "import pydantic": timed([sys.executable, "-c", "import pydantic"]),
        "import mcp.server.mcpserver": timed([sys.executable, "-c", "import mcp.server.mcpserver"]),
        "import sandbox.server": timed([sys.executable, "-c", "import sandbox.server"]),
        "bin/mcp-server-python-sandbox --version": timed([sys.executable, str(ROOT / "bin" / "mcp-server-python-sandbox"), "--version"]),
    }

    async def start_runner():
        from sandbox.runner import Runner, RunnerConfig
        values = []
        for _ in range(3):
            r = Runner(RunnerConfig(pool_size=4))
            t0 = time.perf_counter()
            await r.start()
            values.append(time.perf_counter() - t0)
            await r.aclose()
        return statistics.median(values)

    out["Runner.start(): zygote spawn, imports, layer probe, hello"] = asyncio.run(start_runner())
    log("  start-up split: " + ", ".join(f"{k} {v:.3f}" for k, v in out.items()))
    return {k: round(v, 4) for k, v in out.items()}


# ----------------------------------------------------------------------------- report


def render(res: dict) -> str:
    lines = []
    w = lines.append
    for key, tl in (res.get("timeline") or {}).items():
        if not tl:
            continue
        w(f"\ntimeline [{tl.get('variant', 'base')}]: pool={tl['pool']}, {'paced ' + str(tl['pace_s']) + ' s' if tl['pace_s'] else 'back-to-back'}, "
          f"n={tl['runs']}, total median {tl['total_ms']['median']:.2f} ms, p90 {tl['total_ms']['p90']:.2f} ms"
          + (f"; a refill fork ran inside {tl['refill_fork_in_window']} of {tl['runs']} requests "
             f"(fork median {tl['refill_fork_ms_median']:.2f} ms)" if tl["pool"] and tl['refill_fork_ms_median'] else ""))
        if tl["pool"]:
            w(f"  requests served by a child forked for them (no warm child left): "
              f"{tl.get('fresh_child_requests')} of {tl['runs']}")
        if tl.get("cpu_ms_per_execution"):
            c = tl["cpu_ms_per_execution"]
            w(f"  CPU per execution: zygote {c['zygote']:.2f} ms, sandbox children {c['children']:.2f} ms, "
              f"runner (this process) {c['client']:.2f} ms")
        if tl["spawn_phases"]:
            w("  spawn (no pool: inside the request)")
            for row in tl["spawn_phases"]:
                w(_phase_line(row))
        w("  request")
        for row in tl["phases"]:
            w(_phase_line(row))
    spy = res.get("pyspy") or {}
    for name in ("server", "zygote"):
        s = spy.get(name)
        if not s:
            continue
        if "status" in s:
            w(f"\npy-spy {name}: {s['status']}")
            continue
        w(f"\npy-spy {name}: {s['samples']} busy samples at {s['rate_hz']} Hz ({s['idle_samples_dropped']} idle "
          f"dropped) over {spy['calls']} calls ({spy['calls_per_s']:.0f}/s) = {s['cpu_ms_per_call']:.2f} ms "
          "per call on-CPU or runnable (wall-clock sampling; ptrace stops slow the target)")
        w("  self time by area: " + ", ".join(f"{k} {p * 100:.0f}%" for k, _, p in s["self_by_area"][:10]))
        w("  inclusive top:")
        for k, _, p in s["inclusive_top"][:14]:
            w(f"    {p * 100:5.1f}%  {k}")
    for key in ("nopool", "pool"):
        pf = (res.get("perf") or {}).get(key)
        if not pf:
            continue
        if "status" in pf:
            w(f"\nperf {key}: {pf['status']}")
            continue
        w(f"\nperf, pool={pf['pool']}: zygote + children {pf['cpu_ms_per_execution']:.2f} ms CPU per execution "
          f"(n={pf['executions']}; inclusive, buckets overlap)")
        for row in pf["buckets"]:
            w(f"    {row['bucket']:<56} {row['percent']:5.1f}%  {row['ms_per_execution']:6.2f} ms")
    sp = res.get("server_cprofile")
    if sp:
        w(f"\nMCP server main thread under cProfile: {sp['profiled_main_thread_ms_per_call']:.2f} ms per call "
          f"(n={sp['calls']}; {sp['note']})")
        w("  self time by area (ms per call): " + ", ".join(f"{k} {v:.2f}" for k, v in
                                                             sp["self_by_area_ms_per_call"][:12]))
        w("  cumulative (ms per call):")
        for k, v in sp["cumulative_top_ms_per_call"][:45]:
            w(f"    {v:7.3f}  {k}")
    st = res.get("startup")
    if st:
        w("\nstart-up split (median of 3, seconds):")
        for k, v in st.items():
            w(f"  {k:<60} {v:.3f}")
    return "\n".join(lines)


def _phase_line(row) -> str:
    cpu = f"  cpu(mean) {_ms(row['cpu_mean_ms']):>7}" if row.get("cpu_mean_ms") is not None else ""
    return (f"    {row['phase']:<52} wall {_ms(row['median_ms']):>8}  p90 {_ms(row['p90_ms']):>8}{cpu}"
            f"  n={row['n']}")


def _ms(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="timeline,perf,pyspy,server,startup")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--variants", default="base",
                        help="timeline variants, comma list of " + ",".join(VARIANTS) + " or a+b combinations")
    parser.add_argument("--pyspy-seconds", type=float, default=8.0)
    parser.add_argument("--out", default=str(RESULTS / "profile.json"))
    args = parser.parse_args(argv)
    only = {s.strip() for s in args.only.split(",")}
    started = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - started:6.1f}s] {msg}", file=sys.stderr, flush=True)

    res: dict = {"load_avg_start": os.getloadavg()}
    if "timeline" in only:
        res["timeline"] = {}
        for variant in args.variants.split(","):
            res["timeline"][f"{variant}/pool_paced"] = asyncio.run(run_timeline(4, args.runs, 0.1, log, variant))
            res["timeline"][f"{variant}/pool_back_to_back"] = asyncio.run(
                run_timeline(4, args.runs, 0.0, log, variant))
            res["timeline"][f"{variant}/nopool"] = asyncio.run(run_timeline(0, args.runs, 0.05, log, variant))
    if "perf" in only:
        res["perf"] = {"nopool": asyncio.run(run_perf(0, 6.0, log)), "pool": asyncio.run(run_perf(4, 6.0, log))}
    if "pyspy" in only:
        res["pyspy"] = asyncio.run(run_pyspy(args.pyspy_seconds, log))
    if "server" in only:
        res["server_cprofile"] = asyncio.run(run_server_cprofile(args.runs * 5, log))
    if "startup" in only:
        res["startup"] = run_startup(log)
    res["load_avg_end"] = os.getloadavg()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=2, default=str) + "\n")
    print(render(res))
    print(f"\nload average at start {res['load_avg_start']}, at end {res['load_avg_end']}")
    print(f"JSON: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

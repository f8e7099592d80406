#!/usr/bin/env python3
"""`make bench`: latency, throughput, start-up and memory of the sandbox, and
the baselines it is judged against, measured on this machine in one run.

    python bench/run.py            # full run (about 3 minutes on 2 cores)
    python bench/run.py --quick    # about 30 seconds, fewer samples
    python bench/run.py --only mcp,baselines   # a subset of the sections

What is measured (every figure carries its sample count n):

* latency of one `execute_code` through the real MCP stdio path (a `mcp`
  ClientSession talking to `bin/mcp-server-python-sandbox` over pipes, the tool result
  validated by the client as a desktop client would) and through the Runner
  API directly, warm pool on (pool_size 4) and off (0). "back-to-back" issues
  the next call as soon as the previous one answered, so the pool refill of
  the previous call competes with it for the CPUs; "paced" leaves a gap after
  each call so the pool is full again (an agent with think time between calls).
* throughput with 1, 2, 4 and 8 concurrent clients, modelled three ways:
  N tool calls in flight on ONE MCP session (closed loop: each of N workers
  sends its next call when its previous one answered); N MCP sessions, i.e.
  N server processes with one sequential client each (stdio serves one
  client per process); and N concurrent Runner.execute calls.
* a CPU-bound snippet and one importing json, re, math, collections, datetime.
* baselines in the same run: a fresh `python -I -S -c` per call, the same
  under `bwrap --unshare-all` (when bwrap is installed), and in-process
  RestrictedPython compile_restricted + exec (the insecure floor).
* start-up to the first answered `initialize`, and idle memory (PSS and RSS)
  of the server, the fork server and a full warm pool.

Targets are printed next to the figures; they are never asserted. The exit
status is 0 unless a section could not be measured at all.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _p in (str(ROOT), str(ROOT / "tests")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

RESULTS = ROOT / "bench" / "results"
LAUNCHER = ROOT / "bin" / "mcp-server-python-sandbox"
MiB = 1 << 20
POOL = 4  # "pool on"

SNIPPETS = {
    "trivial": "result = 2 + 2",
    # a loop of 10**6 additions. A while loop, not range(10**6): RestrictedPython's
    # limited_builtins cap range() at 1000 items; `x = x + 1`, not `+=`, which
    # RestrictedPython rewrites into a guard call per iteration
    "cpu": "total = 0\ni = 0\nwhile i < 1000000:\n    total = total + i\n    i = i + 1\nresult = total",
    "imports": ("import json, re, math, collections, datetime\n"
                "result = [json.dumps({'a': 1}), bool(re.match('a+', 'aa')), math.sqrt(16.0),\n"
                "          collections.Counter('aab')['a'], datetime.date(2020, 1, 2).isoformat()]"),
}
EXPECTED = {
    "trivial": 4,
    "cpu": 499999500000,
    "imports": ['{"a": 1}', True, 4.0, 2, "2020-01-02"],
}
LABEL = {"trivial": "trivial (result = 2 + 2)", "cpu": "cpu-bound (while loop, 10**6 additions)",
         "imports": "imports (json, re, math, collections, datetime)"}

TARGETS = {
    "mcp_pool_trivial_p50_ms": ("<=", 2.0, "warm pool MCP stdio round-trip p50 <= 2 ms"),
    "mcp_pool_trivial_p99_ms": ("<=", 10.0, "warm pool MCP stdio round-trip p99 <= 10 ms"),
    "mcp_nopool_trivial_p50_ms": ("<=", 12.0, "no pool MCP stdio p50 <= 12 ms"),
    "throughput_4_clients_per_s": (">=", 500.0, ">= 500 exec/s with 4 concurrent clients"),
    "bwrap_speedup_x": (">=", 8.0, ">= 8x faster than bwrap+python per call"),
    "runner_vs_inprocess_p50_x": ("<=", 3.0, "runner API p50 within 3x of in-process exec"),
    "startup_s": ("<=", 1.5, "start-up to first initialize <= 1.5 s"),
    "idle_pss_mb": ("<=", 80.0, "idle PSS with the pool full <= 80 MB"),
}


# ----------------------------------------------------------------------------- sample counts


def plan(quick: bool) -> dict:
    """Sample counts; --quick divides the full run by about 6."""
    full = {
        "warmup": 10,
        "lat_pool": 300,          # back-to-back, warm pool
        "lat_paced": 120,         # paced, warm pool
        "pace_s": 0.05,
        "lat_nopool": 120,
        "lat_cpu": 20,
        "lat_imports": 60,
        "base_trivial": 60,
        "base_cpu": 15,
        "base_imports": 40,
        "inproc_trivial": 2000,
        "inproc_cpu": 15,
        "inproc_imports": 500,
        "tp_levels": (1, 2, 4, 8),
        "tp_warm_s": 1.0,
        "tp_window_s": 4.0,
        "tp_sessions_window_s": 3.0,
        "runner_tp_window_s": 2.0,
        "startup_reps": 5,
        "steps_runs": 100,
        "settle_s": 2.0,
        "lat_modes": 150,
    }
    if not quick:
        return full
    return {**full, "warmup": 5, "lat_pool": 40, "lat_paced": 20, "lat_nopool": 20, "lat_cpu": 3,
            "lat_imports": 10, "base_trivial": 10, "base_cpu": 3, "base_imports": 8,
            "inproc_trivial": 300, "inproc_cpu": 3, "inproc_imports": 100, "tp_warm_s": 0.3,
            "tp_window_s": 1.0, "tp_sessions_window_s": 1.0, "runner_tp_window_s": 0.7,
            "startup_reps": 2, "settle_s": 1.0, "steps_runs": 30, "lat_modes": 25}


# ----------------------------------------------------------------------------- statistics


def percentile(sorted_values: list, q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        return float("nan")
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(seconds: list, failures: int = 0, **extra) -> dict:
    ms = sorted(s * 1000.0 for s in seconds)
    out = {"n": len(ms), "failures": failures}
    if ms:
        out.update(p50_ms=percentile(ms, 0.50), p90_ms=percentile(ms, 0.90), p99_ms=percentile(ms, 0.99),
                   mean_ms=statistics.fmean(ms), min_ms=ms[0], max_ms=ms[-1])
    out.update(extra)
    return out


def check(name: str, value) -> bool:
    return value == EXPECTED[name]


# ----------------------------------------------------------------------------- /proc helpers


def descendants(pid: int) -> list:
    children: dict = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                data = f.read().decode(errors="replace")
        except OSError:
            continue
        fields = data[data.rindex(")") + 2:].split()
        if fields[0] in ("Z", "X"):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        for c in children.get(stack.pop(), ()):
            found.append(c)
            stack.append(c)
    return found


def is_cloner(pid: int) -> bool:
    """The fork server's helper the children are cloned from (sandbox/forkserver/cloner.py)."""
    from mcp_client import CLONER, name_of
    return name_of(pid) == CLONER


def memory_of(pid: int) -> dict:
    """{'rss_kb', 'pss_kb'} from smaps_rollup (0s when the process is gone)."""
    values = {"rss_kb": 0, "pss_kb": 0}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("Rss", "Pss"):
                    values[key.lower() + "_kb"] = int(rest.split()[0])
    except OSError:
        pass
    return values


def depth_below(pid: int, root: int) -> int:
    depth = 0
    while pid not in (root, 0, 1):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                data = f.read().decode(errors="replace")
        except OSError:
            return -1
        pid = int(data[data.rindex(")") + 2:].split()[1])
        depth += 1
    return depth


CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid) -> tuple:
    """(own CPU seconds, CPU seconds of reaped descendants) of a process."""
    if not pid:
        return 0.0, 0.0
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode(errors="replace")
    except OSError:
        return 0.0, 0.0
    fields = data[data.rindex(")") + 2:].split()
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return (utime + stime) / CLK_TCK, (cutime + cstime) / CLK_TCK


def machine_busy() -> float:
    """CPU seconds the whole machine spent busy since boot (all CPUs)."""
    with open("/proc/stat") as f:
        parts = f.readline().split()[1:]
    user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in parts[:8])
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


IDLE = {"busy_cpus": 0.0}  # the machine's busy CPUs with nothing of ours running (measured at start)


def measure_idle(seconds: float = 2.0) -> float:
    """The idle baseline: busy CPUs of the machine while this benchmark sleeps
    (kernel housekeeping, other users). Subtracted from the rest of the machine."""
    busy0, wall0 = machine_busy(), time.perf_counter()
    time.sleep(seconds)
    IDLE["busy_cpus"] = max(0.0, (machine_busy() - busy0) / (time.perf_counter() - wall0))
    return IDLE["busy_cpus"]


class CpuMeter:
    """CPU time per execution, split by process: this client, the server, the
    fork server (with its cloner), and the sandbox children (the fork server's reaped descendants). The
    rest of the machine's busy time is kernel work done outside these
    processes (network-namespace cleanup runs in kworkers) plus any other load."""

    def __init__(self, server_pid=None, fork_server_pid=None):
        from mcp_client import cloner_of
        self.server_pid, self.fork_server_pid = server_pid, fork_server_pid
        # alive for the whole run, so its CPU is never reaped into the fork server's: read directly
        self.cloner_pid = cloner_of(fork_server_pid)

    def _read(self):
        server, _ = proc_cpu(self.server_pid)
        fork_server, children = proc_cpu(self.fork_server_pid)
        fork_server += proc_cpu(self.cloner_pid)[0]
        return {"client": time.process_time(), "server": server, "fork_server": fork_server, "children": children,
                "machine": machine_busy(), "wall": time.perf_counter()}

    def start(self):
        self.t0 = self._read()
        return self

    def stop(self, calls: int) -> dict:
        t1 = self._read()
        d = {k: t1[k] - self.t0[k] for k in t1}
        ours = d["client"] + d["server"] + d["fork_server"] + d["children"]
        per = {k: d[k] * 1000 / max(calls, 1) for k in ("client", "server", "fork_server", "children")}
        if not self.server_pid:
            per.pop("server")
        per["ours_total"] = ours * 1000 / max(calls, 1)
        per["rest_of_machine"] = (d["machine"] - ours - IDLE["busy_cpus"] * d["wall"]) * 1000 / max(calls, 1)
        return {"cpu_ms_per_call": per, "calls": calls,
                "machine_busy_cpus": d["machine"] / d["wall"] if d["wall"] else None}


def fork_server_of(pid) -> "int | None":
    """The fork server: the direct child of the server process."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    data = f.read().decode(errors="replace")
            except OSError:
                continue
            if int(data[data.rindex(")") + 2:].split()[1]) == pid:
                return int(entry)
    return None


async def wait_pool_full(root_pid: int, minimum: int, settle: float, timeout: float = 30.0) -> int:
    """Wait until `root_pid` has at least `minimum` live descendants and the
    count has not changed for `settle` seconds (a pooled child is one process; the cloner is not counted)."""
    deadline = time.monotonic() + timeout
    stable_since = None
    count = -1
    while time.monotonic() < deadline:
        now_count = len([pid for pid in descendants(root_pid) if not is_cloner(pid)])
        if now_count >= minimum and now_count == count:
            stable_since = stable_since or time.monotonic()
            if time.monotonic() - stable_since >= settle:
                break
        else:
            stable_since = None
        count = now_count
        await asyncio.sleep(0.05)
    return count


# ----------------------------------------------------------------------------- MCP side


# --profile-env NAME=VALUE settings every server of the run gets (a profile switched on)
PROFILE_ENV: dict = {}


def server_env(pool: int, concurrency: int = 16) -> dict:
    return {"SANDBOX_POOL_SIZE": str(pool), "SANDBOX_MAX_CONCURRENCY": str(concurrency),
            "SANDBOX_LOG_LEVEL": "warning", **PROFILE_ENV}


@contextlib.asynccontextmanager
async def mcp_server(pool: int, concurrency: int = 16):
    from mcp_client import open_session  # tests/mcp_client.py: a real mcp ClientSession over stdio
    async with open_session(server_env(pool, concurrency), timeout=120.0, start_timeout=120.0) as server:
        yield server


async def mcp_call(server, name: str):
    data, result = await server.call("execute_code", {"code": SNIPPETS[name]})
    ok = bool(data) and data.get("success") is True and check(name, data.get("result"))
    return ok, data


async def timed_series(call, n: int, warmup: int, pace: float = 0.0, meter: "CpuMeter | None" = None):
    """Run `call()` warmup + n times, sequentially; returns (seconds, failures, first_error[, cpu])."""
    samples, failures, first_error = [], 0, None
    for i in range(warmup + n):
        if i == warmup and meter is not None:
            meter.start()
        t0 = time.perf_counter()
        ok, data = await call()
        dt = time.perf_counter() - t0
        if i >= warmup:
            if ok:
                samples.append(dt)
            else:
                failures += 1
        if not ok and first_error is None:
            first_error = _error_text(data)
        if pace:
            await asyncio.sleep(pace)
    if meter is not None:
        await asyncio.sleep(0.3)  # let the last children be reaped into the fork server's account
        return samples, failures, first_error, meter.stop(n)
    return samples, failures, first_error


def _error_text(data) -> str:
    if isinstance(data, dict):
        return f"{data.get('error_type')}: {str(data.get('error'))[:300]}"
    return repr(data)[:300]


def _series_result(samples, failures, first_error, cpu=None, **extra) -> dict:
    out = summarize(samples, failures, **extra)
    if first_error:
        out["first_error"] = first_error
    if cpu:
        out["cpu"] = cpu
    return out


async def closed_loop(call, workers: int, warm_s: float, window_s: float,
                      meter: "CpuMeter | None" = None) -> dict:
    """N workers, each sending its next call when the previous one answered.
    Counts the calls that finished inside [start + warm, start + warm + window]."""
    stop = time.perf_counter() + warm_s + window_s
    start = time.perf_counter()

    async def start_meter():
        await asyncio.sleep(warm_s)
        meter.start()

    starter = asyncio.ensure_future(start_meter()) if meter else None
    lo, hi = start + warm_s, start + warm_s + window_s
    done, lat, failures = [], [], [0]
    first_error = []

    async def worker():
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            ok, data = await call()
            t1 = time.perf_counter()
            if lo <= t1 <= hi:
                if ok:
                    done.append(t1)
                    lat.append(t1 - t0)
                else:
                    failures[0] += 1
            if not ok and not first_error:
                first_error.append(_error_text(data))

    await asyncio.gather(*(worker() for _ in range(workers)))
    out = summarize(lat, failures[0], clients=workers, window_s=window_s,
                    completed=len(done), per_s=len(done) / window_s)
    if starter is not None:
        await starter
        out["cpu"] = meter.stop(len(done))
    if first_error:
        out["first_error"] = first_error[0]
    return out


async def bench_mcp(p: dict, log, memory_only: bool = False) -> tuple:
    """(MCP figures, idle memory figures)."""
    out: dict = {"client": "mcp.ClientSession over stdio (tests/mcp_client.open_session), "
                           "read_timeout 120 s, structured result checked per call"}
    # --- warm pool
    async with mcp_server(POOL) as server:
        out["server_pid"] = server.pid
        memory = await idle_memory(server, p, log)
        if memory_only:
            return out, memory
        meter = CpuMeter(server.pid, fork_server_of(server.pid))
        call = {name: (lambda name=name: mcp_call(server, name)) for name in SNIPPETS}
        log(f"  MCP pool {POOL}: trivial back-to-back x{p['lat_pool']}")
        out["pool_trivial"] = _series_result(*await timed_series(call["trivial"], p["lat_pool"], p["warmup"],
                                                                 meter=meter),
                                             pool=POOL, mode="back-to-back")
        log(f"  MCP pool {POOL}: trivial paced x{p['lat_paced']}")
        out["pool_trivial_paced"] = _series_result(
            *await timed_series(call["trivial"], p["lat_paced"], 3, pace=p["pace_s"]),
            pool=POOL, mode=f"paced, {p['pace_s'] * 1000:g} ms after each answer")
        for name, n in (("cpu", p["lat_cpu"]), ("imports", p["lat_imports"])):
            log(f"  MCP pool {POOL}: {name} x{n}")
            out[f"pool_{name}"] = _series_result(*await timed_series(call[name], n, 2), pool=POOL,
                                                 mode="back-to-back")
        tp = {}
        for clients in p["tp_levels"]:
            log(f"  MCP pool {POOL}: throughput, {clients} calls in flight on one session")
            tp[str(clients)] = await closed_loop(call["trivial"], clients, p["tp_warm_s"], p["tp_window_s"],
                                                 meter=meter)
        out["throughput_one_session"] = tp
    # --- no pool
    async with mcp_server(0) as server:
        log(f"  MCP pool 0: trivial x{p['lat_nopool']}")
        meter = CpuMeter(server.pid, fork_server_of(server.pid))
        out["nopool_trivial"] = _series_result(
            *await timed_series(lambda: mcp_call(server, "trivial"), p["lat_nopool"], max(3, p["warmup"] // 2),
                                meter=meter),
            pool=0, mode="back-to-back")
    return out, memory


async def bench_mcp_sessions(p: dict, log) -> dict:
    """N servers, one sequential client each: N independent stdio sessions."""
    levels = p["tp_levels"]
    out: dict = {}
    async with contextlib.AsyncExitStack() as stack:
        servers = []
        log(f"  starting {max(levels)} servers (pool {POOL} each)")
        for _ in range(max(levels)):
            servers.append(await stack.enter_async_context(mcp_server(POOL)))
        await asyncio.sleep(p["settle_s"])  # every pool full before measuring
        for n in levels:
            log(f"  MCP: throughput, {n} sessions (servers) with one client each")
            # one closed-loop client per session, all sessions at once
            per = [(lambda s=s: mcp_call(s, "trivial")) for s in servers[:n]]
            results = await asyncio.gather(*(closed_loop(c, 1, p["tp_warm_s"], p["tp_sessions_window_s"])
                                             for c in per))
            completed = sum(r["completed"] for r in results)
            out[str(n)] = {
                "clients": n, "window_s": p["tp_sessions_window_s"], "completed": completed,
                "per_s": completed / p["tp_sessions_window_s"],
                "failures": sum(r["failures"] for r in results),
                "p50_ms_median_of_sessions": statistics.median(r.get("p50_ms", float("nan")) for r in results),
                "p99_ms_max_of_sessions": max(r.get("p99_ms", float("nan")) for r in results),
            }
            errors = [r["first_error"] for r in results if "first_error" in r]
            if errors:
                out[str(n)]["first_error"] = errors[0]
    return out


# ----------------------------------------------------------------------------- runner API


def exec_request(name: str):
    from sandbox import profiles
    from sandbox.forkserver.runner import ExecRequest
    return ExecRequest(code=SNIPPETS[name], timeout=30.0, memory_limit=128 * MiB,
                       allowed_modules=frozenset(profiles.allowed_modules(["basic"])), restricted=True)


async def runner_call(runner, request, name):
    data = await runner.execute(request)
    return bool(data.get("success")) and check(name, data.get("result")), data


async def bench_runner(p: dict, log) -> dict:
    from sandbox.forkserver.runner import Runner, RunnerConfig
    out: dict = {}
    requests = {name: exec_request(name) for name in SNIPPETS}
    for pool in (POOL, 0):
        runner = Runner(RunnerConfig(pool_size=pool, max_timeout=60))
        t0 = time.perf_counter()
        await runner.start()
        out[f"start_pool{pool}_s"] = time.perf_counter() - t0
        try:
            out["layers"] = {k: bool(v.get("active")) for k, v in runner.layers().items()}
            call = {name: (lambda name=name: runner_call(runner, requests[name], name)) for name in SNIPPETS}
            meter = CpuMeter(None, runner.fork_server_pid())
            if pool:
                await wait_pool_full(runner.fork_server_pid(), pool, 0.3)
                log(f"  runner pool {pool}: trivial back-to-back x{p['lat_pool']}")
                out["pool_trivial"] = _series_result(*await timed_series(call["trivial"], p["lat_pool"],
                                                                         p["warmup"], meter=meter), pool=pool,
                                                     mode="back-to-back")
                log(f"  runner pool {pool}: trivial paced x{p['lat_paced']}")
                out["pool_trivial_paced"] = _series_result(
                    *await timed_series(call["trivial"], p["lat_paced"], 3, pace=p["pace_s"]), pool=pool,
                    mode=f"paced, {p['pace_s'] * 1000:g} ms after each answer")
                for name, n in (("cpu", p["lat_cpu"]), ("imports", p["lat_imports"])):
                    log(f"  runner pool {pool}: {name} x{n}")
                    out[f"pool_{name}"] = _series_result(*await timed_series(call[name], n, 2), pool=pool,
                                                         mode="back-to-back")
                tp = {}
                for clients in p["tp_levels"]:
                    log(f"  runner pool {pool}: throughput, {clients} concurrent execute()")
                    tp[str(clients)] = await closed_loop(call["trivial"], clients, p["tp_warm_s"] / 2,
                                                         p["runner_tp_window_s"], meter=meter)
                out["throughput"] = tp
            else:
                log(f"  runner pool 0: trivial x{p['lat_nopool']}")
                out["nopool_trivial"] = _series_result(
                    *await timed_series(call["trivial"], p["lat_nopool"], max(3, p["warmup"] // 2), meter=meter),
                    pool=0, mode="back-to-back")
        finally:
            await runner.aclose()
    return out


# ----------------------------------------------------------------------------- baselines


def _subprocess_series(argv_for, name: str, n: int, warmup: int) -> dict:
    code = SNIPPETS[name] + "\nprint(repr(result))"
    expected = repr(EXPECTED[name])
    samples, failures, first_error = [], 0, None
    for i in range(warmup + n):
        if i == warmup:  # CPU measured the way CpuMeter measures ours: the processes, and the machine
            children0, machine0, wall0 = _children_cpu(), machine_busy(), time.perf_counter()
        t0 = time.perf_counter()
        proc = subprocess.run(argv_for(code), stdin=subprocess.DEVNULL, capture_output=True, cwd="/")
        dt = time.perf_counter() - t0
        ok = proc.returncode == 0 and proc.stdout.decode().strip() == expected
        if not ok and first_error is None:
            first_error = f"exit {proc.returncode}: {proc.stderr.decode(errors='replace')[-300:]}"
        if i >= warmup:
            if ok:
                samples.append(dt)
            else:
                failures += 1
    cpu = {"processes_ms_per_call": (_children_cpu() - children0) * 1000 / max(n, 1),
           "machine_ms_per_call": (machine_busy() - machine0 - IDLE["busy_cpus"] * (time.perf_counter() - wall0))
           * 1000 / max(n, 1)}
    return _series_result(samples, failures, first_error, cpu=cpu)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bwrap_argv(code: str) -> list:
    return ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev",
            "--proc", "/proc", sys.executable, "-I", "-S", "-c", code]


def python_argv(code: str) -> list:
    return [sys.executable, "-I", "-S", "-c", code]


def _rp_namespace():
    """The standard RestrictedPython guard set, with an import allow-list of the basic profile."""
    from RestrictedPython import limited_builtins, safe_builtins
    from RestrictedPython.Eval import default_guarded_getitem, default_guarded_getiter
    from RestrictedPython.Guards import full_write_guard, guarded_iter_unpack_sequence, safer_getattr

    from sandbox import profiles
    allowed = frozenset(profiles.allowed_modules(["basic"]))

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name not in allowed:
            raise ImportError(f"{name} is not allowed")
        return __import__(name, globals, locals, fromlist, level)

    builtins = {**safe_builtins, **limited_builtins, "__import__": guarded_import}
    return {"__builtins__": builtins, "_getattr_": safer_getattr, "_getitem_": default_guarded_getitem,
            "_getiter_": default_guarded_getiter, "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
            "_write_": full_write_guard, "__name__": "snippet"}


def _inprocess_series(name: str, n: int, warmup: int) -> dict:
    from RestrictedPython import compile_restricted
    template = _rp_namespace()
    code = SNIPPETS[name]
    samples, failures, first_error = [], 0, None
    for i in range(warmup + n):
        t0 = time.perf_counter()
        try:
            namespace = dict(template)
            exec(compile_restricted(code, "<snippet>", "exec"), namespace)
            ok = check(name, namespace.get("result"))
        except Exception as exc:  # noqa: BLE001
            ok = False
            first_error = first_error or f"{type(exc).__name__}: {exc}"
        dt = time.perf_counter() - t0
        if i >= warmup:
            if ok:
                samples.append(dt)
            else:
                failures += 1
    return _series_result(samples, failures, first_error)


def bench_baselines(p: dict, log) -> dict:
    counts = {name: p[f"base_{name}"] for name in SNIPPETS}
    out: dict = {"python": {"argv": python_argv("<code>")},
                 "bwrap": {"argv": bwrap_argv("<code>")},
                 "inprocess": {"how": "RestrictedPython.compile_restricted + exec per call, safe_builtins + "
                                      "limited_builtins, standard guards, import allow-list (basic profile); "
                                      "compile included"}}
    for name in SNIPPETS:
        log(f"  python -I -S -c: {name} x{counts[name]}")
        out["python"][name] = _subprocess_series(python_argv, name, counts[name], 2)
    if shutil.which("bwrap") is None:
        out["bwrap"]["status"] = "not installed"
        log("  bwrap: not installed")
    else:
        probe = subprocess.run(bwrap_argv("pass"), capture_output=True)
        if probe.returncode != 0:
            out["bwrap"]["status"] = f"unusable here: {probe.stderr.decode(errors='replace')[-200:]}"
        else:
            version = subprocess.run(["bwrap", "--version"], capture_output=True, text=True).stdout.strip()
            out["bwrap"]["status"] = version or "installed"
            for name in SNIPPETS:
                log(f"  bwrap + python: {name} x{counts[name]}")
                out["bwrap"][name] = _subprocess_series(bwrap_argv, name, counts[name], 2)
    for name in SNIPPETS:
        n = p[f"inproc_{name}"]
        log(f"  in-process RestrictedPython: {name} x{n}")
        out["inprocess"][name] = _inprocess_series(name, n, max(2, n // 20))
    return out


# ----------------------------------------------------------------------------- start-up and memory


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "0"}}}


def _read_response(proc, want_id: int, deadline: float) -> dict:
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf = b""
    try:
        while time.monotonic() < deadline:
            if not sel.select(max(0.0, deadline - time.monotonic())):
                continue
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                raise EOFError("the server closed stdout")
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") == want_id:
                    return message
    finally:
        sel.close()
    raise TimeoutError(f"no response {want_id} in time")


async def bench_modes(p: dict, log) -> dict:
    """The same trivial call three ways, back-to-back with the pool on: one-shot
    (the baseline), in a sandbox session (no clone: the process stays), and
    with the network profile (a network namespace with loopback up and the
    proxy listener handed over per child); plus a GET through the egress proxy
    to a server on 127.0.0.1 (allowed by address); and, when the optional extra is
    installed, the data-science profile: the trivial call and a small pandas one."""
    from local_http import serving
    from mcp_client import open_session
    n, warmup = p["lat_modes"], p["warmup"]
    out: dict = {}

    async def series(server, call):
        meter = CpuMeter(server.pid, fork_server_of(server.pid))
        return _series_result(*await timed_series(call, n, warmup, meter=meter), pool=POOL, mode="back-to-back")

    async def call_code(server, code, expected, **arguments):
        data, _ = await server.call("execute_code", {"code": code, **arguments})
        return bool(data) and data.get("success") is True and data.get("result") == expected, data

    async with mcp_server(POOL) as server:
        log(f"  one-shot x{n}")
        out["one_shot"] = await series(server, lambda: mcp_call(server, "trivial"))
        created, _ = await server.call("create_session", {})
        handle = created["session_id"]
        log(f"  session call x{n}")
        out["session_call"] = await series(server, lambda: call_code(server, SNIPPETS["trivial"], 4,
                                                                     session_id=handle))
    with serving(b"proxied") as port:
        env = {**server_env(POOL), "SANDBOX_ENABLE_NETWORK": "true", "SANDBOX_NETWORK_ALLOW": f"127.0.0.1:{port}"}
        async with open_session(env, timeout=120.0, start_timeout=120.0) as server:
            log(f"  network profile, trivial x{n}")
            out["network_trivial"] = await series(server, lambda: mcp_call(server, "trivial"))
            get = ("import urllib.request\n"
                   f"result = urllib.request.urlopen('http://127.0.0.1:{port}/', timeout=5).read().decode()")
            log(f"  network profile, GET through the proxy x{n}")
            out["network_get"] = await series(server, lambda: call_code(server, get, "proxied"))
    if importlib.util.find_spec("pandas") is not None:   # (the optional extra)
        env = {**server_env(POOL), "SANDBOX_ENABLE_DATA_SCIENCE": "true"}
        async with open_session(env, timeout=120.0, start_timeout=180.0) as server:
            log(f"  data-science profile, trivial x{n}")
            out["datascience_trivial"] = await series(server, lambda: mcp_call(server, "trivial"))
            log(f"  data-science profile, pandas x{n}")
            out["datascience_pandas"] = await series(server, lambda: call_code(server, PANDAS_SNIPPET, 6))
    return out


# a small everyday data-science call: the import, a frame, a sum
PANDAS_SNIPPET = 'import pandas as pd\ndf = pd.DataFrame({"a": [1, 2, 3]})\nresult = int(df["a"].sum())'


def bench_compat(p: dict, log) -> dict:
    """The compatibility corpus (tests/compat) and its known gaps: how many snippets
    plain CPython runs, and how many the sandbox runs with the same value
    (RestrictedPython on)."""
    from compat.corpus import DATA, GAPS, S
    from compat.test_compat import HAVE_DATA, PROFILE_MODULES, plain_cpython, runner_for
    from sandbox import profiles
    snippets = [s for s in S + GAPS if s["profile"] != DATA or HAVE_DATA]
    reference = plain_cpython(snippets)
    out = {"snippets": len(snippets), "cpython_ok": sum(r["ok"] for r in reference.values()), "sandbox_ok": 0,
           "failures": []}
    runners = {}
    try:
        for s in snippets:
            runner = runners.get(s["profile"]) or runners.setdefault(s["profile"], runner_for(s["profile"]))
            got = runner.run(s["code"], allowed=profiles.allowed_modules(PROFILE_MODULES[s["profile"]]), timeout=30,
                             memory=512 << 20)
            if got.get("success") and got.get("result") == reference[s["id"]].get("result"):
                out["sandbox_ok"] += 1
            else:
                out["failures"].append({"id": s["id"], "error": f"{got.get('error_type')}: {got.get('error')}"[:200]})
    finally:
        for runner in runners.values():
            runner.close()
    log(f"  compat: sandbox {out['sandbox_ok']}/{len(snippets)}, plain CPython {out['cpython_ok']}/{len(snippets)}")
    return out


def render_modes(modes: dict) -> list:
    base = modes.get("one_shot") or {}
    lines = [f"one call, several ways (MCP stdio, pool {POOL}, back-to-back; ratios to one-shot):",
             f"  {'':<34}{'p50 ms':>9}{'p99 ms':>9}{'CPU ms/call':>13}{'p50 x':>8}{'CPU x':>8}"]
    labels = {"one_shot": "one-shot (the baseline)", "session_call": "a call in a session",
              "network_trivial": "network profile, trivial", "network_get": "network profile, GET via proxy",
              "datascience_trivial": "data-science profile, trivial", "datascience_pandas": "data-science, pandas frame"}
    base_cpu = _get(base, "cpu", "cpu_ms_per_call", "ours_total")
    for key, label in labels.items():
        r = modes.get(key) or {}
        cpu = _get(r, "cpu", "cpu_ms_per_call", "ours_total")
        p50_x = r.get("p50_ms") / base["p50_ms"] if r.get("p50_ms") and base.get("p50_ms") else None
        cpu_x = cpu / base_cpu if cpu and base_cpu else None
        lines.append(f"  {label:<34}{_f(r.get('p50_ms')):>9}{_f(r.get('p99_ms')):>9}{_f(cpu):>13}"
                     f"{_f(p50_x):>8}{_f(cpu_x):>8}")
    return lines


def bench_steps(p: dict, log) -> dict:
    """bench/hardening_steps.py in its own process (it clones, which must not
    happen in this one: asyncio has left threads here)."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "hardening_steps.py"), "--json",
                          "--runs", str(p["steps_runs"])], capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise RuntimeError(f"hardening_steps.py failed: {out.stderr[-2000:]}")
    res = json.loads(out.stdout)
    log(f"  child {res['child_cpu_ms']:.2f} ms CPU, bare python spawn {res['bare_python']['cpu_ms']:.2f} ms")
    return res


def _startup_runs(env: dict, reps: int, log, label: str) -> dict:
    init_s, first_exec_s, errors = [], [], []
    for i in range(reps):
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, str(LAUNCHER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env, cwd="/tmp", bufsize=0)
        try:
            proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
            _read_response(proc, 1, time.monotonic() + 120)
            init_s.append(time.perf_counter() - t0)
            proc.stdin.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
                              + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                            "params": {"name": "execute_code",
                                                       "arguments": {"code": SNIPPETS["trivial"]}}})
                              + "\n").encode())
            reply = _read_response(proc, 2, time.monotonic() + 120)
            first_exec_s.append(time.perf_counter() - t0)
            data = (reply.get("result") or {}).get("structuredContent") or {}
            if not data.get("success"):
                errors.append(_error_text(data or reply))
        except Exception as exc:  # noqa: BLE001
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            proc.stdin.close()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()
        log(f"  {label}start-up {i + 1}/{reps}: initialize answered after "
            f"{init_s[-1] if init_s else float('nan'):.3f} s")
    out = {"n": len(init_s), "pool": POOL,
           "initialize_s": {"median": statistics.median(init_s) if init_s else None,
                            "min": min(init_s, default=None), "max": max(init_s, default=None),
                            "all": init_s},
           "first_execute_s": {"median": statistics.median(first_exec_s) if first_exec_s else None,
                               "n": len(first_exec_s), "all": first_exec_s}}
    if errors:
        out["errors"] = errors[:3]
    return out


def bench_startup(p: dict, log) -> dict:
    """Spawn bin/mcp-server-python-sandbox, send initialize at once, time until the response
    line; then time until a first execute_code is answered. The basic profile, then the
    data-science one (where its libraries are installed)."""
    from mcp_client import server_env as clean_env
    out = _startup_runs(clean_env(server_env(POOL)), p["startup_reps"], log, "")
    if all(importlib.util.find_spec(name) for name in ("numpy", "pandas")):
        env = clean_env({**server_env(POOL), "SANDBOX_ENABLE_DATA_SCIENCE": "true"})
        out["data_science"] = _startup_runs(env, p["startup_reps"], log, "data science ")
    bare = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=False, capture_output=True)
        bare.append(time.perf_counter() - t0)
    out["python_isolated_start_s"] = statistics.median(bare)
    # where the time goes: interpreter + the SDK import vs the fork server
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import sandbox.mcp.server"], cwd=str(ROOT), check=False,
                   capture_output=True)
    out["import_sandbox_server_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=False, capture_output=True)
    out["python_bare_start_s"] = time.perf_counter() - t0
    return out


async def idle_memory(server, p: dict, log) -> dict:
    """Idle server with a full pool, after one call (whatever the first call
    imports is loaded): PSS and RSS summed over the server, the fork server and
    every pooled child."""
    ok, _ = await mcp_call(server, "trivial")
    await wait_pool_full(server.pid, 1 + POOL, p["settle_s"])
    tree = descendants(server.pid)
    rows = {"server": [server.pid], "fork_server": [], "child": []}
    for pid in tree:
        role = "fork_server" if depth_below(pid, server.pid) == 1 else "cloner" if is_cloner(pid) else "child"
        rows.setdefault(role, []).append(pid)
    rows = {role: pids for role, pids in rows.items() if pids}
    mem = {role: [memory_of(pid) for pid in pids] for role, pids in rows.items()}
    out = {"pool": POOL, "processes": len(tree) + 1, "first_call_ok": ok,
           "pss_mb": sum(m["pss_kb"] for ms in mem.values() for m in ms) / 1024,
           "rss_mb": sum(m["rss_kb"] for ms in mem.values() for m in ms) / 1024,
           "by_role": {role: {"count": len(ms), "pss_mb": sum(m["pss_kb"] for m in ms) / 1024,
                              "rss_mb": sum(m["rss_kb"] for m in ms) / 1024}
                       for role, ms in mem.items()}}
    log(f"  idle memory: {out['processes']} processes, PSS {out['pss_mb']:.1f} MB, RSS {out['rss_mb']:.1f} MB")
    return out


# ----------------------------------------------------------------------------- report


def machine() -> dict:
    info = {"cpus": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version(),
            "executable": sys.executable, "euid": os.geteuid()}
    with contextlib.suppress(OSError):
        info["affinity"] = len(os.sched_getaffinity(0))
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
    with contextlib.suppress(OSError), open("/proc/meminfo") as f:
        info["mem_total_mb"] = int(f.readline().split()[1]) // 1024
    with contextlib.suppress(Exception):
        info["commit"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "sandbox", "bin"],
                               capture_output=True, text=True).stdout.strip()
        info["sandbox_tree_dirty"] = bool(dirty)
    with contextlib.suppress(Exception):
        import mcp  # noqa: F401
        from importlib.metadata import version
        info["mcp"] = version("mcp")
        info["RestrictedPython"] = version("RestrictedPython")
    return info


def _get(d: dict, *path, default=None):
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return default
        d = d[key]
    return d


def headline(results: dict) -> dict:
    """The figures the targets speak about, plus the ratios to each baseline."""
    h: dict = {}
    mcp, runner, base = results.get("mcp", {}), results.get("runner", {}), results.get("baselines", {})
    h["mcp_pool_trivial_p50_ms"] = _get(mcp, "pool_trivial", "p50_ms")
    h["mcp_pool_trivial_p99_ms"] = _get(mcp, "pool_trivial", "p99_ms")
    h["mcp_nopool_trivial_p50_ms"] = _get(mcp, "nopool_trivial", "p50_ms")
    h["throughput_4_clients_per_s"] = _get(mcp, "throughput_one_session", "4", "per_s")
    bw = _get(base, "bwrap", "trivial", "p50_ms")
    ours = h["mcp_pool_trivial_p50_ms"]
    h["bwrap_speedup_x"] = bw / ours if bw and ours else None
    inproc = _get(base, "inprocess", "trivial", "p50_ms")
    r50 = _get(runner, "pool_trivial", "p50_ms")
    h["runner_vs_inprocess_p50_x"] = r50 / inproc if r50 and inproc else None
    h["startup_s"] = _get(results, "startup", "initialize_s", "median")
    h["idle_pss_mb"] = _get(results, "memory", "pss_mb")
    # ours / baseline at p50, per snippet (below 1: ours is faster)
    ratios = {}
    for name in SNIPPETS:
        for ours_key, ours_val in (("mcp_pool", _get(mcp, f"pool_{name}", "p50_ms")),
                                   ("runner_pool", _get(runner, f"pool_{name}", "p50_ms"))):
            for b in ("python", "bwrap", "inprocess"):
                bv = _get(base, b, name, "p50_ms")
                if ours_val and bv:
                    ratios[f"{name}.{ours_key}/{b}"] = ours_val / bv
    for ours_key, ours_val in (("mcp_nopool", _get(mcp, "nopool_trivial", "p50_ms")),
                               ("runner_nopool", _get(runner, "nopool_trivial", "p50_ms"))):
        for b in ("python", "bwrap", "inprocess"):
            bv = _get(base, b, "trivial", "p50_ms")
            if ours_val and bv:
                ratios[f"trivial.{ours_key}/{b}"] = ours_val / bv
    h["ratios_p50"] = ratios
    h["targets"] = {}
    for key, (op, bound, text) in TARGETS.items():
        value = h.get(key)
        met = None if value is None else (value <= bound if op == "<=" else value >= bound)
        h["targets"][key] = {"value": value, "target": f"{op} {bound:g}", "met": met, "what": text}
    return h


def _f(v, digits=2, unit="") -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and v != v:
        return "nan"
    return f"{v:.{digits}f}{unit}"


def _state(h: dict, *keys: str) -> str:
    """'met', 'MISSED' (or 'met/MISSED' for several keys); '' when not measured."""
    states = []
    for key in keys:
        t = h["targets"].get(key)
        if not t or t["met"] is None:
            return ""
        states.append("met" if t["met"] else "MISSED")
    return "/".join(states)


def render(results: dict) -> str:
    h = results["headline"]
    m = results["machine"]
    lines = []
    w = lines.append
    w("")
    w(f"mcp-server-python-sandbox benchmark, {results['mode']} run, {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(results['started']))}"
      f" ({results['duration_s']:.0f} s)")
    w(f"machine: {m.get('cpus')} CPUs ({m.get('cpu_model', '?')}), {m.get('mem_total_mb', '?')} MB, Linux "
      f"{m.get('kernel')}, Python {m.get('python')}, mcp {m.get('mcp', '?')}, euid {m.get('euid')}, "
      f"commit {m.get('commit', '?')}{' (sandbox/ modified)' if m.get('sandbox_tree_dirty') else ''}")
    layers = _get(results, "runner", "layers")
    if layers:
        w("layers active: " + ", ".join(k for k, v in layers.items() if v)
          + ("; INACTIVE: " + ", ".join(k for k, v in layers.items() if not v)
             if not all(layers.values()) else ""))
    w("")
    w(f"{'latency (ms)':<58}{'n':>5}{'p50':>9}{'p90':>9}{'p99':>9}   target")
    w("-" * 110)

    def row(label, fig, target=""):
        if not fig:
            w(f"{label:<58}{'':>5}  not measured")
            return
        if "status" in fig and "p50_ms" not in fig:
            w(f"{label:<58}{'':>5}  {fig['status']}")
            return
        fail = f"  ({fig['failures']} failed: {fig.get('first_error', '')[:60]})" if fig.get("failures") else ""
        if not fig.get("n"):
            w(f"{label:<58}{0:>5}  no successful sample{(': ' + fig.get('first_error', '')[:80])}")
            return
        w(f"{label:<58}{fig['n']:>5}{_f(fig.get('p50_ms')):>9}{_f(fig.get('p90_ms')):>9}"
          f"{_f(fig.get('p99_ms')):>9}   {target}{fail}")

    mcp, runner, base = results.get("mcp", {}), results.get("runner", {}), results.get("baselines", {})
    pace = results["plan"]["pace_s"] * 1000
    w("trivial snippet `result = 2 + 2`")
    row(f"  MCP stdio, pool {POOL}, back-to-back", mcp.get("pool_trivial"),
        f"p50 <= 2, p99 <= 10   {_state(h, 'mcp_pool_trivial_p50_ms', 'mcp_pool_trivial_p99_ms')}")
    row(f"  MCP stdio, pool {POOL}, paced ({pace:g} ms gap)", mcp.get("pool_trivial_paced"), "(same targets)")
    row("  MCP stdio, no pool", mcp.get("nopool_trivial"),
        f"p50 <= 12   {_state(h, 'mcp_nopool_trivial_p50_ms')}")
    row(f"  runner API, pool {POOL}, back-to-back", runner.get("pool_trivial"),
        f"p50 <= 3x in-process  {_state(h, 'runner_vs_inprocess_p50_x')}")
    row(f"  runner API, pool {POOL}, paced ({pace:g} ms gap)", runner.get("pool_trivial_paced"))
    row("  runner API, no pool", runner.get("nopool_trivial"))
    row("  baseline: python -I -S -c per call", _get(base, "python", "trivial"))
    row("  baseline: bwrap --unshare-all + python per call",
        _get(base, "bwrap", "trivial") or {"status": _get(base, "bwrap", "status", default="not measured")},
        f"ours >= 8x faster  {_state(h, 'bwrap_speedup_x')}")
    row("  baseline: in-process compile_restricted + exec", _get(base, "inprocess", "trivial"))
    for name in ("cpu", "imports"):
        w(LABEL[name])
        row(f"  MCP stdio, pool {POOL}", mcp.get(f"pool_{name}"))
        row(f"  runner API, pool {POOL}", runner.get(f"pool_{name}"))
        row("  baseline: python -I -S -c per call", _get(base, "python", name))
        row("  baseline: bwrap + python per call",
            _get(base, "bwrap", name) or {"status": _get(base, "bwrap", "status", default="not measured")})
        row("  baseline: in-process compile_restricted + exec", _get(base, "inprocess", name))

    w("")
    levels = results["plan"]["tp_levels"]
    w(f"{'throughput (executions/s, trivial snippet)':<58}" + "".join(f"{f'N={n}':>9}" for n in levels)
      + "   target")
    w("-" * 110)

    def tp_row(label, figs, target=""):
        if not figs:
            w(f"{label:<58}  not measured")
            return
        cells = "".join(f"{_f(_get(figs, str(n), 'per_s'), 0):>9}" for n in levels)
        w(f"{label:<58}{cells}   {target}")

    tp_row(f"  MCP, one session, N calls in flight (pool {POOL})", mcp.get("throughput_one_session"),
           f">= 500 at N=4  {_state(h, 'throughput_4_clients_per_s')}")
    tp_row(f"  MCP, N sessions = N servers, 1 client each (pool {POOL})", results.get("mcp_sessions"))
    tp_row(f"  runner API, N concurrent execute() (pool {POOL})", runner.get("throughput"))
    figs = mcp.get("throughput_one_session") or {}
    if figs:
        w("  MCP one session, p50 / p99 latency under load (ms): "
          + ", ".join(f"N={n}: {_f(_get(figs, str(n), 'p50_ms'), 1)}/{_f(_get(figs, str(n), 'p99_ms'), 1)}"
                      for n in levels))
    w("  windows: " + ", ".join(f"{k} {results['plan'][k]:g} s" for k in ("tp_warm_s", "tp_window_s",
                                                                         "tp_sessions_window_s",
                                                                         "runner_tp_window_s"))
      + "; n = completed calls in the window (JSON: completed)")

    w("")
    cols = ("client", "server", "fork_server", "children", "ours_total", "rest_of_machine")
    w(f"{'CPU time per execution (ms; /proc accounting)':<50}" + "".join(f"{c.replace('_', ' '):>10}" for c in
                                                                          ("client", "server", "fork_server",
                                                                           "children", "ours", "rest")))
    w("-" * 110)
    for label, fig in ((f"  MCP pool {POOL}, back-to-back", _get(mcp, "pool_trivial", "cpu")),
                       ("  MCP no pool", _get(mcp, "nopool_trivial", "cpu")),
                       (f"  MCP pool {POOL}, 4 calls in flight", _get(mcp, "throughput_one_session", "4", "cpu")),
                       (f"  runner pool {POOL}, back-to-back", _get(runner, "pool_trivial", "cpu")),
                       ("  runner no pool", _get(runner, "nopool_trivial", "cpu")),
                       (f"  runner pool {POOL}, 4 in flight", _get(runner, "throughput", "4", "cpu"))):
        if fig:
            per = fig["cpu_ms_per_call"]
            w(f"{label:<50}" + "".join(f"{_f(per.get(c), 2):>10}" for c in cols))
    base = results.get("baselines") or {}
    for key, label in (("python", "  baseline: python -I -S -c, per call"), ("bwrap", "  baseline: bwrap + python, per call")):
        cpu = _get(base, key, "trivial", "cpu")
        if cpu:
            rest = cpu["machine_ms_per_call"] - cpu["processes_ms_per_call"]
            w(f"{label:<50}" + f"{'':>40}{_f(cpu['processes_ms_per_call'], 2):>10}{_f(rest, 2):>10}")
    ours = _get(mcp, "pool_trivial", "cpu", "cpu_ms_per_call")
    bare = _get(base, "python", "trivial", "cpu")
    if ours and bare:
        w(f"  ours / bare python spawn: processes {ours['ours_total'] / bare['processes_ms_per_call']:.2f}, "
          f"with the rest of the machine {(ours['ours_total'] + ours['rest_of_machine']) / bare['machine_ms_per_call']:.2f}"
          "   target <= 0.5")
    w("  client = this process (for the runner rows it is the runner itself); children = the sandbox processes")
    w("  (reaped into the fork server's account); rest = the machine's other busy time less the idle baseline")
    w(f"  ({results.get('idle_busy_cpus', 0):.3f} CPUs, measured at start): kernel workers (network namespace cleanup)")
    w("  and any unrelated load. 2 CPUs / ours_total = the ceiling on executions per second.")

    w("")
    w("ratios, ours p50 / baseline p50 (below 1: ours is faster)")
    w(f"{'':<34}{'python -I -S -c':>18}{'bwrap + python':>18}{'in-process RP':>18}")
    ratios = h.get("ratios_p50", {})
    for name in SNIPPETS:
        for ours_key, ours_label in (("mcp_pool", f"MCP pool {POOL}"), ("runner_pool", f"runner pool {POOL}")):
            cells = "".join(f"{_f(ratios.get(f'{name}.{ours_key}/{b}'), 3):>18}" for b in
                            ("python", "bwrap", "inprocess"))
            w(f"  {name + ', ' + ours_label:<32}{cells}")
    for ours_key, ours_label in (("mcp_nopool", "MCP no pool"), ("runner_nopool", "runner no pool")):
        cells = "".join(f"{_f(ratios.get(f'trivial.{ours_key}/{b}'), 3):>18}" for b in
                        ("python", "bwrap", "inprocess"))
        w(f"  {'trivial, ' + ours_label:<32}{cells}")

    w("")
    if results.get("modes"):
        for line in render_modes(results["modes"]):
            w(line)
        w("")
    compat = results.get("compat")
    if compat:
        w(f"compatibility corpus with its known gaps (tests/compat, RestrictedPython on): the sandbox runs {compat['sandbox_ok']} of "
          f"{compat['snippets']} with plain CPython's value; plain CPython runs {compat['cpython_ok']} "
          f"({compat['sandbox_ok'] / max(compat['cpython_ok'], 1):.1%} of CPython's)")
        for failure in compat["failures"][:10]:
            w(f"  fails: {failure['id']}: {failure['error']}")
        w("")
    if results.get("steps"):
        sys.path.insert(0, str(ROOT / "bench"))
        import hardening_steps
        w(hardening_steps.render(results["steps"]))
        w("")
    st = results.get("startup") or {}
    if st.get("initialize_s"):
        w(f"start-up to first answered initialize (pool {POOL}): median {_f(st['initialize_s']['median'], 3)} s "
          f"(n={st['n']}, min {_f(st['initialize_s']['min'], 3)}, max {_f(st['initialize_s']['max'], 3)})   "
          f"target <= 1.5 s  {_state(h, 'startup_s')}")
        w(f"  to first answered execute_code: median {_f(st['first_execute_s']['median'], 3)} s "
          f"(n={st['first_execute_s']['n']}); for reference `python -c 'import sandbox.mcp.server'` took "
          f"{_f(st.get('import_sandbox_server_s'), 3)} s, `python -c pass` {_f(st.get('python_bare_start_s'), 3)} s")
        bare = st.get("python_isolated_start_s")
        for label, runs in (("basic", st), ("data science", st.get("data_science"))):
            if runs and runs.get("initialize_s", {}).get("median") and bare:
                init, first = runs["initialize_s"]["median"], runs["first_execute_s"]["median"]
                w(f"  {label}: initialize {_f(init, 3)} s = {_f(init / bare, 0)} x, first execute_code "
                  f"{_f(first, 3)} s = {_f(first / bare if first else None, 0)} x a bare `python -I -S -c pass` "
                  f"({_f(bare * 1000, 1)} ms; n={runs['n']})" + (f"; errors: {runs['errors']}" if runs.get("errors") else ""))
    else:
        w("start-up: not measured")
    mem = results.get("memory") or {}
    if mem.get("pss_mb") is not None:
        roles = mem["by_role"]
        w(f"idle memory, pool {POOL} full ({mem['processes']} processes: server, fork server, cloner, {POOL} pooled children): "
          f"PSS {_f(mem['pss_mb'], 1)} MB, RSS {_f(mem['rss_mb'], 1)} MB   "
          f"target PSS <= 80 MB  {_state(h, 'idle_pss_mb')}")
        w("  PSS/RSS MB by role: " + ", ".join(
            f"{role} x{r['count']} {_f(r['pss_mb'], 1)}/{_f(r['rss_mb'], 1)}" for role, r in roles.items()))
    else:
        w("idle memory: not measured")
    loads = results.get("load") or {}
    if loads:
        w("")
        busy = [f"{k} {_f(v.get('machine_busy_cpus'), 2)}" for k, v in loads.items()]
        w("machine busy during each section (CPUs, of " + str(m.get("cpus")) + "; includes this benchmark): "
          + ", ".join(busy))
        w("load average (1 min) at section start: " + ", ".join(f"{k} {_f(v.get('loadavg1_start'), 2)}"
                                                                for k, v in loads.items()))
        noisy = [k for k, v in loads.items() if (v.get("loadavg1_start") or 0) > (m.get("cpus") or 1) * 0.75]
        if noisy:
            w(f"WARNING: the machine was busy with other work before {', '.join(noisy)}; latencies there are "
              "inflated (CPU-time figures are less affected). Re-run with --wait-idle 120 on a quiet machine.")
    if results.get("errors"):
        w("")
        for section, err in results["errors"].items():
            w(f"SECTION FAILED: {section}: {err.splitlines()[-1] if err else ''}")
    w("")
    w("targets (printed, never asserted):")
    for key, t in h["targets"].items():
        state = "not measured" if t["met"] is None else ("met" if t["met"] else "MISSED")
        w(f"  {t['what']:<52} value {_f(t['value'], 2):>9}   {state}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- main


SECTIONS = ("runner", "mcp", "sessions", "modes", "compat", "baselines", "steps", "startup", "memory")


def wait_for_quiet(limit_s: float, log) -> None:
    """Wait (at most limit_s) until the 1-minute load average is under half the CPUs."""
    cpus = os.cpu_count() or 1
    deadline = time.monotonic() + limit_s
    while os.getloadavg()[0] > cpus / 2 and time.monotonic() < deadline:
        log(f"  load average {os.getloadavg()[0]:.2f} on {cpus} CPUs: waiting for a quieter machine")
        time.sleep(5)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="about 30 s: fewer samples, shorter windows, "
                                                             "no multi-session throughput")
    parser.add_argument("--only", default="", help="comma list of sections: " + ",".join(SECTIONS))
    parser.add_argument("--out", default=str(RESULTS / "latest.json"), help="where to write the JSON")
    parser.add_argument("--wait-idle", type=float, default=0.0, metavar="SECONDS",
                        help="before each section, wait up to SECONDS for the load average to drop "
                             "below half the CPUs (the figures are only as good as the machine is quiet)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a sample count, e.g. --set lat_pool=1000 (see plan())")
    parser.add_argument("--profile-env", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting every server of the run gets, e.g. SANDBOX_ENABLE_DATA_SCIENCE=true "
                             "for start-up and idle memory with the data-science profile")
    args = parser.parse_args(argv)
    PROFILE_ENV.update(item.partition("=")[::2] for item in args.profile_env)
    p = plan(args.quick)
    for item in args.set:
        key, _, value = item.partition("=")
        if key not in p:
            parser.error(f"--set {key}: unknown; known: {', '.join(sorted(p))}")
        p[key] = tuple(int(x) for x in value.split(",")) if isinstance(p[key], tuple) else type(p[key])(float(value))
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    if not only:
        only = [s for s in SECTIONS if not (args.quick and s == "sessions")]
    unknown = set(only) - set(SECTIONS)
    if unknown:
        parser.error(f"--only: unknown sections {sorted(unknown)}; known: {','.join(SECTIONS)}")

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {msg}", file=sys.stderr, flush=True)

    started = time.perf_counter()
    log(f"idle baseline: the machine is busy {measure_idle():.3f} CPUs with nothing of ours running")
    results: dict = {"idle_busy_cpus": IDLE["busy_cpus"], "mode": "quick" if args.quick else "full", "started": time.time(), "plan": p,
                     "sections": only, "snippets": SNIPPETS, "machine": machine(), "errors": {}, "load": {}}
    mcp_memory: dict = {}

    def run_mcp():
        figures, memory = asyncio.run(bench_mcp(p, log))
        mcp_memory["memory"] = memory
        return figures

    def run_memory():
        if "memory" in mcp_memory:
            return mcp_memory["memory"]  # measured on the MCP section's first server, before any load
        return asyncio.run(bench_mcp(p, log, memory_only=True))[1]

    steps = {
        "runner": lambda: asyncio.run(bench_runner(p, log)),
        "mcp": run_mcp,
        "sessions": lambda: asyncio.run(bench_mcp_sessions(p, log)),
        "baselines": lambda: bench_baselines(p, log),
        "steps": lambda: bench_steps(p, log),
        "modes": lambda: asyncio.run(bench_modes(p, log)),
        "compat": lambda: bench_compat(p, log),
        "startup": lambda: bench_startup(p, log),
        "memory": run_memory,
    }
    key_of = {"sessions": "mcp_sessions"}
    for section in SECTIONS:
        if section not in only:
            continue
        if args.wait_idle and not (section == "memory" and "memory" in mcp_memory):
            wait_for_quiet(args.wait_idle, log)
        log(f"{section} ...")
        load0, busy0, wall0 = os.getloadavg()[0], machine_busy(), time.perf_counter()
        try:
            results[key_of.get(section, section)] = steps[section]()
        except BaseException as exc:  # noqa: BLE001 - one broken section must not lose the others
            if isinstance(exc, KeyboardInterrupt):
                raise
            results["errors"][section] = traceback.format_exc()
            log(f"{section} FAILED: {type(exc).__name__}: {exc}")
        wall = time.perf_counter() - wall0
        results["load"][section] = {"loadavg1_start": load0, "loadavg1_end": os.getloadavg()[0],
                                    "machine_busy_cpus": (machine_busy() - busy0) / wall if wall else None,
                                    "seconds": wall}
    results["duration_s"] = time.perf_counter() - started
    results["headline"] = headline(results)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(render(results))
    print(f"\nJSON: {out}")
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())

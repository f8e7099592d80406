#!/usr/bin/env python3
"""Where the time of one execution goes, across processes: perf and py-spy
samples of the MCP server and the fork server under load, the MCP server's main
thread under cProfile, and the start-up split. Used to write bench/README.md.
(The cost of each hardening step inside the child is bench/hardening_steps.py,
part of `make bench`.)

    python bench/timeline.py                 # perf + py-spy + server + start-up
    python bench/timeline.py --only pyspy,server
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
        fork_server = next((p for p in descendants(server.pid)
                       if _ppid(p) == server.pid), None)
        tmp = tempfile.mkdtemp(prefix="bench-pyspy-")
        rate = 250
        procs = {}
        for name, pid in (("server", server.pid), ("fork_server", fork_server)):
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
    """perf record -g on the fork server and (inherited) every child it forks while
    trivial executions run paced; inclusive CPU per bucket per execution."""
    if shutil.which("perf") is None:
        return {"status": "perf not installed"}
    from sandbox import profiles
    from sandbox.forkserver.runner import ExecRequest, Runner, RunnerConfig
    request = ExecRequest(code=TRIVIAL, timeout=30.0, memory_limit=128 << 20,
                          allowed_modules=frozenset(profiles.allowed_modules(["basic"])))
    runner = Runner(RunnerConfig(pool_size=pool, max_timeout=60))
    await runner.start()
    data = tempfile.mktemp(prefix="bench-perf-", suffix=".data")
    executions = 0
    try:
        await asyncio.sleep(1.0)
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-g",
                                 "-p", str(runner.fork_server_pid()), "-o", data],
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
        "(fork_server + children)")
    return {"pool": pool, "executions": executions, "cpu_ms_per_execution": total_ms / max(executions, 1),
            "buckets": rows, "note": "perf cpu-clock, -g, attached to the fork server with inheritance: the fork server "
                                      "and every process it forks; inclusive percentages overlap"}


# ----------------------------------------------------------------------------- server under cProfile


SERVER_AREAS = [
    ("pydantic_core", "pydantic (validation/serialization, C)"), ("pydantic", "pydantic (Python)"),
    ("mcp_types", "mcp wire models"), ("mcp/server", "mcp server"), ("mcp/shared", "mcp JSON-RPC dispatch"),
    ("mcp/", "mcp other"), ("anyio", "anyio"), ("asyncio", "asyncio"), ("threading", "threads (stdio)"),
    ("json", "json"), ("sandbox/mcp/server.py", "sandbox/mcp/server.py"), ("sandbox/forkserver/runner.py", "sandbox/forkserver/runner.py"),
    ("sandbox/mcp/audit.py", "sandbox/mcp/audit.py"), ("sandbox/", "sandbox other"), ("logging", "logging"),
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
        "python -I -S -c pass (the fork server's interpreter start)": timed([sys.executable, "-I", "-S", "-c", "pass"]),
        "import pydantic": timed([sys.executable, "-c", "import pydantic"]),
        "import mcp.server.mcpserver": timed([sys.executable, "-c", "import mcp.server.mcpserver"]),
        "import sandbox.mcp.server": timed([sys.executable, "-c", "import sandbox.mcp.server"]),
        "bin/mcp-server-python-sandbox --version": timed([sys.executable, str(ROOT / "bin" / "mcp-server-python-sandbox"), "--version"]),
    }

    async def start_runner():
        from sandbox.forkserver.runner import Runner, RunnerConfig
        values = []
        for _ in range(3):
            r = Runner(RunnerConfig(pool_size=4))
            t0 = time.perf_counter()
            await r.start()
            values.append(time.perf_counter() - t0)
            await r.aclose()
        return statistics.median(values)

    out["Runner.start(): fork_server spawn, imports, layer probe, hello"] = asyncio.run(start_runner())
    log("  start-up split: " + ", ".join(f"{k} {v:.3f}" for k, v in out.items()))
    return {k: round(v, 4) for k, v in out.items()}


# ----------------------------------------------------------------------------- report


def render(res: dict) -> str:
    lines = []
    w = lines.append
    spy = res.get("pyspy") or {}
    for name in ("server", "fork_server"):
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
        w(f"\nperf, pool={pf['pool']}: fork_server + children {pf['cpu_ms_per_execution']:.2f} ms CPU per execution "
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="perf,pyspy,server,startup")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--pyspy-seconds", type=float, default=8.0)
    parser.add_argument("--out", default=str(RESULTS / "profile.json"))
    args = parser.parse_args(argv)
    only = {s.strip() for s in args.only.split(",")}
    started = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - started:6.1f}s] {msg}", file=sys.stderr, flush=True)

    res: dict = {"load_avg_start": os.getloadavg()}
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

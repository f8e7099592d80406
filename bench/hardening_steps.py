#!/usr/bin/env python3
"""What each step of child.HARDENING costs inside one child, next to the
floor (a clone into the same namespaces that exits at once) and a bare
`python -I -S -c pass` spawn, all measured the same way: the CPU time of the
process (getrusage of the reaped child) and its wall time.

    python bench/hardening_steps.py [--runs 100] [--detail] [--mounts N]

--mounts N: the same children without and then with N operator directories
(SANDBOX_MOUNTS, half ro, half rw), in one run, and what the mounts add.

Nothing under sandbox/ changes: the steps are wrapped at run time in this
process, which then clones children exactly as the fork server does (same spec, same
id maps, same pipes) and has each run one trivial request in place (not over
its pipes) and report the CPU, wall time and page faults of each step. As root
and as an ordinary user alike.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _spec(pinned: tuple = ()):
    """The basic profile's spec, in the network namespace its children would have
    (the shared empty one where the fork server would enter it: layers.establish),
    with the operator mounts `pinned` (mounts.pin_host_directories)."""
    from sandbox import landlock, layers, mounts, namespaces, seccomp
    from sandbox.layer_names import KERNEL_LAYERS
    config = {"max_timeout": 30, "max_memory": 512 << 20, "network": False, "filesystem": False,
              "workspace_size": 64 << 20}
    shared = os.geteuid() == 0 and landlock.abi_version() >= 6 and namespaces.enter_empty_network()
    return layers._spec(config, KERNEL_LAYERS, seccomp.build_filter(allow_inet=False),
                        tuple(mounts.readable_paths(network=False)), shared, pinned)


def _minor_faults() -> int:
    """Page faults served without I/O: in a child, nearly all copy-on-write."""
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt


# --detail: the functions inside the steps, by module (sandbox.<module>: names; "<module>.<Class>"
# for methods). The same function runs in the pre-warm and in the request, so each figure is
# labelled with the part of the child's life it ran in.
DETAIL = {   # (module under sandbox., class or "") -> the functions timed there
    ("child", ""): ("_reset_signals", "_move_pipes_low", "_arm_parent_death"),
    ("libc", ""): ("set_process_name",),
    ("namespaces", ""): ("enter_private_clocks",),
    ("mounts", ""): ("open_sources", "open_host_sources", "build_root"),
    ("privileges", ""): ("become", "drop_capabilities"),
    ("restricted.run", ""): ("compile_snippet", "ExecutionContext", "restricted_globals", "reported_value"),
    ("restricted.libraries.switched_off", "SwitchedOff"): ("__enter__", "__exit__"),
}
REQUEST = "the request: result = 2 + 2"


def _install_wrappers(child, events: list, detail: bool = False) -> None:
    """Each step (and start-up, pre-warm, the request) records its CPU, wall time and
    faults; with `detail`, the functions of DETAIL too. The request runs in place of
    serving; then the child writes the records and exits."""
    import importlib

    from sandbox import profiles
    from sandbox.wire import protocol
    from sandbox.wire.messages import ChildOrder, RunRequest
    part = [""]   # the part of the child's life a detail figure belongs to

    def timed(name, fn, *, detail_of=False, part_name=None):
        def wrapper(*args, **kwargs):
            # (wall time by the real-time clock: the namespaces step enters a time namespace,
            # which moves the monotonic one)
            cpu, wall, faults = time.thread_time_ns(), time.time_ns(), _minor_faults()
            if not detail_of:
                part[0] = part_name or name
            try:
                return fn(*args, **kwargs)
            finally:
                label = f"  {part[0]} > {name}" if detail_of else name
                events.append((label, (time.thread_time_ns() - cpu) / 1e6, (time.time_ns() - wall) / 1e6,
                               _minor_faults() - faults))
        return wrapper

    child.HARDENING = tuple((name, where, step if where == child.TEMPLATE else timed(name, step))
                            for name, where, step in child.HARDENING)
    child._start = timed("start (fds, signals, environment)", child._start, part_name="start")
    child._prewarm = timed("pre-warm", child._prewarm)
    if detail:
        for (module, cls), names in DETAIL.items():
            owner = importlib.import_module(f"sandbox.{module}")
            owner = getattr(owner, cls) if cls else owner
            for name in names:
                setattr(owner, name, timed(name, getattr(owner, name), detail_of=True))

    run_request = timed(REQUEST, child._run_request, part_name="request")

    def report_instead_of_serving(spec, baseline):
        sink = child._stream(protocol.STDERR)
        order = ChildOrder(op="execute", nonce="1", session=False,
                           request=RunRequest(code="result = 2 + 2", timeout=30, memory_limit=1 << 30,
                                              allowed_modules=tuple(profiles.allowed_modules(["basic"]))))
        run_request(spec, order, sink, sink, None)
        os.write(protocol.STDOUT, json.dumps(events).encode())
        os._exit(0)
    child._serve = report_instead_of_serving


def _reap(pid: int) -> tuple[float, int, int]:
    """(CPU ms, wait status, minor page faults) of the child, once it has exited."""
    _, status, usage = os.wait4(pid, 0)
    return (usage.ru_utime + usage.ru_stime) * 1e3, status, usage.ru_minflt


def measure(runs: int, detail: bool = False, pinned: tuple = ()) -> dict:
    from sandbox import child, namespaces, profiles
    from sandbox import libc
    from sandbox.restricted import run as restricted
    from sandbox.forkserver import spawning
    restricted.preload(sorted(profiles.allowed_modules(["basic"])))
    spec = _spec(pinned)
    own_pidfd = os.pidfd_open(os.getpid())
    # this process stands for the cloner: the template's steps once, inherited by every child
    cpu = time.thread_time_ns()
    child.prepare_template(spec)
    template_ms = (time.thread_time_ns() - cpu) / 1e6
    events: list = []
    _install_wrappers(child, events, detail)
    steps: dict[str, list] = {}
    totals, walls, clone_ms, faults = [], [], [], []
    for _ in range(runs):
        pipes = [os.pipe() for _ in range(5)]
        (req_r, req_w), (res_r, res_w), (out_r, out_w), (err_r, err_w), (go_r, go_w) = pipes
        started = time.perf_counter()
        pid = libc.clone_process(namespaces.clone_flags(own_network=spec.own_network))
        if pid == 0:
            child.run(spec, child.ChildPipes(request=req_r, result=res_w, stdout=out_w, stderr=err_w,
                                             go=go_r, fork_server=own_pidfd), from_template=True)
        clone_ms.append((time.perf_counter() - started) * 1e3)
        for fd in (req_r, res_w, out_w, err_w, go_r):
            os.close(fd)
        spawning.let_go(pid, spec, go_w)
        os.close(go_w)
        data = b""
        while chunk := os.read(out_r, 1 << 16):
            data += chunk
        cpu, _, child_faults = _reap(pid)
        faults.append(child_faults)
        walls.append((time.perf_counter() - started) * 1e3)
        totals.append(cpu)
        for fd in (req_w, res_r, out_r, err_r):
            os.close(fd)
        for name, step_cpu, step_wall, step_faults in json.loads(data or b"[]"):
            steps.setdefault(name, []).append((step_cpu, step_wall, step_faults))
    floor_cpu, floor_wall = [], []
    for _ in range(runs):
        started = time.perf_counter()
        pid = libc.clone_process(namespaces.clone_flags(own_network=spec.own_network))
        if pid == 0:
            os._exit(0)
        floor_cpu.append(_reap(pid)[0])
        floor_wall.append((time.perf_counter() - started) * 1e3)
    bare_cpu, bare_wall = [], []
    for _ in range(max(10, runs // 4)):
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", "pass"])
        bare_cpu.append(_reap(proc.pid)[0])
        proc.returncode = 0
        bare_wall.append((time.perf_counter() - started) * 1e3)
    med = statistics.median
    return {
        "runs": runs, "euid": os.geteuid(), "layers": sorted(spec.layers),
        "child_cpu_ms": med(totals), "child_wall_ms": med(walls),
        "child_faults": med(faults), "fork_server_clone_wall_ms": med(clone_ms),
        "steps": {name: {"cpu_ms": med(v[0] for v in vals), "wall_ms": med(v[1] for v in vals),
                         "faults": med(v[2] for v in vals), "n": len(vals)}
                  for name, vals in steps.items()},
        "template_cpu_ms": template_ms,
        "floor": {"cpu_ms": med(floor_cpu), "wall_ms": med(floor_wall)},
        "bare_python": {"cpu_ms": med(bare_cpu), "wall_ms": med(bare_wall)},
    }


def render(res: dict) -> str:
    bare = res["bare_python"]["cpu_ms"]
    lines = [f"one child, hardening step by step (median of {res['runs']}; euid {res['euid']}; "
             f"layers {', '.join(res['layers'])})",
             f"  {'step':<44} {'CPU ms':>8} {'wall ms':>8} {'faults':>8}"]
    for name, row in res["steps"].items():
        lines.append(f"  {name:<44} {row['cpu_ms']:8.2f} {row['wall_ms']:8.2f} {row['faults']:8.0f}")
    lines += [
        f"  {'whole child (rusage; incl. exit)':<44} {res['child_cpu_ms']:8.2f} {res['child_wall_ms']:8.2f}"
        f" {res['child_faults']:8.0f}   = {res['child_cpu_ms'] / bare:.2f} x a bare python spawn",
        f"  {'template steps, once (not per child)':<44} {res['template_cpu_ms']:8.2f}",
        f"  {'fork_server: the clone call itself (wall)':<44} {'':>8} {res['fork_server_clone_wall_ms']:8.2f}",
        f"  {'floor: clone into the namespaces + exit':<44} {res['floor']['cpu_ms']:8.2f} {res['floor']['wall_ms']:8.2f}",
        f"  {'baseline: python -I -S -c pass':<44} {bare:8.2f} {res['bare_python']['wall_ms']:8.2f}",
        "  (step CPU is the child's thread time inside the step; what the steps do not cover is the",
        "  copy-on-write faults before start, the exit, and the report that replaces the request)",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--detail", action="store_true",
                        help="also the functions inside the steps (DETAIL), each where it ran")
    parser.add_argument("--mounts", type=int, default=0,
                        help="also measure with this many operator mounts (SANDBOX_MOUNTS) and compare")
    args = parser.parse_args(argv)
    if args.mounts:
        return _compare_mounts(args.runs, args.mounts, args.json)
    res = measure(args.runs, args.detail)
    print(json.dumps(res) if args.json else render(res))
    return 0


ROUNDS = 5


def _median_of(results: list) -> dict:
    """Each figure the median of the rounds' medians."""
    med = statistics.median
    steps = {name: {"wall_ms": med(r["steps"][name]["wall_ms"] for r in results if name in r["steps"])}
             for name in results[0]["steps"]}
    return {"steps": steps, "child_cpu_ms": med(r["child_cpu_ms"] for r in results),
            "child_wall_ms": med(r["child_wall_ms"] for r in results)}


def _compare_mounts(runs: int, count: int, as_json: bool) -> int:
    """The children without mounts, then with `count` of them, in this one run."""
    import tempfile

    from sandbox import mounts
    from sandbox.host_mounts import Mount
    with tempfile.TemporaryDirectory() as base:
        operator = []
        for i in range(count):
            path = os.path.join(base, f"m{i}")
            os.mkdir(path)
            operator.append(Mount(path, f"/mnt/m{i}", writable=i % 2 == 1))
        pinned = mounts.pin_host_directories(operator, mounts.readable_paths(network=False))
        rounds = {"without": [], "with": []}
        for _ in range(ROUNDS):   # alternated, so that the machine's load falls on both alike
            rounds["without"].append(measure(max(1, runs // ROUNDS), detail=True))
            rounds["with"].append(measure(max(1, runs // ROUNDS), detail=True, pinned=pinned))
        without, with_mounts = (_median_of(rounds[name]) for name in ("without", "with"))
    if as_json:
        print(json.dumps({"without": without, "with": with_mounts, "mounts": count}))
        return 0
    print(f"operator mounts: {count} (half ro, half rw), {runs} children each, in {ROUNDS} alternated rounds "
          "(the median of the rounds' medians)")
    print(f"  {'':<44} {'without':>8} {'with':>8} {'added':>8}  (ms)")
    for name in with_mounts["steps"]:
        if name in without["steps"] and ("namespaces" in name or "mounts." in name):
            a, b = without["steps"][name]["wall_ms"], with_mounts["steps"][name]["wall_ms"]
            print(f"  {name + ' (wall)':<44} {a:8.2f} {b:8.2f} {b - a:+8.2f}")
    for key, label in (("child_cpu_ms", "whole child (CPU)"), ("child_wall_ms", "whole child (wall)")):
        a, b = without[key], with_mounts[key]
        print(f"  {label:<44} {a:8.2f} {b:8.2f} {b - a:+8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

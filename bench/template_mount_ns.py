#!/usr/bin/env python3
"""What a template mount namespace would save each child (as root; not used by the sandbox).

    python bench/template_mount_ns.py [--runs 60]

Two ways to give a child cloned into new user, pid, mount, IPC, UTS and network
namespaces its private root, timed inside the child (thread CPU, median):

* from scratch, as every child does it: mounts.open_sources, the inside uid, mounts.build_root;
* from a template (the inside uid taken as well): a process of this script builds the read-only part once in a mount
  namespace of its own (the same bind mounts, and the host's /proc bound at /proc: a user
  namespace may mount a new proc only where a fully visible one is mounted already, and
  libc.clone_process reads /proc/self/task), pivots into it, and clones the children from
  there; each child's CLONE_NEWNS copies it, and it mounts only its own /tmp and /proc
  on top.

Each child checks what it sees (its pid namespace alone in /proc, its /tmp empty and
writable, the template's root read-only) and the script fails if one does not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sandbox import libc, mounts, namespaces, privileges  # noqa: E402

TMP_OPTIONS = f"size={mounts.TMP_SIZE},nr_inodes={mounts.TMP_INODES},mode=1777"
PROC_FLAGS = libc.MS_NOSUID | libc.MS_NODEV | libc.MS_NOEXEC


def build_template(readable) -> None:
    """The read-only part of the private root, once, in this process's own mount namespace."""
    libc.unshare(libc.CLONE_NEWNS)
    sources = mounts.open_sources(readable)
    libc.mount(None, "/", None, libc.MS_REC | libc.MS_PRIVATE)
    libc.mount("tmpfs", "/tmp", "tmpfs", libc.MS_NOSUID | libc.MS_NODEV, "size=64k,mode=0700")
    new = mounts.NEW_ROOT
    os.mkdir(new, 0o755)
    libc.mount("tmpfs", new, "tmpfs", libc.MS_NOSUID | libc.MS_NODEV, "size=1m,mode=0755")
    for directory in ("/tmp", "/dev", "/proc"):
        os.makedirs(new + directory, 0o755, exist_ok=True)
    for path, fd in sources.items():
        mounts._bind(fd, new + path, read_only=not path.startswith("/dev/"))
        os.close(fd)
    for link in ("/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(link) and not os.path.lexists(new + link):
            os.symlink(os.readlink(link), new + link)
    libc.mount("/proc", new + "/proc", None, libc.MS_BIND | libc.MS_REC)
    os.chdir(new)
    libc.pivot_root(".", ".")
    libc.umount2(".", libc.MNT_DETACH)
    os.chdir("/")
    libc.mount(None, "/", None, libc.MS_REMOUNT | libc.MS_BIND | libc.MS_RDONLY | libc.MS_NOSUID | libc.MS_NODEV)


def from_scratch(readable):
    def body():
        sources = mounts.open_sources(readable)
        privileges.become(namespaces.INSIDE_ID, namespaces.INSIDE_ID, clear_groups=True)
        mounts.build_root(sources)
    return body


def from_template() -> None:
    privileges.become(namespaces.INSIDE_ID, namespaces.INSIDE_ID, clear_groups=True)
    libc.mount("tmpfs", "/tmp", "tmpfs", libc.MS_NOSUID | libc.MS_NODEV, TMP_OPTIONS)
    libc.mount("proc", "/proc", "proc", PROC_FLAGS)


def sees() -> dict:
    try:
        with open("/usr/.template-write-check", "w"):
            root = "writable"
    except OSError:
        root = "read-only"
    with open("/tmp/mine", "w") as f:
        f.write("x")
    return {"pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
            "tmp": sorted(os.listdir("/tmp")), "root": root}


def clone_children(body, runs: int) -> tuple[float, dict]:
    flags = namespaces.clone_flags(own_network=True)
    cpu, seen = [], {}
    for _ in range(runs):
        go_r, go_w = os.pipe()
        out_r, out_w = os.pipe()
        pid = libc.clone_process(flags)
        if pid == 0:
            try:
                os.read(go_r, 1)
                started = time.thread_time_ns()
                body()
                report = {"cpu_ms": (time.thread_time_ns() - started) / 1e6, **sees()}
            except BaseException as exc:  # noqa: BLE001
                report = {"error": repr(exc)}
            os.write(out_w, json.dumps(report).encode())
            os._exit(0)
        os.close(go_r)
        os.close(out_w)
        namespaces.map_child_ids(pid, namespaces.SANDBOX_ID, namespaces.SANDBOX_ID, deny_setgroups=False)
        os.write(go_w, b"1")
        os.close(go_w)
        seen = json.loads(os.read(out_r, 1 << 16) or b'{"error": "no report"}')
        os.close(out_r)
        os.waitpid(pid, 0)
        if "error" in seen:
            raise RuntimeError(seen["error"])
        cpu.append(seen.pop("cpu_ms"))
    return statistics.median(cpu), seen


def in_template(readable, runs: int) -> tuple[float, dict]:
    """Build the template in a process of its own and clone the children from it."""
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            build_template(readable)
            out = {"result": clone_children(from_template, runs)}
        except BaseException as exc:  # noqa: BLE001
            out = {"error": repr(exc)}
        os.write(report_w, json.dumps(out).encode())
        os._exit(0)
    os.close(report_w)
    out = json.loads(os.read(report_r, 1 << 16) or b'{"error": "no report"}')
    os.close(report_r)
    os.waitpid(pid, 0)
    if "error" in out:
        raise RuntimeError(out["error"])
    return tuple(out["result"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("template_mount_ns: as root only (the template is built with the host's CAP_SYS_ADMIN)")
        return 1
    readable = mounts.readable_paths(network=False)
    expected = {"pids": [1], "tmp": ["mine"], "root": "read-only"}
    for _ in range(args.rounds):
        for name, measure in (("from scratch (open_sources, become, build_root)",
                               lambda: clone_children(from_scratch(readable), args.runs)),
                              ("from the template (own /tmp and /proc)", lambda: in_template(readable, args.runs))):
            cpu, seen = measure()
            print(f"  {name:<50} {cpu:6.2f} ms   sees {seen}", flush=True)
            if seen != expected:
                print(f"template_mount_ns: the child sees {seen}, not {expected}")
                return 1
    print(f"  (load average {os.getloadavg()[0]:.1f}; thread CPU inside the child, median of {args.runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

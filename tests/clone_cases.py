"""The scenarios of test_clone.py, each run in a fresh, single-threaded
interpreter (`python tests/clone_cases.py NAME`), as the zygote is: a raw clone
from a threaded process (pytest's) could copy a lock held by another thread.
Prints one JSON line: the case's value, or its error."""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sandbox import namespaces, privileges
from sandbox import libc

IS_ROOT = os.geteuid() == 0
OUTER = (namespaces.SANDBOX_ID,) * 2 if IS_ROOT else (os.getuid(), os.getgid())


def clone_and_report(fn, *, map_ids: bool = True):
    """Clone a child into new namespaces, map its ids as the zygote does, let it
    run fn() and return (fn's value or error, the child's wait status)."""
    go_r, go_w = os.pipe()
    out_r, out_w = os.pipe()
    pid = libc.clone_process(namespaces.clone_flags())
    if pid == 0:
        try:
            os.close(go_w)
            os.close(out_r)
            os.read(go_r, 1)
            try:
                payload = {"value": fn()}
            except BaseException as exc:  # noqa: BLE001 - the parent asserts
                payload = {"error": f"{type(exc).__name__}: {exc}"}
            os.write(out_w, json.dumps(payload).encode())
        finally:
            os._exit(0)
    os.close(go_r)
    os.close(out_w)
    if map_ids:
        namespaces.map_child_ids(pid, *OUTER, deny_setgroups=not IS_ROOT)
    os.write(go_w, b"1")
    os.close(go_w)
    if not select.select([out_r], [], [], 120)[0]:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the cloned child did not answer")
    data = b""
    while chunk := os.read(out_r, 65536):
        data += chunk
    os.close(out_r)
    _, status = os.waitpid(pid, 0)
    return {"payload": json.loads(data), "exited": os.WIFEXITED(status) and os.WEXITSTATUS(status)}


def identity():
    def inside():
        with open("/proc/self/uid_map") as f:
            uid_map = f.read().split()
        with open("/proc/self/gid_map") as f:
            gid_map = f.read().split()
        import socket
        return {"pid": os.getpid(), "ppid": os.getppid(), "uid_map": uid_map, "gid_map": gid_map,
                "interfaces": sorted(name for _, name in socket.if_nameindex())}
    return clone_and_report(inside)


def become_inside(secret: str):
    def inside():
        def attempt(fn):
            try:
                fn()
                return "ok"
            except OSError as exc:
                return type(exc).__name__

        inside_id = namespaces.INSIDE_ID
        privileges.become(inside_id, inside_id, clear_groups=IS_ROOT)
        privileges.drop_capabilities()
        caps = privileges.capability_status()
        return {"ids": [os.getresuid(), os.getresgid()],
                "caps": [caps[k] for k in ("CapPrm", "CapEff", "CapBnd", "CapAmb")],
                "read root-only file": attempt(lambda: open(secret, "rb").read()),
                "setuid(0)": attempt(lambda: os.setuid(0))}
    return clone_and_report(inside)


def unmapped():
    def inside():
        privileges.become(namespaces.INSIDE_ID, namespaces.INSIDE_ID, clear_groups=False)
    return clone_and_report(inside, map_ids=False)


def kill_empties_namespace():
    ready_r, ready_w = os.pipe()
    pid = libc.clone_process(namespaces.clone_flags())
    if pid == 0:
        try:
            os.close(ready_r)
            if os.fork() == 0:
                while True:
                    time.sleep(1)
            os.write(ready_w, b"1")
            while True:
                time.sleep(1)
        finally:
            os._exit(0)
    os.close(ready_w)
    ready = bool(select.select([ready_r], [], [], 120)[0])
    os.close(ready_r)
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        grandchildren = [int(p) for p in f.read().split()]
    pidfd = os.pidfd_open(pid)
    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(pidfd)
    # reaped only once its namespace was empty: the grandchild is gone already
    return {"ready": ready, "grandchildren": len(grandchildren),
            "alive after the reap": [p for p in grandchildren if os.path.exists(f"/proc/{p}")]}


def refuses_threads():
    import threading
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        libc.clone_process(0)
    except RuntimeError as exc:
        return str(exc)
    finally:
        stop.set()
        thread.join()
    return "cloned"


CASES = {"identity": identity, "become_inside": become_inside, "unmapped": unmapped,
         "kill_empties_namespace": kill_empties_namespace, "refuses_threads": refuses_threads}

if __name__ == "__main__":
    print(json.dumps(CASES[sys.argv[1]](*sys.argv[2:])))

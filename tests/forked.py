"""Run a function in a forked child and bring its JSON-able answer back: the
harness of the per-layer tests, which apply one layer to a throw-away process."""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import time
import traceback


def run_in_child(fn, timeout: float = 30.0, own_fds_only: bool = False):
    """Run fn() in a forked child. Returns (payload, wait_status); payload is
    {'value': ...} or {'error': ..., 'tb': ...}, or None if the child sent nothing.
    With own_fds_only the child keeps only fds 0-2 and its pipe, as a sandbox child
    does: a test that counts fds must not depend on what the test process holds."""
    payload, status, _cpu = run_in_child_with_cpu(fn, timeout, own_fds_only)
    return payload, status


def run_in_child_with_cpu(fn, timeout: float = 30.0, own_fds_only: bool = False):
    """run_in_child, plus the CPU seconds the child used (user + system): what a CPU
    limit counts, whatever else the machine is doing."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            if own_fds_only:
                os.closerange(3, w)
                os.closerange(w + 1, min(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 1 << 20))
            try:
                payload = {"value": fn()}
            except BaseException as e:  # report everything, the parent asserts
                payload = {"error": f"{type(e).__name__}: {e}", "tb": traceback.format_exc()}
            data = json.dumps(payload).encode()
            while data:
                data = data[os.write(w, data):]
        finally:
            os._exit(0)
    os.close(w)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                raise AssertionError("child timed out")
            chunk = os.read(r, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
        _, status, usage = os.wait4(pid, 0)
    return (json.loads(b"".join(chunks)) if chunks else None), status, usage.ru_utime + usage.ru_stime


def child_value(fn, timeout: float = 30.0):
    """fn()'s value from a forked child; fails the test on an exception there."""
    payload, status = run_in_child(fn, timeout)
    assert payload is not None, f"child sent nothing, wait status {status:#x}"
    assert "error" not in payload, payload.get("tb", payload)
    return payload["value"]

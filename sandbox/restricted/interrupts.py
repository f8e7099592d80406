"""A session's interrupt: at a call's time limit the fork server sends the child SIGINT,
and the snippet gets KeyboardInterrupt where it is, as a Jupyter interrupt does; the
session keeps its state. The fork server kills the child when the snippet has not
stopped within the grace period, whatever the snippet does with the exception.

Outside the snippet's run the signal is only recorded, never raised: it must not cut
into the child's own work (reading the request, reporting the result). One that came
before the snippet started (while the call's input files were written, or its code
compiled) is raised as the snippet starts. As PID 1 of its namespace the child gets a
signal from outside only while a handler is installed, hence a handler at all times.
"""

from __future__ import annotations

import contextlib
import signal

_pending = False


def _record(signum, frame) -> None:
    global _pending
    _pending = True


def arm() -> None:
    """In the child, before its first request."""
    signal.signal(signal.SIGINT, _record)


def new_call() -> None:
    """A call's request is read: an interrupt recorded before it was an earlier call's."""
    global _pending
    _pending = False


@contextlib.contextmanager
def raising(on: bool):
    """While the snippet runs (``on``: a session's call), SIGINT raises KeyboardInterrupt."""
    if not on:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if _pending:
            raise KeyboardInterrupt
        yield
    finally:
        try:
            signal.signal(signal.SIGINT, _record)
        except KeyboardInterrupt:  # (pending as the snippet ended: it ended all the same)
            signal.signal(signal.SIGINT, _record)

"""SANDBOX_RATE_LIMIT: executions a caller may start per minute.

The caller is whoever holds this server's one connection: the stdio client, or over
HTTP the holder of its one bearer token. So one window serves them. It counts the
executions it let start in the last 60 seconds; a call over the limit is turned away
before anything runs, with the seconds until the oldest of them leaves the window,
and is not counted. What is already running is never touched.
"""

from __future__ import annotations

import collections
import math
import time
from collections.abc import Callable

WINDOW = 60.0   # seconds


class RateLimit:
    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic):
        self.per_minute = per_minute
        self.clock = clock
        self.started: collections.deque[float] = collections.deque()

    def admit(self) -> float | None:
        """Count one execution and return None, or return the seconds to wait (not counted).
        A limit of 0 admits everything."""
        if self.per_minute <= 0:
            return None
        now = self.clock()
        while self.started and self.started[0] <= now - WINDOW:
            self.started.popleft()
        if len(self.started) >= self.per_minute:
            return max(0.0, self.started[0] + WINDOW - now)
        self.started.append(now)
        return None


def refusal(per_minute: int, wait: float) -> str:
    seconds = max(1, math.ceil(wait))
    return (f"rate limit: this server runs at most {per_minute} executions a minute (SANDBOX_RATE_LIMIT); "
            f"retry in {seconds} s, or do more in each call (one snippet can loop over many inputs)")

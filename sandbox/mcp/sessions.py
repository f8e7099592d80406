"""Sessions: state kept across execute_code calls, by explicit handle.

create_session mints an unguessable handle and gives the session a process of
its own (a pooled child that stays alive, runner.open_session); later calls
pass the handle as an ordinary argument. Never keyed on a transport session.
A session ends when it is closed, when it has been idle for the TTL or lived
its maximum lifetime, or when a call in it times out, runs out of memory or
crashes; after that the handle is unknown, and a call with it is refused
(never a silent fresh start). One call at a time: a second call waits for the
first, within its own timeout.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass, field

logger = logging.getLogger("sandbox.mcp.sessions")

HANDLE_PREFIX = "sess_"
REMEMBERED_ENDS = 256   # ended sessions whose cause a later call with the handle is told


class SessionRefused(Exception):
    """No session could be created; the message says why and what to do."""


@dataclass
class Session:
    id: str
    created: float
    last_used: float
    memory_limit: int
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def expires_in(self, ttl: float, max_lifetime: float, now: float) -> float:
        return max(0.0, min(self.last_used + ttl, self.created + max_lifetime) - now)


class Sessions:
    def __init__(self, runner, audit, *, max_sessions: int, ttl: float, max_lifetime: float):
        self.runner = runner
        self.audit = audit
        self.max_sessions = max_sessions
        self.ttl = ttl
        self.max_lifetime = max_lifetime
        self.open: dict[str, Session] = {}
        self.ended: dict[str, str] = {}      # handle -> why it ended, the latest REMEMBERED_ENDS
        self.creating = 0

    async def create(self, memory_limit: int) -> Session:
        if len(self.open) + self.creating >= self.max_sessions:
            raise SessionRefused(
                f"{len(self.open)} sessions are open, the most this server allows (SANDBOX_MAX_SESSIONS="
                f"{self.max_sessions}): close one you no longer need with close_session, or run without a "
                "session (each call then starts fresh)")
        handle = HANDLE_PREFIX + secrets.token_urlsafe(18)
        self.creating += 1
        try:
            answer = await self.runner.open_session(handle, on_ended=self._ended_between_calls)
        finally:
            self.creating -= 1
        if answer.get("ok") is not True:
            raise SessionRefused(f"no process could be created for the session ({answer.get('error')}); "
                                 "retry later, or run without a session")
        now = time.monotonic()
        session = self.open[handle] = Session(id=handle, created=now, last_used=now, memory_limit=memory_limit)
        self.audit.session(handle, "created")
        return session

    def get(self, handle: str) -> Session | None:
        """The live session, or None: unknown, closed, or expired (then ended now)."""
        session = self.open.get(handle) if isinstance(handle, str) else None
        if session is not None and session.expires_in(self.ttl, self.max_lifetime, time.monotonic()) <= 0:
            self._forget(session.id, self._expiry_cause(session))
            asyncio.ensure_future(self.runner.close_session(session.id))
            return None
        return session

    async def close(self, handle: str, cause: str = "closed") -> bool:
        session = self.open.get(handle)
        if session is None:
            return False
        self._forget(handle, cause)
        await self.runner.close_session(handle)
        return True

    def ended_by_call(self, handle: str, cause: str) -> None:
        """A call's answer said the session ended with it (timeout, memory, crash)."""
        self._forget(handle, cause)

    async def sweep(self) -> None:
        """End every session past its idle TTL or its maximum lifetime."""
        now = time.monotonic()
        for session in list(self.open.values()):
            if not session.lock.locked() and session.expires_in(self.ttl, self.max_lifetime, now) <= 0:
                await self.close(session.id, self._expiry_cause(session))

    async def run_sweeper(self) -> None:
        interval = max(0.5, min(self.ttl, self.max_lifetime) / 4)
        while True:
            await asyncio.sleep(interval)
            try:
                await self.sweep()
            except Exception:  # noqa: BLE001 - the sweeper must keep running
                logger.exception("session sweep failed")

    async def close_all(self) -> None:
        for handle in list(self.open):
            await self.close(handle, "server shutdown")

    def _ended_between_calls(self, handle: str, reason: str) -> None:
        """The runner saw the session's process end outside an answer (it died
        idle, its call was cancelled, the fork server died)."""
        if handle in self.open:
            logger.warning("session %s ended: %s", handle[:12], reason)
            self._forget(handle, reason[:300])

    def end_cause(self, handle) -> str | None:
        return self.ended.get(handle) if isinstance(handle, str) else None

    def _forget(self, handle: str, cause: str) -> None:
        if self.open.pop(handle, None) is not None:
            self.audit.session(handle, "ended", cause)
            self.ended[handle] = cause
            if len(self.ended) > REMEMBERED_ENDS:
                del self.ended[next(iter(self.ended))]

    def _expiry_cause(self, session: Session) -> str:
        now = time.monotonic()
        if now >= session.created + self.max_lifetime:
            return f"maximum lifetime ({self.max_lifetime:g} s) reached"
        return f"idle for {self.ttl:g} s"

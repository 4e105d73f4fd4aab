"""Browser sessions of `arena server`: signing in with an API token gives a random session id in a
cookie; the server keeps only the id's sha256 digest, in memory, with an idle expiry.

A session remembers the digest of the token it was opened with and is checked against the store
on every request, so revoking or rotating the token (or disabling the author) ends its sessions at
once. Each session carries its own CSRF token, sent back in a hidden field of every form.
Sessions do not survive a restart of the server: its authors sign in again.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field

SESSION_COOKIE = "arena_session"
SIGNIN_COOKIE = "arena_signin"  # the sign-in form's own CSRF value, before there is a session
IDLE_S = 8 * 3600  # a session unused this long is gone
MAX_SESSIONS = 10_000  # the oldest sessions go first beyond this (memory stays bounded)


def digest(value: str) -> str:
    """The sha256 hex digest a session id is kept under."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def same(a: str | None, b: str | None) -> bool:
    """Whether two secrets are equal, compared in constant time (False when either is missing)."""
    return bool(a) and bool(b) and hmac.compare_digest(a.encode("utf-8", "surrogatepass"),
                                                       b.encode("utf-8", "surrogatepass"))


@dataclass
class Session:
    """One signed-in browser: whose it is, the token it came from (digest), its CSRF token."""

    author_id: int
    token_hash: str
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    last_seen: float = field(default_factory=time.monotonic)


class SessionStore:
    """Sessions by the digest of their id, with an idle expiry; safe across threads."""

    def __init__(self, idle_s: float = IDLE_S, max_sessions: int = MAX_SESSIONS):
        self.idle_s = idle_s
        self.max_sessions = max_sessions
        self.lock = threading.Lock()
        self.sessions: dict[str, Session] = {}

    def open(self, author_id: int, token_hash: str) -> tuple[str, Session]:
        """A new session; returns its id (for the cookie, never stored) and the session."""
        session_id = secrets.token_urlsafe(32)
        session = Session(author_id, token_hash)
        with self.lock:
            self._expire()
            while len(self.sessions) >= self.max_sessions:
                self.sessions.pop(next(iter(self.sessions)))
            self.sessions[digest(session_id)] = session
        return session_id, session

    def get(self, session_id: str | None) -> Session | None:
        """The live session of this id, its idle clock restarted; None when unknown or expired."""
        if not session_id or len(session_id) > 100:
            return None
        key = digest(session_id)
        with self.lock:
            session = self.sessions.get(key)
            if session is None:
                return None
            if time.monotonic() - session.last_seen > self.idle_s:
                del self.sessions[key]
                return None
            session.last_seen = time.monotonic()
            return session

    def close(self, session_id: str | None) -> None:
        """End the session of this id (signing out)."""
        if session_id:
            with self.lock:
                self.sessions.pop(digest(session_id), None)

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.idle_s
        for key in [k for k, s in self.sessions.items() if s.last_seen < cutoff]:
            del self.sessions[key]

"""Browser sessions of `arena server`: signing in with an API token gives a random session id in a
cookie; the database keeps only the id's sha256 digest (table `sessions`), so a restarted server
(or a second instance over the same database) honours the sessions opened before.

A session ends after IDLE_S unused or MAX_AGE_S after it was opened, whichever comes first; at
sign-out (its row is deleted); and when the token it was opened with is revoked or rotated (the
store deletes the author's sessions in the same transaction, and a session whose token is no
longer live is refused and deleted on sight). Its CSRF token is derived from the id with HMAC,
so it is neither stored nor derivable from what is stored. Expired rows are pruned when the
server starts, at every sign-in and when a request shows one.

Every method reads or writes the database: call them from a worker thread, not the event loop.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from arena.server.submissions import open_store

SESSION_COOKIE = "arena_session"
SIGNIN_COOKIE = "arena_signin"  # the sign-in form's own CSRF value, before there is a session
IDLE_S = 8 * 3600  # a session unused this long is gone
MAX_AGE_S = 7 * 24 * 3600  # and one opened this long ago, however busy
MAX_PER_AUTHOR = 20  # an author's oldest sessions go first beyond this (the table stays bounded)
# A session's last use is written at most this often: every page view must not be a write.
TOUCH_EVERY_S = 60
SESSION_ID_MAX_CHARS = 100  # a real id is 43 characters: a longer cookie is not hashed


def digest(value: str) -> str:
    """The sha256 hex digest a session id is kept under."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def csrf_of(session_id: str) -> str:
    """The CSRF token of a session: an HMAC keyed by its id, so nothing stored reveals it."""
    return hmac.new(session_id.encode("utf-8", "surrogatepass"), b"arena csrf",
                    hashlib.sha256).hexdigest()


def same(a: str | None, b: str | None) -> bool:
    """Whether two secrets are equal, compared in constant time (False when either is missing)."""
    return bool(a) and bool(b) and hmac.compare_digest(a.encode("utf-8", "surrogatepass"),
                                                       b.encode("utf-8", "surrogatepass"))


def stamp(epoch: float) -> str:
    """An epoch time as the ISO 8601 UTC text of every timestamp column."""
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="milliseconds")


def _epoch(text: str) -> float:
    """An ISO timestamp's epoch seconds; 0 (long expired) for a damaged one: its session ends."""
    try:
        return datetime.fromisoformat(text).timestamp()
    except (TypeError, ValueError):
        return 0.0


@dataclass(frozen=True)
class Session:
    """One signed-in browser: whose it is, the token it came from (digest), its CSRF token; a
    session read back (`get`) also carries its author's name and role, checked live with it."""

    author_id: int
    token_hash: str
    csrf: str
    expires_at: str
    author_name: str = ""
    author_role: str = ""


class SessionStore:
    """Sessions in the server's database by the digest of their id, with an idle and an absolute
    expiry; safe across threads (each call opens its own connection)."""

    def __init__(self, db_path: str | Path, idle_s: float = IDLE_S, max_age_s: float = MAX_AGE_S,
                 max_per_author: int = MAX_PER_AUTHOR, clock: Callable[[], float] = time.time):
        self.db_path = Path(db_path)
        self.idle_s = idle_s
        self.max_age_s = max_age_s
        self.max_per_author = max_per_author
        self.clock = clock  # wall-clock seconds: expiry must hold across restarts

    def open(self, author_id: int, token_hash: str) -> tuple[str, Session]:
        """A new session; returns its id (for the cookie, never stored) and the session."""
        session_id = secrets.token_urlsafe(32)
        when = self.clock()
        expires_at = stamp(when + min(self.idle_s, self.max_age_s))
        with open_store(self.db_path) as store:
            store.add_session({"id_hash": digest(session_id), "author_id": author_id,
                               "token_hash": token_hash, "created_at": stamp(when),
                               "last_seen_at": stamp(when), "expires_at": expires_at},
                              expired_before=stamp(when), keep_per_author=self.max_per_author)
        return session_id, Session(author_id, token_hash, csrf_of(session_id), expires_at)

    def get(self, session_id: str | None) -> Session | None:
        """The live session of this id, its idle clock restarted; None when unknown, expired, or
        its token no longer live (an expired or dead session's row is deleted)."""
        if not session_id or len(session_id) > SESSION_ID_MAX_CHARS:
            return None
        key, when = digest(session_id), self.clock()
        with open_store(self.db_path) as store:
            row = store.session_row(key)
            if row is None:
                return None  # an unknown cookie costs a read, never a write
            expires = min(_epoch(row["expires_at"]), _epoch(row["created_at"]) + self.max_age_s)
            if not row["live"] or expires <= when:
                store.end_session(key)
                return None
            expires_at = row["expires_at"]
            if when - _epoch(row["last_seen_at"]) >= TOUCH_EVERY_S:
                expires_at = stamp(min(when + self.idle_s,
                                       _epoch(row["created_at"]) + self.max_age_s))
                store.touch_session(key, stamp(when), expires_at)
        return Session(row["author_id"], row["token_hash"], csrf_of(session_id), expires_at,
                       row["name"], row["role"])

    def close(self, session_id: str | None) -> None:
        """End the session of this id (signing out)."""
        if session_id and len(session_id) <= SESSION_ID_MAX_CHARS:
            with open_store(self.db_path) as store:
                store.end_session(digest(session_id))

    def prune(self) -> int:
        """Delete every expired session (a server starting); returns how many."""
        with open_store(self.db_path) as store:
            return store.prune_sessions(stamp(self.clock()))

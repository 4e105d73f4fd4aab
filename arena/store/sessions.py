"""The competition server's browser sessions (arena/server/sessions.py), by the sha256 hex of
their id: the id itself is never stored.

Every timestamp is ISO 8601 UTC in the format of `now()`, so comparing the strings compares the
times.
"""

from __future__ import annotations


class SessionRows:
    """Store methods for the sessions table."""

    def add_session(self, row: dict, expired_before: str, keep_per_author: int) -> None:
        """Record a new session; in the same transaction drop every session expired by
        `expired_before` and the author's oldest beyond `keep_per_author`."""
        with self.transaction():
            sql = self.db.conn.execute
            sql("delete from sessions where expires_at <= ?", [expired_before])
            self._insert("sessions", [row])
            sql("delete from sessions where author_id = ? and id_hash not in (select id_hash "
                "from sessions where author_id = ? order by created_at desc, rowid desc limit ?)",
                [row["author_id"], row["author_id"], keep_per_author])

    def session_row(self, id_hash: str) -> dict | None:
        """The sessions row of this digest, with `live` true while the token it was opened with is
        live and its author not disabled, and then the author's `name` and `role`; None when
        there is no such row."""
        rows = list(self.db.query(
            "select s.*, (t.id is not null and a.id is not null) live, a.name, a.role "
            "from sessions s "
            "left join author_tokens t on t.token_hash = s.token_hash "
            " and t.author_id = s.author_id and t.revoked_at is null "
            "left join authors a on a.id = s.author_id and a.disabled_at is null "
            "where s.id_hash = ?", [id_hash]))
        return rows[0] if rows else None

    def touch_session(self, id_hash: str, last_seen_at: str, expires_at: str) -> None:
        """Record a session's use: seen at `last_seen_at`, now expiring at `expires_at`."""
        with self.transaction():
            self.db.conn.execute(
                "update sessions set last_seen_at = ?, expires_at = ? where id_hash = ?",
                [last_seen_at, expires_at, id_hash])

    def end_session(self, id_hash: str) -> bool:
        """Delete the session of this digest; whether there was one."""
        with self.transaction():
            return self.db.conn.execute("delete from sessions where id_hash = ?",
                                        [id_hash]).rowcount > 0

    def prune_sessions(self, expired_before: str) -> int:
        """Delete every session expired by `expired_before`; returns how many."""
        with self.transaction():
            return self.db.conn.execute("delete from sessions where expires_at <= ?",
                                        [expired_before]).rowcount

"""The competition server's rows: authors, their API tokens (hashed) and their submissions.

A token is never stored: only its sha256 hex digest (`token_hash`), looked up by that digest.
"""

from __future__ import annotations

from typing import Any

from arena.store.database import now

# A token's last use is written at most this often: a read must not be a write every time.
LAST_USED_EVERY_S = 60
SUBMISSION_FIELDS = ("id", "author_id", "bot_name", "version", "content_hash", "archive_bytes",
                     "unpacked_bytes", "status", "report", "reason", "created_at", "checked_at")


class AuthorRows:
    """Store methods for authors, author tokens and submissions (arena/server/)."""

    def author_named(self, name: str) -> dict | None:
        """The authors row called `name`, if any."""
        rows = list(self.db.query("select * from authors where name = ?", [name]))
        return rows[0] if rows else None

    def add_author(self, name: str, email: str | None, role: str, token_hash: str) -> int:
        """A new author with one live token (its hash), in one transaction; returns its id."""
        with self.transaction():
            author_id = self._insert("authors", [{"name": name, "email": email, "role": role,
                                                  "created_at": now(), "disabled_at": None}])
            self._insert("author_tokens", [{"author_id": author_id, "token_hash": token_hash,
                                            "created_at": now(), "revoked_at": None,
                                            "last_used_at": None}])
        return author_id

    def revoke_tokens(self, author_id: int) -> int:
        """Revoke every live token of the author and end its browser sessions; returns how many
        tokens were live."""
        with self.transaction():
            return self._revoke_live(author_id)

    def _revoke_live(self, author_id: int) -> int:
        """Inside a transaction: end the author's sessions and revoke its live tokens (how many)."""
        self.db.conn.execute("delete from sessions where author_id = ?", [author_id])
        return self.db.conn.execute(
            "update author_tokens set revoked_at = ? where author_id = ? and revoked_at is null",
            [now(), author_id]).rowcount

    def rotate_token(self, author_id: int, token_hash: str) -> None:
        """Revoke the author's live tokens, end its browser sessions and give it the token of this
        hash, in one transaction."""
        with self.transaction():
            self._revoke_live(author_id)
            self._insert("author_tokens", [{"author_id": author_id, "token_hash": token_hash,
                                            "created_at": now(), "revoked_at": None,
                                            "last_used_at": None}])

    def authors(self) -> list[dict]:
        """Every author with its count of live tokens, its submissions and its last token use."""
        return list(self.db.query(
            "select a.id, a.name, a.email, a.role, a.created_at, a.disabled_at, "
            "(select count(*) from author_tokens t where t.author_id = a.id "
            " and t.revoked_at is null) live_tokens, "
            "(select max(last_used_at) from author_tokens t where t.author_id = a.id) last_used_at, "
            "(select count(*) from submissions s where s.author_id = a.id) submissions "
            "from authors a order by a.name"))

    def token_holder(self, token_hash: str) -> dict | None:
        """The live token row of this hash with its author (id, name, role), if any."""
        rows = list(self.db.query(
            "select t.id token_id, t.token_hash, t.last_used_at, a.id author_id, a.name, a.role "
            "from author_tokens t join authors a on a.id = t.author_id "
            "where t.token_hash = ? and t.revoked_at is null and a.disabled_at is null",
            [token_hash]))
        return rows[0] if rows else None

    def touch_token(self, token_id: int, when: str, before: str) -> None:
        """Record a token's use at `when` unless it was recorded after `before` already."""
        with self.transaction():
            self.db.conn.execute(
                "update author_tokens set last_used_at = ? where id = ? "
                "and (last_used_at is null or last_used_at < ?)", [when, token_id, before])

    # -- submissions ------------------------------------------------------------------------------
    def add_submission(self, values: dict[str, Any]) -> int:
        """Record a submission (status "received"); returns its id. Committed on return."""
        with self.transaction():
            return self._insert("submissions", [{"status": "received", "report": None,
                                                 "reason": None, "checked_at": None,
                                                 "created_at": now(), **values}])

    def submission(self, submission_id: int) -> dict | None:
        """The submissions row `submission_id` with its author's name, if any."""
        rows = list(self.db.query(
            "select s.*, a.name author from submissions s join authors a on a.id = s.author_id "
            "where s.id = ?", [submission_id]))
        return rows[0] if rows else None

    def submissions(self, author_id: int | None = None) -> list[dict]:
        """The submissions (of one author, or of all), newest first."""
        where, args = ("where s.author_id = ?", [author_id]) if author_id is not None else ("", [])
        return list(self.db.query(
            "select s.id, s.author_id, a.name author, s.bot_name, s.version, s.content_hash, "
            "s.status, s.reason, s.created_at, s.checked_at from submissions s "
            f"join authors a on a.id = s.author_id {where} order by s.id desc", args))

    def submissions_to_check(self) -> list[int]:
        """Ids of submissions whose check has not ended (received, or checking when a server
        stopped), oldest first."""
        return [r["id"] for r in self.db.query(
            "select id from submissions where status in ('received', 'checking') order by id")]

    def start_check(self, submission_id: int) -> None:
        """Mark the submission's check as begun."""
        with self.transaction():
            self.db.conn.execute("update submissions set status = 'checking' where id = ?",
                                 [submission_id])

    def end_check(self, submission_id: int, clean: bool, report: str | None,
                  reason: str | None) -> None:
        """Record a check's outcome and, in the same transaction, its version's registry status:
        active (a ladder may pick it up) when clean, rejected when not."""
        with self.transaction():
            row = self.db.conn.execute(
                "select bot_name, version from submissions where id = ?", [submission_id]).fetchone()
            self.db.conn.execute(
                "update submissions set status = ?, report = ?, reason = ?, checked_at = ? "
                "where id = ?", ["clean" if clean else "failed", report, reason, now(),
                                 submission_id])
            if row is not None:
                self.db.conn.execute(
                    "update bots set status = ? where name = ? and version = ? "
                    "and manifest is not null", ["active" if clean else "rejected", *row])

    def bot_authors(self, name: str) -> set[int | None]:
        """The author ids of the registered versions of bot `name` (None: added by the organiser)."""
        return {r["author_id"] for r in self.db.query(
            "select distinct author_id from bots where name = ? and manifest is not null", [name])}

    def author_usage(self, author_id: int, since: str) -> dict[str, int]:
        """An author's submissions since `since`, live versions (active or awaiting their check)
        and stored bytes (each distinct content once)."""
        sql = self.db.conn.execute
        recent = sql("select count(*) from submissions where author_id = ? and created_at >= ?",
                     [author_id, since]).fetchone()[0]
        live = sql("select count(*) from bots where author_id = ? and manifest is not null "
                   "and status in ('active', 'pending')", [author_id]).fetchone()[0]
        stored = sql("select coalesce(sum(b), 0) from (select max(unpacked_bytes) b "
                     "from submissions where author_id = ? group by content_hash)",
                     [author_id]).fetchone()[0]
        return {"recent": recent, "live_versions": live, "stored_bytes": stored}

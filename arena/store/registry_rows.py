"""The bot registry's rows: registered versions, their status, and each version's record.

A registered version is a bots row with a content hash and a manifest (its path inside the
snapshot); a bot a config ran straight from its folder has no manifest, and is not the registry's.
"""

from __future__ import annotations

from typing import Any

from arena.store.database import now


class RegistryRows:
    """Store methods for the bot registry (arena/registry.py)."""

    def registered_with_content(self, name: str, content_hash: str) -> tuple[str, str] | None:
        """(version, status) of the registered version of `name` holding this content, if any."""
        return self.db.conn.execute(
            "select version, status from bots where name = ? and content_hash = ? "
            "and manifest is not null", [name, content_hash]).fetchone()

    def reactivate_bot(self, name: str, version: str, status: str = "active") -> None:
        """Mark the version `name@version` active again (or `status`: pending a check)."""
        with self.transaction():
            self.db.conn.execute("update bots set status = ? where name = ? and version = ?",
                                 [status, name, version])

    def bot_identity(self, name: str, version: str) -> tuple[int, str | None, str | None, str] | None:
        """(id, content_hash, manifest, command as JSON) of the bots row `name@version`, if any."""
        return self.db.conn.execute(
            "select id, content_hash, manifest, command from bots where name = ? and version = ?",
            [name, version]).fetchone()

    def register_bot(self, values: dict[str, Any], claim: int | None = None) -> None:
        """Record a registered version: a new bots row, or the fields of row `claim` (a row a
        tournament recorded for this program before it was registered) replaced by `values`."""
        with self.transaction():
            if claim is not None:
                self.db.conn.execute(
                    "update bots set " + ", ".join(f"[{k}] = ?" for k in values) + " where id = ?",
                    [*values.values(), claim])
            else:
                self._insert("bots", [{**values, "added_at": now()}])

    def registered_bots(self, name: str | None = None) -> list[dict]:
        """The registered versions' bots rows (of one bot, or of all), by name, oldest first."""
        where, args = "content_hash is not null and manifest is not null", []
        if name is not None:
            where, args = where + " and name = ?", [name]
        return list(self.db.query(f"select * from bots where {where} order by name, id", args))

    def retire_bots(self, bot_ids: list[int]) -> None:
        """Mark these bots rows retired, in one transaction."""
        with self.transaction():
            for bot_id in bot_ids:
                self.db.conn.execute("update bots set status = 'retired' where id = ?", [bot_id])

    def bot_history(self, bot_id: int) -> dict[str, Any]:
        """A version's tournaments (ids, newest first), games played, ratings in its newest
        tournament, and its five latest forfeits (with the match's stderr of that bot)."""
        q = self.db.query
        tournaments = [r["tournament_id"] for r in q(
            "select tournament_id from tournament_bots where bot_id = ? "
            "order by tournament_id desc", [bot_id])]
        games = next(q("select count(*) n from game_seats where bot_id = ?", [bot_id]))["n"]
        ratings = []
        if tournaments:
            ratings = list(q(
                "select r.tournament_id, t.name tournament, r.stage, r.method, r.rating, "
                "r.lo, r.hi, r.games from ratings r join tournaments t on t.id = r.tournament_id "
                "where r.bot_id = ? and r.tournament_id = ? order by r.stage, r.method",
                [bot_id, tournaments[0]]))
        failures = list(q(
            "select g.id game_id, g.tournament_id, g.termination, g.detail, g.evidence, "
            "g.recorded_at, l.stderr from games g "
            "join game_seats s on s.game_id = g.id and s.seat = g.culprit_seat "
            "left join bot_logs l on l.match_id = g.match_id and l.bot = s.bot "
            "where s.bot_id = ? and g.termination != 'normal' "
            "order by g.recorded_at desc, g.ordinal desc limit 5", [bot_id]))
        return {"tournaments": tournaments, "games_played": games, "ratings": ratings,
                "failures": failures}

    def bot_ladder_record(self, bot_id: int) -> dict[str, list[dict]]:
        """A version's ladders (entry, why rejected), recent ladder games and rating trajectory."""
        q = self.db.query
        ladders = list(q(
            "select t.id ladder_id, t.name ladder, e.status, e.reason, e.joined_tick, "
            "e.retired_tick, (select count(*) from game_seats s join games g on g.id = s.game_id "
            "where g.tournament_id = t.id and s.bot_id = e.bot_id) games "
            "from ladder_entries e join tournaments t on t.id = e.tournament_id "
            "where e.bot_id = ? order by t.id", [bot_id]))
        recent = list(q(
            "select g.id game_id, g.tournament_id ladder_id, g.game, s.rank, g.num_seats seats, "
            "g.termination, g.recorded_at from game_seats s join games g on g.id = s.game_id "
            "join tournaments t on t.id = g.tournament_id "
            "where s.bot_id = ? and t.format = 'ladder' order by g.recorded_at desc, g.ordinal desc "
            "limit 10", [bot_id]))
        trajectory = list(q(
            "select scope_id, method, tables, games, rating, lo, hi, computed_at "
            "from rating_snapshots where bot_id = ? and scope_kind = 'ladder' "
            "order by computed_at, tables", [bot_id]))
        return {"ladders": ladders, "ladder_games": recent, "ladder_ratings": trajectory}

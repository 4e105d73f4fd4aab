"""Ratings per tournament stage, pooled leaderboards, rating snapshots, and pooled games."""

from __future__ import annotations

from arena.store.database import now


class RatingRows:
    """Store methods for ratings, pooled ratings and rating snapshots."""

    def save_ratings(self, tournament_id: int, method: str, table: list[dict],
                     history: list[dict], stage: int = 1) -> None:
        """Replace a stage's ratings and rating history for one method."""
        stamp = now()
        with self.transaction():
            for name in ("ratings", "rating_history"):
                self.db.conn.execute(
                    f"delete from {name} where tournament_id = ? and stage = ? and method = ?",
                    [tournament_id, stage, method])
            self._insert("ratings", (
                {"tournament_id": tournament_id, "stage": stage, "method": method,
                 "computed_at": stamp, **row}
                for row in table
            ))
            self._insert("rating_history", (
                {"tournament_id": tournament_id, "stage": stage, "method": method, **row}
                for row in history
            ))

    def ratings(self, tournament_id: int, method: str = "elo", stage: int = 1) -> list[dict]:
        """The stored rating table of a tournament's stage, best first."""
        return list(self.db["ratings"].rows_where(
            "tournament_id = ? and stage = ? and method = ?", [tournament_id, stage, method],
            order_by="rating desc, bot"))

    def rating_methods(self, tournament_id: int, stage: int = 1) -> list[str]:
        """The methods a stage has stored ratings for."""
        return [r[0] for r in self.db.execute(
            "select distinct method from ratings where tournament_id = ? and stage = ? "
            "order by method", [tournament_id, stage])]

    def save_pooled_ratings(self, scope_kind: str, scope_id: str, method: str,
                            rows: list[dict]) -> None:
        """Replace one pooled leaderboard (e.g. every game of a game) for one method."""
        stamp = now()
        with self.transaction():
            self.db.conn.execute(
                "delete from pooled_ratings where scope_kind = ? and scope_id = ? and method = ?",
                [scope_kind, scope_id, method])
            self._insert("pooled_ratings", (
                {"scope_kind": scope_kind, "scope_id": scope_id, "method": method,
                 "computed_at": stamp, **row} for row in rows))

    def save_rating_snapshot(self, scope_kind: str, scope_id: str, method: str, tables: int,
                             rows: list[dict]) -> None:
        """Append a published table's ratings (each row: bot_id, games, rating, lo, hi)."""
        stamp = now()
        with self.transaction():
            self._insert("rating_snapshots", (
                {"scope_kind": scope_kind, "scope_id": scope_id, "method": method,
                 "bot_id": r["bot_id"], "tables": tables, "games": r["games"],
                 "rating": r["rating"], "lo": r["lo"], "hi": r["hi"], "computed_at": stamp}
                for r in rows))

    def pooled_ratings(self, scope_kind: str, scope_id: str, method: str) -> list[dict]:
        """A stored pooled leaderboard, best first."""
        return list(self.db["pooled_ratings"].rows_where(
            "scope_kind = ? and scope_id = ? and method = ?", [scope_kind, scope_id, method],
            order_by="rating desc, bot, version"))

    def pooled_games(self, game: str, since: str | None = None,
                     tournament_id: int | None = None) -> tuple[list[dict], dict[str, dict]]:
        """Every finished game of `game` across tournaments (or of one), seats keyed by bot version.

        Returns (games, versions): each seat's `bot` is a version key (`name@version`, or the
        name when the version is empty) and versions maps each key to its bot row (id, name,
        version) plus `last_played`. Games of error matches are never stored, so none is counted.
        """
        where, args = "g.game = ?", [game]
        if tournament_id is not None:
            where, args = where + " and g.tournament_id = ?", args + [tournament_id]
        if since is not None:
            where, args = where + " and g.recorded_at >= ?", args + [since]
        games: dict[str, dict] = {}
        versions: dict[str, dict] = {}
        keys: dict[int, str] = {}  # one key per bots row: two rows never share a line
        for row in self.db.query(
            "select g.id, g.tournament_id, g.ordinal, g.match_id, g.deal, g.recorded_at, s.bot, "
            "s.team, s.rank, b.id as bot_id, b.name, b.version from games g "
            "join game_seats s on s.game_id = g.id join bots b on b.id = s.bot_id "
            f"where {where} order by g.tournament_id, g.ordinal, s.seat", args
        ):
            key = keys.get(row["bot_id"])
            if key is None:
                key = f"{row['name']}@{row['version']}" if row["version"] else row["name"]
                if key in versions:  # an old row named `x@1` beside bot x version 1: keep apart
                    key = f"{key}#{row['bot_id']}"
                keys[row["bot_id"]] = key
            seen = versions.setdefault(key, {"bot_id": row["bot_id"], "bot": row["name"],
                                             "version": row["version"], "last_played": ""})
            seen["last_played"] = max(seen["last_played"], row["recorded_at"] or "")
            game_row = games.setdefault(row["id"], {
                "id": row["id"], "ordinal": len(games), "seats": [],
                "group": (row["match_id"], row["deal"]),
            })
            game_row["seats"].append({"bot": key, "team": row["team"], "rank": row["rank"]})
        return list(games.values()), versions


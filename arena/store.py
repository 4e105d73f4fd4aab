"""SQLite storage through sqlite-utils: schema, one writer, one transaction per match.

The database reads naturally in any SQLite tool: JSON columns hold options, actions and configs;
every game row has its seed and every move, so any game can be replayed exactly.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlite_utils

from arena.errors import StoreError

SCHEMA_VERSION = 1


def now() -> str:
    """The current UTC time as ISO 8601, the format of every timestamp column."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


class Store:
    """The Arena database. Only the driver process writes to it."""

    def __init__(self, path: str | Path | None = None):
        if path is None or str(path) == ":memory:":
            self.db = sqlite_utils.Database(memory=True)
        else:
            try:
                self.db = sqlite_utils.Database(sqlite3.connect(str(path), timeout=30))
            except sqlite3.Error as exc:
                raise StoreError(f"cannot open database {str(path)!r}: {exc}") from None
            self.db.enable_wal()
        self.db.execute("PRAGMA foreign_keys = ON")
        self._migrate()

    def _insert(self, table: str, rows: Iterable[dict]) -> int | None:
        """Insert rows inside the caller's transaction; returns the last rowid.

        sqlite-utils' own insert commits after each chunk, which would split a match's write into
        several transactions; a crash between them would leave a half-recorded match.
        """
        rows = list(rows)
        if not rows:
            return None
        cols = list(rows[0])
        sql = (f"insert into [{table}] ({', '.join(f'[{c}]' for c in cols)}) "
               f"values ({', '.join('?' for _ in cols)})")
        if len(rows) == 1:  # executemany does not report lastrowid
            return self.db.conn.execute(sql, [rows[0][c] for c in cols]).lastrowid
        self.db.conn.executemany(sql, [[r[c] for c in cols] for r in rows])
        return None

    # -- schema ---------------------------------------------------------------------------------
    def _migrate(self) -> None:
        try:
            tables = set(self.db.table_names())
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"not an Arena database: {exc}") from None
        if "meta" in tables:
            version = int(self.db["meta"].get("schema_version")["value"])
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"database schema version {version} is newer than this Arena ({SCHEMA_VERSION})"
                )
            return
        if tables:
            raise StoreError(f"not an Arena database: it has tables {sorted(tables)[:5]}")
        with self.db.conn:
            self._create_schema()

    def _create_schema(self) -> None:
        db = self.db
        db["meta"].create({"key": str, "value": str}, pk="key")
        db["meta"].insert({"key": "schema_version", "value": str(SCHEMA_VERSION)})
        db["bots"].create(
            {"id": int, "name": str, "version": str, "command": str, "workdir": str,
             "language": str, "description": str, "added_at": str},
            pk="id", not_null={"name", "version"},
        )
        db["bots"].create_index(["name", "version"], unique=True)
        db["tournaments"].create(
            {"id": int, "name": str, "game": str, "format": str, "seats": int, "seed": int,
             "options": str, "config": str, "status": str, "created_at": str,
             "finished_at": str},
            pk="id",
        )
        db["tournament_bots"].create(
            {"tournament_id": int, "bot_id": int, "entry": int},
            pk=("tournament_id", "bot_id"),
            foreign_keys=[("tournament_id", "tournaments", "id"), ("bot_id", "bots", "id")],
        )
        db["matches"].create(
            {"id": str, "tournament_id": int, "round": int, "table_no": int, "bots": str,
             "status": str, "duration_ms": float, "finished_at": str},
            pk="id", foreign_keys=[("tournament_id", "tournaments", "id")],
        )
        db["matches"].create_index(["tournament_id"])
        db["games"].create(
            {"id": str, "match_id": str, "tournament_id": int, "ordinal": int, "game": str,
             "options": str, "num_seats": int, "deal": int, "rotation": int, "seed": int,
             "termination": str, "culprit_seat": int, "culprit_bot": str, "detail": str,
             "evidence": str, "steps": int, "duration_ms": float, "recorded_at": str},
            pk="id",
            foreign_keys=[("match_id", "matches", "id"), ("tournament_id", "tournaments", "id")],
        )
        db["games"].create_index(["tournament_id", "ordinal"])
        db["games"].create_index(["match_id"])
        db["game_seats"].create(
            {"game_id": str, "seat": int, "bot_id": int, "bot": str, "team": int,
             "score": float, "rank": int},
            pk=("game_id", "seat"),
            foreign_keys=[("game_id", "games", "id"), ("bot_id", "bots", "id")],
        )
        db["game_seats"].create_index(["bot_id"])
        db["moves"].create(
            {"game_id": str, "ply": int, "step": int, "seat": int, "action": str, "ms": float},
            pk=("game_id", "ply"), foreign_keys=[("game_id", "games", "id")],
        )
        db["bot_logs"].create(
            {"match_id": str, "bot": str, "stderr": str},
            pk=("match_id", "bot"), foreign_keys=[("match_id", "matches", "id")],
        )
        db["ratings"].create(
            {"tournament_id": int, "method": str, "bot": str, "rating": float, "games": int,
             "wins": float, "draws": float, "losses": float, "points": float, "score_pct": float,
             "computed_at": str},
            pk=("tournament_id", "method", "bot"),
            foreign_keys=[("tournament_id", "tournaments", "id")],
        )
        db["rating_history"].create(
            {"tournament_id": int, "method": str, "ordinal": int, "game_id": str, "bot": str,
             "before": float, "after": float},
            pk=("tournament_id", "method", "ordinal", "bot"),
            foreign_keys=[("tournament_id", "tournaments", "id")],
        )

    # -- bots and tournaments -------------------------------------------------------------------
    def add_bot(self, name: str, version: str = "", command: Iterable[str] = (), workdir: str = "",
                language: str = "", description: str = "") -> int:
        """The id of bot (name, version), registering it if new."""
        row = self.db.execute(
            "select id from bots where name = ? and version = ?", [name, version]
        ).fetchone()
        if row:
            return row[0]
        with self.db.conn:
            return self._insert("bots", [{
                "name": name, "version": version, "command": _dumps(list(command)),
                "workdir": workdir, "language": language, "description": description,
                "added_at": now(),
            }])

    def create_tournament(self, name: str, game: str, fmt: str, seats: int, seed: int,
                          options: dict, config: dict, bot_ids: list[int]) -> int:
        """Record a new tournament and its entrants; returns its id."""
        with self.db.conn:
            tid = self._insert("tournaments", [{
                "name": name, "game": game, "format": fmt, "seats": seats, "seed": seed,
                "options": _dumps(options), "config": _dumps(config), "status": "running",
                "created_at": now(), "finished_at": None,
            }])
            self._insert("tournament_bots", (
                {"tournament_id": tid, "bot_id": b, "entry": i} for i, b in enumerate(bot_ids)
            ))
        return tid

    def set_status(self, tournament_id: int, status: str) -> None:
        """Mark a tournament running, finished or interrupted."""
        with self.db.conn:
            self.db.conn.execute(
                "update tournaments set status = ?, finished_at = ? where id = ?",
                [status, now() if status == "finished" else None, tournament_id])

    def tournament(self, tournament_id: int | None = None) -> dict:
        """A tournament row (the newest when no id is given); StoreError if there is none."""
        if tournament_id is None:
            rows = list(self.db["tournaments"].rows_where(order_by="id desc", limit=1))
            if not rows:
                raise StoreError("the database holds no tournament yet")
            return rows[0]
        try:
            return self.db["tournaments"].get(tournament_id)
        except sqlite_utils.db.NotFoundError:
            raise StoreError(f"no tournament with id {tournament_id}") from None

    def find_tournament(self, name: str) -> dict | None:
        """The newest tournament with this name, if any."""
        rows = list(self.db["tournaments"].rows_where("name = ?", [name], order_by="id desc", limit=1))
        return rows[0] if rows else None

    def bot_ids(self, tournament_id: int) -> dict[str, int]:
        """Entrant bot name -> bot id for a tournament."""
        return {r["name"]: r["id"] for r in self.db.query(
            "select b.name, b.id from tournament_bots t join bots b on b.id = t.bot_id "
            "where t.tournament_id = ? order by t.entry", [tournament_id])}

    def recorded_matches(self, tournament_id: int) -> set[str]:
        """Ids of the matches of a tournament already recorded (skipped on resume)."""
        return {r["id"] for r in self.db.query(
            "select id from matches where tournament_id = ?", [tournament_id])}

    # -- results --------------------------------------------------------------------------------
    def record_match(self, tournament_id: int, round_no: int, table_no: int, game: str,
                     options: dict, result, bot_ids: dict[str, int]) -> None:
        """Write one MatchResult (match, games, seats, moves, logs) in a single transaction."""
        opts = _dumps(options)
        stamp = now()
        with self.db.conn:
            self._insert("matches", [{
                "id": result.match_id, "tournament_id": tournament_id, "round": round_no,
                "table_no": table_no, "bots": _dumps(sorted({n for g in result.games for n in g.seats})),
                "status": "finished", "duration_ms": round(result.duration_ms, 3),
                "finished_at": stamp,
            }])
            games, seats, moves = [], [], []
            for g in result.games:
                team_of = {s: t for t, members in enumerate(g.teams) for s in members}
                games.append({
                    "id": g.game_id, "match_id": result.match_id, "tournament_id": tournament_id,
                    "ordinal": g.ordinal, "game": game, "options": opts,
                    "num_seats": len(g.seats), "deal": g.deal, "rotation": g.rotation,
                    "seed": g.seed, "termination": g.termination, "culprit_seat": g.culprit,
                    "culprit_bot": g.seats[g.culprit] if g.culprit is not None else None,
                    "detail": g.detail, "evidence": g.evidence,
                    "steps": len({m.step for m in g.moves}),
                    "duration_ms": round(g.duration_ms, 3), "recorded_at": stamp,
                })
                for seat, name in enumerate(g.seats):
                    seats.append({
                        "game_id": g.game_id, "seat": seat, "bot_id": bot_ids[name], "bot": name,
                        "team": team_of[seat], "score": g.scores[seat], "rank": g.ranks[seat],
                    })
                for ply, m in enumerate(g.moves):
                    moves.append({
                        "game_id": g.game_id, "ply": ply, "step": m.step, "seat": m.seat,
                        "action": _dumps(m.action), "ms": m.ms,
                    })
            self._insert("games", games)
            self._insert("game_seats", seats)
            self._insert("moves", moves)
            self._insert("bot_logs", (
                {"match_id": result.match_id, "bot": bot, "stderr": text}
                for bot, text in result.logs.items()
            ))

    def game_results(self, tournament_id: int) -> list[dict]:
        """Every game of a tournament in ordinal order, with its seats (bot, team, score, rank)."""
        games: dict[str, dict] = {}
        for row in self.db.query(
            "select g.id, g.ordinal, g.termination, s.seat, s.bot, s.team, s.score, s.rank "
            "from games g join game_seats s on s.game_id = g.id "
            "where g.tournament_id = ? order by g.ordinal, s.seat", [tournament_id]
        ):
            game = games.setdefault(row["id"], {
                "id": row["id"], "ordinal": row["ordinal"], "termination": row["termination"],
                "seats": [],
            })
            game["seats"].append({k: row[k] for k in ("bot", "team", "score", "rank")})
        return list(games.values())

    def load_game(self, game_id: str) -> dict:
        """A stored game with its seats and moves, ready to replay."""
        try:
            game = self.db["games"].get(game_id)
        except sqlite_utils.db.NotFoundError:
            raise StoreError(f"no game with id {game_id!r}") from None
        game["options"] = json.loads(game["options"])
        game["seats"] = list(self.db["game_seats"].rows_where("game_id = ?", [game_id], order_by="seat"))
        game["moves"] = [
            {**m, "action": json.loads(m["action"])}
            for m in self.db["moves"].rows_where("game_id = ?", [game_id], order_by="ply")
        ]
        return game

    # -- ratings --------------------------------------------------------------------------------
    def save_ratings(self, tournament_id: int, method: str, table: list[dict],
                     history: list[dict]) -> None:
        """Replace a tournament's ratings and rating history for one method."""
        stamp = now()
        with self.db.conn:
            self.db.conn.execute("delete from ratings where tournament_id = ? and method = ?",
                                 [tournament_id, method])
            self.db.conn.execute("delete from rating_history where tournament_id = ? and method = ?",
                                 [tournament_id, method])
            self._insert("ratings", (
                {"tournament_id": tournament_id, "method": method, "computed_at": stamp, **row}
                for row in table
            ))
            self._insert("rating_history", (
                {"tournament_id": tournament_id, "method": method, **row} for row in history
            ))

    def ratings(self, tournament_id: int, method: str = "elo") -> list[dict]:
        """The stored rating table of a tournament, best first."""
        return list(self.db["ratings"].rows_where(
            "tournament_id = ? and method = ?", [tournament_id, method], order_by="rating desc, bot"
        ))

    def failures(self, tournament_id: int) -> list[dict]:
        """The forfeited games of a tournament, with reason and evidence."""
        return list(self.db.query(
            "select id, culprit_bot, termination, detail, evidence from games "
            "where tournament_id = ? and termination != 'normal' order by ordinal", [tournament_id]))

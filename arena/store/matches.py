"""Finished matches (games, seats, moves, logs, scores), runner errors and node events."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
import sqlite_utils

from arena.errors import StoreError
from arena.store.database import dump_json, now, stored_json

ERROR_KEEP = 16 * 1024  # characters of a runner error's traceback kept per attempt
_MATCH_COLS = ("tournament_id", "stage", "round", "table_no", "bots", "status", "duration_ms",
               "finished_at", "attempts", "error", "worker", "node", "host")
_GAME_COLS = ("id", "match_id", "tournament_id", "stage", "ordinal", "game", "options", "num_seats",
              "deal", "rotation", "seed", "termination", "culprit_seat", "culprit_bot", "detail",
              "evidence", "steps", "duration_ms", "recorded_at")


@dataclass
class MatchRecord:
    """What the driver records for one match: where it sits, its result, scores and deal scores."""

    stage: int
    round: int
    table: int
    game: str
    options: dict
    result: Any = None
    score: Any = None  # a scheduling.MatchScore
    names: list[str] = field(default_factory=list)  # the table's bots by name, in seat order
    deals: list[dict] = field(default_factory=list)  # {deal, bot, points, games}
    match_id: str = ""
    bots: tuple[int, ...] = ()  # the table's bots as stage-local entries, in seat order


class MatchRows:
    """Store methods for matches, games and what went wrong while running them."""

    def record_matches(self, tournament_id: int, items: Iterable[MatchRecord],
                       bot_ids: dict[str, int]) -> None:
        """Write finished matches (each: match, games, seats, moves, logs, scores) in one transaction."""
        with self.transaction():
            self._write_matches(tournament_id, list(items), bot_ids)
            self._heartbeat(tournament_id)

    def record_match(self, tournament_id: int, round_no: int, table_no: int, game: str,
                     options: dict, result, bot_ids: dict[str, int], stage: int = 1) -> None:
        """Write one MatchResult in a single transaction (no per-match scores)."""
        self.record_matches(tournament_id, [MatchRecord(stage, round_no, table_no, game, options,
                                                        result)], bot_ids)

    def _write_match(self, tournament_id: int, item: MatchRecord, bot_ids: dict[str, int]) -> None:
        self._write_matches(tournament_id, [item], bot_ids)

    def _write_matches(self, tournament_id: int, items: list[MatchRecord],
                       bot_ids: dict[str, int]) -> None:
        """Write finished matches inside the caller's transaction: each table's rows of all the
        matches in one executemany, as tuples (the driver's hot path: at thousands of games a
        second, building a dict per move and one statement per match and table cost more than
        SQLite's own work). Match rows go first: the other tables reference them."""
        if not items:
            return
        conn = self.db.conn
        stamp = now()
        dumps, sort = orjson.dumps, orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
        ids = [item.result.match_id for item in items]
        prior: dict[str, int] = {}
        for chunk in range(0, len(ids), 500):  # under SQLite's limit of bound variables
            part = ids[chunk:chunk + 500]
            prior.update(conn.execute(
                f"select id, attempts from matches where status = 'error' and id in "
                f"({', '.join('?' * len(part))})", part).fetchall())
        new_matches, games, seats, moves, logs, match_bots, deals = [], [], [], [], [], [], []
        game_logs, game_log_counts = [], []
        for item in items:
            result = item.result
            mid = result.match_id
            row = (tournament_id, item.stage, item.round, item.table,
                   dump_json(sorted({n for g in result.games for n in g.seats})), "finished",
                   round(result.duration_ms, 3), stamp, prior.get(mid, 0) + 1, None,
                   getattr(result, "worker", "") or None, getattr(result, "node", "") or None,
                   getattr(result, "host", "") or None)
            if mid in prior:  # earlier attempts failed by runner errors: their evidence stays in match_errors
                conn.execute(f"update matches set {', '.join(f'[{c}] = ?' for c in _MATCH_COLS)} "
                             f"where id = ?", [*row, mid])
            else:
                new_matches.append((mid, *row))
            opts = dump_json(item.options)
            for g in result.games:
                gid = g.game_id
                team_of = {s: t for t, members in enumerate(g.teams) for s in members}
                culprit = g.culprit
                game_moves = g.moves
                games.append((gid, mid, tournament_id, item.stage, g.ordinal, item.game, opts,
                              len(g.seats), g.deal, g.rotation, g.seed, g.termination, culprit,
                              g.seats[culprit] if culprit is not None else None, g.detail,
                              g.evidence, len({m.step for m in game_moves}),
                              round(g.duration_ms, 3), stamp))
                scores, ranks = g.scores, g.ranks
                for seat, name in enumerate(g.seats):
                    seats.append((gid, seat, bot_ids[name], name, team_of[seat], scores[seat],
                                  ranks[seat]))
                moves.extend((gid, ply, m.step, m.seat, dumps(m.action, option=sort).decode(),
                              m.ms) for ply, m in enumerate(game_moves))
                if g.log_counts:  # records from before per-game logs have the default: none
                    game_logs.extend((gid, seat, number, ply, text)
                                     for seat, ply, number, text in g.logs)
                    game_log_counts.extend((gid, seat, g.seats[seat], *counts)
                                           for seat, *counts in g.log_counts)
            logs.extend((mid, bot, text) for bot, text in result.logs.items())
            if item.score is not None:
                score, names = item.score, item.names
                partners = dump_json([list(p) for p in sorted(score.partners)])
                match_bots.extend(
                    (mid, i, bot_ids[names[i]], names[i], score.bots[i], score.game_points[i],
                     score.match_points[i], partners) for i in range(len(score.bots)))
            deals.extend((mid, d["deal"], bot_ids[d["bot"]], d["bot"], d["points"], d["games"])
                         for d in item.deals)
        for table, cols, rows in (
                ("matches", ("id", *_MATCH_COLS), new_matches),
                ("games", _GAME_COLS, games),
                ("game_seats", ("game_id", "seat", "bot_id", "bot", "team", "score", "rank"), seats),
                ("moves", ("game_id", "ply", "step", "seat", "action", "ms"), moves),
                ("bot_logs", ("match_id", "bot", "stderr"), logs),
                ("game_logs", ("game_id", "seat", "line_no", "ply", "text"), game_logs),
                ("game_log_counts", ("game_id", "seat", "bot", "lines", "bytes", "dropped_lines",
                                     "dropped_bytes"), game_log_counts),
                ("match_bots", ("match_id", "position", "bot_id", "bot", "entry", "game_points",
                                "match_points", "partners"), match_bots),
                ("deals", ("match_id", "deal", "bot_id", "bot", "points", "games"), deals)):
            if rows:
                conn.executemany(f"insert into [{table}] ({', '.join(f'[{c}]' for c in cols)}) "
                                 f"values ({', '.join('?' * len(cols))})", rows)

    def record_match_error(self, tournament_id: int, item: MatchRecord, kind: str, error: str,
                           worker: str = "", node: str = "", host: str = "") -> int:
        """Record a failed attempt of a match (a runner error, not a bot's) and where it ran;
        returns the attempts so far."""
        stamp = now()
        text = error if len(error) <= ERROR_KEEP else (
            error[: ERROR_KEEP // 2] + "\n[… cut …]\n" + error[-ERROR_KEEP // 2:])
        match_id = item.match_id
        with self.transaction():
            row = self.db.conn.execute("select attempts, status from matches where id = ?",
                                       [match_id]).fetchone()
            if row and row[1] == "finished":
                raise StoreError(f"match {match_id} is already recorded as finished")
            attempts = (row[0] + 1) if row else 1
            if row:
                self.db.conn.execute(
                    "update matches set attempts = ?, error = ?, worker = ?, node = ?, host = ?, "
                    "finished_at = ? where id = ?",
                    [attempts, kind, worker or None, node or None, host or None, stamp, match_id])
            else:
                self._insert("matches", [{
                    "id": match_id, "tournament_id": tournament_id, "stage": item.stage,
                    "round": item.round, "table_no": item.table, "bots": dump_json(sorted(item.names)),
                    "status": "error", "duration_ms": None, "finished_at": stamp,
                    "attempts": attempts, "error": kind, "worker": worker or None,
                    "node": node or None, "host": host or None,
                }])
            self._insert("match_errors", [{
                "match_id": match_id, "attempt": attempts, "kind": kind, "error": text,
                "worker": worker or None, "recorded_at": stamp, "node": node or None,
                "host": host or None,
            }])
            self._heartbeat(tournament_id)
        return attempts

    def record_node_event(self, tournament_id: int, node: str, host: str, event: str,
                          detail: str) -> None:
        """Record what happened to a node during a run (event `quarantined`, and why)."""
        with self.transaction():
            self._insert("node_events", [{
                "tournament_id": tournament_id, "node": node, "host": host, "event": event,
                "detail": detail, "recorded_at": now()}])

    def node_events(self, tournament_id: int) -> list[dict]:
        """A tournament's node events, oldest first."""
        return list(self.db.query("select node, host, event, detail, recorded_at from node_events "
                                  "where tournament_id = ? order by rowid", [tournament_id]))

    def game_results(self, tournament_id: int, stage: int | None = None) -> list[dict]:
        """Every game of a tournament (or stage) in ordinal order, with its seats (bot, team, score,
        rank) and its rating group (match, deal)."""
        where, args = "g.tournament_id = ?", [tournament_id]
        if stage is not None:
            where, args = where + " and g.stage = ?", args + [stage]
        return collect_games(self.db.query(
            "select g.id, g.ordinal, g.deal, g.match_id, g.termination, s.seat, s.bot, s.team, "
            f"s.score, s.rank from games g join game_seats s on s.game_id = g.id where {where} "
            "order by g.ordinal, s.seat", args))

    def load_game(self, game_id: str) -> dict:
        """A stored game with its seats and moves, ready to replay."""
        try:
            game = self.db["games"].get(game_id)
        except sqlite_utils.db.NotFoundError:
            raise StoreError(f"no game with id {game_id!r}") from None
        game["options"] = stored_json(game["options"], f"games.options of {game_id}")
        game["seats"] = list(self.db["game_seats"].rows_where("game_id = ?", [game_id], order_by="seat"))
        game["moves"] = [
            {**m, "action": stored_json(m["action"], f"moves.action of {game_id} ply {m['ply']}")}
            for m in self.db["moves"].rows_where("game_id = ?", [game_id], order_by="ply")
        ]
        return game

    def game_logs(self, game_id: str) -> list[dict]:
        """A game's bots' stderr lines in the order they came: seat, bot, ply, line_no, text.

        `ply` is the move the bot was asked for when the line came (lines after the last move
        have the number of moves); line numbers count the dropped lines too. Empty for a game
        recorded before per-game logs (its bots' stderr is the match's, `bot_logs`).
        """
        return list(self.db.query(
            "select l.seat, s.bot, l.ply, l.line_no, l.text from game_logs l "
            "join game_seats s on s.game_id = l.game_id and s.seat = l.seat "
            "where l.game_id = ? order by l.ply, l.seat, l.line_no", [game_id]))

    def game_log_counts(self, game_id: str) -> list[dict]:
        """Per seat that wrote to stderr in a game: seat, bot, lines, bytes, dropped_lines,
        dropped_bytes (what was dropped between the kept head and tail)."""
        return list(self.db.query(
            "select seat, bot, lines, bytes, dropped_lines, dropped_bytes from game_log_counts "
            "where game_id = ? order by seat", [game_id]))

    def failures(self, tournament_id: int) -> list[dict]:
        """The forfeited games of a tournament, with reason and evidence."""
        return list(self.db.query(
            "select id, culprit_bot, termination, detail, evidence from games "
            "where tournament_id = ? and termination != 'normal' order by ordinal", [tournament_id]))

    def match_errors(self, tournament_id: int) -> list[dict]:
        """Every runner error of a tournament's matches (attempts that were not a bot's fault)."""
        return list(self.db.query(
            "select e.match_id, e.attempt, e.kind, e.error, e.worker, e.recorded_at, m.status "
            "from match_errors e join matches m on m.id = e.match_id "
            "where m.tournament_id = ? order by e.recorded_at, e.match_id", [tournament_id]))


def collect_games(rows: Iterable[dict]) -> list[dict]:
    """Games with their seats, from rows of games joined to their seats in (ordinal, seat) order."""
    games: dict[str, dict] = {}
    for row in rows:
        game = games.setdefault(row["id"], {
            "id": row["id"], "ordinal": row["ordinal"], "termination": row["termination"],
            "deal": row["deal"], "match_id": row["match_id"], "seats": [],
            # A duplicate deal's rotations are resampled together by the bootstrap.
            "group": (row["match_id"], row["deal"]),
        })
        game["seats"].append({k: row[k] for k in ("bot", "team", "score", "rank")})
    return list(games.values())

"""Tournaments, their entrants and stages, and each stage's rounds and match scores."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import sqlite_utils

from arena.errors import StoreError
from arena.store.database import dump_json, now, stored_json

if TYPE_CHECKING:
    from arena.store.leases import Lease

# A tournament entrant's name: its own (tournament_bots.name, set since schema 8: `name@version`,
# a registry bot's `name` in the config) or, in tournaments recorded before, its bots row's name.
ENTRANT_NAME = "coalesce(t.name, b.name)"


class TournamentRows:
    """Store methods for tournaments, entrants, stages and rounds."""

    def create_tournament(self, name: str, game: str, fmt: str, seats: int, seed: int,
                          options: dict, config: dict, bot_ids: list[int],
                          stages: Iterable[dict] = (), lease: Lease | None = None,
                          names: list[str] | None = None) -> int:
        """Record a new tournament, its entrants, its stages and its lease together; returns its id.

        `names` are the entrants' names in this tournament (default: their bots rows' names);
        they differ for `name@version` and for registry bots given a `name` of their own.
        """
        with self.transaction():
            tid = self._insert("tournaments", [{
                "name": name, "game": game, "format": fmt, "seats": seats, "seed": seed,
                "options": dump_json(options), "config": dump_json(config), "status": "running",
                "created_at": now(), "finished_at": None,
            }])
            self._insert("tournament_bots", (
                {"tournament_id": tid, "bot_id": b, "entry": i,
                 "name": names[i] if names is not None else None}
                for i, b in enumerate(bot_ids)
            ))
            self._insert("stages", (
                {"tournament_id": tid, "stage": i + 1, "status": "pending", "finished_at": None,
                 **{k: (dump_json(v) if isinstance(v, (dict, list)) else v) for k, v in st.items()}}
                for i, st in enumerate(stages)
            ))
            if lease is not None:
                self._write_lease(tid, lease)
        return tid

    def set_status(self, tournament_id: int, status: str) -> None:
        """Mark a tournament running, finished, interrupted, error or cancelled."""
        with self.transaction():
            self.db.conn.execute(
                "update tournaments set status = ?, finished_at = ? where id = ?",
                [status, now() if status in ("finished", "cancelled") else None, tournament_id])

    def set_stage_status(self, tournament_id: int, stage: int, status: str) -> None:
        """Mark a stage pending, running, finished or error."""
        with self.transaction():
            self.db.conn.execute(
                "update stages set status = ?, finished_at = ? where tournament_id = ? and stage = ?",
                [status, now() if status == "finished" else None, tournament_id, stage])

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

    def tournaments(self) -> list[dict]:
        """Every tournament with its progress counts, newest first."""
        return list(self.db.query(
            "select t.id, t.name, t.game, t.format, t.status, t.created_at, t.finished_at, "
            "(select count(*) from tournament_bots b where b.tournament_id = t.id) as bots, "
            "(select count(*) from matches m where m.tournament_id = t.id "
            " and m.status = 'finished') as matches, "
            "(select count(*) from games g where g.tournament_id = t.id) as games "
            "from tournaments t order by t.id desc"))

    def find_tournament(self, name: str) -> dict | None:
        """The newest tournament with this name, if any."""
        rows = list(self.db["tournaments"].rows_where("name = ?", [name], order_by="id desc", limit=1))
        return rows[0] if rows else None

    def stages(self, tournament_id: int) -> list[dict]:
        """A tournament's stages in order, JSON columns decoded."""
        rows = list(self.db["stages"].rows_where("tournament_id = ?", [tournament_id], order_by="stage"))
        for r in rows:
            for key in ("options", "config", "entrants", "left_out"):
                r[key] = (stored_json(r[key], f"stages.{key} of tournament {tournament_id} stage "
                                             f"{r['stage']}") if r[key]
                          else ([] if key in ("entrants", "left_out") else {}))
        return rows

    def bot_ids(self, tournament_id: int) -> dict[str, int]:
        """Entrant name (in this tournament) -> bot id for a tournament."""
        return {r["name"]: r["id"] for r in self.db.query(
            f"select {ENTRANT_NAME} as name, b.id from tournament_bots t "
            "join bots b on b.id = t.bot_id where t.tournament_id = ? order by t.entry",
            [tournament_id])}

    def entrant_rows(self, tournament_id: int) -> list[dict]:
        """A tournament's entrants' bots rows (id, content_hash, command, workdir), in entry order."""
        rows = [dict(r) for r in self.db.query(
            "select b.id, b.content_hash, b.command, b.workdir from tournament_bots t "
            "join bots b on b.id = t.bot_id where t.tournament_id = ? order by t.entry",
            [tournament_id])]
        for r in rows:
            r["command"] = stored_json(r["command"], f"bots.command of bot {r['id']}") or []
        return rows

    def same_config(self, name: str, digest: str) -> list[dict]:
        """Tournaments recorded from the same config (same name and settings digest), newest first."""
        return [t for t in self.db["tournaments"].rows_where("name = ?", [name], order_by="id desc")
                if (stored_json(t["config"], f"tournaments.config of {t['id']}") or {}).get(
                    "digest") == digest]

    def recorded_matches(self, tournament_id: int) -> set[str]:
        """Ids of the finished matches of a tournament (skipped on resume)."""
        return {r["id"] for r in self.db.query(
            "select id from matches where tournament_id = ? and status = 'finished'", [tournament_id])}

    # -- rounds ---------------------------------------------------------------------------------
    def record_round(self, tournament_id: int, stage: int, round_no: int, tables: list[list[str]],
                     byes: list[str], bye_points: float, bot_ids: dict[str, int]) -> None:
        """Record a round's pairings (bots by name, in seat order) and its byes, before it is played."""
        with self.transaction():
            self._insert("rounds", [{
                "tournament_id": tournament_id, "stage": stage, "round": round_no,
                "tables": dump_json(tables), "byes": dump_json(byes), "created_at": now(),
            }])
            self._insert("byes", (
                {"tournament_id": tournament_id, "stage": stage, "round": round_no,
                 "bot_id": bot_ids[name], "bot": name, "points": bye_points}
                for name in byes
            ))

    def rounds(self, tournament_id: int, stage: int) -> list[dict]:
        """A stage's recorded rounds in order: tables (bot names per table) and byes."""
        return [
            {"round": r["round"],
             "tables": stored_json(r["tables"], f"rounds.tables of round {r['round']}"),
             "byes": stored_json(r["byes"], f"rounds.byes of round {r['round']}")}
            for r in self.db.query(
                "select round, tables, byes from rounds where tournament_id = ? and stage = ? "
                "order by round", [tournament_id, stage])
        ]

    def match_scores(self, tournament_id: int, stage: int) -> list[dict]:
        """A stage's finished matches with each bot's entry, game points and match points."""
        finished = "m.tournament_id = ? and m.stage = ? and m.status = 'finished'"
        matches: dict[str, dict] = {}
        bots: dict[str, list[dict]] = {}
        for r in self.db.query(
            "select m.id, m.round, m.table_no, (select count(*) from games g where g.match_id = "
            "m.id) games, b.position, b.entry, b.bot, b.bot_id, b.game_points, b.match_points, "
            f"b.partners from matches m join match_bots b on b.match_id = m.id where {finished} "
            "order by m.round, m.table_no, b.position", [tournament_id, stage]
        ):
            matches.setdefault(r["id"], r)
            bots.setdefault(r["id"], []).append(r)
        deals: dict[str, list[dict]] = {}
        for r in self.db.query(
            "select d.match_id, d.deal, d.bot_id, d.points, d.games from deals d "
            f"join matches m on m.id = d.match_id where {finished} order by d.match_id, d.deal",
            [tournament_id, stage]
        ):
            deals.setdefault(r["match_id"], []).append(r)
        return [scored_match(m, bots[mid], deals.get(mid, [])) for mid, m in matches.items()]


def scored_match(match: dict, bots: list[dict], deals: list[dict]) -> dict:
    """A finished match's scores: its bots (match_bots rows by position) and, per deal, the games
    it had and each position's points (MatchScore.deals)."""
    position = {b["bot_id"]: b["position"] for b in bots}
    per_deal: dict[int, list] = {}
    for d in deals:
        if d["bot_id"] not in position:
            continue
        entry = per_deal.setdefault(d["deal"], [0, [0.0] * len(bots)])
        entry[0] = max(entry[0], d["games"])
        entry[1][position[d["bot_id"]]] = d["points"]
    return {"match_id": match["id"], "round": match["round"], "table": match["table_no"],
            "bots": [b["entry"] for b in bots], "names": [b["bot"] for b in bots],
            "game_points": [b["game_points"] for b in bots],
            "match_points": [b["match_points"] for b in bots], "games": match["games"],
            "partners": stored_json(bots[0]["partners"], f"matches.partners of {match['id']}"),
            "deals": [entry for _, entry in sorted(per_deal.items())]}

"""Ladders: a tournament row of format "ladder", its entries and its tables."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from arena.store.database import dump_json, now, stored_json

if TYPE_CHECKING:
    from arena.store.matches import MatchRecord


class LadderRows:
    """Store methods for ladder entries, ladder tables and their results."""

    def ladder_entry(self, tournament_id: int, bot_id: int, key: str, status: str, reason: str,
                     tick: int) -> None:
        """Record a version's entry (active, or rejected with the reason) at table `tick`.

        An active entrant also becomes an entrant of the ladder's tournament row.
        """
        with self.transaction():
            self.db.conn.execute(
                "insert or replace into ladder_entries (tournament_id, bot_id, key, status, reason, "
                "joined_tick, retired_tick, recorded_at) values (?, ?, ?, ?, ?, ?, null, ?)",
                [tournament_id, bot_id, key, status, reason, tick, now()])
            known = self.db.conn.execute(
                "select 1 from tournament_bots where tournament_id = ? and bot_id = ?",
                [tournament_id, bot_id]).fetchone()
            if status == "active" and not known:
                entry = self.db.conn.execute(
                    "select count(*) from tournament_bots where tournament_id = ?",
                    [tournament_id]).fetchone()[0]
                # Named by its key (`name@version`): two versions of one bot are two entrants.
                self._insert("tournament_bots", [{"tournament_id": tournament_id,
                                                  "bot_id": bot_id, "entry": entry, "name": key}])

    def ladder_retire(self, tournament_id: int, bot_id: int, tick: int) -> None:
        """A version stops getting tables from table `tick` on; its games and ratings stay."""
        with self.transaction():
            self.db.conn.execute(
                "update ladder_entries set status = 'retired', retired_tick = ? "
                "where tournament_id = ? and bot_id = ? and status = 'active'",
                [tick, tournament_id, bot_id])

    def ladder_entries(self, tournament_id: int) -> list[dict]:
        """Every version a ladder has seen, in the order they joined."""
        return list(self.db.query(
            "select * from ladder_entries where tournament_id = ? order by joined_tick, recorded_at, "
            "bot_id", [tournament_id]))

    def ladder_choose(self, tournament_id: int, number: int, fmt: int, bots: list[str],
                      match_id: str, reason: str) -> None:
        """Record table `number` as chosen (pending) before it is played."""
        with self.transaction():
            self._insert("ladder_tables", [{
                "tournament_id": tournament_id, "number": number, "format": fmt,
                "bots": dump_json(list(bots)), "match_id": match_id, "reason": reason,
                "status": "pending", "chosen_at": now(), "finished_at": None}])

    def ladder_tables(self, tournament_id: int) -> list[dict]:
        """A ladder's tables in order, each with its bots (keys in seat order) and status."""
        rows = list(self.db.query("select * from ladder_tables where tournament_id = ? "
                                  "order by number", [tournament_id]))
        for r in rows:
            r["bots"] = stored_json(r["bots"], f"ladder_tables.bots of table {r['number']}")
        return rows

    def record_ladder_matches(self, tournament_id: int, items: Iterable[tuple[int, MatchRecord]],
                              bot_ids: dict[str, int], chosen: Iterable[dict] = ()) -> None:
        """Write finished ladder tables (number, record) and mark them finished, in one transaction.

        `chosen`: tables chosen since the last write (number, format, bots, match_id, reason,
        chosen_at), recorded first as pending, so a table's choice never lands after its result.
        """
        stamp = now()
        with self.transaction():
            self._insert("ladder_tables", (
                {"tournament_id": tournament_id, "number": c["number"], "format": c["format"],
                 "bots": dump_json(list(c["bots"])), "match_id": c["match_id"], "reason": c["reason"],
                 "status": "pending", "chosen_at": c["chosen_at"], "finished_at": None}
                for c in chosen))
            items = list(items)
            self._write_matches(tournament_id, [item for _, item in items], bot_ids)
            self.db.conn.executemany(
                "update ladder_tables set status = 'finished', finished_at = ? "
                "where tournament_id = ? and number = ?",
                [(stamp, tournament_id, number) for number, _ in items])
            self._heartbeat(tournament_id)

    def ladder_results(self, tournament_id: int) -> dict[int, list[list[int]]]:
        """Per finished table number: each game's ranks by table position (the chosen seat order)."""
        out: dict[int, dict[str, list]] = {}
        positions = {r["number"]: r["bots"] for r in self.ladder_tables(tournament_id)}
        for row in self.db.query(
            "select t.number, g.id, s.bot, s.rank from ladder_tables t "
            "join games g on g.match_id = t.match_id join game_seats s on s.game_id = g.id "
            "where t.tournament_id = ? and t.status = 'finished' order by t.number, g.ordinal",
            [tournament_id]
        ):
            game = out.setdefault(row["number"], {}).setdefault(
                row["id"], [0] * len(positions[row["number"]]))
            game[positions[row["number"]].index(row["bot"])] = row["rank"]
        return {n: list(games.values()) for n, games in out.items()}


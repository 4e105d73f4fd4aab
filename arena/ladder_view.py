"""What a ladder looks like from the database: finding one, and its status.

Read by the ladder driver, the `arena ladder` commands and the web app; it sits below the driver
so that the read side (`arena serve` above all) does not import the driver, its executors and the
registry. The rows come from `arena.store.views.LadderView`; the status is a pure function of it.
"""

from __future__ import annotations

from arena.store.views import LADDER_FORMAT, LadderView, find_ladder

__all__ = ["LADDER_FORMAT", "LadderView", "find_ladder", "ladder_status"]


def ladder_status(view: LadderView) -> dict:
    """A ladder's state: tables and games played, in flight, games per minute, bots, the top."""
    t, tables, entries, lease = view.tournament, view.tables, view.entries, view.lease
    return {
        "id": t["id"], "name": t["name"], "status": t["status"], "games_played": view.games[0],
        "tables_played": sum(1 for r in tables if r["status"] == "finished"),
        "in_flight": sum(1 for r in tables if r["status"] != "finished"),
        "games_last_minute": view.games_last_minute,
        "bots_active": sum(1 for e in entries if e["status"] == "active"),
        "bots_rejected": [{"bot": e["key"], "reason": e["reason"]} for e in entries
                          if e["status"] == "rejected"],
        "bots_retired": sum(1 for e in entries if e["status"] == "retired"),
        "driver": None if not lease else {"pid": lease["pid"], "host": lease["host"],
                                          "alive": lease["alive"]},
        "leaderboards": view.boards,
    }

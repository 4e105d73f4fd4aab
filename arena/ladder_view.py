"""What a ladder looks like from the database: finding one, and its status.

Read by the ladder driver, the `arena ladder` commands and the web app; it sits below the driver
so that the read side (`arena serve` above all) does not import the driver, its executors and the
registry.
"""

from __future__ import annotations

from arena.errors import ConfigError
from arena.leaderboards import LADDER_SCOPE, ladder_scope_id
from arena.store import Store

LADDER_FORMAT = "ladder"  # the tournaments row of a ladder has this format


def find_ladder(store: Store, ref: str | int | None) -> dict:
    """A ladder's tournament row by name or id (the newest ladder when None); ConfigError if none."""
    rows = [r for r in store.db.query(
        "select * from tournaments where format = ? order by id desc", [LADDER_FORMAT])]
    if not rows:
        raise ConfigError("no ladder in this database" if ref is None
                          else f"no ladder named {ref!r}: this database has none")
    if ref is None:
        return rows[0]
    for r in rows:
        if str(r["id"]) == str(ref) or r["name"] == ref:
            return r
    raise ConfigError(f"no ladder named {ref!r} (ladders: {', '.join(r['name'] for r in rows)})")


def ladder_status(store: Store, ref: str | int | None = None, top: int = 10,
                  now: float | None = None) -> dict:
    """A ladder's state: tables and games played, in flight, games per minute, bots, the top."""
    t = find_ladder(store, ref)
    tid = t["id"]
    tables = store.ladder_tables(tid)
    entries = store.ladder_entries(tid)
    games = store.db.execute("select count(*), min(recorded_at), max(recorded_at) from games "
                             "where tournament_id = ?", [tid]).fetchone()
    recent = store.db.execute(
        "select count(*) from games where tournament_id = ? and recorded_at >= "
        "strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now', '-1 minutes')", [tid]).fetchone()[0]
    lease = store.lease(tid)
    boards = {}
    for game in t["game"].split(","):
        rows = []
        for method in ("bt", "pl"):
            rows = store.pooled_ratings(LADDER_SCOPE, ladder_scope_id(tid, game), method)
            if rows:
                boards[game] = {"method": method, "rows": rows[:top]}
                break
    return {
        "id": tid, "name": t["name"], "status": t["status"], "games_played": games[0],
        "tables_played": sum(1 for r in tables if r["status"] == "finished"),
        "in_flight": sum(1 for r in tables if r["status"] != "finished"),
        "games_last_minute": recent,
        "bots_active": sum(1 for e in entries if e["status"] == "active"),
        "bots_rejected": [{"bot": e["key"], "reason": e["reason"]} for e in entries
                          if e["status"] == "rejected"],
        "bots_retired": sum(1 for e in entries if e["status"] == "retired"),
        "driver": None if not lease else {"pid": lease["pid"], "host": lease["host"],
                                          "alive": lease["alive"]},
        "leaderboards": boards,
    }

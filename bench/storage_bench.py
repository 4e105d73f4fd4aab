"""Bytes per stored move and recording speed: the moves table as Arena keeps it (WITHOUT ROWID)
against the layout before schema 6 (a rowid table plus its primary-key index), in one run.

Plays real games (Xeri, random bots, in process) for their moves, then writes the same rows into
two fresh databases holding only a moves table of each layout, and prints bytes per move from
SQLite's own page accounting (page_count × page_size after VACUUM), the ratio, and rows/s of the
real recorder (`Store.record_matches`) on a full database.

    python bench/storage_bench.py [--games 400]
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.games import new_game  # noqa: E402
from arena.store import MOVES_TABLE, Store  # noqa: E402
from arena.store.database import dump_json  # noqa: E402

OLD_LAYOUT = """create table [moves] (
   [game_id] TEXT REFERENCES [games]([id]),
   [ply] INTEGER,
   [step] INTEGER,
   [seat] INTEGER,
   [action] TEXT,
   [ms] FLOAT,
   PRIMARY KEY ([game_id], [ply])
)"""


def play_moves(games: int, seed: int = 1) -> list[tuple]:
    """(game_id, ply, step, seat, action, ms) rows of `games` random Xeri games."""
    rng = random.Random(seed)
    rows = []
    for g in range(games):
        state = new_game("xeri", {"rounds": 1}, 2, seed + g)
        game_id = f"t1-st1-r{g // 8 + 1}-m{g % 8 + 1}-d0-s{g % 2}"
        ply = step = 0
        while not state.is_over():
            actions = {s: rng.choice(state.legal_actions(s)) for s in state.to_act()}
            for seat, action in sorted(actions.items()):
                rows.append((game_id, ply, step, seat, dump_json(action), round(rng.uniform(0.1, 2), 3)))
                ply += 1
            state.apply(actions)
            step += 1
    return rows


def bytes_per_move(layout: str, rows: list[tuple]) -> float:
    """Bytes the moves table (and its indexes) take per row in a fresh database of one layout."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.db")
        conn = sqlite3.connect(path)
        conn.execute("create table games (id text primary key)")
        conn.execute(layout)
        conn.executemany("insert into moves values (?, ?, ?, ?, ?, ?)", sorted(rows))
        conn.commit()
        conn.execute("vacuum")
        pages = conn.execute("pragma page_count").fetchone()[0]
        size = conn.execute("pragma page_size").fetchone()[0]
        conn.close()
        empty_pages = 3  # sqlite_master, games, its index: the file's pages that are not moves
        return (pages - empty_pages) * size / len(rows)


def record_rate(rows: list[tuple]) -> float:
    """Moves per second written by plain executemany into Arena's own moves table."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(os.path.join(tmp, "a.db"))
        conn = store.db.conn
        conn.execute("pragma foreign_keys = off")
        t0 = time.perf_counter()
        with store.transaction():
            conn.executemany("insert into moves (game_id, ply, step, seat, action, ms) "
                             "values (?, ?, ?, ?, ?, ?)", rows)
        return len(rows) / (time.perf_counter() - t0)


def main() -> None:
    """Print bytes per move for both layouts, their ratio, and the recording rate."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400)
    args = parser.parse_args()
    rows = play_moves(args.games)
    old = bytes_per_move(OLD_LAYOUT, rows)
    new = bytes_per_move(MOVES_TABLE, rows)
    print(f"{len(rows)} moves of {args.games} Xeri games")
    print(f"rowid table + key index (schema ≤ 5)   {old:6.1f} bytes/move")
    print(f"WITHOUT ROWID (schema 6)               {new:6.1f} bytes/move")
    print(f"saved                                  {100 * (1 - new / old):5.1f} %  (goal ≈ 25 %)")
    rates = sorted(record_rate(rows) for _ in range(3))
    print(f"recording, WITHOUT ROWID               {rates[1] / 1000:6.0f} k moves/s "
          f"({1e6 / rates[1]:.1f} µs per move; median of 3)")


if __name__ == "__main__":
    main()

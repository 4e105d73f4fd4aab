"""A recorded game whose bots logged at known plies, for the replay page's tests (no bots run).

    state = record_logged_game(path)  # game "g": six Xeri moves, seat 1's log with a gap
"""

from __future__ import annotations

import random
from pathlib import Path

from arena.games import new_game
from arena.match import GameRecord, MatchResult, Move
from arena.store import Store

MOVES = 6
# (seat, ply, line_no, text): a hostile line at ply 2, seat 1's lines 1-39 dropped, one line
# after the last move.
LOGS = [(0, 0, 0, "a starts"), (0, 2, 1, "<b>a thinks about ply 2</b>"), (1, 1, 0, "b at ply 1"),
        (1, 5, 40, "b after dropping"), (1, MOVES, 41, "b ends")]
COUNTS = [(0, 2, 40, 0, 0), (1, 42, 4000, 39, 3900)]  # (seat, lines, bytes, dropped lines, bytes)


def record_logged_game(path: Path, game_id: str = "g"):
    """Record game `game_id` (a crash of seat 1 after six moves) with LOGS into the database at
    `path`; the engine's state after its moves."""
    store = Store(path)
    bots = {"a": store.add_bot("a"), "b": store.add_bot("b")}
    tid = store.create_tournament(f"logs-{game_id}", "xeri", "round_robin", 2, 1, {}, {},
                                  list(bots.values()))
    state, rng, moves = new_game("xeri", {}, 2, 5), random.Random(2), []
    for step in range(MOVES):
        seat = state.to_act()[0]
        action = rng.choice(state.legal_actions(seat))
        moves.append(Move(step, seat, action, 1.5))
        state.apply({seat: action})
    record = GameRecord(game_id=game_id, ordinal=0, deal=0, rotation=0, seed=5, seats=["a", "b"],
                        teams=[[0], [1]], scores=[0.0, 0.0], ranks=[1, 2], termination="crash",
                        culprit=1, detail="the bot exited", evidence="exit code 3",
                        duration_ms=1.0, moves=moves, logs=list(LOGS), log_counts=list(COUNTS))
    store.record_match(tid, 1, 1, "xeri", {}, MatchResult(f"m-{game_id}", [record], {}, 1.0), bots)
    store.db.conn.close()
    return state

"""Replay viewer speed: `arena.web.replay.replay_data` for stored games of 500+ moves, per view.

Plays seeded random games long enough to pass 500 moves (Battlefield Cribbage with 4 seats, Xeri
over 11 rounds, Crosswalk with 4 seats over 13 rounds), stores each in a temporary database as the
driver does, reopens it read-only as `arena serve` does, and times replay_data (load from SQLite,
replay, every frame's view) for the full view and each seat view, plus the JSON encoding of the
result. The goal is 300 ms per call for a 500-move game.

    python bench/replay_bench.py [--repeat N]
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path
from time import perf_counter

import orjson

from arena.games import GameState, new_game
from arena.match import GameRecord, MatchResult, Move
from arena.store import Store
from arena.web.replay import game_meta, replay_data

GOAL_MS = 300.0
MIN_MOVES = 500

GAMES = [
    ("battlefield_cribbage", 4, {"target": 121}),
    ("xeri", 2, {"rounds": 11}),
    ("crosswalk", 4, {"rounds": 13}),
]


def play(game: str, seats: int, options: dict) -> tuple[int, list[Move], GameState]:
    """A seeded random game of at least MIN_MOVES moves: its seed, moves and final state."""
    for seed in range(1, 1000):
        state = new_game(game, options, seats, seed)
        rng = random.Random(seed)
        moves, step = [], 0
        while state.to_act():
            actions = {s: rng.choice(state.legal_actions(s)) for s in state.to_act()}
            moves += [Move(step, s, a, 0.0) for s, a in actions.items()]
            state.apply(actions)
            step += 1
        if len(moves) >= MIN_MOVES:
            return seed, moves, state
    raise RuntimeError(f"no {game} game of {MIN_MOVES} moves found")


def store_games(path: Path) -> list[tuple[str, str, int]]:
    """Write one long game of each kind into a new database; (game id, game, moves) each."""
    store = Store(path)
    bots = {f"bot{i}": store.add_bot(f"bot{i}") for i in range(4)}
    out = []
    for n, (game, seats, options) in enumerate(GAMES):
        tid = store.create_tournament(f"bench-{game}", game, "round_robin", seats, 1, options, {},
                                      list(bots.values()))
        seed, moves, state = play(game, seats, options)
        result = state.result()
        names = [f"bot{i}" for i in range(seats)]
        record = GameRecord(
            game_id=f"g{n}", ordinal=0, deal=0, rotation=0, seed=seed, seats=names,
            teams=state.teams(), scores=list(result.scores), ranks=list(result.ranks),
            termination="normal",
            culprit=None, detail="", evidence="", duration_ms=0.0, moves=moves)
        store.record_match(tid, 1, 1, game, options,
                           MatchResult(f"m{n}", [record], {}, 0.0), bots)
        out.append((f"g{n}", game, len(moves)))
    return out


def main() -> None:
    """Print the time of replay_data per game and view against the goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="calls per view (the best is kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        games = store_games(path)
        store = Store.open_readonly(path)
        print(f"replay_data per call, best of {args.repeat} (goal: {GOAL_MS:.0f} ms for a "
              f"{MIN_MOVES}-move game)")
        print(f"{'game':<22}{'moves':>6}{'frames':>7}  {'view':<8}{'data ms':>9}{'json ms':>9}"
              f"{'MB':>7}  goal")
        worst = 0.0
        for gid, game, nmoves in games:
            for view in game_meta(store, gid)["views"]:
                best = best_json = float("inf")
                for _ in range(args.repeat):
                    t0 = perf_counter()
                    data = replay_data(store, gid, view)
                    t1 = perf_counter()
                    body = orjson.dumps(data)
                    t2 = perf_counter()
                    best, best_json = min(best, t1 - t0), min(best_json, t2 - t1)
                ms = best * 1000
                worst = max(worst, ms)
                print(f"{game:<22}{nmoves:>6}{len(data['frames']):>7}  {view:<8}{ms:>9.1f}"
                      f"{best_json * 1000:>9.1f}{len(body) / 1e6:>7.2f}  "
                      f"{'ok' if ms <= GOAL_MS else 'OVER'}")
        verdict = "met" if worst <= GOAL_MS else "MISSED"
        print(f"worst {worst:.1f} ms (goal {GOAL_MS:.0f} ms): {verdict}")
        http(path, games[0][0], args.repeat)


def http(path: Path, gid: str, repeat: int) -> None:
    """The same request end to end through the web app (route, replay, JSON), when it exists."""
    try:
        from starlette.testclient import TestClient

        from arena.web import create_app
    except ImportError as exc:
        print(f"(no HTTP figure: {exc})")
        return
    client = TestClient(create_app(path))
    best = float("inf")
    for _ in range(repeat):
        t0 = perf_counter()
        response = client.get(f"/api/games/{gid}/replay?view=full")
        best = min(best, perf_counter() - t0)
        response.raise_for_status()
    print(f"GET /api/games/{gid}/replay?view=full through create_app: {best * 1000:.1f} ms "
          f"({len(response.content) / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()

"""ISMCTS speed per game: iterations per second and engine operations per iteration.

    python bench/search_bench.py [--iterations N]

For each game, one search from the state after a few random moves; the engine operations counted
are determinize (each is one clone plus a re-deal), legal_actions and apply calls in the tree (the
random rollout runs inside GameState.rollout, which games implement without action lists). The
goal for Xeri is at least 2,000 iterations/s on one core.
"""

from __future__ import annotations

import argparse
import random
import time

from arena.games import new_game
from arena.search import ISMCTS

CASES = [
    ("xeri", 2, {}),
    ("crossfire", 2, {"open_rows": True}),
    ("crosswalk", 2, {}),
    ("crosswalk", 4, {}),
    ("battlefield_cribbage", 2, {}),
    ("battlefield_cribbage", 4, {"team_mode": True}),
]


def position(name: str, seats: int, options: dict, moves: int = 4):
    """A game state a few random moves in."""
    rng = random.Random(1)
    state = new_game(name, options, seats, 7)
    done = 0
    # Past `moves` moves, and on to a decision with a choice (a lone legal action is not searched).
    while done < moves or len(state.legal_actions(state.to_act()[0])) < 2:
        state.apply({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})
        done += 1
    return state


def bench_determinize_playout(state, n: int = 2000) -> float:
    """Iterations/s of the bare determinize + rollout path (no tree)."""
    seat = state.to_act()[0]
    rng = random.Random(0)
    started = time.perf_counter()
    for _ in range(n):
        state.determinize(seat, rng).rollout(rng)
    return n / (time.perf_counter() - started)


def main() -> None:
    """Print one line per game."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'game':28} {'it/s':>8} {'det+playout/s':>14} {'det/it':>7} {'legal/it':>9} "
          f"{'apply/it':>9}")
    for name, seats, options in CASES:
        state = position(name, seats, options)
        search = ISMCTS(iterations=args.iterations, seed=1)
        started = time.perf_counter()
        search.search(state, state.to_act()[0], random.Random(2))
        rate = args.iterations / (time.perf_counter() - started)
        ops = search.ops
        it = max(1, ops["iterations"])
        bare = bench_determinize_playout(state, max(200, args.iterations // 4))
        label = f"{name} {seats}p" + (" teams" if options.get("team_mode") else "")
        print(f"{label:28} {rate:8.0f} {bare:14.0f} {ops['determinize'] / it:7.2f} "
              f"{ops['legal_actions'] / it:9.2f} {ops['apply'] / it:9.2f}")


if __name__ == "__main__":
    main()

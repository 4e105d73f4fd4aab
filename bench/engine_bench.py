"""Engine speed of every registered game: random-vs-random games in process, timed per part.

For each game and seat count (default options) it plays seeded random games for a few seconds and
prints games per second and microseconds per move, split into the engine's own work (to_act,
legal_actions, apply), building the acting seats' observations, and JSON-encoding them with the
legal actions as the runner does; plus the cost of clone() (what search bots pay per simulation).

    python bench/engine_bench.py [--seconds S] [--game NAME]
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from time import perf_counter

from arena.cards import derive_seed
from arena.games import game_names, get_game, new_game
from arena.protocol import encode_dict

# Clone timing samples one state in this many, so cloning does not dominate the run.
CLONE_EVERY = 4


@dataclass
class Figures:
    """Totals of one game and seat count."""

    game: str
    seats: int
    games: int = 0
    moves: int = 0
    engine: float = 0.0
    observe: float = 0.0
    encode: float = 0.0
    clone: float = 0.0
    clones: int = 0
    wall: float = 0.0

    def row(self) -> list[str]:
        """The table row: games/s, moves/game and µs per move of each part, µs per clone."""
        per_move = 1e6 / self.moves if self.moves else 0.0
        return [
            self.game,
            str(self.seats),
            str(self.games),
            f"{self.games / self.wall:,.0f}" if self.wall else "-",
            f"{self.moves / self.games:,.0f}" if self.games else "-",
            f"{self.engine * per_move:,.1f}",
            f"{self.observe * per_move:,.1f}",
            f"{self.encode * per_move:,.1f}",
            f"{1e6 * self.clone / self.clones:,.1f}" if self.clones else "-",
        ]


HEADER = ["game", "seats", "games", "games/s", "moves/game"]
HEADER += ["engine µs", "obs µs", "json µs", "clone µs"]


def bench(name: str, seats: int, seconds: float) -> Figures:
    """Play random games of `name` with `seats` seats for about `seconds` seconds."""
    figures = Figures(name, seats)
    started = perf_counter()
    while perf_counter() - started < seconds or figures.games == 0:
        seed = derive_seed("engine_bench", name, seats, figures.games)
        rng = random.Random(seed)
        state = new_game(name, None, seats, seed)
        while True:
            t0 = perf_counter()
            acting = state.to_act()
            if not acting:
                figures.engine += perf_counter() - t0
                break
            legal = {s: state.legal_actions(s) for s in acting}
            actions = {s: rng.choice(legal[s]) for s in acting}
            t1 = perf_counter()
            observations = {s: state.observation(s) for s in acting}
            t2 = perf_counter()
            for s in acting:
                encode_dict({"observation": observations[s], "legal_actions": legal[s]})
            t3 = perf_counter()
            state.apply(actions)
            t4 = perf_counter()
            figures.engine += (t1 - t0) + (t4 - t3)
            figures.observe += t2 - t1
            figures.encode += t3 - t2
            figures.moves += 1
            if figures.moves % CLONE_EVERY == 0:
                t5 = perf_counter()
                state.clone()
                figures.clone += perf_counter() - t5
                figures.clones += 1
        state.result()
        figures.games += 1
    # Wall time without the clone samples, so games/s is what a match loop would see.
    figures.wall = perf_counter() - started - figures.clone
    return figures


def table(rows: list[list[str]]) -> str:
    """Rows as a plain text table, numbers right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        cells = [c.ljust(w) if i < 1 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(cells))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the benchmark of each game and seat count, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=2.0, help="seconds per game and seat count"
    )
    parser.add_argument("--game", action="append", help="only this game (repeatable)")
    args = parser.parse_args(argv)
    names = args.game or game_names()
    rows = [HEADER]
    for name in names:
        for seats in get_game(name).game_type.seat_counts:
            rows.append(bench(name, seats, args.seconds).row())
            print(f"  {name} {seats} seats done", file=sys.stderr, flush=True)
    print(table(rows))
    print(
        "\nengine = to_act + legal_actions + apply; obs = observation() of the acting seats; "
        "json = encoding them with their legal actions as the runner does (orjson);\n"
        f"clone = one clone() (sampled every {CLONE_EVERY} moves). Default options, random play, "
        "one process."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

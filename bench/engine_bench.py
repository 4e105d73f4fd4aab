"""Engine speed of every registered game: random-vs-random games in process, timed per part.

For each game and seat count (default options) it plays seeded random games for a few seconds and
prints games per second and microseconds per move, split into the engine's own work (to_act,
legal_actions, apply), building the acting seats' encoded observations (observation_json, what the
runner sends), and encoding the act lines around them as the runner does; the bytes of an act
line; plus the cost of clone() (what search bots pay per simulation).

Then the floor: a hand-written tight loop of random Xeri games (ints and lists, no observations)
against Xeri through the engine alone and through everything the runner does per move; the goal
is engine + observation + legal actions + encoding at ≥ 0.15 of the tight loop's moves per second.

    python bench/engine_bench.py [--seconds S] [--game NAME]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from dataclasses import dataclass
from time import perf_counter

from arena.cards import derive_seed
from arena.games import game_names, get_game, new_game
from arena.protocol import ActRequest

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
    act_bytes: int = 0
    acts: int = 0

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
            f"{(self.engine + self.observe + self.encode) * per_move:,.1f}",
            f"{self.act_bytes / self.acts:,.0f}" if self.acts else "-",
            f"{1e6 * self.clone / self.clones:,.1f}" if self.clones else "-",
        ]


HEADER = ["game", "seats", "games", "games/s", "moves/game"]
HEADER += ["engine µs", "obs µs", "json µs", "total µs", "bytes/act", "clone µs"]


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
            observations = {s: state.observation_json(s) for s in acting}
            t2 = perf_counter()
            for s in acting:
                line = ActRequest("g", figures.moves, observations[s], legal[s], 1000).line()
                figures.act_bytes += len(line)
                figures.acts += 1
            t3 = perf_counter()
            state.apply_validated(actions)  # as the runner does: the actions are legal by construction
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


RANKS = 13
JACK = 10  # rank index of the jack in a 13-rank suit (A=0 … K=12)


def xeri_tight_loop(seconds: float) -> tuple[int, float]:
    """(moves, seconds) of hand-written random Xeri games: the floor an engine is measured against.

    Deal 4 to the table and 6 to each of 2 players, redeal 6 each while the stock lasts; a card
    matching the top card's rank, or a jack, takes the pile (a lone card taken is a xeri); the
    last capturer takes what is left. Cards are ints; nothing is built for anyone to see.
    """
    moves = games = 0
    rng = random.Random(1)
    started = perf_counter()
    while perf_counter() - started < seconds or games == 0:
        deck = list(range(52))
        rng.shuffle(deck)
        pile, stock = deck[:4], deck[4:]
        hands = [[], []]
        taken = [0, 0]
        xeri = [0, 0]
        last = -1
        seat = 0
        while True:
            if not hands[0] and not hands[1]:
                if not stock:
                    break
                hands[0], hands[1], stock = stock[:6], stock[6:12], stock[12:]
            hand = hands[seat]
            card = hand.pop(rng.randrange(len(hand)))
            if pile and (card % RANKS == pile[-1] % RANKS or card % RANKS == JACK):
                if len(pile) == 1:
                    xeri[seat] += 1
                taken[seat] += len(pile) + 1
                pile = []
                last = seat
            else:
                pile.append(card)
            moves += 1
            seat = 1 - seat
        if last >= 0:
            taken[last] += len(pile)
        games += 1
    return moves, perf_counter() - started


def xeri_through_arena(seconds: float, observe: bool) -> tuple[int, float]:
    """(moves, seconds) of random Xeri games through the engine, untimed inside the loop; with
    `observe`, also the acting seat's encoded observation and act line, as the runner builds them."""
    moves = games = 0
    started = perf_counter()
    while perf_counter() - started < seconds or games == 0:
        seed = derive_seed("engine_bench", "floor", games)
        rng = random.Random(seed)
        state = new_game("xeri", None, 2, seed)
        while acting := state.to_act():
            seat = acting[0]
            legal = state.legal_actions(seat)
            if observe:
                ActRequest("g", moves, state.observation_json(seat), legal, 1000).line()
            state.apply_validated({seat: legal[rng.randrange(len(legal))]})
            moves += 1
        games += 1
    return moves, perf_counter() - started


def floor_report(seconds: float) -> str:
    """Xeri through the engine, and through everything the runner does per move, against the
    floor: the three loops alternate in 0.2 s turns, so each ratio compares loops that saw the
    same machine load, and the median ratio is printed with its spread."""
    repeats = max(5, round(3 * seconds / 0.2) // 3)
    share = seconds / repeats
    engine_ratios, full_ratios, floors = [], [], []
    for _ in range(repeats):
        moves, elapsed = xeri_tight_loop(share)
        floor = moves / elapsed
        floors.append(floor)
        moves, elapsed = xeri_through_arena(share, observe=False)
        engine_ratios.append(moves / elapsed / floor)
        moves, elapsed = xeri_through_arena(share, observe=True)
        full_ratios.append(moves / elapsed / floor)

    def spread(values: list[float]) -> str:
        return f"{statistics.median(values):.3f} ({min(values):.3f}–{max(values):.3f})"

    return "\n".join([
        f"Xeri, tight loop (the floor): {statistics.median(floors):,.0f} moves/s; "
        f"shares of it over {repeats} alternating repeats, median (min–max):",
        f"  engine (to_act, legal_actions, apply)                    {spread(engine_ratios)}",
        f"  engine + observation + legal actions + act line encoding {spread(full_ratios)}"
        f"  (goal ≥ 0.15)",
    ])


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
        "\nengine = to_act + legal_actions + apply; obs = observation_json() of the acting seats; "
        "json = the act lines around them as the runner builds them (orjson);\n"
        "total = the three; bytes/act = bytes of one act line; "
        f"clone = one clone() (sampled every {CLONE_EVERY} moves). Default options, random play, "
        "one process.\n"
    )
    print(floor_report(args.seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())

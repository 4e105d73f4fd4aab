"""Time to pair one middle Swiss round of a big field, for two-seat and four-seat tables.

Usage: python bench/pairing_bench.py [--bots N] [--rounds R] [--seed S]

Plays R rounds of random results (seeded), then times pairing round R+1 for 2 and 4 seats and
prints the seconds against the targets (2 seats: 5 s, 4 seats: 1 s for 1,000 bots).
"""

from __future__ import annotations

import argparse
import random
import time

from arena.scheduling import History, MatchScore, Pairing, Round, Swiss

TARGETS = {2: 5.0, 4: 1.0}


def random_score(rng: random.Random, rnd: int, table: int, bots: tuple[int, ...],
                 games: int = 4) -> MatchScore:
    """A match with random game results and the match points they give."""
    sides = len(bots)
    game_points = [0.0] * sides
    for _ in range(games):
        if sides == 2 and rng.random() < 0.2:
            game_points = [p + 0.5 for p in game_points]
            continue
        places = list(range(sides))
        rng.shuffle(places)
        for i, place in enumerate(places):
            game_points[i] += (sides - 1 - place) / (sides - 1)
    match_points = tuple(
        sum(1.0 if game_points[i] > game_points[j] else 0.5 if game_points[i] == game_points[j] else 0.0
            for j in range(sides) if j != i) / (sides - 1)
        for i in range(sides))
    return MatchScore(rnd, table, bots, tuple(game_points), match_points, games)


def play(swiss: Swiss, pairing: Pairing, rounds: int, rng: random.Random) -> History:
    """The history after `rounds` rounds paired by `swiss` with random results."""
    history = History()
    for _ in range(rounds):
        rnd: Round | None = swiss.next_round(pairing, history)
        assert rnd is not None
        scores = tuple(random_score(rng, rnd.number, t.number, t.bots) for t in rnd.tables)
        history = History(history.rounds + (rnd,), history.matches + scores)
    return history


def main() -> None:
    """Print the pairing time of one middle round for 2 and 4 seats."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3, help="rounds played before the timed one")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    swiss = Swiss()
    for seats, target in TARGETS.items():
        pairing = Pairing(entrants=args.bots, seats=seats, seed=args.seed, rounds=args.rounds + 1)
        history = play(swiss, pairing, args.rounds, random.Random(args.seed))
        start = time.perf_counter()
        rnd = swiss.next_round(pairing, history)
        elapsed = time.perf_counter() - start
        assert rnd is not None
        verdict = "ok" if elapsed <= target else "OVER"
        print(f"swiss round {rnd.number}, {args.bots} bots, {seats} seats: {elapsed:.2f} s "
              f"(target {target:.0f} s, {verdict}); {len(rnd.tables)} tables, {len(rnd.byes)} byes")


if __name__ == "__main__":
    main()

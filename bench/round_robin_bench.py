"""Time to build a 3-4-seat round robin's resolvable schedule, and the overlaps it avoids.

Usage: python bench/round_robin_bench.py [--max N]

For each field size 3..N at 3 and 4 seats: the rounds of one cycle, the seconds to build the
resolvable schedule (version 2, uncached) and the seats beyond one per bot per round in it and in
the greedy schedule of version 1 (where that one is built). Then the biggest fields built
(the largest C(N, seats) under DESIGN_LIMIT).
"""

from __future__ import annotations

import argparse
import time
from math import comb

from arena.scheduling.round_robin import (
    DESIGN_LIMIT,
    GREEDY_LIMIT,
    greedy_schedule,
    resolvable_schedule,
)


def overlaps(rounds) -> int:
    """Seats beyond one per bot per round."""
    return sum(len([b for g in r for b in g]) - len({b for g in r for b in g}) for r in rounds)


def timed(entrants: int, seats: int) -> tuple[float, tuple]:
    """Seconds to build the resolvable schedule afresh, and the schedule."""
    resolvable_schedule.cache_clear()
    start = time.perf_counter()
    rounds = resolvable_schedule(entrants, seats)
    return time.perf_counter() - start, rounds


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=20)
    args = parser.parse_args()
    print(f"{'seats':>5} {'bots':>4} {'rounds':>6} {'build s':>8} {'overlaps v2':>11} {'overlaps v1':>11}")
    for seats in (3, 4):
        for entrants in range(seats, args.max + 1):
            seconds, rounds = timed(entrants, seats)
            old = (overlaps(greedy_schedule(entrants, seats))
                   if comb(entrants, seats) <= GREEDY_LIMIT else "-")
            print(f"{seats:>5} {entrants:>4} {len(rounds):>6} {seconds:>8.3f} "
                  f"{overlaps(rounds):>11} {old:>11}")
    for seats in (3, 4):
        entrants = max(n for n in range(seats, 200) if comb(n, seats) <= DESIGN_LIMIT)
        seconds, rounds = timed(entrants, seats)
        print(f"largest built at {seats} seats: {entrants} bots, {comb(entrants, seats)} groups, "
              f"{len(rounds)} rounds, {seconds:.2f} s, {overlaps(rounds)} overlaps")


if __name__ == "__main__":
    main()

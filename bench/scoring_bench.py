"""Throughput of arena.games.cribbage_scoring against the brute-force reference scorer.

Usage: python bench/scoring_bench.py [--hands N] [--seed S]

Prints hands scored per second for hand_score and best_discards on seeded random deals, and the
speed-up over `naive_hand_score` (subset counting) measured in the same run on the same deals; also
line_points calls per second on random 1-6 card lines (for the BFC engine's per-placement cost).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from arena.cards import standard_deck
from arena.games.cribbage_scoring import best_discards, hand_score, line_points, naive_hand_score


def _deals(n: int, seed: int, size: int) -> list[list[str]]:
    """`n` random deals of `size` distinct cards from the 52-card deck."""
    rng = random.Random(seed)
    deck = standard_deck()
    return [rng.sample(deck, size) for _ in range(n)]


def _rate(fn: Callable[[list[str]], object], deals: list[list[str]], repeat: int = 3) -> float:
    """Best-of-`repeat` calls per second of fn over all deals."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for deal in deals:
            fn(deal)
        best = min(best, time.perf_counter() - start)
    return len(deals) / best


def _naive_best(deal: list[str]) -> int:
    """Reference best-4-of-5: the naive scorer on each of the five kept fours."""
    five, common = deal[:5], deal[5]
    return max(naive_hand_score(five[:i] + five[i + 1:], common) for i in range(5))


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=50_000, help="deals per measurement")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random deals")
    args = parser.parse_args()
    naive_n = max(1, args.hands // 20)  # the reference is ~100x slower; fewer deals keep runs short

    deals5 = _deals(args.hands, args.seed, 5)
    deals6 = _deals(args.hands, args.seed + 1, 6)

    def fast_hand(deal: list[str]) -> int:
        return hand_score(deal[:4], deal[4])

    def fast_best(deal: list[str]) -> tuple[int, list[int]]:
        return best_discards(deal[:5], deal[5])

    def naive_hand(deal: list[str]) -> int:
        return naive_hand_score(deal[:4], deal[4])

    # Warm the rank-multiset cache so the figures show the steady state a search bot sees.
    for deal in deals6:
        fast_best(deal)
    mismatches = sum(fast_hand(d) != naive_hand(d) for d in deals5[:naive_n])
    mismatches += sum(fast_best(d)[0] != _naive_best(d) for d in deals6[:naive_n])

    rng = random.Random(args.seed + 2)
    lines = [deal[: rng.randint(1, 6)] for deal in deals6]

    hand_rate = _rate(fast_hand, deals5)
    best_rate = _rate(fast_best, deals6)
    line_rate = _rate(line_points, lines)
    naive_hand_rate = _rate(naive_hand, deals5[:naive_n], repeat=1)
    naive_best_rate = _rate(_naive_best, deals6[:naive_n], repeat=1)

    print(f"deals: {args.hands:,} (reference: {naive_n:,}), seed {args.seed}")
    for name, rate, ref in (
        ("hand_score", hand_rate, naive_hand_rate),
        ("best_discards", best_rate, naive_best_rate),
    ):
        print(f"{name:<14} {rate:>11,.0f} hands/s   reference {ref:>9,.0f} hands/s"
              f"   speed-up x{rate / ref:.1f}")
    print(f"{'line_points':<14} {line_rate:>11,.0f} calls/s")
    print(f"mismatches against the reference: {mismatches}")


if __name__ == "__main__":
    main()

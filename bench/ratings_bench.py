"""Speed and calibration of the maximum-likelihood ratings (arena.ratings).

Usage: python bench/ratings_bench.py [--games N] [--bots B] [--samples S] [--workers W]
                                     [--pl-bootstrap-tables T] [--events E] [--seed SEED]

Prints, each with its goal beside it:
- Bradley–Terry on N 2-player games among B bots (compile the games, then fit): ≤ 1 s;
- Plackett–Luce on N 4-seat tables among B bots (about 5 % of neighbours tied): ≤ 3 s;
- a bootstrap of S samples of that Bradley–Terry fit on W processes: ≤ 60 s on 2 cores, and one
  of a Plackett–Luce fit on T 4-seat tables among B bots;
- the share of 95 % bootstrap intervals that cover the true strengths over E simulated
  events of 24 bots (2-player games, Bradley–Terry) and E sets of random 4-seat tables
  (Plackett–Luce): 90–98 %.
The games are simulated from known strengths (normal, sd 200 Elo) with a seeded generator.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from arena.ratings.bootstrap import bootstrap, intervals
from arena.ratings.bradley_terry import fit_tables as fit_bt
from arena.ratings.fitting import compile_games
from arena.ratings.plackett_luce import fit_tables as fit_pl


def _games(rng: np.random.Generator, n_games: int, n_bots: int, seats: int, tie_share: float,
           sd: float = 200.0) -> tuple[np.ndarray, list[str], list[dict]]:
    """n_games tables of `seats` distinct bots, finishing orders drawn from Plackett–Luce."""
    true = rng.normal(0.0, sd, n_bots)
    true -= true.mean()
    names = [f"bot{i}" for i in range(n_bots)]
    # Distinct bots per table: the first `seats` of a random offset walk around the circle.
    first = rng.integers(n_bots, size=n_games)
    steps = np.cumsum(rng.integers(1, n_bots // seats, size=(n_games, seats)), axis=1) - 1
    who = (first[:, None] + steps) % n_bots
    strength = true[who] * np.log(10) / 400
    order = np.argsort(-(strength + rng.gumbel(size=who.shape)), axis=1)
    # Neighbours tie at about tie_share with each side's expected score kept (a tie counts half).
    placed = np.take_along_axis(strength, order, axis=1)
    ahead = 1 / (1 + np.exp(placed[:, 1:] - placed[:, :-1]))
    tie = np.minimum(tie_share, 2 * np.minimum(ahead, 1 - ahead)) / (2 * ahead)
    tied = rng.random((n_games, seats - 1)) < tie
    position = np.broadcast_to(np.arange(seats), who.shape)
    starts = np.where(np.concatenate([np.zeros((n_games, 1), bool), tied], axis=1), 0, position)
    ranks = np.empty_like(who)
    np.put_along_axis(ranks, order, np.maximum.accumulate(starts, axis=1) + 1, axis=1)
    games = [{"id": f"g{i}", "ordinal": i,
              "seats": [{"bot": names[b], "team": k, "rank": int(r)}
                        for k, (b, r) in enumerate(zip(row, rank_row))]}
             for i, (row, rank_row) in enumerate(zip(who.tolist(), ranks.tolist()))]
    return true, names, games


def _timed(label: str, goal: float, fn):
    """Run fn, print its time beside the goal, return its result."""
    start = time.perf_counter()
    result = fn()
    took = time.perf_counter() - start
    mark = "ok" if took <= goal else "OVER"
    print(f"{label:<58} {took:7.2f} s   (goal ≤ {goal:g} s) {mark}")
    return result


def _fit_speed(args: argparse.Namespace, rng: np.random.Generator):
    """Time Bradley–Terry and Plackett–Luce on the full-size pools."""
    _, names, duels = _games(rng, args.games, args.bots, 2, 0.2)
    _, _, tables4 = _games(rng, args.games, args.bots, 4, 0.05)
    compiled = {}

    def bt():
        """Compile and fit the 2-player games."""
        compiled["bt"] = compile_games(duels, names)
        return fit_bt(compiled["bt"])

    def pl():
        """Compile and fit the 4-seat tables."""
        return fit_pl(compile_games(tables4, names))

    fitted = _timed(f"Bradley–Terry, {args.games:,} 2-player games, {args.bots:,} bots", 1.0, bt)
    _timed(f"Plackett–Luce, {args.games:,} 4-seat tables, {args.bots:,} bots", 3.0, pl)
    start = time.perf_counter()
    fit_bt(compiled["bt"])
    print(f"  (Bradley–Terry fit alone, games already compiled: "
          f"{time.perf_counter() - start:.2f} s)")
    _timed(f"bootstrap, {args.samples} samples of that BT fit, {args.workers} processes", 60.0,
           lambda: bootstrap(compiled["bt"], fitted, samples=args.samples, seed=args.seed,
                             workers=args.workers))
    _, names, smaller = _games(rng, args.pl_bootstrap_tables, args.bots, 4, 0.05)
    tables = compile_games(smaller, names)
    fitted = fit_pl(tables)
    _timed(f"bootstrap, {args.samples} samples of PL on {args.pl_bootstrap_tables:,} 4-seat tables",
           60.0, lambda: bootstrap(tables, fitted, samples=args.samples, seed=args.seed,
                                   workers=args.workers))


def _coverage(args: argparse.Namespace, rng: np.random.Generator) -> None:
    """Share of 95 % intervals covering the true strengths on simulated events."""
    for seats, fit, label in ((2, fit_bt, "Bradley–Terry, 2-player games"),
                              (4, fit_pl, "Plackett–Luce, random 4-seat tables")):
        covered = total = 0
        start = time.perf_counter()
        for event in range(args.events):
            n_games = 24 * 23 if seats == 2 else 24 * 23 // 3
            true, names, games = _games(rng, n_games, 24, seats, 0.2 if seats == 2 else 0.05,
                                        sd=150.0)
            tables = compile_games(games, names)
            result = fit(tables, average=0.0)
            lo, hi = intervals(bootstrap(tables, result, samples=100, seed=event, average=0.0))
            covered += int(np.sum((lo <= true) & (true <= hi)))
            total += len(true)
        share = covered / total
        mark = "ok" if 0.90 <= share <= 0.98 else "OFF"
        print(f"coverage, {label}, {args.events} events × 24 bots: {100 * share:5.1f} %   "
              f"(goal 90–98 %) {mark}   [{time.perf_counter() - start:.1f} s]")


def main() -> None:
    """Run every measurement with the command-line sizes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=1_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pl-bootstrap-tables", type=int, default=20_000)
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    _fit_speed(args, rng)
    _coverage(args, rng)


if __name__ == "__main__":
    main()

"""How fast the ladder matchmaker learns the ranking, against random and round-robin tables.

Usage: python bench/ladder_bench.py [--bots 50] [--spread 600] [--formats 2:1,4:1] [--deals 1]
                                    [--seeds 5] [--flight 4] [--check 100] [--max-games 30000]
                                    [--strategies info,random,round_robin] [--objective doubt]
                                    [--top-focus 1] [--workers 2]
                                    [--timing-bots 200] [--timing-tables 1000]

A field of `bots` versions with known strengths, evenly spaced over `spread` Elo, joins a ladder
(in a seeded order) whose formats are `seats:weight[:teams]`. Each strategy's real `Matchmaker`
chooses the tables (`flight` tables in flight, results fed in table-number order); each table is
`deals` deals × every seat rotation, each game a finishing order drawn from Plackett–Luce with the
true strengths (team formats: a partnership's strength is its members' mean). Every `check` games
or 10 % more games, whichever is further, the games so far are fitted with the real
`arena.ratings.rate(..., "bt" | "pl", samples=0)`, and the bench records the games needed for
(a) Kendall τ ≥ 0.9 between the fitted and the true order and (b) the fitted top 3 being the true
top 3 (as a set), each stably: from that check on it holds at every check until the games have
grown by STABLE (so a lucky early fit does not count). A run that does not get there within
`max-games` counts as max-games (marked ">", so a mean with one is a lower bound). Prints the
means over `seeds` seeds, the ratio info / random (goal ≤ 0.5), and the cost of `choose` for a
field of `timing-bots` active versions (goal ≤ 5 ms per table).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor

from scipy.stats import kendalltau

from arena.ratings import rate
from arena.ratings.simulate import plackett_luce_ranks
from arena.scheduling.matchmaking import (
    ELO,
    Format,
    Matchmaker,
    MatchmakingConfig,
    TableResult,
    side_positions,
)

TAU = 0.9
#: A target counts as reached when it still holds at every check until the games have grown by
#: this factor (a lucky early fit cannot count).
STABLE = 2.0


def parse_formats(text: str) -> tuple[Format, ...]:
    """'2:1,4:1:teams' -> formats (seats:weight[:teams])."""
    formats = []
    for i, item in enumerate(text.split(",")):
        parts = item.split(":")
        formats.append(Format(f"g{i}", int(parts[0]), float(parts[1]) if len(parts) > 1 else 1.0,
                              len(parts) > 2 and parts[2] == "teams"))
    return tuple(formats)


def play(rng: random.Random, fmt: Format, bots: tuple[str, ...], true: dict[str, float],
         deals: int) -> tuple[tuple[int, ...], ...]:
    """Each game's per-position ranks for one table (deals × seat rotations)."""
    sides = side_positions(fmt)
    strengths = [sum(true[bots[p]] for p in s) / len(s) * ELO for s in sides]
    games = []
    for _ in range(deals * fmt.seats):
        side_ranks = plackett_luce_ranks(rng, strengths)
        ranks = [0] * fmt.seats
        for side, r in zip(sides, side_ranks):
            for p in side:
                ranks[p] = r
        games.append(tuple(ranks))
    return tuple(games)


def field(bots: int, spread: float) -> dict[str, float]:
    """True strengths (Elo, centred), evenly spaced over `spread`, in a seeded-free fixed order."""
    return {f"bot{i:03d}@1": spread * (i / max(bots - 1, 1) - 0.5) for i in range(bots)}


def information_bound(bots: int, spread: float) -> float:
    """The Fisher information of a game between a uniformly random pair of this field, over an
    even pairing's (p(1-p) = 1/4): for a target that needs every rating about equally precise, as
    Kendall τ over an evenly spaced field does, no matchmaker needs fewer than this share of
    random pairing's games (pairwise, so 4-seat tables are treated as their 6 pairs)."""
    strengths = list(field(bots, spread).values())
    total = pairs = 0
    for i, a in enumerate(strengths):
        for b in strengths[i + 1:]:
            p = 1 / (1 + math.exp(-(a - b) * ELO))
            total += p * (1 - p)
            pairs += 1
    return total / pairs / 0.25


def run(strategy: str, seed: int, args) -> dict:
    """Games needed for each target by one strategy on one seed."""
    formats = parse_formats(args.formats)
    method = "bt" if all(f.seats == 2 or f.teams for f in formats) else "pl"
    true = field(args.bots, args.spread)
    names = list(true)
    random.Random(seed).shuffle(names)  # join order must not leak the true order
    mm = Matchmaker(formats, MatchmakingConfig(strategy=strategy, objective=args.objective,
                                               top_focus=args.top_focus), seed)
    for name in names:
        mm.join(name)
    truth = sorted(true, key=lambda b: -true[b])
    true_top = set(truth[:3])
    rng = random.Random(seed * 1_000_003 + 17)
    queue: deque = deque()
    games: list[dict] = []
    next_check, number = args.check, 0
    seen = {"tau": None, "top": None}
    streak = {"tau": None, "top": None}  # games at the first check of the current success run
    while len(games) < args.max_games and None in seen.values():
        while queue and queue[0].number <= number - args.flight:
            c = queue.popleft()
            fmt = formats[c.format]
            result = play(rng, fmt, c.bots, true, args.deals)
            mm.add_result(TableResult(c.number, c.format, c.bots, result))
            team_of = {p: k for k, side in enumerate(side_positions(fmt)) for p in side}
            for ranks in result:
                games.append({"id": len(games), "ordinal": len(games),
                              "seats": [{"bot": b, "team": team_of[p], "rank": ranks[p]}
                                        for p, b in enumerate(c.bots)]})
        c = mm.choose(number)
        queue.append(c)
        number += 1
        if len(games) >= next_check:
            # Checks every `check` games or every 10 % more games, whichever is further apart.
            next_check = max(len(games) + args.check, int(len(games) * 1.1))
            rows = rate(games, method, bots=names, samples=0).rows
            fitted = [r["bot"] for r in rows]
            position = {b: i for i, b in enumerate(fitted)}
            tau = kendalltau([position[b] for b in truth], range(len(truth)))[0]
            ok = {"tau": tau >= TAU, "top": set(fitted[:3]) == true_top}
            for key in seen:
                if not ok[key]:
                    streak[key] = None
                elif streak[key] is None:
                    streak[key] = len(games)
                elif seen[key] is None and len(games) >= STABLE * streak[key]:
                    seen[key] = streak[key]  # held while the games grew by STABLE: count the first
    return {"strategy": strategy, "seed": seed, "tau": seen["tau"], "top": seen["top"],
            "games": len(games)}


def timing(args) -> tuple[float, float]:
    """Mean and 99th-percentile ms per `choose` for a field of timing-bots active versions."""
    formats = parse_formats(args.formats)
    true = field(args.timing_bots, args.spread)
    mm = Matchmaker(formats, MatchmakingConfig(), 1)
    for name in true:
        mm.join(name)
    rng = random.Random(2)
    queue: deque = deque()
    costs = []
    warm = 4 * args.timing_bots  # past placement, so the timed tables are the steady state
    for number in range(warm + args.timing_tables):
        while queue and queue[0].number <= number - args.flight:
            c = queue.popleft()
            mm.add_result(TableResult(c.number, c.format, c.bots,
                                      play(rng, formats[c.format], c.bots, true, args.deals)))
        start = time.perf_counter()
        c = mm.choose(number)
        if number >= warm:
            costs.append(time.perf_counter() - start)
        queue.append(c)
    costs.sort()
    return 1000 * statistics.fmean(costs), 1000 * costs[int(0.99 * (len(costs) - 1))]


def main() -> None:
    """Run every strategy on every seed and print the comparison."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bots", type=int, default=50)
    p.add_argument("--spread", type=float, default=600.0)
    p.add_argument("--formats", default="2:1,4:1")
    p.add_argument("--deals", type=int, default=1)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--flight", type=int, default=4)
    p.add_argument("--check", type=int, default=100, help="least games between fits")
    p.add_argument("--max-games", type=int, default=30000)
    p.add_argument("--strategies", default="info,random,round_robin")
    p.add_argument("--objective", default="doubt", help="info's objective: doubt or variance")
    p.add_argument("--top-focus", type=float, default=1.0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--timing-bots", type=int, default=200)
    p.add_argument("--timing-tables", type=int, default=1000)
    args = p.parse_args()
    strategies = args.strategies.split(",")
    print(f"{args.bots} bots evenly over {args.spread:g} Elo, formats {args.formats}, "
          f"{args.deals} deal(s) x rotations per table, {args.flight} in flight, "
          f"fit every {args.check} games, {args.seeds} seeds")
    start = time.perf_counter()
    jobs = [(s, seed) for s in strategies for seed in range(1, args.seeds + 1)]
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(run, *zip(*jobs), [args] * len(jobs)))
    means, medians = {}, {}
    for s in strategies:
        rows = [r for r in results if r["strategy"] == s]
        line = [f"{s:12s}"]
        for key, label in (("tau", f"tau>={TAU}"), ("top", "top3")):
            values = [r[key] if r[key] is not None else args.max_games for r in rows]
            means[s, key] = statistics.fmean(values)
            medians[s, key] = statistics.median(values)
            misses = sum(r[key] is None for r in rows)
            line.append(f"{label}: {means[s, key]:6.0f} mean {medians[s, key]:6.0f} median"
                        + (f" (>{misses} run(s) hit max)" if misses else "")
                        + "  [" + " ".join(str(r[key] or f">{args.max_games}") for r in rows) + "]")
        print("  ".join(line))
    if "info" in strategies and "random" in strategies:
        for key, label in (("tau", f"tau>={TAU}"), ("top", "top3")):
            print(f"info/random {label}: {means['info', key] / means['random', key]:.2f} of the means,"
                  f" {medians['info', key] / medians['random', key]:.2f} of the medians"
                  f"  (goal <= 0.5)")
        print(f"information bound for tau: {information_bound(args.bots, args.spread):.2f} "
              "(a random pair's game carries this share of an even pairing's information)")
    print(f"simulation: {time.perf_counter() - start:.0f} s")
    if args.timing_bots:
        mean, p99 = timing(args)
        print(f"choose for {args.timing_bots} active bots: {mean:.2f} ms mean, {p99:.2f} ms p99"
              f"  (goal <= 5 ms)")


if __name__ == "__main__":
    main()

"""Time and memory from config to the first round's MatchSpecs for a big round robin.

    python bench/plan_bench.py [--bots 1000] [--seats 2]

The driver holds one round at a time: planning cost must not grow with the whole schedule
(measured before the round-by-round driver: 6.3 s and 585 MiB for 1,000 bots, 2 seats).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from pathlib import Path

from arena.config import parse_config, resolve_bot
from arena.events import match_spec, plan_event
from arena.scheduling import History

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    """Print seconds and peak MiB to plan the first round, and the tournament's size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--game", default=None, help="default: xeri for 2 seats, else crosswalk")
    args = parser.parse_args()
    game = args.game or ("xeri" if args.seats == 2 else "crosswalk")
    raw = {"name": "big", "game": game, "seats": args.seats, "deals": 2,
           "bots": [{"manifest": str(ROOT / "bots" / "random.toml"), "name": f"r{i}",
                     "args": [str(i)]} for i in range(args.bots)]}
    tracemalloc.start()
    started = time.perf_counter()
    config = parse_config(raw)
    resolved = [resolve_bot(entry, ROOT, game) for entry in config.bots]
    bots, rows = [b for b, _ in resolved], [r for _, r in resolved]
    plan = plan_event(config, bots, rows)
    stage = plan.stages[0]
    first = stage.scheduler.next_round(stage.pairing, History())
    specs = [match_spec(plan, stage, table, 1) for table in first.tables]
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    print(f"{game} round robin of {args.bots} bots, {args.seats} seats: {stage.total_rounds} rounds, "
          f"{plan.planned_games():,} games planned")
    print(f"first round: {len(specs)} matches ready in {seconds:.2f} s, "
          f"peak {peak / 2**20:.1f} MiB (traced Python allocations)")


if __name__ == "__main__":
    main()

"""The same tournament run serially and on Ray in one go: games per second of each, and the ratio.

    python bench/tournament_bench.py [--config configs/quickstart.toml] [--deals 6] [--workers 2]

Each run writes to its own in-memory database; the two must record identical games.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from arena.config import load_config
from arena.executors import RayExecutor, SerialExecutor
from arena.store import Store
from arena.tournament import run_tournament

ROOT = Path(__file__).resolve().parent.parent


def timed(config, bots, rows, executor) -> tuple[float, int, Store]:
    """Seconds and games for one run of the tournament on `executor`."""
    store = Store(":memory:")
    started = time.perf_counter()
    run = run_tournament(config, bots, rows, store, executor)
    return time.perf_counter() - started, run.games_played, store


def _warm_up(executor: RayExecutor, workers: int) -> None:
    """Start the worker processes (and their imports) before timing, as a long run would have."""
    import ray

    @ray.remote(num_cpus=1)
    def ready() -> bool:
        import arena.match  # noqa: F401

        time.sleep(0.5)  # hold the CPU so every worker gets started
        return True

    ray.get([ready.remote() for _ in range(workers)])


def main() -> None:
    """Print games per second serially and on Ray, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "quickstart.toml"))
    parser.add_argument("--deals", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    config, bots, rows = load_config(args.config)
    config = config.model_copy(update={"deals": args.deals})
    serial_s, games, serial_store = timed(config, bots, rows, SerialExecutor())
    ray = RayExecutor(num_cpus=args.workers)  # started before timing: startup is not throughput
    _warm_up(ray, args.workers)
    try:
        ray_s, _, ray_store = timed(config, bots, rows, ray)
    finally:
        ray.close()
    same = (serial_store.db.execute("select id, termination from games order by id").fetchall()
            == ray_store.db.execute("select id, termination from games order by id").fetchall())
    matches = serial_store.db["matches"].count
    print(f"{config.name}: {games} games in {matches} matches"
          f" ({'identical records' if same else 'RECORDS DIFFER'})")
    print(f"serial      {games / serial_s:7.1f} games/s  ({serial_s:.1f} s)")
    print(f"ray ({args.workers} cpu) {games / ray_s:7.1f} games/s  ({ray_s:.1f} s)")
    print(f"ray / serial {serial_s / ray_s:6.2f}x")


if __name__ == "__main__":
    main()

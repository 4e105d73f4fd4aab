"""Serial vs Ray on the same tournaments, in one run: throughput, wall time, identical games.

    python bench/tournament_bench.py [--bots 8] [--deals 8] [--workers 2] [--repeat 3]

1. Throughput on a CPU-bound tournament (`--bots` shipped bots, half random, half heuristic, in a
   Xeri round robin, `--deals` deals per match): games/s serially unpinned, serially pinned to one
   core, and on Ray with `--workers` actors (start-up excluded, actors warmed), and the ratio Ray /
   pinned serial; and Ray again with the bots on snapshots, as `arena run` plays them (their
   hashes checked before each match, nothing copied on one machine). Matches are never split, so
   n matches on w workers cannot beat
   n / ceil(n / w): 6 bots (15 matches) cap 2 workers at 1.88x, 8 bots (28 matches) at 2x.
2. Wall time of the quick start (configs/quickstart.toml) from executor start to shutdown: the
   `auto` choice, serial, and forced Ray, with the ratio auto / serial.

Each figure is the best of `--repeat` runs (the machine may be shared: best-of filters the noise).
Every run must record the same games (ids, seats, scores, moves) as the first, or the bench says so.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import textwrap
import time
from pathlib import Path

from arena.config import load_config
from arena.executors import Executor, RayExecutor, SerialExecutor, choose_executor, make_executor
from arena.match import GamePlan, MatchResult, MatchSpec
from arena.players.base import random_bot
from arena.protocol import TimeControl

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "bots"

CPU_BOUND = """
name = "cpu-bound"
game = "xeri"
seats = 2
seed = 99
deals = {deals}
[options]
rounds = 2
[time]
startup_ms = 20000
move_ms = 5000
{bots}
"""


def cpu_bound_config(deals: int, bots: int, folder: Path) -> Path:
    """`bots` shipped bots (half seeded random, half heuristic) in a Xeri round robin."""
    entries = []
    for i in range(bots // 2):
        entries.append(f'[[bots]]\nmanifest = "{BOTS}/random.toml"\nname = "random-{i}"\nargs = ["{i + 1}"]')
        entries.append(f'[[bots]]\nmanifest = "{BOTS}/xeri_heuristic.toml"\nname = "heuristic-{i}"')
    path = folder / "cpu_bound.toml"
    path.write_text(textwrap.dedent(CPU_BOUND).format(deals=deals, bots="\n".join(entries)))
    return path


def drive(config, bots, rows, executor: Executor) -> list[MatchResult]:
    """Play the whole tournament through the driver (into an in-memory database); its results."""
    from arena.session import Listener
    from arena.store import Store
    from arena.tournament import run_tournament

    results: list[MatchResult] = []

    class Collect(Listener):
        def match_done(self, result: MatchResult) -> None:
            results.append(result)

    run_tournament(config, bots, rows, Store(":memory:"), executor, listener=Collect())
    return results


def fingerprint(results: list[MatchResult]) -> list:
    """The recorded games without timings, in id order: what must not depend on the executor."""
    games = [g for r in results for g in r.games]
    return sorted((g.game_id, tuple(g.seats), tuple(g.scores), g.termination,
                   tuple((m.seat, str(m.action)) for m in g.moves)) for g in games)


def warm_up(executor: RayExecutor, workers: int) -> None:
    """Start every actor and run one tiny match on each, as a long run would have by now."""
    tc = TimeControl(startup_ms=20_000, move_ms=5_000)
    specs = [
        MatchSpec(f"warm{i}", "xeri", {"rounds": 1}, (random_bot("a", 1), random_bot("b", 2)),
                  (GamePlan(f"warm{i}-g", 0, 0, 0, i, (0, 1)),), tc)
        for i in range(2 * workers)
    ]
    for outcome in executor.run(specs):
        assert isinstance(outcome, MatchResult), outcome


class Checker:
    """Remembers the first run's games and flags any later run that differs."""

    def __init__(self):
        self.reference = None
        self.ok = True

    def check(self, results: list[MatchResult]) -> int:
        """Compare with the first run; return the number of games."""
        fp = fingerprint(results)
        if self.reference is None:
            self.reference = fp
        elif fp != self.reference:
            self.ok = False
        return len(fp)


def throughput(config_path: Path, workers: int, repeat: int) -> None:
    """Part 1: games/s of unpinned serial, pinned serial and warmed Ray on a CPU-bound tournament."""
    config, bots, rows = load_config(config_path)
    checker = Checker()
    best: dict[str, float] = {}
    games = 0
    ceiling: list[float] = []

    # As `arena run` plays them: every bot moved onto a snapshot of its folder (checked before
    # each match); on one machine nothing is copied or sent, which the ray / ray+snapshots ratio
    # shows.
    from arena.snapshots import snapshot_bots

    snapped = snapshot_bots(bots, rows, Path(tempfile.mkdtemp(prefix="arena-bench-")) / "b.db")

    def timed(label: str, executor: Executor) -> None:
        nonlocal games
        started = time.perf_counter()
        use_bots, use_rows = snapped if label == "snap" else (bots, rows)
        results = drive(config, use_bots, use_rows, executor)
        seconds = time.perf_counter() - started
        games = checker.check(results)
        best[label] = min(best.get(label, float("inf")), seconds)

    ray = RayExecutor(workers=workers)  # start-up is not throughput: paid before the clock runs
    try:
        warm_up(ray, workers)
        # Interleaved, so that a neighbour's load on a shared machine hits every variant alike
        # (an idle Ray instance costs ~4% of one core meanwhile).
        for _ in range(repeat):
            timed("serial", SerialExecutor(pin=False))
            timed("pinned", SerialExecutor(pin=True))
            timed("ray", ray)
            timed("snap", ray)
            ceiling.append(machine_scaling(workers))
    finally:
        ray.close()
    print(f"1. {config.name}: {len(bots)} bots, {games} games per run, best of {repeat}, load {_load()}"
          f" ({'identical games in every run' if checker.ok else 'GAMES DIFFER BETWEEN RUNS'})")
    for label, name in [("serial", "serial, unpinned"), ("pinned", "serial, pinned"),
                        ("ray", f"ray, {workers} workers")]:
        print(f"   {name:18} {games / best[label]:7.1f} games/s  ({best[label]:.2f} s)")
    print(f"   pinned / unpinned serial {best['serial'] / best['pinned']:5.2f}x")
    print(f"   ray / unpinned serial    {best['serial'] / best['ray']:5.2f}x")
    print(f"   ray / pinned serial      {best['pinned'] / best['ray']:5.2f}x   (target >= 1.8)")
    print(f"   ray, bots from snapshots {games / best['snap']:7.1f} games/s: "
          f"{best['ray'] / best['snap']:5.2f}x the speed without (target ~1.0)")
    print(f"   the machine's own ceiling: {workers} pinned CPU loops at once do "
          f"{min(ceiling):.2f}-{max(ceiling):.2f}x the work of one")


def _spin(cpu: int) -> float:
    os.sched_setaffinity(0, {cpu})
    started, x = time.perf_counter(), 0
    for i in range(5_000_000):
        x += i * i
    return time.perf_counter() - started


def machine_scaling(workers: int) -> float:
    """How much more work `workers` pinned processes do than one (the ceiling of any executor)."""
    import multiprocessing

    cpus = sorted(os.sched_getaffinity(0))
    one = _spin_in_child(cpus[0])
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        started = time.perf_counter()
        pool.map(_spin, [cpus[i % len(cpus)] for i in range(workers)])
        together = time.perf_counter() - started
    return workers * one / together


def _spin_in_child(cpu: int) -> float:
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        started = time.perf_counter()
        pool.map(_spin, [cpu])
        return time.perf_counter() - started


def wall_time(config_path: Path, workers: int | None, repeat: int) -> None:
    """Part 2: quick-start wall time, executor start-up and shutdown included: auto, serial, ray."""
    config, bots, rows = load_config(config_path)
    checker = Checker()
    best: dict[str, float] = {}
    startup: dict[str, list[float]] = {"init": [], "close": []}
    planned = 0
    choice = reason = ""

    def timed(label: str, kind: str) -> None:
        nonlocal planned, choice, reason
        started = time.perf_counter()
        if kind == "auto":
            kind, why = choose_executor("auto", planned)
            choice, reason = kind, why
        executor = make_executor(kind, workers=workers)
        if isinstance(executor, RayExecutor):
            startup["init"].append(executor.init_s)
        try:
            results = drive(config, bots, rows, executor)
        finally:
            closing = time.perf_counter()
            executor.close()
            if isinstance(executor, RayExecutor):
                startup["close"].append(time.perf_counter() - closing)
        best[label] = min(best.get(label, float("inf")), time.perf_counter() - started)
        planned = checker.check(results)

    for _ in range(repeat):
        timed("serial", "serial")  # first: it also tells `auto` how many games are planned
        timed("auto", "auto")
        timed("ray", "ray")
    print(f"2. {config.name}: {planned} games, wall time with executor start and shutdown, best of"
          f" {repeat}, load {_load()}"
          f" ({'identical games in every run' if checker.ok else 'GAMES DIFFER BETWEEN RUNS'})")
    print(f"   auto -> {choice} ({reason})")
    for label in ("auto", "serial", "ray"):
        print(f"   {label:7} {best[label]:6.2f} s")
    print(f"   auto / serial {best['auto'] / best['serial']:5.2f}x   (target <= 1.5)")
    print(f"   ray / serial  {best['ray'] / best['serial']:5.2f}x")
    if startup["init"]:
        print(f"   ray.init {min(startup['init']):.2f}-{max(startup['init']):.2f} s,"
              f" close (actors + shutdown) {min(startup['close']):.2f}-{max(startup['close']):.2f} s")


def _load() -> str:
    """The 1-minute load average: how much else the machine was doing."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "?"


def main() -> None:
    """Run both parts and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=8, help="bots in part 1 (an even number)")
    parser.add_argument("--deals", type=int, default=8, help="deals per match of part 1")
    parser.add_argument("--workers", type=int, default=2, help="Ray actors")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best is kept)")
    parser.add_argument("--quickstart", default=str(ROOT / "configs" / "quickstart.toml"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        throughput(cpu_bound_config(args.deals, args.bots, Path(tmp)), args.workers, args.repeat)
    wall_time(Path(args.quickstart), args.workers, args.repeat)


if __name__ == "__main__":
    main()

"""What per-game bot logs cost: games per second with and without them, the runner's
CPU per game, and database bytes.

    python bench/logs_bench.py [--matches 6] [--deals 2] [--repeats 3]

Real subprocess bots (a chatty Python bot against the built-in random bot, Xeri, two seats):
each match is played by arena.match.MatchRunner with its per-game logs on (each stderr line kept
with its ply: arena.players.gamelog) and off (only the match's stderr, as before), alternately,
`--repeats` times; the best rate of each is printed with their ratio, and the least CPU time the
runner's own process took per game (the bots' processes not counted: on a loaded machine the
steadier figure of what the logs cost the runner). Bots:

- quiet:  writes nothing to stderr (the cost of looking: one non-blocking read per move)
- chatty: a line of ~60 bytes at every move
- flood:  a line at every move and 1 MB at its first move of each game (the bounds at work)

Then the database: the same match results recorded into two on-disk stores, one with the
per-game logs and one without, vacuumed; bytes per game of each and the ratio.

Figures (`--matches 10 --repeats 7`, 2 shared cores under load, 2026-12-03; rates vary ±15 %
run to run, the runner's CPU less):

- quiet:  23.6 → 24.1 games/s (ratio 1.02), runner CPU 7.9 → 8.1 ms a game: in the noise.
- chatty: 23.9 → 22.8 games/s (0.95), CPU 8.6 → 8.5 ms; +1,536 B a game in the database
  (10,138 → 11,674 B: ×1.15).
- flood:  22.0 → 20.0 games/s (0.91), CPU 10.2 → 14.8 ms (1 MB of lines split, 80 KB kept);
  +105 KB a game in the database (the 80 KB kept and their keys: ×5.1).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from arena.cards import derive_seed
from arena.match import GamePlan, MatchRunner, MatchSpec
from arena.players.base import BotSpec, random_bot
from arena.protocol import TimeControl
from arena.scheduling import seatings
from arena.store import Store

BOT = r'''
import json, sys
mode = sys.argv[1]
acts = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "chatty", "version": "1"}), flush=True)
    elif msg["type"] == "game_start":
        acts = 0
    elif msg["type"] == "act":
        acts += 1
        if mode == "flood" and acts == 1:
            sys.stderr.write(("flood " + "x" * 93 + "\n") * 10_486)
        if mode != "quiet":
            sys.stderr.write(f"move {acts}: {len(msg['legal_actions'])} legal, choosing the first\n")
            sys.stderr.flush()
        print(json.dumps({"type": "action", "request_id": msg["request_id"],
                          "action": msg["legal_actions"][0]}), flush=True)
    elif msg["type"] == "bye":
        break
'''
TIME = TimeControl(startup_ms=10_000, move_ms=5_000)


def spec(folder: Path, mode: str, number: int, deals: int) -> MatchSpec:
    """One match of the bot in `mode` against the random bot: `deals` deals, both seatings."""
    bot = BotSpec(name=f"chatty-{mode}", command=(sys.executable, "chatty.py", mode),
                  workdir=str(folder))
    plans = tuple(GamePlan(f"{mode}-m{number}-d{d}-s{r}", i, d, r, derive_seed("bench", d),
                           seating)
                  for i, (d, r, seating) in enumerate(seatings(2, deals, True)))
    return MatchSpec(f"{mode}-m{number}", "xeri", {"rounds": 1}, (bot, random_bot("random", 1)),
                     plans, TIME)


def play(specs: list[MatchSpec], logs: bool) -> tuple[float, float, list]:
    """Play the matches one after another: (games per second, the runner's own CPU ms per game
    (its process, not the bots'), results)."""
    results, games = [], 0
    started, cpu = time.perf_counter(), time.process_time()
    for s in specs:
        result = asyncio.run(MatchRunner(s, game_logs=logs).run())
        games += len(result.games)
        results.append(result)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return games / wall, cpu * 1000 / games, results


def db_bytes(folder: Path, name: str, results: list, keep_logs: bool) -> tuple[int, int]:
    """(bytes of a vacuumed database holding `results`, games) with or without per-game logs."""
    path = folder / f"{name}.db"
    store = Store(path)
    bots = {n: store.add_bot(n) for n in {b for r in results for g in r.games for b in g.seats}}
    tid = store.create_tournament(name, "xeri", "round_robin", 2, 1, {}, {}, list(bots.values()))
    games = 0
    for i, result in enumerate(results):
        if not keep_logs:
            for g in result.games:
                g.logs, g.log_counts = [], []
        store.record_match(tid, 1, i + 1, "xeri", {"rounds": 1}, result, bots)
        games += len(result.games)
    store.db.execute("vacuum")
    store.db.conn.close()
    return os.path.getsize(path), games


def main() -> None:
    """Print games/s with and without per-game logs per bot, then database bytes per game."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=6)
    parser.add_argument("--deals", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="logs-bench-") as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)  # a root runner's bots run as uids of their own
        (folder / "chatty.py").write_text(BOT)
        (folder / "chatty.py").chmod(0o644)
        kept: dict[str, list] = {}
        print(f"{args.matches} matches x {2 * args.deals} Xeri games, best of {args.repeats}")
        for mode in ("quiet", "chatty", "flood"):
            specs = [spec(folder, mode, n, args.deals) for n in range(args.matches)]
            check = play(specs[:1], True)[2][0].games[0]
            if check.termination != "normal":
                sys.exit(f"the {mode} bot does not play: {check.termination} {check.detail}")
            best = {True: 0.0, False: 0.0}
            cpu = {True: float("inf"), False: float("inf")}
            for _ in range(args.repeats):
                for logs in (False, True):
                    rate, ms, results = play(specs, logs)
                    best[logs], cpu[logs] = max(best[logs], rate), min(cpu[logs], ms)
                    if logs:
                        kept[mode] = results
            print(f"  {mode:<7} without per-game logs {best[False]:6.1f} games/s "
                  f"({cpu[False]:5.1f} ms runner CPU a game), with {best[True]:6.1f} games/s "
                  f"({cpu[True]:5.1f} ms): ratio {best[True] / best[False]:.3f} "
                  f"(CPU {cpu[True] / cpu[False]:.3f})")
        print("database bytes per game (vacuumed; moves, seats and the match's stderr in both)")
        for mode, results in kept.items():
            with_logs, games = db_bytes(folder, f"{mode}-with", results, True)
            without, _ = db_bytes(folder, f"{mode}-without", results, False)
            print(f"  {mode:<7} without {without / games:9,.0f} B, with {with_logs / games:9,.0f} B:"
                  f" +{(with_logs - without) / games:,.0f} B a game, ratio "
                  f"{with_logs / without:.2f}")


if __name__ == "__main__":
    main()

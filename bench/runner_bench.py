"""The runner's cost per move for subprocess bots, against a bare pipe round trip, in one run.

1. Bare pipe: send the `act` messages of real games to a minimal child that answers each line with
   the first legal action (json.loads + json.dumps + flush), and time the round trips.
2. Runner: play the same games through `run_match` with the stdlib random bot as both players.
The difference is what the runner adds per move (observation, encoding, validation, recording,
asyncio); the ratio compares it with the round trip itself.
3. Start-up: start the random bot (spawn + hello/ready) and close it, plain and in the bwrap
   sandbox, alternating so both see the same machine load; the difference is the sandbox's cost.

    python bench/runner_bench.py [--game xeri] [--deals 20] [--starts 20]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
import subprocess
import sys
import time

from arena.cards import derive_seed
from arena.games import new_game
from arena.match import GamePlan, MatchSpec, run_match
from arena.players.base import random_bot
from arena.players.launch import sandbox_status
from arena.players.process import ProcessPlayer
from arena.protocol import TimeControl
from arena.scheduling import seatings

ECHO = (
    "import json,sys\n"
    "for line in sys.stdin:\n"
    "    m = json.loads(line)\n"
    "    sys.stdout.write(json.dumps({'type':'action','request_id':m['request_id'],"
    "'action':m['legal_actions'][0]}) + '\\n')\n"
    "    sys.stdout.flush()\n"
)


def act_messages(game: str, seeds: list[int]) -> list[bytes]:
    """The act lines of real games (first legal action each time), ready to send."""
    lines, rid = [], 0
    for seed in seeds:
        state = new_game(game, {}, 2, seed)
        while not state.is_over():
            actions = {}
            for seat in state.to_act():
                legal = state.legal_actions(seat)
                rid += 1
                msg = {"type": "act", "game_id": "g", "request_id": rid,
                       "observation": state.observation(seat), "legal_actions": legal,
                       "time_left_ms": 1000}
                lines.append((json.dumps(msg, separators=(",", ":")) + "\n").encode())
                actions[seat] = legal[0]
            state.apply(actions)
    return lines


def bare_pipe(lines: list[bytes]) -> float:
    """Seconds for sending every line to an echo child and reading its answer, one at a time."""
    child = subprocess.Popen([sys.executable, "-c", ECHO], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, bufsize=0)
    started = time.perf_counter()
    for line in lines:
        child.stdin.write(line)
        child.stdout.readline()
    elapsed = time.perf_counter() - started
    child.stdin.close()
    child.wait()
    return elapsed


def runner(game: str, deals: int) -> tuple[float, int, float]:
    """Seconds for a full match of subprocess random bots, its moves, and its startup share."""
    bots = tuple(random_bot(f"random-{i}", i) for i in (1, 2))
    plans = tuple(GamePlan(f"g{d}-{r}", i, d, r, derive_seed("bench", d), seating)
                  for i, (d, r, seating) in enumerate(seatings(2, deals, True)))
    spec = MatchSpec("bench", game, {}, bots, plans, TimeControl(startup_ms=10_000, move_ms=10_000))
    started = time.perf_counter()
    result = run_match(spec)
    elapsed = time.perf_counter() - started
    moves = sum(len(g.moves) for g in result.games)
    in_games = sum(g.duration_ms for g in result.games) / 1000
    return elapsed, moves, elapsed - in_games


async def _start_once(sandbox: str) -> tuple[float, float]:
    """(ms to spawn and get `ready`, ms to close) of the random bot in one sandbox mode."""
    spec = dataclasses.replace(random_bot("r", 1), sandbox=sandbox)
    player = ProcessPlayer(spec, TimeControl(startup_ms=10_000, move_ms=10_000))
    t0 = time.perf_counter()
    await player.start()
    t1 = time.perf_counter()
    await player.close()
    return (t1 - t0) * 1000, (time.perf_counter() - t1) * 1000


def startup(starts: int) -> dict[str, list[tuple[float, float]]]:
    """Start-up and close times per mode ("none", and "bwrap" when it works here), interleaved."""
    modes = ["none"] + (["bwrap"] if sandbox_status()[0] == "bwrap" else [])

    async def run():
        times = {m: [] for m in modes}
        for m in modes:
            await _start_once(m)  # warm caches (and the plain mode's watchdog) before timing
        for _ in range(starts):
            for m in modes:
                times[m].append(await _start_once(m))
        return times

    return asyncio.run(run())


def main() -> None:
    """Print per-move figures for the bare pipe and the runner."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="xeri")
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--starts", type=int, default=20, help="bot starts timed per sandbox mode")
    args = parser.parse_args()
    lines = act_messages(args.game, [derive_seed("bench", d) for d in range(args.deals)])
    pipe = bare_pipe(lines)
    total, moves, overhead = runner(args.game, args.deals)
    per_pipe = 1e6 * pipe / len(lines)
    per_move = 1e6 * (total - overhead) / moves
    print(f"game {args.game}: {moves} moves through the runner, {len(lines)} bare round trips")
    print(f"bare pipe round trip        {per_pipe:8.1f} µs/move")
    print(f"runner, in games            {per_move:8.1f} µs/move")
    print(f"runner's own work           {per_move - per_pipe:8.1f} µs/move "
          f"({(per_move - per_pipe) / per_pipe:.2f}x the round trip)")
    print(f"match start/stop (2 bots)   {1000 * overhead:8.1f} ms")
    times = startup(args.starts)
    print(f"sandbox here: {' — '.join(sandbox_status())}")
    for mode, runs in times.items():
        ready = statistics.median(r for r, _ in runs)
        close = statistics.median(c for _, c in runs)
        print(f"bot start to ready, {mode:5s}   {ready:8.1f} ms median ({args.starts} starts), "
              f"close {close:.1f} ms")
    if "bwrap" in times:
        extra = (statistics.median(r for r, _ in times["bwrap"])
                 - statistics.median(r for r, _ in times["none"]))
        print(f"sandbox's cost per start    {extra:8.1f} ms (goal ≤ 20 ms)")


if __name__ == "__main__":
    main()

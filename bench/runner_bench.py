"""The runner's wall time per move against a same-core echo of the same lines, in one run.

Everything here is pinned to one core (this process and the children it starts), so neither side
pays a cross-core wake-up, whose cost swings with where the scheduler puts the processes.

1. Echo: the `act` lines of real games, exactly as the runner sends them, go one at a time to a
   child that parses each with orjson and answers the first legal action (orjson): the pipe round
   trip plus the least a bot can do.
2. Runner: the same games through `run_match`, both seats played by a protocol bot doing the same
   work as the echo child (orjson parse, first legal action).
The ratio runner / echo is what a move costs through Arena over what the pipe and the bot cost
anyway; the two alternate, `--repeats` times, and the median and spread of the ratio are printed.
3. Start-up: the random bot spawned to `ready` and closed, plain and in the bwrap sandbox, and
   (as root) as the runner and as a uid of its own (`bot_user`), alternating so all see the same
   machine load; the differences are the sandbox's and the uid drop's cost.

    python bench/runner_bench.py [--game xeri ...] [--deals 10] [--repeats 5] [--starts 20]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import statistics
import subprocess
import sys
import time

from arena.cards import derive_seed
from arena.games import game_names, new_game
from arena.match import GamePlan, MatchSpec, run_match
from arena.players.base import BotSpec, random_bot
from arena.players.launch import sandbox_status
from arena.players.process import ProcessPlayer
from arena.protocol import ActRequest, TimeControl
from arena.scheduling import seatings

# The echo child: parse each line, answer its first legal action. Both sides use orjson.
ECHO = (
    "import orjson,sys\n"
    "r, w = sys.stdin.buffer, sys.stdout.buffer\n"
    "for line in r:\n"
    "    m = orjson.loads(line)\n"
    "    w.write(orjson.dumps({'type': 'action', 'request_id': m['request_id'],"
    " 'action': m['legal_actions'][0]}) + b'\\n')\n"
    "    w.flush()\n"
)

# A protocol bot doing the echo's work per move: orjson parse, first legal action, orjson answer.
FIRST_BOT = (
    "import orjson,sys\n"
    "r, w = sys.stdin.buffer, sys.stdout.buffer\n"
    "for line in r:\n"
    "    m = orjson.loads(line)\n"
    "    kind = m['type']\n"
    "    if kind == 'act':\n"
    "        w.write(orjson.dumps({'type': 'action', 'request_id': m['request_id'],"
    " 'action': m['legal_actions'][0]}) + b'\\n')\n"
    "    elif kind == 'hello':\n"
    "        w.write(b'{\"type\":\"ready\",\"name\":\"first\",\"version\":\"1\"}\\n')\n"
    "    elif kind == 'bye':\n"
    "        break\n"
    "    else:\n"
    "        continue\n"
    "    w.flush()\n"
)

TIME = TimeControl(startup_ms=10_000, move_ms=10_000)


def pin_to_one_core() -> int:
    """Pin this process (and so every child it starts) to the last CPU it may use; that CPU."""
    cpu = sorted(os.sched_getaffinity(0))[-1]
    os.sched_setaffinity(0, {cpu})
    return cpu


def plans(deals: int, seats: int) -> tuple[GamePlan, ...]:
    """The games of the bench match: `deals` deals, each played in every seat rotation."""
    return tuple(GamePlan(f"g{d}-{r}", i, d, r, derive_seed("runner_bench", d), seating)
                 for i, (d, r, seating) in enumerate(seatings(seats, deals, True)))


def act_lines(game: str, seats: int, games: tuple[GamePlan, ...]) -> list[bytes]:
    """The act lines of the bench match's games as the runner builds them (first legal action)."""
    lines, request_id = [], 0
    for plan in games:
        state = new_game(game, {}, seats, plan.seed)
        while acting := state.to_act():
            actions = {}
            for seat in acting:
                legal = state.legal_actions(seat)
                request_id += 1
                lines.append(ActRequest(plan.game_id, request_id, state.observation_json(seat),
                                        legal, TIME.move_ms).line())
                actions[seat] = legal[0]
            state.apply(actions)
    return lines


def echo(lines: list[bytes]) -> float:
    """Seconds per line to send each line to the echo child and read its answer."""
    child = subprocess.Popen([sys.executable, "-c", ECHO], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, bufsize=0)
    reader = child.stdout
    for line in lines[:50]:  # warm up the child (imports, caches) before timing
        child.stdin.write(line)
        reader.readline()
    started = time.perf_counter()
    for line in lines:
        child.stdin.write(line)
        reader.readline()
    elapsed = time.perf_counter() - started
    child.stdin.close()
    child.wait()
    return elapsed / len(lines)


def runner(game: str, seats: int, games: tuple[GamePlan, ...]) -> tuple[float, int]:
    """Seconds per move inside the games of one run_match of FIRST_BOT players, and the moves."""
    bots = tuple(BotSpec(name=f"first-{i}", command=(sys.executable, "-c", FIRST_BOT))
                 for i in range(seats))
    result = run_match(MatchSpec("bench", game, {}, bots, games, TIME))
    moves = sum(len(g.moves) for g in result.games)
    in_games = sum(g.duration_ms for g in result.games) / 1000
    return in_games / moves, moves


def per_move(game: str, seats: int, deals: int, repeats: int) -> dict:
    """Echo and runner µs per move over `repeats` alternating runs, and their ratios."""
    games = plans(deals, seats)
    lines = act_lines(game, seats, games)
    echoes, runs, ratios = [], [], []
    moves = 0
    for _ in range(repeats):
        e = echo(lines)
        r, moves = runner(game, seats, games)
        echoes.append(1e6 * e)
        runs.append(1e6 * r)
        ratios.append(r / e)
    return {"game": game, "seats": seats, "moves": moves, "bytes": sum(map(len, lines)) / len(lines),
            "echo": echoes, "runner": runs, "ratio": ratios}


async def _start_once(mode: str) -> tuple[float, float]:
    """(ms to spawn and get `ready`, ms to close) of the random bot in one "sandbox/user" mode."""
    sandbox, user = mode.split("/")
    spec = dataclasses.replace(random_bot("r", 1), sandbox=sandbox, user=user)
    player = ProcessPlayer(spec, TIME)
    t0 = time.perf_counter()
    await player.start()
    t1 = time.perf_counter()
    await player.close()
    return (t1 - t0) * 1000, (time.perf_counter() - t1) * 1000


def startup(starts: int) -> dict[str, list[tuple[float, float]]]:
    """Start-up and close times per mode ("none", and "bwrap" when it works here), interleaved."""
    sandboxes = ["none"] + (["bwrap"] if sandbox_status()[0] == "bwrap" else [])
    users = ["runner", "seat"] if os.geteuid() == 0 else ["runner"]
    modes = [f"{s}/{u}" for s in sandboxes for u in users]

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
    """Print per-move figures of every game, then bot start-up figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="only this game (repeatable)")
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--starts", type=int, default=20, help="bot starts timed per sandbox mode")
    args = parser.parse_args()
    cpu = pin_to_one_core()
    print(f"pinned to CPU {cpu}; {args.deals} deals × {args.seats} rotations per game, "
          f"{args.repeats} alternating repeats (median, min–max)")
    print(f"{'game':22s} {'moves':>6s} {'bytes/act':>9s} {'echo µs':>16s} {'runner µs':>18s} "
          f"{'runner / echo':>18s}")
    for game in args.game or game_names():
        f = per_move(game, args.seats, args.deals, args.repeats)
        cells = []
        for key, fmt in (("echo", "{:.1f}"), ("runner", "{:.1f}"), ("ratio", "{:.2f}")):
            values = f[key]
            cells.append(f"{fmt.format(statistics.median(values))} "
                         f"({fmt.format(min(values))}–{fmt.format(max(values))})")
        print(f"{game:22s} {f['moves']:6d} {f['bytes']:9.0f} {cells[0]:>16s} {cells[1]:>18s} "
              f"{cells[2]:>18s}", flush=True)
    print("goal: runner / echo ≤ 2 for every game")
    if args.starts:
        times = startup(args.starts)
        print(f"sandbox here: {' — '.join(sandbox_status())}")
        for mode, runs in times.items():
            ready = statistics.median(r for r, _ in runs)
            close = statistics.median(c for _, c in runs)
            print(f"bot start to ready, {mode:12s} {ready:8.1f} ms median ({args.starts} starts), "
                  f"close {close:.1f} ms")

        def ready(mode):
            return statistics.median(r for r, _ in times[mode])

        if "bwrap/runner" in times:
            extra = ready("bwrap/runner") - ready("none/runner")
            print(f"sandbox's cost per start          {extra:8.1f} ms (goal ≤ 20 ms)")
        for sandbox in ("none", "bwrap"):
            if f"{sandbox}/seat" in times:
                extra = ready(f"{sandbox}/seat") - ready(f"{sandbox}/runner")
                print(f"a uid of its own, {sandbox:5s}, per start {extra:8.1f} ms (goal ≤ 20 ms)")


if __name__ == "__main__":
    main()

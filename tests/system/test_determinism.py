"""Same config and seed, same games: two runs of every format record the same pairings and games.

Each test builds two runs that must agree — two fresh databases, a run whose results come back in
another order (as on Ray), an interrupted run and its resume, two processes with different string
hashing — and compares everything a run records that does not depend on time: rounds and byes,
match points, game seeds, seats, moves, results and ratings. A different seed must change them.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import textwrap
from collections import deque
from pathlib import Path

import pytest

from arena.config import load_config, load_ladder_config
from arena.executors import Executor, SerialExecutor, execute
from arena.ladder import Ladder
from arena.registry import Registry
from arena.scheduling import History, MatchScore, Pairing, Swiss
from arena.store import Store
from arena.tournament import run_tournament
from tests.support.config import ladder_toml
from tests.support.paths import BOTS, ROOT

RANDOM = """
[[bots]]
manifest = "{bots}/random.toml"
name = "random-{n}"
args = ["{n}"]
"""

XERI_OPTIONS = """
[options]
rounds = 1
"""

ROUND_ROBIN = """
name = "rr"
game = "xeri"
format = "round_robin"
seed = {seed}
deals = 2
duplicate = true
""" + XERI_OPTIONS

SWISS_2P = """
name = "swiss2"
game = "xeri"
format = "swiss"
rounds = 3
seed = {seed}
deals = 1
""" + XERI_OPTIONS

SWISS_4P = """
name = "swiss4"
game = "crosswalk"
format = "swiss"
seats = 4
rounds = 3
seed = {seed}
deals = 2
duplicate = false
"""

GAUNTLET = """
name = "gauntlet"
game = "xeri"
format = "gauntlet"
candidates = ["xeri_heuristic"]
seed = {seed}
deals = 3
duplicate = false
[options]
rounds = 1
[[bots]]
manifest = "{bots}/xeri_heuristic.toml"
"""

EVENT = """
name = "event"
seed = {seed}
deals = 1
[[stages]]
name = "xeri-swiss"
game = "xeri"
format = "swiss"
rounds = 2
[stages.options]
rounds = 1
[[stages]]
name = "crosswalk-rr"
game = "crosswalk"
format = "round_robin"
seats = 3
duplicate = false
"""

FORMATS = {  # config, random bots
    "round_robin": (ROUND_ROBIN, 3),
    "swiss_2_seats": (SWISS_2P, 5),
    "swiss_4_seats": (SWISS_4P, 9),
    "gauntlet": (GAUNTLET, 3),
    "event": (EVENT, 4),
}


def write_config(tmp_path: Path, fmt: str, seed: int = 7) -> Path:
    text, bots = FORMATS[fmt]
    body = text + "".join(RANDOM.format(bots=BOTS, n=n) for n in range(1, bots + 1))
    path = tmp_path / f"{fmt}-{seed}.toml"
    path.write_text(textwrap.dedent(body).format(bots=BOTS, seed=seed))
    return path


def play(path: Path, db: Path, executor: Executor | None = None, resume: bool = False):
    config, bots, rows = load_config(path)
    return run_tournament(config, bots, rows, Store(db), executor or SerialExecutor(pin=False),
                          resume=resume)


def recorded(db: Path) -> dict:
    """What a run recorded, without timestamps, durations, row ids or workers."""
    conn = Store(db).db.conn
    queries = {
        "rounds": "select stage, round, tables, byes from rounds order by 1, 2",
        "byes": "select stage, round, bot, points from byes order by 1, 2, 3",
        "matches": "select id, stage, round, table_no, bots, status from matches order by 1",
        "points": "select match_id, position, bot, game_points, match_points from match_bots "
                  "order by 1, 2",
        "deals": "select match_id, deal, bot, points, games from deals order by 1, 2, 3",
        "games": "select id, match_id, ordinal, deal, rotation, seed, termination, culprit_seat, "
                 "steps from games order by 1",
        "seats": "select game_id, seat, bot, team, score, rank from game_seats order by 1, 2",
        "moves": "select game_id, ply, step, seat, action from moves order by 1, 2",
        "ratings": "select stage, method, bot, round(rating, 9), games, lo, hi from ratings "
                   "order by 1, 2, 3",
        "ladder_tables": "select number, format, bots, match_id, reason, status "
                         "from ladder_tables order by 1",
        "ladder_entries": "select key, status, joined_tick, retired_tick from ladder_entries "
                          "order by 1",
    }
    return {name: conn.execute(sql).fetchall() for name, sql in queries.items()}


class LastFirst(Executor):
    """Plays everything submitted, then hands the outcomes back newest first.

    A stand-in for Ray, where a round's matches finish in any order: the driver must record the
    same rounds whatever order the results come in.
    """

    name = "last-first"

    def __init__(self):
        self.queue: deque = deque()
        self.done: list = []

    def capacity(self) -> int:
        return 8

    def submit(self, spec) -> None:
        self.queue.append(spec)

    def in_flight(self) -> int:
        return len(self.queue) + len(self.done)

    def next_outcome(self):
        if not self.done:
            self.done = [execute(spec) for spec in self.queue]
            self.queue.clear()
        return self.done.pop()


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_two_runs_of_a_config_record_the_same_pairings_and_games(tmp_path, fmt):
    path = write_config(tmp_path, fmt)
    play(path, tmp_path / "a.db")
    play(path, tmp_path / "b.db")
    a, b = recorded(tmp_path / "a.db"), recorded(tmp_path / "b.db")
    assert a["rounds"] and a["games"] and a["moves"] and a["ratings"]
    assert a == b


def test_a_different_seed_gives_different_deals_and_pairings(tmp_path):
    play(write_config(tmp_path, "swiss_2_seats", seed=7), tmp_path / "a.db")
    play(write_config(tmp_path, "swiss_2_seats", seed=8), tmp_path / "b.db")
    a, b = recorded(tmp_path / "a.db"), recorded(tmp_path / "b.db")
    assert not {g[5] for g in a["games"]} & {g[5] for g in b["games"]}  # no deal seed in common
    assert a["rounds"][0] != b["rounds"][0]  # round 1 follows the seeded initial order
    assert a["moves"] != b["moves"]


def test_swiss_rounds_do_not_depend_on_the_order_results_come_in():
    # At 4 seats match points are thirds, whose float sum depends on the order of the matches:
    # before scores were summed exactly, about one history in ten paired differently here.
    swiss = Swiss()
    for trial in range(60):
        rng = random.Random(trial)
        entrants, seats = rng.choice([(9, 4), (12, 4), (13, 4), (8, 4), (10, 3)])
        pairing = Pairing(entrants=entrants, seats=seats, seed=trial, rounds=4)
        rounds: list = []
        matches: list = []
        for number in range(1, 4):
            rnd = swiss.next_round(pairing, History(tuple(rounds), tuple(matches)))
            rounds.append(rnd)
            for table in rnd.tables:
                points = [i / (seats - 1) for i in range(seats)]
                rng.shuffle(points)
                matches.append(MatchScore(number, table.number, table.bots, tuple(points),
                                          tuple(points), 1))
            shuffled = list(matches)
            rng.shuffle(shuffled)
            in_order = swiss.next_round(pairing, History(tuple(rounds), tuple(matches)))
            assert swiss.next_round(pairing, History(tuple(rounds), tuple(shuffled))) == in_order, \
                (trial, number)


@pytest.mark.parametrize("fmt", ["swiss_4_seats", "round_robin"])
def test_results_in_another_order_record_the_same_games(tmp_path, fmt):
    path = write_config(tmp_path, fmt)
    play(path, tmp_path / "serial.db")
    play(path, tmp_path / "reversed.db", LastFirst())
    assert recorded(tmp_path / "serial.db") == recorded(tmp_path / "reversed.db")


@pytest.mark.parametrize("fmt", ["swiss_4_seats", "gauntlet"])
def test_an_interrupted_and_resumed_run_equals_an_uninterrupted_one(tmp_path, fmt):
    path = write_config(tmp_path, fmt)
    play(path, tmp_path / "full.db")

    class StopAfter(SerialExecutor):
        outcomes = 0

        def next_outcome(self):
            outcome = super().next_outcome()
            self.outcomes += 1
            if self.outcomes == 3:  # a Ctrl-C as the third match's result comes in
                raise KeyboardInterrupt
            return outcome

    with pytest.raises(KeyboardInterrupt):
        play(path, tmp_path / "part.db", StopAfter(pin=False))
    resumed = play(path, tmp_path / "part.db", resume=True)
    assert resumed.matches_skipped == 2
    assert recorded(tmp_path / "part.db") == recorded(tmp_path / "full.db")


def test_runs_under_different_string_hashing_record_the_same_games(tmp_path):
    # Two processes: a set or dict of names iterated, or hash() of a string, would differ here.
    path = write_config(tmp_path, "swiss_2_seats")
    for hashseed, db in (("1", "a.db"), ("2", "b.db")):
        subprocess.run(
            [sys.executable, "-m", "arena", "run", str(path), "--db", str(tmp_path / db),
             "--executor", "serial"],
            check=True, capture_output=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": hashseed})
    a, b = recorded(tmp_path / "a.db"), recorded(tmp_path / "b.db")
    assert a["games"] and a == b


LADDER = ladder_toml(time={"move_ms": 3000}, matchmaking={"placement_games": 2},
                     leaderboard={"every_tables": 5, "samples": 10})


def ladder_bots(tmp_path: Path) -> Path:
    """Three registry bot folders (two random bots and the Xeri heuristic) under tmp_path/src."""
    sources = tmp_path / "src"
    for name, script, args in (("alpha", "random_bot.py", ', "1"'), ("beta", "random_bot.py", ', "2"'),
                               ("gamma", "xeri_bot.py", "")):
        folder = sources / name
        folder.mkdir(parents=True)
        for f in (script, "arenabot.py"):
            shutil.copy(BOTS / f, folder / f)
        (folder / "bot.toml").write_text(
            f'name = "{name}"\nversion = "1"\ncommand = ["python3", "{script}"{args}]\n'
            'games = ["xeri"]\n')
    return sources


def new_ladder(tmp_path: Path, db: Path):
    """The LADDER config, with the three bots registered in `db`."""
    sources = tmp_path / "src" if (tmp_path / "src").exists() else ladder_bots(tmp_path)
    registry = Registry(db)
    for name in ("alpha", "beta", "gamma"):
        registry.add(sources / name)
    config_path = tmp_path / "lad.toml"
    config_path.write_text(LADDER)
    return load_ladder_config(config_path)


class Wide(SerialExecutor):
    """A serial executor that says it keeps four matches in flight, as a Ray executor would."""

    def capacity(self) -> int:
        return 4


def test_two_ladders_for_a_fixed_number_of_games_choose_the_same_tables(tmp_path):
    for db in (tmp_path / "a.db", tmp_path / "b.db"):
        config = new_ladder(tmp_path, db)
        Ladder(config, Store(db), Registry(db), SerialExecutor(pin=False), games=16).run()
    a, b = recorded(tmp_path / "a.db"), recorded(tmp_path / "b.db")
    assert len(a["ladder_tables"]) >= 8 and a["games"]
    assert a == b


def test_a_ladder_resumed_on_a_wider_executor_makes_the_choices_it_started_with(tmp_path):
    # The tables in flight F decide which results a choice rests on; F is the executor's capacity
    # unless the config sets it, so a resume on another executor (serial, then Ray) must keep the F
    # the ladder started with, or its replay chooses other tables and is refused.
    full, part = tmp_path / "full.db", tmp_path / "part.db"
    config = new_ladder(tmp_path, full)
    Ladder(config, Store(full), Registry(full), SerialExecutor(pin=False), games=24).run()
    config = new_ladder(tmp_path, part)
    Ladder(config, Store(part), Registry(part), SerialExecutor(pin=False), games=12).run()
    Ladder(config, Store(part), Registry(part), Wide(pin=False), games=12).run(resume=True)
    a, b = recorded(full), recorded(part)
    assert len(a["ladder_tables"]) == len(b["ladder_tables"]) >= 12
    assert a == b

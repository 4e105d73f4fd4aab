"""Every shipped config runs end to end serially and on Ray with identical records; a Ray worker
killed mid-tournament costs only its match, which is replayed."""

from __future__ import annotations

import textwrap

import pytest

from arena.config import TimeConfig, load_config
from arena.executors import RayExecutor, SerialExecutor
from arena.store import Store
from arena.tournament import run_tournament
from tests.support.bots import KILL_TRIGGER
from tests.support.paths import BOTS

CONFIGS = BOTS.parent / "configs"
FORMAT_CONFIGS = ["quickstart", "swiss_xeri", "swiss_crosswalk_4p", "gauntlet_crossfire",
                  "event_all_games"]


def record(store: Store) -> dict:
    """What must not depend on the executor: pairings, byes, games, moves, scores, ratings."""
    queries = {
        "rounds": "select stage, round, tables, byes from rounds order by 1, 2",
        "matches": "select id, stage, round, table_no, bots, status, attempts from matches order by id",
        "match_bots": "select match_id, position, bot, game_points, match_points from match_bots "
                      "order by 1, 2",
        "deals": "select match_id, deal, bot, points from deals order by 1, 2, 3",
        "games": "select id, ordinal, seed, termination, culprit_seat from games order by id",
        "seats": "select game_id, seat, bot, score, rank from game_seats order by 1, 2",
        "moves": "select game_id, ply, seat, action from moves order by 1, 2",
        "ratings": "select stage, bot, rating, games from ratings order by 1, 2",
    }
    return {k: store.db.execute(q).fetchall() for k, q in queries.items()}


def unusual_games(store: Store) -> list:
    """The games that did not end normally, with what ended them (to name a difference)."""
    return store.db.execute("select id, termination, culprit_bot, detail, substr(evidence, 1, 2000) "
                            "from games where termination != 'normal' order by id").fetchall()


@pytest.fixture(scope="module")
def ray_executor():
    ex = RayExecutor(workers=2)
    yield ex
    ex.close()


@pytest.mark.parametrize("name", FORMAT_CONFIGS)
def test_shipped_config_runs_serially_and_on_ray_with_identical_records(name, ray_executor):
    config, bots, rows = load_config(CONFIGS / f"{name}.toml")
    # A patient clock: the claim is about where matches run, and a move a loaded CI machine
    # delayed past 2 s would end one run's game as a timeout and not the other's.
    config = config.model_copy(update={"time": TimeConfig(startup_ms=60_000, move_ms=30_000)})
    serial, ray = Store(":memory:"), Store(":memory:")
    a = run_tournament(config, bots, rows, serial, SerialExecutor())
    b = run_tournament(config, bots, rows, ray, ray_executor)
    assert a.games_played == b.games_played > 0
    got, want = record(ray), record(serial)
    assert got["games"] and got["rounds"]
    assert got == want, {"serial": unusual_games(serial), "ray": unusual_games(ray)}
    assert serial.tournament()["status"] == ray.tournament()["status"] == "finished"


KILLER = """
name = "killer"
game = "xeri"
seed = 5
deals = 2
[options]
rounds = 1
[[bots]]
name = "killer"
python = "tests.support.bots:KillOnce"
[[bots]]
name = "first"
python = "tests.support.bots:FirstLegal"
[[bots]]
name = "random"
python = "tests.support.bots:SeededRandom"
"""


def test_a_killed_ray_worker_costs_only_its_match_which_is_replayed(tmp_path, ray_executor):
    path = tmp_path / "k.toml"
    path.write_text(textwrap.dedent(KILLER))
    config, bots, rows = load_config(path)
    clean = Store(":memory:")
    run_tournament(config, bots, rows, clean, SerialExecutor())  # no trigger: nobody is killed
    store = Store(":memory:")
    KILL_TRIGGER.write_text("kill")
    try:
        run = run_tournament(config, bots, rows, store, ray_executor)
    finally:
        KILL_TRIGGER.unlink(missing_ok=True)
    assert run.errors == 1
    errors = store.match_errors(run.tournament_id)
    assert [e["kind"] for e in errors] == ["worker_died"]
    replayed = errors[0]["match_id"]
    assert store.db.execute("select status, attempts from matches where id = ?",
                            [replayed]).fetchone() == ("finished", 2)
    got, want = record(store), record(clean)
    # Apart from the attempt count of the replayed match, the record is the uninterrupted one.
    got["matches"] = [m[:-1] + (1,) if m[0] == replayed else m for m in got["matches"]]
    assert got == want

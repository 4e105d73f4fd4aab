"""End to end: round robins of real subprocess bots through the serial executor and through Ray."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from arena.config import load_config
from arena.errors import ConfigError, StoreError
from arena.executors import RayExecutor, SerialExecutor
from arena.replay import replay
from arena.store import Store
from arena.tournament import run_tournament
from tests.support.config import CONFIG, write_config
from tests.support.paths import FAKES


def play(path: Path, store: Store, executor, resume: bool = False):
    config, bots, rows = load_config(path)
    return run_tournament(config, bots, rows, store, executor, resume=resume)


def snapshot(store: Store, tid: int) -> dict:
    """Everything that must not depend on the executor: games, seats, moves, ratings."""
    db = store.db
    return {
        "games": db.execute(
            "select id, ordinal, seed, termination, culprit_seat from games "
            "where tournament_id = ? order by id", [tid]).fetchall(),
        "seats": db.execute(
            "select s.game_id, s.seat, s.bot, s.score, s.rank from game_seats s "
            "join games g on g.id = s.game_id where g.tournament_id = ? order by 1, 2", [tid]).fetchall(),
        "moves": db.execute(
            "select m.game_id, m.ply, m.seat, m.action from moves m join games g on g.id = m.game_id "
            "where g.tournament_id = ? order by 1, 2", [tid]).fetchall(),
        "ratings": db.execute(
            "select bot, rating, games, wins, draws, losses from ratings where tournament_id = ? "
            "order by bot", [tid]).fetchall(),
        "history": db.execute(
            "select ordinal, bot, before, after from rating_history where tournament_id = ? "
            "order by 1, 2", [tid]).fetchall(),
    }


@pytest.fixture(scope="module")
def ray_executor():
    ex = RayExecutor(num_cpus=2)
    yield ex
    ex.close()


def test_serial_and_ray_give_identical_games_and_ratings(tmp_path, ray_executor):
    path = write_config(tmp_path)
    serial_store, ray_store = Store(tmp_path / "serial.db"), Store(tmp_path / "ray.db")
    s = play(path, serial_store, SerialExecutor())
    r = play(path, ray_store, ray_executor)
    assert s.games_played == r.games_played == 3 * 4  # 3 pairings x 2 deals x 2 seatings
    a, b = snapshot(serial_store, s.tournament_id), snapshot(ray_store, r.tournament_id)
    assert a["games"] and a["moves"] and a["ratings"]
    assert a == b
    # The heuristic beats both random bots.
    assert s.ratings[0]["bot"] == "xeri_heuristic"


def test_stored_games_replay_exactly(tmp_path):
    store = Store(tmp_path / "a.db")
    run = play(write_config(tmp_path), store, SerialExecutor())
    ids = [r[0] for r in store.db.execute("select id from games where tournament_id = ?",
                                          [run.tournament_id]).fetchall()]
    for game_id in ids:
        state, game = replay(store, game_id)
        assert state.is_over()
        assert list(state.result().scores) == [s["score"] for s in game["seats"]]


def test_replay_detects_a_tampered_record(tmp_path):
    store = Store(tmp_path / "a.db")
    play(write_config(tmp_path), store, SerialExecutor())
    game_id = store.db.execute("select id from games limit 1").fetchone()[0]
    store.db.execute("update game_seats set score = score + 1 where game_id = ? and seat = 0", [game_id])
    with pytest.raises(StoreError, match="replay"):
        replay(store, game_id)


def test_resume_skips_recorded_matches_and_equals_a_full_run(tmp_path):
    path = write_config(tmp_path)
    full = Store(tmp_path / "full.db")
    f = play(path, full, SerialExecutor())

    class StopAfterOne(SerialExecutor):
        outcomes = 0

        def next_outcome(self):
            outcome = super().next_outcome()
            self.outcomes += 1
            if self.outcomes == 2:  # a Ctrl-C while the second match's result comes in
                raise KeyboardInterrupt
            return outcome

    partial = Store(tmp_path / "partial.db")
    with pytest.raises(KeyboardInterrupt):
        play(path, partial, StopAfterOne())
    assert partial.tournament()["status"] == "interrupted"
    assert len(partial.recorded_matches(1)) == 1
    assert partial.db["leases"].count == 0
    resumed = play(path, partial, SerialExecutor(), resume=True)
    assert resumed.matches_skipped == 1 and resumed.matches_played == 2
    assert partial.tournament()["status"] == "finished"
    assert snapshot(partial, 1) == snapshot(full, f.tournament_id)


def test_resume_refuses_a_changed_config(tmp_path):
    store = Store(tmp_path / "a.db")
    play(write_config(tmp_path), store, SerialExecutor())
    changed = write_config(tmp_path, CONFIG.replace("seed = 7", "seed = 8"))
    with pytest.raises(ConfigError, match="config differs"):
        play(changed, store, SerialExecutor(), resume=True)


def test_a_crashing_bot_forfeits_and_the_tournament_completes(tmp_path):
    fakes = FAKES
    text = CONFIG + textwrap.dedent(f"""
    [[bots]]
    name = "crasher"
    command = ["python3", "misbehaving_bot.py", "crash", "5"]
    workdir = "{fakes}"
    """)
    store = Store(tmp_path / "a.db")
    run = play(write_config(tmp_path, text), store, SerialExecutor())
    assert run.games_played == 6 * 4
    fails = store.failures(run.tournament_id)
    assert fails and {f["culprit_bot"] for f in fails} == {"crasher"}
    # Three crashes per match spend the failure budget (3): the fourth game is forfeited unplayed.
    assert [f["termination"] for f in fails] == ["crash", "crash", "crash", "failure_budget"] * 3
    assert all(f["evidence"] == "exit code 3" for f in fails if f["termination"] == "crash")
    others = store.db.execute(
        "select count(*) from games g where g.tournament_id = ? and g.termination = 'normal' "
        "and not exists (select 1 from game_seats s where s.game_id = g.id and s.bot = 'crasher')",
        [run.tournament_id]).fetchone()[0]
    assert others == 3 * 4
    table = {r["bot"]: r for r in run.ratings}
    assert table["crasher"]["losses"] == 12 and table["crasher"]["wins"] == 0


def test_games_per_pairing_sets_the_deals(tmp_path):
    config, _, _ = load_config(write_config(tmp_path, CONFIG.replace("deals = 2", "games_per_pairing = 6")))
    assert config.stages[0].deals == 3


@pytest.mark.parametrize("text, message", [
    ('name = "x"\ngame = "nope"\n[[bots]]\ncommand=["a"]\nname="a"\n[[bots]]\ncommand=["b"]\nname="b"',
     "unknown game 'nope'"),
    (CONFIG.replace("rounds = 1", "rounds = 1\ncolour = 3"), "unknown option 'colour'"),
    (CONFIG.replace("rounds = 1", 'jack_xeri = "sometimes"'), "jack_xeri"),
    (CONFIG.replace("deals = 2", "deals = 0"), "deals"),
    (CONFIG.replace("seed = 7", "sede = 7"), "sede"),
    (CONFIG.replace('name = "random-b"', 'name = "random"'), "unique; repeated: random"),
    (CONFIG.replace("rounds = 1", "rounds = 1\n[[bots]]\nmanifest = \"missing.toml\""), "no such file"),
    (CONFIG.replace("deals = 2", "games_per_pairing = 5"), "not a multiple of 2"),
    (CONFIG.replace('game = "xeri"', 'game = "crossfire"').replace("rounds = 1", ""),
     "bot 'xeri_heuristic' does not play crossfire (its manifest lists: xeri)"),
    (CONFIG.replace("deals = 2", "deals = 2\ngames_per_pairing = 4"), "not both"),
])
def test_bad_configs_are_one_line_errors(tmp_path, text, message):
    store = Store(tmp_path / "a.db")
    with pytest.raises(ConfigError) as info:
        play(write_config(tmp_path, text), store, SerialExecutor())
    assert message in str(info.value) and "\n" not in str(info.value)
    assert store.db["games"].count == 0


MULTI = """
name = "multi"
game = "battlefield_cribbage"
seats = {seats}
seed = 3
deals = 1
[options]
target = 31
{extra}
[[bots]]
manifest = "{bots}/random.toml"
name = "r1"
args = ["1"]
[[bots]]
manifest = "{bots}/random.toml"
name = "r2"
args = ["2"]
[[bots]]
manifest = "{bots}/random.toml"
name = "r3"
args = ["3"]
[[bots]]
manifest = "{bots}/bfc_heuristic.toml"
name = "h"
"""


def test_three_seat_tables_rotate_seats_and_rate_pairwise(tmp_path):
    store = Store(tmp_path / "a.db")
    run = play(write_config(tmp_path, MULTI, seats=3, extra=""), store, SerialExecutor())
    # C(4,3) = 4 tables, one deal each, played once per rotation (3 seats): 12 games.
    assert run.games_played == 12
    rows = store.db.execute(
        "select g.match_id, s.seat, s.bot from game_seats s join games g on g.id = s.game_id"
    ).fetchall()
    by_match: dict = {}
    for match, seat, bot in rows:
        by_match.setdefault(match, {}).setdefault(bot, set()).add(seat)
    for seats_of in by_match.values():  # every bot of a table sits in every seat once
        assert all(s == {0, 1, 2} for s in seats_of.values()) and len(seats_of) == 3
    table = {r["bot"]: r for r in run.ratings}
    # Each bot plays 3 tables x 3 games; each game gives it 2 pairwise results.
    assert all(r["games"] == 9 and r["wins"] + r["draws"] + r["losses"] == 18 for r in table.values())
    assert sum(r["rating"] for r in run.ratings) == pytest.approx(4 * 1500)


def test_team_tables_record_teams_and_share_rating_changes(tmp_path):
    store = Store(tmp_path / "a.db")
    run = play(write_config(tmp_path, MULTI, seats=4, extra="team_mode = true"), store, SerialExecutor())
    assert run.games_played == 4
    for game in store.game_results(run.tournament_id):
        seats = game["seats"]
        assert [s["team"] for s in seats] == [0, 1, 0, 1]
        assert seats[0]["rank"] == seats[2]["rank"] and seats[1]["rank"] == seats[3]["rank"]
        assert seats[0]["score"] == seats[2]["score"]
    # Partners r1 and r3 (entries 0 and 2) always share every rating change.
    table = {r["bot"]: r["rating"] for r in run.ratings}
    assert table["r1"] == pytest.approx(table["r3"]) and table["r2"] == pytest.approx(table["h"])

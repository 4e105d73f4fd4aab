"""The round-by-round driver: formats end to end, validation before writing, runner errors, resume."""

from __future__ import annotations

import json

import pytest

from arena.errors import ConfigError, MatchErrorLimit, StoreError
from arena.executors import SerialExecutor
from arena.scheduling import SCHEDULERS, RoundRobin
from arena.store import Store
from tests.support.config import bots_toml, config_file
from tests.support.paths import BOTS
from tests.support.tournaments import play_config as play

SWISS = """
name = "swiss"
game = "xeri"
format = "swiss"
seed = 4
deals = 1
[options]
rounds = 1
""" + bots_toml(7)


def test_swiss_plays_its_rounds_with_one_bye_each_and_no_rematch(tmp_path, store):
    run = play(config_file(tmp_path, SWISS), store)
    rounds = store.rounds(run.tournament_id, 1)
    assert len(rounds) == 4  # ⌈log2 7⌉ + 1
    pairs = [frozenset(t) for r in rounds for t in r["tables"]]
    assert len(pairs) == len(set(pairs)) == 4 * 3
    byes = [b for r in rounds for b in r["byes"]]
    assert len(byes) == 4 and len(set(byes)) == 4
    rows = list(store.db.query("select bot, points from byes order by round"))
    assert [r["bot"] for r in rows] == byes and all(r["points"] == 1.0 for r in rows)
    # Each match's scores landed with it: one match_bots row per bot, match points summing to 1.
    sums = store.db.execute(
        "select sum(match_points) from match_bots group by match_id").fetchall()
    assert len(sums) == 12 and all(s == (1.0,) for s in sums)


def test_per_deal_pair_scores_are_stored_for_two_seat_matches(tmp_path, store):
    text = SWISS.replace("deals = 1", "deals = 3")
    play(config_file(tmp_path, text), store)
    rows = store.db.execute("select match_id, deal, sum(points), sum(games) from deals "
                            "group by match_id, deal").fetchall()
    assert rows and all(total == 2.0 and games == 4 for _, _, total, games in rows)
    points = {p for (p,) in store.db.execute("select points from deals")}
    assert points <= {0.0, 0.5, 1.0, 1.5, 2.0}


def test_a_resumed_run_detects_pairings_changed_in_the_database(tmp_path):
    store = Store(tmp_path / "a.db")
    path = config_file(tmp_path, SWISS)
    play(path, store)
    store.db.execute("update tournaments set status = 'interrupted'")
    store.db.execute("update stages set status = 'running'")
    store.db.execute("update rounds set tables = replace(tables, 'b1', 'bX') where round = 2")
    store.db.conn.commit()
    with pytest.raises(StoreError, match="round 2: the recorded pairings differ"):
        play(path, store, resume=True)


GAUNTLET = """
name = "g"
game = "xeri"
format = "gauntlet"
candidates = ["b0", "b1"]
seed = 2
deals = 1
[options]
rounds = 1
""" + bots_toml(5)


def test_gauntlet_candidates_play_the_field_only(tmp_path, store):
    run = play(config_file(tmp_path, GAUNTLET), store)
    pairs = [frozenset(json.loads(b)) for (b,) in store.db.execute("select bots from matches")]
    expected = {frozenset({c, f}) for c in ("b0", "b1") for f in ("b2", "b3", "b4")}
    assert sorted(map(sorted, pairs)) == sorted(map(sorted, expected))
    assert run.matches_played == 6


EVENT = f"""
name = "event"
seed = 9
deals = 1

[[stages]]
name = "x"
game = "xeri"
format = "swiss"
rounds = 2
[stages.options]
rounds = 1

[[stages]]
name = "cf"
game = "crossfire"

[[bots]]
manifest = "{BOTS}/xeri_heuristic.toml"
[[bots]]
manifest = "{BOTS}/crossfire_heuristic.toml"
[[bots]]
manifest = "{BOTS}/random.toml"
name = "r1"
args = ["1"]
[[bots]]
manifest = "{BOTS}/random.toml"
name = "r2"
args = ["2"]
"""


def test_an_event_leaves_out_bots_that_do_not_play_a_stage(tmp_path, store):
    play(config_file(tmp_path, EVENT), store)
    stages = store.stages(1)
    assert [s["name"] for s in stages] == ["x", "cf"]
    assert [s["status"] for s in stages] == ["finished", "finished"]
    assert stages[0]["left_out"] == [1] and stages[1]["left_out"] == [0]
    in_x = {b for (b,) in store.db.execute(
        "select distinct s.bot from game_seats s join games g on g.id = s.game_id where g.stage = 1")}
    assert in_x == {"xeri_heuristic", "r1", "r2"}
    # Ratings are per stage: the crossfire bot has no Xeri rating.
    assert {r["bot"] for r in store.ratings(1, stage=1)} == in_x
    assert {r["bot"] for r in store.ratings(1, stage=2)} == {"crossfire_heuristic", "r1", "r2"}


def test_a_single_game_tournament_still_refuses_a_bot_that_does_not_play_it(tmp_path, store):
    text = EVENT.split("[[stages]]")[0] + 'game = "crossfire"\n' + EVENT.split('game = "crossfire"\n')[1]
    with pytest.raises(ConfigError, match="does not play crossfire"):
        play(config_file(tmp_path, text), store)


@pytest.mark.parametrize("text, message", [
    (SWISS.replace("deals = 1", "deals = 100000"), "at most 1000 games per match"),
    (SWISS.replace('format = "swiss"', 'format = "knockout"'), "unknown format 'knockout'"),
    (SWISS.replace('format = "swiss"', 'format = "swiss"\nrounds = 9'), "rounds"),
    (SWISS.replace(bots_toml(7), bots_toml(2)), "swiss needs at least 3 bots"),
    (SWISS.replace('format = "swiss"', 'format = "swiss"\nseeding = ["nobody"]'), "no bot named 'nobody'"),
    (SWISS.replace('format = "swiss"', 'format = "swiss"\ntiebreaks = ["coin"]'), "coin"),
    (GAUNTLET.replace('candidates = ["b0", "b1"]', ""), "candidate"),
    (EVENT.replace('game = "crossfire"', 'game = "chess"'), "unknown game 'chess'"),
    (EVENT.replace('name = "cf"', 'name = "x"'), "stage names must be unique"),
])
def test_invalid_plans_fail_before_anything_is_written(tmp_path, text, message):
    path = tmp_path / "a.db"
    Store(path).db.conn.close()
    before = path.read_bytes()
    store = Store(path)
    with pytest.raises(ConfigError) as info:
        play(config_file(tmp_path, text), store)
    assert message in str(info.value) and "\n" not in str(info.value)
    store.db.conn.close()
    assert path.read_bytes() == before
    assert Store(path).db["tournaments"].count == 0


def test_a_runner_error_is_recorded_retried_and_never_counted(tmp_path, store, monkeypatch):
    from arena import match

    original = match.MatchRunner.play
    failed: list[str] = []

    async def flaky(self, plan):
        if self.spec.match_id.endswith("-r2-m1") and not failed:
            failed.append(self.spec.match_id)
            raise RuntimeError("a bug in the runner")
        return await original(self, plan)

    monkeypatch.setattr(match.MatchRunner, "play", flaky)
    run = play(config_file(tmp_path, SWISS), store)
    assert run.errors == 1 and failed
    row = store.db.execute("select status, attempts from matches where id = ?", failed).fetchone()
    assert row == ("finished", 2)
    errors = store.match_errors(run.tournament_id)
    assert len(errors) == 1 and "RuntimeError: a bug in the runner" in errors[0]["error"]
    # The failed attempt left no games: every finished match has exactly its own games.
    assert store.db.execute("select count(*) from games where match_id = ?", failed).fetchone()[0] == 2


def test_a_match_failing_every_attempt_stops_the_tournament_as_error(tmp_path, store, monkeypatch):
    from arena import match

    async def broken(self, plan):
        if self.spec.match_id.endswith("-r2-m2"):
            raise RuntimeError("always broken")
        return await original(self, plan)

    original = match.MatchRunner.play
    monkeypatch.setattr(match.MatchRunner, "play", broken)
    path = config_file(tmp_path, SWISS)
    with pytest.raises(MatchErrorLimit, match="failed 3 times by runner errors"):
        play(path, store)
    assert store.tournament()["status"] == "error"
    assert store.db.execute("select count(*) from rounds").fetchone()[0] == 2  # round 3 not paired
    assert store.db.execute("select count(*) from match_bots m join matches x on x.id = m.match_id "
                            "where x.status = 'error'").fetchone()[0] == 0
    monkeypatch.setattr(match.MatchRunner, "play", original)  # the bug is fixed: resume
    run = play(path, store, resume=True)
    assert store.tournament()["status"] == "finished"
    assert run.matches_skipped == 3 + 2  # round 1 and round 2's finished matches
    assert store.db.execute("select attempts from matches where id like '%-r2-m2'").fetchone() == (4,)


def test_batched_writes_are_all_or_nothing(store):
    from arena.match import GameRecord, MatchResult
    from arena.store import MatchRecord

    ids = {"a": store.add_bot("a"), "b": store.add_bot("b")}
    tid = store.create_tournament("t", "xeri", "round_robin", 2, 1, {}, {}, list(ids.values()))

    def record(mid: str, gid: str) -> MatchRecord:
        game = GameRecord(gid, 0, 0, 0, 1, ["a", "b"], [[0], [1]], [1, 0], [1, 2], "normal", None,
                          "", "", 1.0)
        return MatchRecord(1, 1, 1, "xeri", {}, MatchResult(mid, [game], {}, 1.0), names=["a", "b"])

    with pytest.raises(Exception):  # noqa: B017 (any error: what matters is nothing written)
        store.record_matches(tid, [record("m1", "g1"), record("m2", "g1")], ids)  # g1 twice
    assert store.db["matches"].count == 0 and store.db["games"].count == 0
    store.record_matches(tid, [record("m1", "g1"), record("m2", "g2")], ids)
    assert store.recorded_matches(tid) == {"m1", "m2"}


class StopAfter(SerialExecutor):
    """A serial executor that raises KeyboardInterrupt as its n-th outcome comes in."""

    def __init__(self, n: int):
        super().__init__(pin=False)
        self.n, self.seen = n, 0

    def next_outcome(self):
        outcome = super().next_outcome()
        self.seen += 1
        if self.seen == self.n:
            raise KeyboardInterrupt
        return outcome


def _record(store: Store) -> list:
    return [store.db.execute(q).fetchall() for q in (
        "select stage, round, tables, byes from rounds order by 1, 2",
        "select id, status from matches order by id",
        "select match_id, position, bot, game_points, match_points from match_bots order by 1, 2",
        "select id, seed, termination from games order by id",
        "select game_id, ply, action from moves order by 1, 2",
        "select stage, bot, rating from ratings order by 1, 2",
        "select stage, status from stages order by 1",
    )]


@pytest.mark.parametrize("stop_at", [1, 2, 4])  # in stage 1, at its last match, in stage 2
def test_an_event_interrupted_anywhere_resumes_to_the_uninterrupted_record(tmp_path, stop_at):
    path = config_file(tmp_path, EVENT)
    full = Store(":memory:")
    play(path, full)
    store = Store(tmp_path / "a.db")
    with pytest.raises(KeyboardInterrupt):
        play(path, store, StopAfter(stop_at))
    assert store.tournament()["status"] == "interrupted"
    play(path, store, resume=True)
    assert _record(store) == _record(full)


# -- round robin schedule versions ----------------------------------------------------------------
ROUND_ROBIN_3 = """
name = "rr3"
game = "crosswalk"
seats = 3
seed = 8
deals = 1
duplicate = false
""" + bots_toml(7)


def _overlaps(store: Store) -> int:
    """Seats beyond one per bot per round, over the recorded rounds."""
    seated = [[b for t in r["tables"] for b in t] for r in store.rounds(1, 1)]
    return sum(len(bots) - len(set(bots)) for bots in seated)


def test_a_round_robin_recorded_before_schedule_versions_resumes_with_its_old_schedule(
        tmp_path, monkeypatch):
    path = config_file(tmp_path, ROUND_ROBIN_3)
    # What an older Arena did: schedule 1 (7 bots at 3 seats: some bot twice in a round), and
    # no "schedule" in the stage's stored config.
    monkeypatch.setitem(SCHEDULERS, "round_robin", RoundRobin(schedule=1))
    old = Store(":memory:")
    play(path, old)
    store = Store(tmp_path / "a.db")
    with pytest.raises(KeyboardInterrupt):
        play(path, store, StopAfter(12))
    monkeypatch.undo()
    store.db.execute("update stages set config = json_remove(config, '$.schedule')")
    store.db.conn.commit()
    play(path, store, resume=True)  # today's Arena: re-derives the recorded rounds, then goes on
    assert _record(store) == _record(old)
    assert _overlaps(old) > 0
    # A new run is dealt the resolvable schedule, and says so in its stored config.
    new = Store(":memory:")
    play(path, new)
    assert _overlaps(new) == 0 and len(new.rounds(1, 1)) == len(old.rounds(1, 1)) == 18
    assert new.stages(1)[0]["config"]["schedule"] == 2


def test_a_schedule_version_this_arena_does_not_know_is_refused_on_resume(tmp_path):
    path = config_file(tmp_path, ROUND_ROBIN_3)
    store = Store(tmp_path / "a.db")
    with pytest.raises(KeyboardInterrupt):
        play(path, store, StopAfter(3))
    store.db.execute("update stages set config = json_set(config, '$.schedule', 9)")
    store.db.conn.commit()
    with pytest.raises(ConfigError, match=r"cannot resume stage 1 \('crosswalk'\): round robin "
                                          r"schedule version 9 is not one this Arena knows"):
        play(path, store, resume=True)

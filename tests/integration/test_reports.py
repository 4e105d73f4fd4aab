"""Reports and `arena tournament ...`: standings, pairings, deals, progress, cancel and export.

The databases come from real tournaments played through the driver with in-process bots (fast,
no subprocesses), except where a state the driver only passes through (a live lease, a pace) is
built by hand.
"""

from __future__ import annotations

import csv
import io
import json
import os
import socket
import textwrap
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena import reports
from arena.cli import app
from arena.config import load_config
from arena.errors import ConfigError
from arena.executors import SerialExecutor
from arena.match import GameRecord, MatchResult, Move
from arena.store import Lease, MatchRecord, Store
from arena.store.views import TournamentProgress, TournamentView
from arena.tournament import run_tournament
from tests.support.config import python_bot, tournament_toml
from tests.support.paths import BOTS

runner = CliRunner()


class Grumpy:
    """In-process bot that raises on every move; its message carries rich markup and a formula."""

    def choose(self, observation, legal_actions):
        raise ValueError('[bold]=HYPERLINK("http://x")')


ROUND_ROBIN = tournament_toml(name="rr", seed=3, deals=2, options={"rounds": 1}, bots=[
    python_bot("first", "tests.support.bots:FirstLegal"), python_bot("=cmd"),
    python_bot("[red]x", "test_reports:Grumpy")])

EVENT = """
name = "ev"
seed = 5
deals = 1
[[stages]]
name = "x"
game = "xeri"
[stages.options]
rounds = 1
[[stages]]
name = "cf"
game = "crossfire"
[[bots]]
manifest = "{bots}/xeri_heuristic.toml"
[[bots]]
name = "first"
python = "tests.support.bots:FirstLegal"
[[bots]]
name = "rand"
python = "tests.support.bots:SeededRandom"
"""


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).format(bots=BOTS))
    return path


def play(config: Path, db: Path, executor=None) -> int:
    cfg, bots, rows = load_config(config)
    return run_tournament(cfg, bots, rows, Store(db), executor or SerialExecutor()).tournament_id


def invoke(*args: str, db: Path):
    return runner.invoke(app, ["tournament", *args, "--db", str(db)])


def show_json(db: Path, *args: str) -> dict:
    out = invoke("show", *args, "--format", "json", db=db)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def rr(tmp_path_factory) -> Path:
    """A finished 3-bot round robin: 3 rounds of one match, 4 games each; "[red]x" always crashes."""
    base = tmp_path_factory.mktemp("rr")
    db = base / "rr.db"
    play(write(base / "rr.toml", ROUND_ROBIN), db)
    return db


# -- list, show, status on a finished round robin ---------------------------------------------------


def test_list_names_each_tournament_with_its_counts(rr):
    out = invoke("list", db=rr)
    assert out.exit_code == 0, out.output
    line = next(line for line in out.output.splitlines() if " rr " in line)
    assert "finished" in line and "12" in line and "3" in line.split("finished")[1]


def test_show_gives_standings_consistent_with_pairings_and_deals(rr):
    report = show_json(rr)
    (stage,) = report["stages"]
    assert report["event"] is False and report["overall"] is None
    assert stage["tiebreaks"] == ["direct_encounter", "sonneborn_berger", "game_points"]
    assert [len(r["tables"]) for r in stage["pairings"]] == [1, 1, 1]
    tables = [t for r in stage["pairings"] for t in r["tables"]]
    assert all(t["status"] == "finished" and t["games"] == 4 for t in tables)
    # Standings must add up the per-match points shown in the pairings.
    points: dict[str, float] = {}
    for t in tables:
        for b in t["bots"]:
            points[b["bot"]] = points.get(b["bot"], 0) + b["match_points"]
    assert {r["bot"]: r["match_points"] for r in stage["standings"]} == points
    by_bot = {r["bot"]: r for r in stage["standings"]}
    # The crasher forfeits every game, so it loses both its matches and ranks last.
    assert (by_bot["[red]x"]["rank"], by_bot["[red]x"]["losses"], by_bot["[red]x"]["game_points"]) \
        == (3, 2, 0)
    # Per deal: two 2-game deals per match; the pentanomial counts them for the first bot.
    assert len(stage["deals"]) == 3
    for d in stage["deals"]:
        assert sum(d["pentanomial"]) == 2 and len(d["deals"]) == 2
        halves = sum(i * n for i, n in enumerate(d["pentanomial"])) / 2
        assert halves == d["points"][0]
        if d["bots"][0] == "[red]x":
            assert d["pentanomial"] == [2, 0, 0, 0, 0]


def test_show_lists_forfeits_with_evidence_and_prints_markup_literally(rr):
    stage = show_json(rr)["stages"][0]
    assert {f["bot"] for f in stage["forfeits"]} == {"[red]x"}
    # Three crashes spend the failure budget; the fourth game of each match is forfeited unplayed.
    assert [f["reason"] for f in stage["forfeits"]] == ["crash", "crash", "crash",
                                                        "failure_budget"] * 2
    assert any("[bold]=HYPERLINK" in (f["evidence"] or "") for f in stage["forfeits"])
    out = invoke("show", db=rr)
    assert out.exit_code == 0, out.output
    assert "[red]x" in out.output  # escaped: rich would otherwise eat "[red]" as a style
    assert "[bold]" in out.output
    assert "forfeits" in out.output and "failure_budget" in out.output
    text = out.output
    assert text.index("3/3 rounds") < text.index("pairings") < text.index("per deal") \
        < text.index("forfeits")


def test_show_round_1_gives_the_standings_after_round_1(rr):
    final = {r["bot"]: r for r in show_json(rr)["stages"][0]["standings"]}
    report = show_json(rr, "--round", "1")
    stage = report["stages"][0]
    after = {r["bot"]: r for r in stage["standings"]}
    assert [r["round"] for r in stage["pairings"]] == [1]
    (table,) = stage["pairings"][0]["tables"]
    playing = {b["bot"] for b in table["bots"]}
    (resting,) = set(after) - playing
    assert after[resting]["matches"] == 0 and after[resting]["match_points"] == 0
    assert final[resting]["matches"] == 2
    assert all(after[b]["matches"] == 1 for b in playing)
    assert sum(r["match_points"] for r in after.values()) == 1  # one 2-bot match
    assert sum(r["match_points"] for r in final.values()) == 3
    assert after != final
    assert len(stage["deals"]) == 1 and len(stage["forfeits"]) == 4
    out = invoke("show", "--round", "1", db=rr)
    assert out.exit_code == 0 and "after round 1" in out.output


def test_show_refuses_a_round_that_was_not_recorded(rr):
    out = invoke("show", "--round", "9", db=rr)
    assert out.exit_code == 2
    assert "round 9" in out.output and "1..3" in out.output
    assert len(out.output.strip().splitlines()) == 1
    out = invoke("show", "--stage", "2", db=rr)
    assert out.exit_code == 2 and "no stage 2" in out.output


def test_status_of_a_finished_tournament(rr):
    out = invoke("status", "--format", "json", db=rr)
    assert out.exit_code == 0, out.output
    info = json.loads(out.stdout)
    assert info["status"] == "finished" and info["lease"] is None
    (stage,) = info["stages"]
    assert (stage["rounds_recorded"], stage["rounds_total"]) == (3, 3)
    assert (stage["matches_finished"], stage["matches_error"]) == (3, 0)
    assert info["games_done"] == info["games_planned"] == 12
    assert info["eta_s"] == 0
    out = invoke("status", db=rr)
    assert out.exit_code == 0
    assert "12/12" in out.output and "3/3" in out.output and "none holds" in out.output


# -- export ------------------------------------------------------------------------------------------


def test_export_jsonl_round_trips_every_game_and_move_count(rr):
    out = invoke("export", "1", "--format", "jsonl", db=rr)
    assert out.exit_code == 0, out.output
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    store = Store(rr)
    stored = {g: n for g, n in store.db.execute(
        "select g.id, (select count(*) from moves m where m.game_id = g.id) from games g")}
    assert len(lines) == 12 and {g["id"] for g in lines} == set(stored)
    for game in lines:
        assert len(game["moves"]) == stored[game["id"]]
        loaded = store.load_game(game["id"])
        assert [m["action"] for m in game["moves"]] == [m["action"] for m in loaded["moves"]]
        assert [m["ply"] for m in game["moves"]] == list(range(len(game["moves"])))
        assert [(s["seat"], s["bot"], s["score"], s["rank"]) for s in game["seats"]] == \
            [(s["seat"], s["bot"], s["score"], s["rank"]) for s in loaded["seats"]]
        assert game["seed"] == loaded["seed"] and game["options"] == loaded["options"]
        assert game["match_id"].startswith(f"t1-st1-r{game['round']}-m{game['table']}")
    assert any(g["termination"] == "crash" and g["culprit_bot"] == "[red]x" for g in lines)
    assert sum(len(g["moves"]) for g in lines) > 0


def test_export_to_a_file_is_atomic_and_equals_stdout(rr, tmp_path):
    target = tmp_path / "games.jsonl"
    target.write_text("old content\n")
    out = invoke("export", "1", "--format", "jsonl", "-o", str(target), db=rr)
    assert out.exit_code == 0, out.output
    assert "12 games exported" in out.output
    assert target.read_text() == invoke("export", "1", "--format", "jsonl", db=rr).stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.jsonl"]  # no temp file left
    out = invoke("export", "1", "--format", "csv", "-o", str(tmp_path / "no" / "x.csv"), db=rr)
    assert out.exit_code == 2 and "cannot write" in out.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.jsonl"]


def test_csv_has_one_row_per_seat_and_neutralises_formulas(rr):
    out = invoke("export", "1", "--format", "csv", db=rr)
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert list(rows[0]) == list(reports.CSV_COLUMNS)
    assert len(rows) == 12 * 2
    assert {(r["game_id"], r["seat"]) for r in rows} == {
        (g, str(s)) for g, s in Store(rr).db.execute("select game_id, seat from game_seats")}
    bots = {r["bot"] for r in rows}
    assert bots == {"first", "'=cmd", "[red]x"}
    assert not any(cell.startswith(("=", "+", "-", "@")) for r in rows for cell in r.values())


def test_csv_cells_keep_numbers_and_quote_only_text():
    assert reports.safe_cell(-3.5) == -3.5
    assert [reports.safe_cell(b) for b in (True, False)] == ["true", "false"]  # as JSON has them
    assert [reports.safe_cell(s) for s in ("=1+1", "+x", "-x", "@x", "\tx", "ok")] == \
        ["'=1+1", "'+x", "'-x", "'@x", "'\tx", "ok"]


def test_unknown_export_format_is_a_config_error(rr):
    with pytest.raises(ConfigError, match="unknown export format 'xml'"):
        reports.export_tournament(Store(rr), 1, "xml", io.StringIO())


# -- cancel ------------------------------------------------------------------------------------------


def test_cancel_of_a_finished_tournament_is_a_one_line_error(rr):
    out = invoke("cancel", "1", db=rr)
    assert out.exit_code == 1
    assert out.output.strip().splitlines() == ["error: tournament 1 is already finished"]
    assert Store(rr).tournament(1)["status"] == "finished"


class StopAfterOne(SerialExecutor):
    """Ctrl-C while the second match's result comes in."""

    outcomes = 0

    def next_outcome(self):
        outcome = super().next_outcome()
        self.outcomes += 1
        if self.outcomes == 2:
            raise KeyboardInterrupt
        return outcome


def test_an_interrupted_tournament_cancelled_directly_becomes_cancelled(tmp_path):
    db = tmp_path / "a.db"
    with pytest.raises(KeyboardInterrupt):
        play(write(tmp_path / "rr.toml", ROUND_ROBIN), db, StopAfterOne())
    assert Store(db).tournament(1)["status"] == "interrupted"
    stage = show_json(db)["stages"][0]
    statuses = [t["status"] for r in stage["pairings"] for t in r["tables"]]
    assert statuses.count("finished") == 1 and "pending" in statuses
    pending = next(t for r in stage["pairings"] for t in r["tables"] if t["status"] == "pending")
    assert pending["match_id"] is None and all(b["match_points"] is None for b in pending["bots"])
    info = json.loads(invoke("status", "--format", "json", db=db).stdout)
    assert info["status"] == "interrupted" and info["eta_s"] is None
    assert info["games_done"] == 4 and info["games_planned"] == 12
    out = invoke("cancel", "1", db=db)
    assert out.exit_code == 0, out.output
    assert out.output.strip() == "tournament 1 cancelled"
    assert Store(db).tournament(1)["status"] == "cancelled"
    out = invoke("cancel", "1", db=db)
    assert out.exit_code == 1 and "already cancelled" in out.output


# -- live leases and pace ----------------------------------------------------------------------------


def _hand_made(store: Store, planned: int = 100, lease: Lease | None = None) -> tuple[int, dict]:
    ids = {"a": store.add_bot("a"), "b": store.add_bot("b")}
    tid = store.create_tournament(
        "live", "xeri", "round_robin", 2, 1, {}, {}, list(ids.values()),
        stages=[{"name": "xeri", "game": "xeri", "format": "round_robin", "seats": 2,
                 "options": {}, "config": {"planned_games": planned, "tiebreaks": None},
                 "entrants": [0, 1], "left_out": [], "rounds": 1}],
        lease=lease)
    return tid, ids


def _games(match_id: str, n: int) -> MatchResult:
    return MatchResult(match_id, [
        GameRecord(f"{match_id}-g{i}", i, i // 2, i % 2, 42 + i, ["a", "b"] if i % 2 == 0 else ["b", "a"],
                   [[0], [1]], [10, 5], [1, 2], "normal", None, "", "", 1.0,
                   [Move(0, 0, {"type": "play"}, 1.0)])
        for i in range(n)], {}, 5.0)


def test_status_of_a_live_tournament_names_the_lease_holder(tmp_path):
    db = tmp_path / "a.db"
    store = Store(db)
    tid, _ = _hand_made(store, lease=Lease.mine())
    out = invoke("status", str(tid), db=db)
    assert out.exit_code == 0, out.output
    assert f"pid {os.getpid()} on {socket.gethostname()}" in out.output and "alive" in out.output
    info = json.loads(invoke("status", "--format", "json", db=db).stdout)
    assert info["lease"]["alive"] is True and info["lease"]["pid"] == os.getpid()
    assert info["lease"]["heartbeat_age_s"] < 60
    # A live holder is asked to stop; the tournament stays running until its driver does.
    out = invoke("cancel", str(tid), db=db)
    assert out.exit_code == 0, out.output
    assert out.output.startswith(f"cancel requested: the driver (pid {os.getpid()} on ")
    assert Store(db).tournament(tid)["status"] == "running"
    info = json.loads(invoke("status", "--format", "json", db=db).stdout)
    assert info["lease"]["cancel_requested"] is True


def test_a_dead_lease_holder_is_reported_stale(tmp_path):
    db = tmp_path / "a.db"
    store = Store(db)
    tid, _ = _hand_made(store, lease=Lease("t0k3n", 2 ** 22 + 12345, socket.gethostname()))
    info = reports.tournament_status(TournamentProgress.load(store, tid))
    assert info["lease"]["alive"] is False and info["eta_s"] is None
    out = invoke("status", db=db)
    assert "stale" in out.output


def test_rate_and_eta_of_a_live_run(tmp_path):
    store = Store(tmp_path / "a.db")
    tid, ids = _hand_made(store, planned=100, lease=Lease.mine())
    store.record_round(tid, 1, 1, [["a", "b"]], [], 1.0, ids)
    store.record_matches(tid, [MatchRecord(1, 1, 1, "xeri", {}, _games("m1", 4),
                                           names=["a", "b"], match_id="m1", bots=(0, 1))], ids)
    started = datetime.fromisoformat(store.lease(tid)["started_at"])
    info = reports.tournament_status(TournamentProgress.load(store, tid, now=started + timedelta(seconds=30)))
    # The run is younger than the window: 4 games over its 30 s, 96 games left.
    assert info["games_done"] == 4 and info["rate"] == pytest.approx(4 / 30)
    assert info["eta_s"] == pytest.approx(96 * 30 / 4)
    recorded = datetime.fromisoformat(store.db.execute("select max(recorded_at) from games")
                                      .fetchone()[0])
    store.db.execute("update leases set started_at = ?",
                     [(recorded - timedelta(seconds=300)).isoformat(timespec="milliseconds")])
    store.db.conn.commit()
    # An older run is paced by its last minute only...
    recent = reports.tournament_status(TournamentProgress.load(store, tid, now=recorded + timedelta(seconds=30)))
    assert recent["rate"] == pytest.approx(4 / 60) and recent["rate_basis"] == "last 60 s"
    assert recent["eta_s"] == pytest.approx(96 * 60 / 4)
    # ...and by the whole run when nothing landed in the last minute.
    later = reports.tournament_status(TournamentProgress.load(store, tid, now=recorded + timedelta(seconds=600)))
    assert later["rate"] == pytest.approx(4 / 900) and later["rate_basis"] == "this run"
    # Matches written without per-match scores still count in the standings.
    rows = reports.stage_standings(TournamentView.load(store, tid), 1)
    assert [(r["bot"], r["game_points"]) for r in rows] == [("a", 2.0), ("b", 2.0)]


SWISS = """
name = "sw"
game = "xeri"
format = "swiss"
rounds = 2
bye_points = 0.5
seed = 3
deals = 1
[options]
rounds = 1
[[bots]]
name = "first"
python = "tests.support.bots:FirstLegal"
[[bots]]
name = "rand"
python = "tests.support.bots:SeededRandom"
[[bots]]
name = "third"
python = "tests.support.bots:SeededRandom"
"""


def test_swiss_byes_score_the_configured_points_and_show_in_the_pairings(tmp_path):
    db = tmp_path / "sw.db"
    play(write(tmp_path / "sw.toml", SWISS), db)
    stage = show_json(db)["stages"][0]
    assert stage["tiebreaks"][:2] == ["buchholz_cut1", "buchholz"] and stage["bye_points"] == 0.5
    byes = [b["bot"] for r in stage["pairings"] for b in r["byes"]]
    assert len(byes) == 2  # three bots: one sits out each round
    assert all(b["points"] == 0.5 for r in stage["pairings"] for b in r["byes"])
    earned: dict[str, float] = {name: 0.5 * byes.count(name) for name in stage["entrants"]}
    for r in stage["pairings"]:
        for t in r["tables"]:
            for b in t["bots"]:
                earned[b["bot"]] += b["match_points"]
    rows = {r["bot"]: r for r in stage["standings"]}
    assert {b: r["match_points"] for b, r in rows.items()} == earned
    assert {b: r["byes"] for b, r in rows.items()} == {b: byes.count(b) for b in rows}
    after_1 = {r["bot"]: r for r in show_json(db, "--round", "1")["stages"][0]["standings"]}
    assert after_1[byes[0]]["byes"] == 1 and after_1[byes[0]]["matches"] == 0
    out = invoke("show", db=db)
    assert "bye" in out.output and "BH-1 Buchholz cut-1" in out.output


# -- events and the run summary ---------------------------------------------------------------------


def test_event_show_puts_the_overall_standing_first_and_marks_left_out(tmp_path):
    db = tmp_path / "ev.db"
    play(write(tmp_path / "ev.toml", EVENT), db)
    report = show_json(db)
    assert report["event"] is True
    overall = {r["bot"]: r for r in report["overall"]}
    cf = {s["bot"]: s for s in report["stages"][1]["standings"]}
    assert set(cf) == {"first", "rand"}
    assert report["stages"][1]["left_out"] == ["xeri_heuristic"]
    heuristic = overall["xeri_heuristic"]["stages"]
    assert heuristic[1] == {"stage": 2, "name": "cf", "left_out": True, "weight": 1.0,
                            "rank": None, "points": None, "maximum": None, "share": None,
                            "contribution": None}
    for _bot, row in overall.items():
        played = [s for s in row["stages"] if not s["left_out"]]
        assert row["score"] == pytest.approx(sum(s["weight"] * s["share"] for s in played)
                                             / sum(s["weight"] for s in played))
        assert row["score"] == pytest.approx(sum(s["contribution"] for s in played))
        for s in played:
            assert s["share"] == pytest.approx(s["points"] / s["maximum"])
    stage_x = {s["bot"]: s for s in report["stages"][0]["standings"]}
    assert heuristic[0]["rank"] == stage_x["xeri_heuristic"]["rank"]
    out = invoke("show", db=db)
    assert out.exit_code == 0, out.output
    assert out.output.index("overall standing") < out.output.index("stage 1 x")
    assert "left out" in out.output
    single = show_json(db, "--stage", "2")
    assert [s["stage"] for s in single["stages"]] == [2]


def test_an_event_scores_each_stage_by_its_weight_times_its_share(tmp_path):
    db = tmp_path / "ev.db"
    play(write(tmp_path / "ev.toml", EVENT.replace('name = "cf"', 'name = "cf"\nweight = 2.5')), db)
    report = show_json(db)
    cf = {s["bot"]: s for s in report["stages"][1]["standings"]}
    for row in report["overall"]:
        x, c = row["stages"]
        assert (x["weight"], c["weight"]) == (1.0, 2.5)
        if c["left_out"]:  # scored on the stage it plays
            assert row["score"] == pytest.approx(x["share"]) == pytest.approx(x["contribution"])
        else:
            # Two bots play cf: one match each, so its maximum is 1 and a share is its match points.
            assert c["maximum"] == 1.0 and c["share"] == cf[row["bot"]]["match_points"]
            assert c["contribution"] == pytest.approx(2.5 * c["share"] / 3.5)
            assert row["score"] == pytest.approx((x["share"] + 2.5 * c["share"]) / 3.5)
    scores = [r["score"] for r in report["overall"]]
    assert scores == sorted(scores, reverse=True)
    out = invoke("show", db=db)
    assert out.exit_code == 0, out.output
    assert "2. cf: weight 2.5, maximum 1" in " ".join(out.output.split())


def test_run_prints_standings_ratings_and_escapes_names(tmp_path):
    db = tmp_path / "a.db"
    out = runner.invoke(app, ["run", str(write(tmp_path / "rr.toml", ROUND_ROBIN)), "--db", str(db),
                              "--executor", "serial", "-q"])
    assert out.exit_code == 0, out.output
    text = out.output
    assert "standings" in text and "ratings" in text and "Bradley–Terry" in text
    assert text.index("standings") < text.index("ratings")
    assert "[red]x" in text and "=cmd" in text
    header = next(line for line in text.splitlines() if "pts" in line and "bot" in line)
    assert header.split()[-4:] == ["DE", "┃", "SB", "┃"]  # a round robin's first tie-breaks


def test_event_run_summary_ends_with_the_overall_standing(tmp_path):
    db = tmp_path / "ev.db"
    out = runner.invoke(app, ["run", str(write(tmp_path / "ev.toml", EVENT)), "--db", str(db),
                              "--executor", "serial", "-q"])
    assert out.exit_code == 0, out.output
    text = out.output
    assert text.index("stage 1 x") < text.index("stage 2 cf") < text.index("overall standing")
    assert text.count("— ratings (tournament 1") == 2


def test_reports_on_an_empty_database(tmp_path):
    db = tmp_path / "a.db"
    Store(db)
    out = invoke("show", db=db)
    assert out.exit_code == 1 and "no tournament yet" in out.output
    out = invoke("list", db=tmp_path / "missing.db")
    assert out.exit_code == 2 and "no database" in out.output


def test_untrusted_text_cannot_reach_the_terminal_as_control_codes():
    from arena.cli.tournament import _safe

    assert _safe("a\x1b[2Jb\x07") == "a\\x1b[2Jb\\x07"
    assert _safe("[red]x") == "\\[red]x"

"""Rating commands over real tournaments: stored methods, tables, leaderboards, crosstables,
head to head, SPRT, and fits of results files.

The databases come from tournaments played through the driver with in-process bots (fast, no
subprocesses); expected values are recomputed here from the stored games, not copied.
"""

from __future__ import annotations

import csv
import io
import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena import rating_reports
from arena.cli import app
from arena.config import load_config
from arena.executors import SerialExecutor
from arena.ratings import elo_diff_trinomial, los, rate
from arena.standings import crosstable
from arena.store import Store
from arena.store.views import TournamentView
from arena.tournament import run_tournament
from tests.support.config import manifest_bot, python_bot, tournament_toml
from tests.support.paths import BOTS

runner = CliRunner()

ROUND_ROBIN = """
name = "{name}"
game = "xeri"
seed = {seed}
deals = {deals}
[options]
rounds = 1
[rating]
samples = 40
[[bots]]
manifest = "{bots}/xeri_heuristic.toml"
[[bots]]
name = "first"
python = "tests.support.bots:FirstLegal"
[[bots]]
name = "rand"
python = "tests.support.bots:SeededRandom"
"""

FIELD = [manifest_bot("xeri_heuristic"), python_bot("first", "tests.support.bots:FirstLegal"),
         python_bot("rand"), python_bot("rand-2")]

SWISS = tournament_toml(name="sw", format="swiss", rounds=2, seed=4, deals=1,
                        options={"rounds": 1}, rating={"samples": 20}, bots=FIELD)

FOUR_SEATS = tournament_toml(name="cw4", game="crosswalk", seats=4, seed=2, deals=1,
                             rating={"samples": 20},
                             bots=[manifest_bot("crosswalk_heuristic"), *FIELD[1:]])


def play(tmp: Path, db: Path, text: str, **fields) -> int:
    path = tmp / f"{fields.get('name', 'cfg')}-{len(list(tmp.iterdir()))}.toml"
    path.write_text(textwrap.dedent(text).format(bots=BOTS, **fields))
    cfg, bots, rows = load_config(path)
    return run_tournament(cfg, bots, rows, Store(db), SerialExecutor()).tournament_id


def cli(*args: str):
    return runner.invoke(app, list(args))


@pytest.fixture(scope="module")
def two(tmp_path_factory) -> Path:
    """Two round robins of the same three bots (6 and 4 deals) in one database."""
    tmp = tmp_path_factory.mktemp("two")
    db = tmp / "a.db"
    play(tmp, db, ROUND_ROBIN, name="rr1", seed=3, deals=6)
    play(tmp, db, ROUND_ROBIN, name="rr2", seed=9, deals=4)
    return db


def test_the_driver_stores_elo_and_the_ml_fit_with_intervals(two):
    store = Store(two)
    assert store.rating_methods(1) == ["bt", "elo"]
    bt = store.ratings(1, "bt")
    assert {r["bot"] for r in bt} == {"xeri_heuristic", "first", "rand"}
    for r in bt:
        assert r["lo"] <= r["rating"] <= r["hi"] and r["bot_id"] is not None
    # The fit is the library's over the stored games (draws half, groups = deals), recomputed here.
    games = store.game_results(1, 1)
    fresh = rate(games, "bt", samples=0)
    assert [round(r["rating"], 3) for r in fresh.rows] == [round(r["rating"], 3) for r in bt]
    assert all(r["lo"] is None for r in store.ratings(1, "elo"))


def test_ratings_table_defaults_to_bt_and_says_so(two):
    out = cli("ratings", "1", "--db", str(two))
    assert out.exit_code == 0, out.output
    assert "Bradley–Terry" in out.output and "95 %" in out.output
    data = json.loads(cli("ratings", "1", "--db", str(two), "-f", "json").stdout)
    assert data["method"] == "bt"
    row = data["rows"][0]
    assert row["minus"] == pytest.approx(row["rating"] - row["lo"], abs=0.06)
    assert isinstance(row["wins"], int) and isinstance(row["games"], int)
    elo = json.loads(cli("ratings", "1", "--db", str(two), "-m", "elo", "-f", "json").stdout)
    assert elo["method"] == "elo" and elo["rows"][0]["lo"] is None


def test_csv_ratings_have_whole_counts_as_integers(two):
    out = cli("ratings", "1", "--db", str(two), "-f", "csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert rows and all("." not in r["wins"] and "." not in r["losses"] for r in rows)
    assert [int(r["rank"]) for r in rows] == list(range(1, len(rows) + 1))


def test_a_method_not_stored_is_computed_and_a_bad_one_refused(two, tmp_path):
    out = cli("ratings", "1", "--db", str(two), "-m", "pl", "-f", "json")
    assert out.exit_code == 0, out.output
    pl = {r["bot"]: r["rating"] for r in json.loads(out.stdout)["rows"]}
    bt = {r["bot"]: r["rating"] for r in Store(two).ratings(1, "bt")}
    assert pl == pytest.approx(bt, abs=0.01)  # Plackett–Luce of 2-side tables is Bradley–Terry
    bad = cli("ratings", "1", "--db", str(two), "-m", "glicko")
    assert bad.exit_code == 2 and "unknown method 'glicko'" in bad.output
    assert len(bad.output.strip().splitlines()) == 1


def test_swiss_ratings_show_its_tie_breaks(tmp_path):
    db = tmp_path / "s.db"
    play(tmp_path, db, SWISS)
    table = rating_reports.tournament_ratings(TournamentView.load(Store(db), 1), 1)
    assert table["tiebreaks"][0] == "match_points" and "buchholz" in table["tiebreaks"]
    standings = {r["bot"]: r for r in rating_reports.stage_standings(TournamentView.load(Store(db), 1), 1)}
    for row in table["rows"]:
        assert row["buchholz"] == standings[row["bot"]]["buchholz"]
    out = cli("ratings", "--db", str(db), "--wide")
    assert out.exit_code == 0 and "BH" in out.output and "BH Buchholz" in out.output
    folded = cli("ratings", "--db", str(db))  # at 80 columns the tie-breaks fold, and their legend
    assert "left out to fit" in folded.output and "Buchholz" not in folded.output


def test_four_seat_tables_are_rated_by_plackett_luce(tmp_path):
    db = tmp_path / "c.db"
    play(tmp_path, db, FOUR_SEATS)
    store = Store(db)
    assert store.rating_methods(1) == ["elo", "pl"]
    assert rating_reports.tournament_ratings(TournamentView.load(store, 1), 1)["method"] == "pl"


def test_crosstable_is_pairwise_and_antisymmetric(two):
    store = Store(two)
    report = rating_reports.crosstable_report(TournamentView.load(store, 1, games=True), 1)
    cells = report["cells"]
    for a in report["bots"]:
        for b in report["bots"]:
            if a != b:
                assert cells[a][b]["games"] == cells[b][a]["games"]
                assert cells[a][b]["pair_points"] + cells[b][a]["pair_points"] == cells[a][b]["games"]
                assert cells[a][b]["wins"] == cells[b][a]["losses"]
    # Totals agree with the stored ratings' pairwise records.
    wins = {r["bot"]: r["wins"] for r in store.ratings(1, "bt")}
    assert {a: sum(c["wins"] for c in row.values()) for a, row in cells.items()} == wins
    out = cli("crosstable", "1", "--db", str(two))
    assert out.exit_code == 0 and "crosstable" in out.output


def test_crosstable_pure_function_skips_partners():
    games = [{"seats": [{"bot": "a", "team": 0, "rank": 1}, {"bot": "b", "team": 1, "rank": 2},
                        {"bot": "c", "team": 0, "rank": 1}, {"bot": "d", "team": 1, "rank": 2}]},
             {"seats": [{"bot": "a", "team": 0, "rank": 1}, {"bot": "b", "team": 1, "rank": 1}]}]
    table = crosstable(games, ["a", "b", "c", "d", "e"])
    assert table["a"]["b"].wins == 1 and table["a"]["b"].draws == 1
    assert table["a"]["c"].games == 0  # partners
    assert table["e"]["a"].games == 0 and set(table["e"]) == {"a", "b", "c", "d"}


def test_head_to_head_counts_match_the_games(two):
    store = Store(two)
    h2h = rating_reports.head_to_head(store, "xeri_heuristic", "rand")
    expected = [0, 0, 0]
    for game in store.game_results(1) + store.game_results(2):
        ranks = {s["bot"]: s["rank"] for s in game["seats"]}
        if {"xeri_heuristic", "rand"} <= set(ranks):
            a, b = ranks["xeri_heuristic"], ranks["rand"]
            expected[0 if a < b else 1 if a == b else 2] += 1
    assert [h2h.wins, h2h.draws, h2h.losses] == expected and h2h.games == 20
    assert h2h.pairs == 10  # 6 + 4 duplicate deals, each played twice
    assert sum(p * n for p, n in zip((0, 0.5, 1, 1.5, 2), h2h.pentanomial)) == h2h.wins + h2h.draws / 2
    assert h2h.los() == pytest.approx(los(h2h.wins, h2h.losses))
    one = rating_reports.head_to_head(store, "xeri_heuristic", "rand", tournament_id=2)
    assert one.games == 8 and one.pairs == 4
    out = cli("h2h", "first", "rand", "--db", str(two), "-f", "json")
    data = json.loads(out.stdout)
    assert data["games"] == 20 and len(data["deals"]) == 10


def test_head_to_head_of_an_unknown_bot_is_one_line(two):
    out = cli("h2h", "nobody", "rand", "--db", str(two))
    assert out.exit_code == 2 and out.output.strip() == "error: no bot 'nobody' in this database"


def test_sprt_decides_or_says_to_go_on(two, tmp_path):
    undecided = cli("sprt", "first", "rand", "--db", str(two), "--elo0", "0", "--elo1", "5")
    assert undecided.exit_code == 3 and "no decision yet" in undecided.output
    db = tmp_path / "big.db"
    play(tmp_path, db, ROUND_ROBIN, name="big", seed=1, deals=40)
    report = rating_reports.sprt_report(Store(db), "xeri_heuristic", "first", 0, 100)
    assert report["basis"] == "pentanomial" and sum(report["counts"]) == 40
    out = cli("sprt", "xeri_heuristic", "first", "--db", str(db), "--elo1", "100")
    assert (out.exit_code == 0) == (report["decision"] is not None)
    assert report["decision"] == "H1" and "H1 accepted" in out.output
    bad = cli("sprt", "first", "rand", "--db", str(two), "--elo0", "5", "--elo1", "0")
    assert bad.exit_code == 2 and "must be above" in bad.output


def test_leaderboard_pools_tournaments_per_bot_version_and_is_stored(two):
    store = Store(two)
    board = rating_reports.leaderboard(store, "xeri", samples=20)
    assert board["method"] == "bt"
    games = {r["bot"]: r["games"] for r in board["rows"]}
    per_tournament = [{r["bot"]: r["games"] for r in store.ratings(t, "bt")} for t in (1, 2)]
    assert games == {b: per_tournament[0][b] + per_tournament[1][b] for b in games}
    assert {r["version"] for r in board["rows"] if r["bot"] == "xeri_heuristic"} == {"1"}
    stored = store.pooled_ratings("game", "xeri", "bt")
    assert [r["bot"] for r in stored] == [r["bot"] for r in board["rows"]]
    again = rating_reports.leaderboard(store, "xeri", samples=20)
    assert again["rows"] == board["rows"]  # idempotent: same seed, same rows
    out = cli("leaderboard", "xeri", "--db", str(two), "-f", "json")
    assert out.exit_code == 0 and json.loads(out.stdout)["rows"][0]["last_played"]


def test_leaderboard_errors_are_one_line(two):
    out = cli("leaderboard", "chess", "--db", str(two))
    assert out.exit_code == 2 and "chess" in out.output and len(out.output.strip().splitlines()) == 1
    out = cli("leaderboard", "crossfire", "--db", str(two))
    assert out.exit_code == 2 and "no recorded games of 'crossfire'" in out.output
    out = cli("leaderboard", "xeri", "--db", str(two), "--since", "2999-01-01")
    assert out.exit_code == 2 and "since" in out.output
    out = cli("leaderboard", "xeri", "--db", str(two), "--since", "last week")
    assert out.exit_code == 2 and "ISO date" in out.output


def test_ratings_fit_of_a_results_file(tmp_path):
    lines = [{"players": ["E1", "E2"], "ranks": [1, 2]}] * 18 + \
            [{"players": ["E1", "E2"], "ranks": [1, 1]}] * 9 + \
            [{"players": ["E1", "E2"], "ranks": [2, 1]}] * 3 + \
            [{"players": ["E2", "E3"], "ranks": [1, 2]}] * 18 + \
            [{"players": ["E2", "E3"], "ranks": [1, 1]}] * 9 + \
            [{"players": ["E2", "E3"], "ranks": [2, 1]}] * 3 + \
            [{"players": ["E1", "E3"], "ranks": [1, 2]}] * 24 + \
            [{"players": ["E1", "E3"], "ranks": [1, 1]}] * 6
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    out = cli("ratings", "fit", str(path), "--average", "0", "--samples", "0", "-f", "json")
    assert out.exit_code == 0, out.output
    got = {r["bot"]: r["rating"] for r in json.loads(out.stdout)["rows"]}
    assert got == pytest.approx({"E1": 190.849, "E2": 0.0, "E3": -190.849}, abs=1e-3)
    anchored = cli("ratings", "fit", str(path), "--anchor", "E3=1000", "--samples", "0", "-f", "json")
    got = {r["bot"]: r["rating"] for r in json.loads(anchored.stdout)["rows"]}
    assert got["E3"] == pytest.approx(1000) and got["E1"] == pytest.approx(1381.698, abs=1e-2)


def test_ratings_fit_errors_name_the_problem(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"players": ["A", "B"], "ranks": [1, 2]}\n{"players": ["A"], "ranks": 3}\n')
    out = cli("ratings", "fit", str(path))
    assert out.exit_code == 2 and "line 2" in out.output
    assert len(out.output.strip().splitlines()) == 1
    path.write_text('{"players": ["A", "B"], "ranks": [1, 2]}\n')
    out = cli("ratings", "fit", str(path), "--anchor", "Z=1500")
    assert out.exit_code == 2 and "no player 'Z'" in out.output
    out = cli("ratings", "fit", str(path), "--anchor", "A")
    assert out.exit_code == 2 and "NAME=RATING" in out.output
    out = cli("ratings", "fit")
    assert out.exit_code == 2 and "results file" in out.output
    out = cli("ratings", "fit", str(tmp_path / "missing.jsonl"))
    assert out.exit_code == 2 and "missing.jsonl" in out.output


SPRT_GAUNTLET = """
name = "sg"
game = "xeri"
format = "gauntlet"
seed = 11
deals = 2
cycles = 40
candidates = ["xeri_heuristic", "first"]
[sprt]
elo0 = 0
elo1 = 150
[options]
rounds = 1
[rating]
samples = 0
[[bots]]
manifest = "{bots}/xeri_heuristic.toml"
[[bots]]
name = "first"
python = "tests.support.bots:FirstLegal"
[[bots]]
name = "rand"
python = "tests.support.bots:SeededRandom"
[[bots]]
name = "rand-2"
python = "tests.support.bots:SeededRandom"
"""


def test_a_gauntlet_with_an_sprt_stops_each_candidate_once_decided(tmp_path):
    db = tmp_path / "g.db"
    play(tmp_path, db, SPRT_GAUNTLET)
    store = Store(db)
    tests = {t["candidate"]: t for t in rating_reports.gauntlet_sprt(TournamentView.load(store, 1), 1)}
    assert tests["xeri_heuristic"]["decision"] == "H1"
    rounds = store.rounds(1, 1)
    assert len(rounds) < 2 * 40  # far fewer than the cycles allow
    # Once decided, a candidate gets no table: count the rounds each one sat at.
    sat = {name: sum(any(name in table for table in r["tables"]) for r in rounds)
           for name in ("xeri_heuristic", "first")}
    pairs = {name: sum(tests[name]["counts"]) for name in sat}
    assert all(pairs[name] == 2 * sat[name] for name in sat)  # 2 complete deals per match
    # Decided exactly when the last of its rounds was recorded, not before.
    decided = [t for t in tests.values() if t["decision"]]
    assert decided and all(t["llr"] >= t["upper"] or t["llr"] <= t["lower"] for t in decided)
    # The pair counts from the stored deals equal those recomputed from the games.
    heuristic = rating_reports.head_to_head(store, "xeri_heuristic", "rand")
    other = rating_reports.head_to_head(store, "xeri_heuristic", "rand-2")
    assert [a + b for a, b in zip(heuristic.pentanomial, other.pentanomial)] == \
        tests["xeri_heuristic"]["counts"]


def test_sprt_is_refused_outside_a_two_seat_gauntlet(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(textwrap.dedent(SPRT_GAUNTLET).format(bots=BOTS).replace(
        'format = "gauntlet"', 'format = "round_robin"').replace(
        'candidates = ["xeri_heuristic", "first"]\n', ""))
    out = cli("run", str(path), "--db", str(tmp_path / "x.db"), "--executor", "serial")
    assert out.exit_code == 2 and "only a 2-seat gauntlet" in out.output
    assert not (tmp_path / "x.db").exists() or Store(tmp_path / "x.db").db["tournaments"].count == 0
    path.write_text(textwrap.dedent(SPRT_GAUNTLET).format(bots=BOTS).replace(
        "elo1 = 150", "elo1 = -5"))
    out = cli("run", str(path), "--db", str(tmp_path / "y.db"), "--executor", "serial")
    assert out.exit_code == 2 and "must be above elo0" in out.output


def test_los_matrix_is_complementary_and_follows_the_ratings(two):
    table = rating_reports.los_table(TournamentView.load(Store(two), 1, games=True), 1)
    bots, matrix = table["bots"], table["los"]
    for a in bots:
        for b in bots:
            if a != b:
                assert matrix[a][b] + matrix[b][a] == pytest.approx(1.0, abs=1e-6)
    assert matrix[bots[0]][bots[-1]] > 0.5  # rows come best first
    out = cli("ratings", "1", "--db", str(two), "--los")
    assert out.exit_code == 0 and "likelihood of superiority" in out.output
    out = cli("ratings", "1", "--db", str(two), "--los", "-m", "elo")
    assert out.exit_code == 2 and "maximum-likelihood" in out.output


def test_a_named_anchor_fixes_that_bots_fitted_rating(tmp_path):
    db = tmp_path / "a.db"
    text = ROUND_ROBIN.replace("samples = 40", 'samples = 0\nanchor = "rand"\ninitial = 1000')
    play(tmp_path, db, text, name="anch", seed=3, deals=4)
    bt = {r["bot"]: r["rating"] for r in Store(db).ratings(1, "bt")}
    assert bt["rand"] == pytest.approx(1000) and bt["xeri_heuristic"] > 1000
    bad = tmp_path / "bad.toml"
    bad.write_text(textwrap.dedent(text.replace('anchor = "rand"', 'anchor = "ghost"')).format(
        bots=BOTS, name="x", seed=1, deals=1))
    out = cli("run", str(bad), "--db", str(tmp_path / "b.db"), "--executor", "serial")
    assert out.exit_code == 2 and "rating.anchor: 'ghost'" in out.output


def _rows(game: str, seats: int, results: str, match: str | None = None) -> list[tuple]:
    """pair_ranks rows: 'w', 'd', 'l' per game; with a match, consecutive games share a deal."""
    rank = {"w": (1, 2), "d": (1, 1), "l": (2, 1)}
    return [(f"{game}-{seats}-{i}", *rank[r], game, seats, match, i // 2 if match else i)
            for i, r in enumerate(results)]


def test_head_to_head_figures_of_a_line_come_from_its_own_games():
    # Issue 25: 8 duplicate-deal games at 2 seats (A scores 6 of 8) and 26 games at 3 seats (A
    # scores 9 of 26) printed "34 games, 44.1 %" beside the Elo of the 8 games only (positive).
    ranks = (_rows("xeri", 2, "wwwdwdlw", match="m1")
             + _rows("crossfire", 3, "w" * 8 + "d" * 2 + "l" * 16))
    h2h = rating_reports.pair_record("A", "B", ranks, [])
    lines = {(x.game, x.seats): x for x in h2h.lines}
    duel, triple = lines[("xeri", 2)], lines[("crossfire", 3)]
    assert (duel.wins, duel.draws, duel.losses, duel.pairs) == (5, 2, 1, 4)
    assert duel.elo()[0] == "pentanomial" and duel.elo()[1] > 0 and duel.los() > 0.5
    assert (triple.wins, triple.draws, triple.losses) == (8, 2, 16)
    assert triple.elo()[0] == "trinomial" and triple.elo()[1] < 0 and triple.los() < 0.5
    # The pooled line: all 34 games, so the trinomial of their W/D/L (not every game is in a pair).
    assert (h2h.games, h2h.wins, h2h.draws, h2h.losses) == (34, 13, 4, 17)
    basis, diff, lo, hi = h2h.elo()
    assert basis == "trinomial" and (diff, lo, hi) == pytest.approx(elo_diff_trinomial(13, 4, 17))
    score = h2h.as_dict()["score_pct"]
    assert score == pytest.approx(100 * 15 / 34, abs=0.01)
    assert diff < 0 and h2h.los() < 0.5  # one sign with the 44.1 % score
    data = h2h.as_dict()
    assert [(x["game"], x["seats"], x["games"]) for x in data["lines"]] == \
        [("crossfire", 3, 26), ("xeri", 2, 8)]


EVENT_2_AND_3_SEATS = """
name = "ev23"
seed = 7
deals = 2
[[stages]]
name = "duel"
game = "xeri"
[stages.options]
rounds = 1
[[stages]]
name = "three"
game = "crosswalk"
seats = 3
[[bots]]
name = "first"
python = "tests.support.bots:FirstLegal"
[[bots]]
name = "rand"
python = "tests.support.bots:SeededRandom"
[[bots]]
name = "rand-2"
python = "tests.support.bots:SeededRandom"
"""


def test_head_to_head_over_an_event_shows_a_line_per_game_and_a_pooled_line(tmp_path):
    db = tmp_path / "ev.db"
    play(tmp_path, db, EVENT_2_AND_3_SEATS)
    data = json.loads(cli("h2h", "first", "rand", "--db", str(db), "-f", "json").stdout)
    assert [(x["game"], x["seats"]) for x in data["lines"]] == [("crosswalk", 3), ("xeri", 2)]
    for key in ("games", "wins", "draws", "losses"):
        assert data[key] == sum(x[key] for x in data["lines"])
    for figures in (data, *data["lines"]):
        if figures["elo"] is not None:
            expected = elo_diff_trinomial(figures["wins"], figures["draws"], figures["losses"])
            if figures["elo"]["basis"] == "trinomial":
                assert figures["elo"]["diff"] == pytest.approx(expected[0], abs=0.01)
            sign = (figures["score_pct"] > 50) - (figures["score_pct"] < 50)
            assert (figures["elo"]["diff"] > 0) - (figures["elo"]["diff"] < 0) == sign
            assert (figures["los"] > 0.5) - (figures["los"] < 0.5) == sign
    assert data["elo"] is None or data["elo"]["basis"] == "trinomial"  # 3-seat games are in it
    out = cli("h2h", "first", "rand", "--db", str(db))
    assert out.exit_code == 0 and "all games" in out.stdout and "crosswalk" in out.stdout
    rows = list(csv.DictReader(io.StringIO(
        cli("h2h", "first", "rand", "--db", str(db), "-f", "csv").stdout)))
    assert [r["game"] for r in rows] == ["crosswalk", "xeri", "all"]


def test_the_bot_page_shows_the_head_to_head_line_of_each_game_beside_the_pooled_one(tmp_path):
    from starlette.testclient import TestClient

    from arena.web import create_app

    db = tmp_path / "ev.db"
    play(tmp_path, db, EVENT_2_AND_3_SEATS)
    data = json.loads(cli("h2h", "first", "rand", "--db", str(db), "-f", "json").stdout)
    with TestClient(create_app(db)) as web:
        page = web.get("/bots/first")
    assert page.status_code == 200
    html = page.text
    assert 'id="h2h-lines-' in html
    lines = html[html.index('id="h2h-lines-'):].split("</table>")[0]
    for line in data["lines"]:
        row = next(r for r in lines.split("<tr>")
                   if f"<td>{line['game']}</td>" in r and ">rand<" in r)
        assert f'<td class="num">{line["games"]}</td>' in row

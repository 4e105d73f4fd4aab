"""The web app shows the numbers the CLI shows (issue 25): half points exactly (24.5, not 24),
pairwise points named apart from game points, and an interval end the data does not bound as ∞."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from arena.store import Store
from arena.web import create_app
from tests.support.config import python_bot
from tests.support.tournaments import play_tournament
from tests.support.web_app import _html, _json, client, db, store  # noqa: F401 - fixtures


def test_half_points_are_shown_exactly(tmp_path):
    path = tmp_path / "half.db"
    play_tournament(tmp_path, Store(path), name="half", format="swiss", rounds=3, deals=1,
                    seed=1, bye_points=0.5, options={"rounds": 1},
                    bots=[python_bot("first", "tests.support.bots:FirstLegal"),
                          python_bot("rand"), python_bot("third")])
    with TestClient(create_app(path)) as web:
        html = web.get("/tournaments/1").text
        data = web.get("/api/tournaments/1").json()
    (stage,) = data["stages"]
    byes = [b for r in stage["pairings"] for b in r["byes"]]
    assert byes and all(b["points"] == 0.5 for b in byes)
    assert html.count(" (0.5)") >= len(byes) and " (0)" not in html
    halves = [r for r in stage["standings"] if not float(r["match_points"]).is_integer()]
    assert halves  # every bot sat out one round for half a point: 1.5 each, shown as 2 before
    for r in stage["standings"]:
        value = r["match_points"]
        text = str(int(value)) if float(value).is_integer() else f"{value:g}"
        assert re.search(rf'data-value="{value}" class="num">{re.escape(text)}</td>', html)
    assert ">pair pts</th>" in html  # the crosstable's pairwise points, not the game points


def test_an_open_interval_end_shows_as_infinity(client, store):
    data = _json(client, "/api/leaderboard/xeri")
    open_rows = [r for r in data["rows"] if r["lo_open"] or r["hi_open"]]
    assert open_rows, "the fixture's crasher loses every game"
    for r in open_rows:
        assert (r["lo"] is None) == r["lo_open"] and (r["hi"] is None) == r["hi_open"]
        assert r["flag"] in ("all wins", "all losses", "no losses vs rest", "no wins vs rest")
    html = _html(client, "/leaderboard/xeri")
    assert "−∞ – " in html or " – +∞" in html


def test_thirds_show_as_the_cli_shows_them():
    from arena.web.app import _number

    assert [_number(x) for x in (24.5, 2.5, 3.5, 7 / 3, 3.0, 1532.4567)] == \
        ["24.5", "2.5", "3.5", "2.333", "3", "1532.46"]
    assert _number(1532.4567, 0) == "1532" and _number(None) == ""

"""The web app (`arena serve`) over a real database: every page and API endpoint, escaping,
errors, read-only access, security headers and static files.

The database comes from a small round robin played through the driver with in-process bots
(one of them named `<script>alert(1)</script>`) and one subprocess bot that crashes with a
stderr message, plus a short ladder of two registry bots. Expected values are read from the
store, not copied.
"""

from __future__ import annotations

import re
import sqlite3
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from arena import rating_reports
from arena.errors import StoreError
from arena.reports import event_standings
from arena.store import Lease, Store
from arena.store.views import TournamentView
from arena.web import create_app
from tests.support.paths import ROOT
from tests.support.web_app import (  # noqa: F401 - fixtures
    CRASH_STDERR,
    XSS,
    XSS_ESCAPED,
    _digest,
    _html,
    _json,
    _lid,
    _page_data,
    _tid,
    client,
    db,
    store,
)

# -- startup ------------------------------------------------------------------------------------


def test_the_app_refuses_a_missing_or_foreign_database(tmp_path):
    with pytest.raises(StoreError, match="no database"):
        create_app(tmp_path / "none.db")
    foreign = tmp_path / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("create table t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not an Arena database"):
        create_app(foreign)


# -- leaderboards -------------------------------------------------------------------------------


def test_index_lists_the_games_with_links(client, store):
    html = _html(client, "/")
    assert 'href="/leaderboard/xeri"' in html
    data = _json(client, "/api/leaderboards")
    (xeri,) = [g for g in data["games"] if g["game"] == "xeri"]
    n = store.db.execute("select count(*) from games where game = 'xeri'").fetchone()[0]
    assert xeri["games"] == n and xeri["methods"] == ["bt"]
    assert any(b["ladder_id"] == _lid(store) for b in data["ladders"])


def test_leaderboard_shows_the_stored_ratings_sortable_and_escaped(client, store):
    stored = store.pooled_ratings("game", "xeri", "bt")
    html = _html(client, "/leaderboard/xeri")
    assert '<table id="leaderboard" class="sortable' in html
    for key in ("rank", "bot", "rating", "games", "score_pct", "last_played"):
        assert f'data-sort="{key}"' in html
    assert "Bradley–Terry" in html
    assert XSS_ESCAPED in html
    assert f'class="bot-link" href="/bots/{quote(XSS, safe="")}"' in html
    assert html.count('<svg class="ci"') == len(stored)  # one interval bar per row
    data = _json(client, "/api/leaderboard/xeri")
    assert data["method"] == "bt" and data["source"] == "stored"
    assert [(r["bot"], r["version"], r["rating"], r["lo"], r["hi"], r["games"])
            for r in data["rows"]] == [(r["bot"], r["version"], r["rating"], r["lo"], r["hi"],
                                        r["games"]) for r in stored]
    assert [r["rank"] for r in data["rows"]] == list(range(1, len(stored) + 1))


def test_leaderboard_of_an_unstored_method_is_computed_without_writing(client, db, store):
    data = _json(client, "/api/leaderboard/xeri?method=elo")
    assert data["method"] == "elo" and data["source"] == "computed"
    fresh = rating_reports.leaderboard(store, "xeri", "elo", samples=0, save=False)
    assert [(r["bot"], r["rating"]) for r in data["rows"]] == [(r["bot"], r["rating"])
                                                              for r in fresh["rows"]]
    assert "Elo" in _html(client, "/leaderboard/xeri?method=elo")
    assert store.pooled_ratings("game", "xeri", "elo") == []


def test_ladder_leaderboard(client, store):
    lid = _lid(store)
    data = _json(client, f"/api/leaderboard/xeri?ladder={lid}")
    stored = store.pooled_ratings("ladder", f"{lid}:xeri", data["method"])
    assert data["source"] == "stored" and [r["rating"] for r in data["rows"]] == \
        [r["rating"] for r in stored]
    assert "ladder web-lad" in _html(client, f"/leaderboard/xeri?ladder={lid}")


@pytest.mark.parametrize("url, status", [
    ("/leaderboard/nosuchgame", 404), ("/leaderboard/xeri?method=glicko", 400),
    ("/leaderboard/xeri?ladder=abc", 400), ("/leaderboard/xeri?ladder=999", 404),
])
def test_leaderboard_errors(client, url, status):
    assert "<h1>" in _html(client, url, status)
    assert _json(client, "/api" + url, status)["status"] == status


# -- tournaments --------------------------------------------------------------------------------


def test_tournament_list(client, store):
    tid = _tid(store)
    assert f'href="/tournaments/{tid}"' in _html(client, "/tournaments")
    data = _json(client, "/api/tournaments")
    expected = [t for t in store.tournaments() if t["format"] != "ladder"]
    assert [t["id"] for t in data["tournaments"]] == [t["id"] for t in expected] == \
        [_tid(store, "web-event"), _tid(store, "web-swiss"), tid]  # newest first, no ladder
    assert [t["games"] for t in data["tournaments"]] == [t["games"] for t in expected]


def test_tournament_page_has_standings_ratings_crosstable_deals_and_failures(client, store):
    tid = _tid(store)
    html = _html(client, f"/tournaments/{tid}")
    assert XSS_ESCAPED in html
    for part in ("Standings", "Ratings", "Crosstable", "Per-deal results", "Rounds and pairings",
                 "Failures"):
        assert part in html
    game_ids = [g["id"] for g in store.game_results(tid)]
    for gid in game_ids:
        assert f'class="game-link" href="/games/{gid}"' in html
    assert html_escape(CRASH_STDERR) in html and CRASH_STDERR not in html
    data = _json(client, f"/api/tournaments/{tid}")
    (stage,) = data["stages"]
    stored = store.ratings(tid, "bt")
    assert [(r["bot"], r["rating"]) for r in stage["ratings"]["rows"]] == \
        [(r["bot"], r["rating"]) for r in stored]
    assert {r["bot"] for r in stage["standings"]} == {"first", XSS, "rand", "crasher"}
    assert set(stage["crosstable"]["bots"]) == {"first", XSS, "rand", "crasher"}
    assert [g["id"] for g in stage["games"]] == game_ids
    assert data["failures"] and all(f["bot"] == "crasher" for f in data["failures"])
    assert CRASH_STDERR in data["failures"][0]["stderr_tail"]
    assert data["status"]["status"] == "finished" and data["live"] is False
    assert sum(len(d["game_ids"]) for m in stage["deals"] for d in m["deals"]) == \
        sum(1 for g in store.game_results(tid) if len(g["seats"]) == 2)


def html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@pytest.mark.parametrize("url, status", [
    ("/tournaments/999", 404), ("/tournaments/abc", 400), ("/tournaments/-1", 400),
])
def test_tournament_errors(client, url, status):
    _html(client, url, status)
    assert "error" in _json(client, "/api" + url, status)


def test_swiss_pages_show_rounds_byes_and_tiebreaks(client, store):
    tid = _tid(store, "web-swiss")
    html = _html(client, f"/tournaments/{tid}")
    data = _json(client, f"/api/tournaments/{tid}")
    (stage,) = data["stages"]
    rounds = store.rounds(tid, 1)
    assert [r["round"] for r in stage["pairings"]] == [r["round"] for r in rounds] == [1, 2]
    for r, recorded in zip(stage["pairings"], rounds):
        assert [[b["bot"] for b in t["bots"]] for t in r["tables"]] == recorded["tables"]
        assert [b["bot"] for b in r["byes"]] == recorded["byes"] and len(recorded["byes"]) == 1
        assert f"Round {r['round']}" in html
    assert "byes:" in html
    for tb in stage["tiebreaks"]:
        assert f'data-sort="{tb}"' in html
    assert stage["ratings"]["tiebreaks"][0] == "match_points"


def test_an_event_shows_overall_standings_and_each_stage(client, store):
    tid = _tid(store, "web-event")
    html = _html(client, f"/tournaments/{tid}")
    data = _json(client, f"/api/tournaments/{tid}")
    assert data["event"] is True and "Overall standings" in html
    assert [(r["bot"], r["score"]) for r in data["overall"]] == \
        [(r["bot"], r["score"]) for r in event_standings(TournamentView.load(store, tid))]
    assert {r["bot"] for r in data["overall"]} == {"first", "rand", "rand-2", "rand-3"}
    # Each stage's cell shows what it gives: rank, match points / the stage's maximum → contribution.
    overall = html[html.index('id="overall-table"'):html.index("</table>", html.index('id="overall-table"'))]
    played = sum(1 for r in data["overall"] for c in r["stages"] if c["rank"] is not None)
    assert overall.count(" → ") == played > 0
    assert "weighted mean over the stages a bot plays of its share" in html
    assert [s["game"] for s in data["stages"]] == ["xeri", "crosswalk"]
    for stage in data["stages"]:
        assert f'id="stage-{stage["stage"]}"' in html
        stored = store.ratings(tid, stage["ratings"]["method"], stage["stage"])
        assert [r["rating"] for r in stage["ratings"]["rows"]] == [r["rating"] for r in stored]
    four = data["stages"][1]
    assert four["deals"] == []  # no per-deal pair lines at tables of four
    assert all(len(g["seats"]) == 4 for g in four["games"])
    assert 'href="/leaderboard/crosswalk"' in _html(client, "/")
    assert _json(client, "/api/leaderboard/crosswalk")["source"] == "computed"


def test_a_ladder_is_not_a_tournament_page(client, store):
    assert f"/ladders/{_lid(store)}" in _html(client, f"/tournaments/{_lid(store)}", 404)


# -- ladders ------------------------------------------------------------------------------------


def test_ladder_pages(client, store):
    lid = _lid(store)
    assert f'href="/ladders/{lid}"' in _html(client, "/ladders")
    assert _json(client, "/api/ladders")["ladders"][0]["id"] == lid
    html = _html(client, f"/ladders/{lid}")
    data = _json(client, f"/api/ladders/{lid}")
    games = store.db.execute("select id from games where tournament_id = ?", [lid]).fetchall()
    assert data["games_played"] == len(games) > 0
    assert "games_per_minute" in data and data["live"] is False
    assert data["recent_games"] and all(f'href="/games/{g["id"]}"' in html
                                        for g in data["recent_games"])
    assert "xeri" in data["leaderboards"]
    assert "lad-a" in html


@pytest.mark.parametrize("url, status", [("/ladders/999", 404), ("/ladders/x1", 400)])
def test_ladder_errors(client, store, url, status):
    _html(client, url, status)
    _json(client, "/api" + url, status)
    _html(client, f"/ladders/{_tid(store)}", 404)  # a tournament is not a ladder


# -- bots ---------------------------------------------------------------------------------------


def test_bot_list(client, store):
    html = _html(client, "/bots")
    assert XSS_ESCAPED in html and 'href="/bots/first"' in html
    names = {b["name"] for b in _json(client, "/api/bots")["bots"]}
    assert names == {r[0] for r in store.db.execute("select name from bots")}


def test_bot_page_of_the_xss_bot(client, store):
    url = "/bots/" + quote(XSS, safe="")
    html = _html(client, url)
    assert f"<h1>{XSS_ESCAPED}" in html
    assert XSS not in _page_data(html)  # tojson escapes '<' inside the script element
    data = _json(client, "/api" + url)
    (v,) = data["versions"]
    assert v["name"] == XSS
    games = store.db.execute("select count(*) from game_seats s join bots b on b.id = s.bot_id "
                             "where b.name = ?", [XSS]).fetchone()[0]
    assert v["games_played"] == games
    assert v["history"] and v["history"][0]["kind"] == "tournament"
    opponents = {r[0] for r in store.db.execute(
        "select distinct o.bot from game_seats s join game_seats o on o.game_id = s.game_id "
        "and o.team != s.team where s.bot = ?", [XSS])}
    assert {h["bot"] for h in v["head_to_head"]} == opponents >= {"first", "rand", "crasher"}
    h2h = rating_reports.head_to_head(store, XSS, "first").as_dict()
    (row,) = [h for h in v["head_to_head"] if h["bot"] == "first"]
    assert (row["wins"], row["draws"], row["losses"]) == (h2h["wins"], h2h["draws"], h2h["losses"])
    assert v["recent_games"] and 'class="game-link" href="/games/' in html


def test_bot_page_with_failures_and_ladder_history(client, store):
    crasher = _json(client, "/api/bots/crasher")["versions"][0]
    assert crasher["failures"] and CRASH_STDERR in crasher["failures"][0]["stderr_tail"]
    assert html_escape(CRASH_STDERR) in _html(client, "/bots/crasher")
    lad = _json(client, "/api/bots/lad-a?version=1")
    assert lad["version"] == "1" and lad["versions"][0]["version"] == "1"
    assert any(s["kind"] == "ladder" for s in lad["versions"][0]["history"])
    html = _html(client, "/bots/lad-a")
    assert 'class="chart"' in html and '"charts"' in _page_data(html)


@pytest.mark.parametrize("url", ["/bots/nobody", "/bots/first?version=9"])
def test_bot_errors(client, url):
    _html(client, url, 404)
    _json(client, "/api" + url, 404)


# -- games (the replay viewer's routes) ---------------------------------------------------------


def test_game_routes_validate_ids(client, store):
    for url in ("/games/bad%20id!", "/api/games/bad%20id!", "/api/games/bad%20id!/replay"):
        assert client.get(url).status_code == 400
    for url in ("/games/nosuchgame", "/api/games/nosuchgame", "/api/games/nosuchgame/replay"):
        assert client.get(url).status_code == 404
    assert "error" in client.get("/api/games/nosuchgame").json()


def test_game_routes_call_the_replay_module(client, store):
    pytest.importorskip("arena.web.replay")
    gid = store.game_results(_tid(store))[0]["id"]
    meta = _json(client, f"/api/games/{gid}")
    assert isinstance(meta, dict)
    assert _json(client, f"/api/games/{gid}/replay?view=nonsense", 400)["status"] == 400
    assert isinstance(_json(client, f"/api/games/{gid}/replay?view=full"), dict)


# -- the whole app ------------------------------------------------------------------------------


def test_unknown_pages_are_404_pages(client):
    assert "not found" in _html(client, "/no/such/page", 404)
    assert _json(client, "/api/no/such", 404)["status"] == 404


def test_every_response_carries_the_security_headers(client, store):
    for url in ("/", "/api/leaderboards", "/tournaments/999", "/static/css/app.css"):
        headers = client.get(url).headers
        csp = headers["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp and "unsafe" not in csp
        assert headers["x-content-type-options"] == "nosniff"


def test_pages_have_no_inline_script(client, store):
    for url in ("/", f"/tournaments/{_tid(store)}", "/bots/first"):
        html = _html(client, url)
        scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
        for attrs, _body in scripts:
            assert 'src="/static/' in attrs or 'type="application/json"' in attrs
        assert 'href="/static/css/app.css"' in html and 'src="/static/js/app.js"' in html
        for nav in ("Leaderboards", "Tournaments", "Ladders", "Bots"):
            assert f">{nav}</a>" in html


def test_static_files_are_served_and_traversal_refused(client):
    css = client.get("/static/css/app.css")
    assert css.status_code == 200 and "text/css" in css.headers["content-type"]
    js = client.get("/static/js/app.js")
    assert js.status_code == 200 and "sortBy" in js.text
    for url in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2fapp.py",
                "/static/css/..%2f..%2fapp.py", "/static/%2e%2e/%2e%2e/store.py"):
        response = client.get(url)
        assert response.status_code == 404, url
        assert "create_app" not in response.text


def test_a_server_error_is_one_line_without_traceback(db, monkeypatch):
    from arena.web import data

    def broken(store):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(data, "tournaments", broken)
    with TestClient(create_app(db), raise_server_exceptions=False) as c:
        response = c.get("/tournaments")
    assert response.status_code == 500
    assert "secret internals" not in response.text and "Traceback" not in response.text
    assert response.headers["x-content-type-options"] == "nosniff"


def test_serving_every_page_leaves_the_database_unchanged(db, store):
    # The -shm file is SQLite's shared index of the WAL, which readers too may touch: not data.
    files = [p for p in db.parent.glob("arena.db*") if p.is_file() and not p.name.endswith("-shm")]
    before = {p.name: _digest(p) for p in files}
    with TestClient(create_app(db)) as c:
        tid, lid = _tid(store), _lid(store)
        gid = store.game_results(tid)[0]["id"]
        for url in ("/", "/leaderboard/xeri", "/leaderboard/xeri?method=pl",
                    "/leaderboard/xeri?method=elo", f"/leaderboard/xeri?ladder={lid}",
                    "/tournaments", f"/tournaments/{tid}", "/ladders", f"/ladders/{lid}",
                    "/bots", "/bots/first", "/bots/" + quote(XSS, safe=""), "/bots/lad-a",
                    f"/games/{gid}", f"/api/games/{gid}", f"/api/games/{gid}/replay"):
            for prefix in ("", "/api"):
                if prefix and url.startswith("/api") or prefix and url.startswith("/games"):
                    continue
                c.get(prefix + ("/leaderboards" if prefix and url == "/" else url))
    after = {p.name: _digest(p) for p in files}
    assert after == before


# -- live pages ---------------------------------------------------------------------------------


def test_a_running_tournament_and_ladder_are_live(db, tmp_path):
    copy = tmp_path / "live.db"
    source, target = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True), sqlite3.connect(copy)
    source.backup(target)  # a consistent copy that leaves the module's database untouched
    source.close(), target.close()
    writer = Store(copy)
    ids = {False: _tid(writer), True: _lid(writer)}
    for tid in ids.values():
        writer.acquire_lease(tid, Lease.mine(), take_stale=True)  # this process: alive
        writer.set_status(tid, "running")
    with TestClient(create_app(copy)) as c:
        data = _json(c, f"/api/tournaments/{ids[False]}")
        assert data["live"] is True and data["status"]["lease"]["alive"] is True
        html = _html(c, f"/tournaments/{ids[False]}")
        assert '"live": true' in _page_data(html) and 'class="live-badge"' in html
        assert f'"api": "/api/tournaments/{ids[False]}"' in _page_data(html)
        assert _json(c, f"/api/ladders/{ids[True]}")["live"] is True
        assert _json(c, "/api/leaderboard/xeri")["live"] is True
        live = {t["id"]: t["live"] for t in _json(c, "/api/tournaments")["tournaments"]}
        assert live.pop(ids[False]) is True and not any(live.values())


# -- arena serve --------------------------------------------------------------------------------


def test_serve_refuses_a_bad_database_in_one_line(tmp_path):
    from typer.testing import CliRunner

    from arena.cli import app

    out = CliRunner().invoke(app, ["serve", "--db", str(tmp_path / "none.db")])
    assert out.exit_code == 2
    assert "no database" in out.output and len(out.output.strip().splitlines()) == 1


def test_serve_binds_loopback_and_warns_elsewhere(db, monkeypatch):
    import uvicorn
    from typer.testing import CliRunner

    from arena.cli import app

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **kw: calls.append((host, port)))
    # Whether 8000 is free on this machine is not what this test is about.
    monkeypatch.setattr("arena.cli.serve.check_listen", lambda host, port: None)
    out = CliRunner().invoke(app, ["serve", "--db", str(db), "--port", "8123"])
    assert out.exit_code == 0, out.output
    assert calls == [("127.0.0.1", 8123)]
    assert "http://127.0.0.1:8123/" in out.output and "warning" not in out.output
    out = CliRunner().invoke(app, ["serve", "--db", str(db), "--host", "0.0.0.0"])
    assert out.exit_code == 0 and calls[-1] == ("0.0.0.0", 8000)
    assert "warning: binding 0.0.0.0" in out.output


def test_templates_mark_no_data_safe_and_use_no_inline_script_or_style():
    folder = ROOT / "arena" / "web" / "templates"
    # replay.html is the replay viewer's (its own tests cover it); the CSP binds it all the same.
    templates = sorted(p for p in folder.glob("*.html") if p.name != "replay.html")
    assert len(templates) >= 10
    for path in templates:
        text = path.read_text()
        assert "|safe" not in text.replace(" ", "") and "autoescape false" not in text, path.name
        assert not re.search(r"<[^>]+\son[a-z]+=", text), f"{path.name}: inline event handler"
        assert not re.search(r"<[^>]+\sstyle=", text), f"{path.name}: inline style"
        for attrs in re.findall(r"<script([^>]*)>", text):
            assert "src=" in attrs or 'type="application/json"' in attrs, path.name

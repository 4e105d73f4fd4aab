"""Bad input to the web app: each case answers 4xx naming the bad value (JSON under /api, an
HTML page elsewhere), never a 500; a damaged or incomplete database is refused at startup in one
line, or answered with a clear 503, and never written.

The database is test_web_app's (its module fixtures are reused, so it is built once here).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from arena.errors import StoreError
from arena.store import Store
from arena.web import create_app
from tests.support.web_app import _digest, _html, _json, _tid, client, db, store  # noqa: F401 - fixtures


def _gid(store) -> str:
    return store.game_results(_tid(store))[0]["id"]


# -- replay views -------------------------------------------------------------------------------


@pytest.mark.parametrize("view", ["seat:\u00b2", "seat:\uff11", "seat:\u0661", "seat:-1", "seat:"])
def test_a_seat_view_must_be_ascii_digits(client, store, view):
    # '²' passed isdigit and then failed int(): a 500; '１' and '١' were read as seat 1.
    error = _json(client, f"/api/games/{_gid(store)}/replay?view={view}", 400)["error"]
    assert repr(view) in error and "seat:0" in error


def test_a_long_view_is_cut_in_the_error(client, store):
    view = "v" * 5000
    error = _json(client, f"/api/games/{_gid(store)}/replay?view={view}", 400)["error"]
    assert repr(view[:40]) in error and len(error) < 200


# -- errors name the bad value ------------------------------------------------------------------


@pytest.mark.parametrize("gid", ["bad%20id!", "a" * 201, "%c3%a9t\u00e9"])
def test_a_bad_game_id_is_named(client, gid):
    from urllib.parse import unquote

    for url in (f"/api/games/{gid}", f"/api/games/{gid}/replay"):
        error = _json(client, url, 400)["error"]
        assert repr(unquote(gid)[:40]) in error
    assert "bad game id" in _html(client, f"/games/{gid}", 400)


def test_a_game_id_with_a_trailing_newline_is_refused(client, store):
    # GAME_ID.match with '$' accepted "id\n" as a valid id (then looked it up).
    error = _json(client, f"/api/games/{_gid(store)}%0A", 400)["error"]
    assert repr(_gid(store) + "\n") in error


def test_an_unknown_method_is_named(client):
    error = _json(client, "/api/leaderboard/xeri?method=glicko", 400)["error"]
    assert "'glicko'" in error and "bt, pl, elo" in error
    assert "&#39;glicko&#39;" in _html(client, "/leaderboard/xeri?method=glicko", 400)


@pytest.mark.parametrize("url", ["/api", "/api?x=1"])
def test_a_bare_api_path_answers_in_json(client, url):
    assert _json(client, url, 404) == {"error": "Not Found", "status": 404}


# -- bad database files -------------------------------------------------------------------------


def _copy(db: Path, target: Path) -> Path:
    """A consistent one-file copy of the module's database (which stays untouched)."""
    source, copy = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True), sqlite3.connect(target)
    source.backup(copy)
    source.close(), copy.close()
    return target


def _edit(path: Path, *sql: str, args=()) -> Path:
    conn = sqlite3.connect(path)
    for statement in sql:
        conn.execute(statement, args if "?" in statement else ())
    conn.commit()
    conn.close()
    return path


def _serve_refuses(path: Path, *phrases: str) -> None:
    from typer.testing import CliRunner

    from arena.cli import app

    with pytest.raises(StoreError) as info:
        create_app(path)
    for phrase in phrases:
        assert phrase in str(info.value)
    out = CliRunner().invoke(app, ["serve", "--db", str(path)])
    assert out.exit_code == 2, out.output  # never uvicorn.run: it refuses before serving
    assert len(out.output.strip().splitlines()) == 1 and phrases[-1] in out.output


def test_a_schema_version_of_non_ascii_digits_is_refused_in_one_line(tmp_path):
    # '²' passed isdigit and int() raised a ValueError traceback out of `arena serve`.
    path = _edit(tmp_path / "sup.db", "create table meta (key, value)",
                 "insert into meta values ('schema_version', ?)", args=["\u00b2"])
    _serve_refuses(path, "no schema version", "'\u00b2'")


@pytest.mark.parametrize("sql, phrase", [
    ("drop table bots", "no table 'bots'"),
    ("alter table games drop column deal", "table 'games' lacks column(s) deal"),
])
def test_an_incomplete_arena_database_is_refused_at_startup(db, tmp_path, sql, phrase):
    # The meta table says the current version, so this started and then every page reading the
    # missing part was a 500.
    path = _edit(_copy(db, tmp_path / "part.db"), sql)
    _serve_refuses(path, "not a complete Arena database", phrase)


def test_a_database_with_only_a_meta_table_is_refused(db, tmp_path):
    version = Store.open_readonly(db).db.execute(
        "select value from meta where key = 'schema_version'").fetchone()[0]
    path = _edit(tmp_path / "meta.db", "create table meta (key, value)",
                 "insert into meta values ('schema_version', ?)", args=[version])
    _serve_refuses(path, "not a complete Arena database", "no table")


@pytest.mark.parametrize("content, phrase", [
    (b"", "no such table: meta"), (b"not sqlite\n" * 50, "file is not a database"),
    ("header", "malformed"), ("half", "malformed"),
])
def test_empty_foreign_or_truncated_files_are_refused(db, tmp_path, content, phrase):
    raw = _copy(db, tmp_path / "whole.db").read_bytes()
    path = tmp_path / "bad.db"
    path.write_bytes({"header": raw[:50], "half": raw[:len(raw) // 2]}.get(content, content))
    _serve_refuses(path, phrase)


def test_a_damaged_table_is_a_clear_503_and_the_file_is_unchanged(db, store, tmp_path):
    path = _copy(db, tmp_path / "damaged.db")
    conn = sqlite3.connect(path)
    page = conn.execute("pragma page_size").fetchone()[0]
    root = conn.execute("select rootpage from sqlite_master where name = 'games'").fetchone()[0]
    conn.close()
    raw = bytearray(path.read_bytes())
    raw[(root - 1) * page:root * page] = b"\xff" * page  # the games table's first page
    path.write_bytes(bytes(raw))
    before = _digest(path)
    with TestClient(create_app(path), raise_server_exceptions=False) as c:
        for url in (f"/tournaments/{_tid(store)}", f"/games/{_gid(store)}"):
            response = c.get("/api" + url)
            assert response.status_code == 503, (url, response.text[:200])
            assert "cannot be read: database disk image is malformed" in response.json()["error"]
            assert "malformed" in _html(c, url, 503)
        assert c.get("/bots").status_code == 200  # the rest of the file still serves
    assert _digest(path) == before


# -- a crawl of bad input -----------------------------------------------------------------------


def _bad_urls(store) -> list[str]:
    tid, gid, long = _tid(store), _gid(store), "x" * 3000
    ids = ["999", "0", "-1", "abc", "1.5", "99999999999999999999", "\uff11", "%00", "%ff", long]
    urls = [f"/{kind}/{i}" for kind in ("tournaments", "ladders") for i in ids]
    urls += [f"/leaderboard/{g}" for g in ("nosuch", "XERI", "%00", "%ff", long)]
    urls += [f"/leaderboard/xeri?{q}" for q in ("method=glicko", "method=" + long, "ladder=-1",
                                               "ladder=%ff", f"ladder={tid}", "ladder=" + long)]
    urls += [f"/bots/{b}" for b in ("nobody", "first@1", "lad-a@1", "%00", "%ff", long)]
    urls += [f"/bots/lad-a?version={v}" for v in ("9", "%00", long)]
    urls += [f"/games/{g}" for g in ("nosuch", "bad%20id!", "%ff", "a" * 201, gid + "%0A")]
    urls = [u for url in urls for u in (url, "/api" + url)]
    urls += [f"/api/games/{gid}/replay?view={v}" for v in ("seat:\u00b2", "seat:\uff11", "seat:9",
                                                          "seat:-1", "FULL", long)]
    urls += [f"/static/{s}" for s in ("../app.py", "%2e%2e/app.py", "..%2fapp.py", "%00", long)]
    return urls


def test_a_crawl_of_bad_input_is_all_4xx_and_writes_nothing(db, store, tmp_path):
    path = _copy(db, tmp_path / "crawl.db")
    _edit(path, "pragma journal_mode = wal")  # as the driver leaves it: readers may touch -shm
    files = [p for p in tmp_path.glob("crawl.db*") if not p.name.endswith("-shm")]
    before = {p.name: _digest(p) for p in files}
    with TestClient(create_app(path), raise_server_exceptions=False) as c:
        for url in _bad_urls(store):
            response = c.get(url)
            assert 400 <= response.status_code < 500, (url[:80], response.status_code)
            assert "Traceback" not in response.text
            if url.startswith("/api"):
                assert response.json()["status"] == response.status_code, url[:80]
    assert {p.name: _digest(p) for p in files} == before
    # A reader of a WAL database may create an empty -wal beside it: nothing written to it.
    assert all(p.stat().st_size == 0 for p in tmp_path.glob("crawl.db-wal") if p not in files)


# -- repeated parameters ------------------------------------------------------------------------


@pytest.mark.parametrize("url, key", [
    ("/leaderboard/xeri?method=bt&method=pl", "method"),
    ("/leaderboard/xeri?ladder=1&ladder=2", "ladder"),
    ("/bots/lad-a?version=1&version=2", "version"),
])
def test_a_parameter_given_twice_is_refused(client, url, key):
    # Starlette keeps the last value: ?method=bt&method=pl silently showed the pl board.
    error = _json(client, "/api" + url, 400)["error"]
    assert error.startswith(f"{key} given 2 times: ")
    assert key in _html(client, url, 400)


def test_a_replay_view_given_twice_is_refused(client, store):
    gid = _gid(store)
    error = _json(client, f"/api/games/{gid}/replay?view=full&view=seat:0", 400)["error"]
    assert error == "view given 2 times: 'full', 'seat:0'"
    assert _json(client, f"/api/games/{gid}/replay?view=", 400)["status"] == 400  # as before


def test_a_name_at_version_path_points_to_the_version_parameter(client):
    error = _json(client, "/api/bots/lad-a@1", 404)["error"]
    assert error == "no bot named 'lad-a@1'; for version '1' of 'lad-a' see /bots/lad-a?version=1"
    assert "/bots/lad-a?version=1" in _html(client, "/bots/lad-a@1", 404)
    assert _json(client, "/api/bots/nobody@1", 404)["error"] == "no bot named 'nobody@1'"

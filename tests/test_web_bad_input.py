"""Bad input to the web app: each case answers 4xx naming the bad value (JSON under /api, an
HTML page elsewhere), never a 500; a damaged or incomplete database is refused at startup in one
line, or answered with a clear 503, and never written.

The database is test_web_app's (its module fixtures are reused, so it is built once here).
"""

from __future__ import annotations

import pytest

from test_web_app import _html, _json, _tid, client, db, store  # noqa: F401 - fixtures


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

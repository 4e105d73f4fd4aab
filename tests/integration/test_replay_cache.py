"""The replay cache: a finished game's replay JSON, facts and page data are computed once, served
with an ETag (a conditional GET is a 304), computed once for concurrent first requests, and a game
whose recording is not complete is never cached."""

from __future__ import annotations

import asyncio
import gzip
import json
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

import arena.web.app as web_app
from arena.store import Store
from arena.web import create_app, replay
from arena.web.replay_cache import ReplayCache, budget_from_env
from tests.support.tournaments import play_tournament


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """A database with one small Xeri round robin."""
    folder = tmp_path_factory.mktemp("replaycache")
    path = folder / "arena.db"
    play_tournament(folder, Store(path))
    return path


@pytest.fixture(scope="module")
def game_id(db) -> str:
    """The first recorded game."""
    store = Store.open_readonly(db)
    return next(store.db.query("select id from games order by ordinal"))["id"]


@pytest.fixture
def calls(monkeypatch) -> dict[str, int]:
    """How many times each replay function ran (counting wrappers around the real ones)."""
    counts = {"replay_data": 0, "game_meta": 0, "move_list": 0}
    lock = threading.Lock()
    for name in counts:
        real = getattr(replay, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            with lock:
                counts[_name] += 1
            time.sleep(0.05)  # long enough that concurrent first requests overlap
            return _real(*args, **kwargs)

        monkeypatch.setattr(replay, name, counted)
    return counts


def test_a_finished_replay_is_computed_once_and_revalidates_with_its_etag(db, game_id, calls):
    with TestClient(create_app(db)) as client:
        first = client.get(f"/api/games/{game_id}/replay?view=seat:1")
        second = client.get(f"/api/games/{game_id}/replay?view=seat:1")
        assert first.status_code == second.status_code == 200
        assert first.json() == second.json() and first.json()["view"] == "seat:1"
        assert calls["replay_data"] == 1
        etag = first.headers["etag"]
        assert etag == second.headers["etag"] and "immutable" in first.headers["cache-control"]
        again = client.get(f"/api/games/{game_id}/replay?view=seat:1",
                           headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
        # Another view is another entry, with another tag; the first view's tag does not match it.
        full = client.get(f"/api/games/{game_id}/replay", headers={"If-None-Match": etag})
        assert full.status_code == 200 and full.json()["view"] == "full"
        assert full.headers["etag"] != etag and calls["replay_data"] == 2
        # The facts and the page are cached too.
        for _ in range(3):
            assert client.get(f"/api/games/{game_id}").status_code == 200
            assert client.get(f"/games/{game_id}").status_code == 200
        assert calls["game_meta"] == 2 and calls["move_list"] == 1  # the page's meta + the API's


def test_the_cached_body_is_sent_gzipped_when_accepted_and_plain_otherwise(db, game_id):
    with TestClient(create_app(db)) as client:
        zipped = client.get(f"/api/games/{game_id}/replay",
                            headers={"Accept-Encoding": "gzip"})
        plain = client.get(f"/api/games/{game_id}/replay",
                           headers={"Accept-Encoding": "identity"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert "content-encoding" not in plain.headers
    assert zipped.json() == plain.json() == json.loads(plain.content)
    assert zipped.headers["etag"] == plain.headers["etag"]


def test_concurrent_first_requests_compute_once(db, game_id, calls):
    app = create_app(db)

    async def many() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await asyncio.gather(*(
                client.get(f"/api/games/{game_id}/replay") for _ in range(20)))

    answers = asyncio.run(many())
    assert {a.status_code for a in answers} == {200}
    assert len({a.content for a in answers}) == 1
    assert calls["replay_data"] == 1


def test_a_game_whose_recording_is_not_complete_is_not_cached(db, game_id, calls, monkeypatch):
    monkeypatch.setattr(web_app, "game_recording",
                        lambda store, gid: {"recorded_at": "", "complete": False})
    with TestClient(create_app(db)) as client:
        answers = [client.get(f"/api/games/{game_id}/replay") for _ in range(3)]
        assert client.app.state.replay_cache.used == 0
    assert {a.status_code for a in answers} == {200}
    assert calls["replay_data"] == 3
    assert "immutable" not in answers[0].headers.get("cache-control", "")


def test_the_cache_can_be_turned_off(db, game_id, calls, monkeypatch):
    monkeypatch.setenv("ARENA_REPLAY_CACHE_MB", "0")
    with TestClient(create_app(db)) as client:
        for _ in range(2):
            assert client.get(f"/api/games/{game_id}/replay").status_code == 200
    assert calls["replay_data"] == 2


def test_an_unknown_game_is_a_404_and_nothing_is_cached(db):
    with TestClient(create_app(db)) as client:
        assert client.get("/api/games/nope/replay").status_code == 404
        assert client.get("/games/nope").status_code == 404
        assert len(client.app.state.replay_cache) == 0


def test_the_lru_keeps_within_its_byte_budget():
    cache = ReplayCache(100)
    cache.put("a", "A", 40)
    cache.put("b", "B", 40)
    assert cache.get("a") == "A"  # now the most recent: "b" goes first
    cache.put("c", "C", 40)
    assert cache.get("b") is None and cache.get("a") == "A" and cache.get("c") == "C"
    assert cache.used == 80
    cache.put("huge", "H", 101)  # larger than the budget: not kept, nothing evicted
    assert cache.get("huge") is None and len(cache) == 2


def test_gzip_body_round_trips():
    from arena.web.replay_cache import encode

    encoded = encode(b'{"a": 1}' * 100)
    assert gzip.decompress(encoded.gzipped) == encoded.body and encoded.etag.startswith('W/"')


@pytest.mark.parametrize("text, budget", [("", 256 << 20), ("0", 0), ("1", 1 << 20), ("-3", 0),
                                          ("lots", 256 << 20), ("nan", 256 << 20),
                                          ("inf", sys.maxsize)])
def test_the_budget_comes_from_the_environment(monkeypatch, text, budget):
    # "nan" and "inf" once raised out of int() at the server's start.
    monkeypatch.setenv("ARENA_REPLAY_CACHE_MB", text)
    assert budget_from_env() == budget

"""The page cache (arena/web/page_cache.py) behind the public list pages: a page is built once
while the database is unchanged, every reader gets the same bytes (with an ETag: a conditional
GET is a 304), a recorded rating update or any other commit is seen by the next request, JSON and
HTML match what an uncached app answers, and nothing that depends on the viewer is shared."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import threading
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from arena.leaderboards import GAME_SCOPE
from arena.leaderboards import leaderboard as fit_leaderboard
from arena.server.app import ServerConfig, create_server_app
from arena.store import Store
from arena.store.changes import DatabaseMarker
from arena.web import create_app, data
from arena.web.page_cache import PageCache, max_age_from_env
from tests.support.game_logs import record_logged_game
from tests.support.server import form_sign_in, logged_game_with_authors
from tests.support.tournaments import play_tournament

B_LINE = "b after dropping"  # a line of bot b's stderr in game g (tests/support/game_logs.py)


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """A database with one small Xeri round robin (four bots), no stored game-scope board."""
    folder = tmp_path_factory.mktemp("pagecache")
    play_tournament(folder, Store(folder / "arena.db"))
    return folder / "arena.db"


@pytest.fixture
def db(played, tmp_path) -> Path:
    """A copy of the played database that the test may write to."""
    target = tmp_path / "arena.db"
    source, copy = sqlite3.connect(f"{played.as_uri()}?mode=ro", uri=True), sqlite3.connect(target)
    source.backup(copy)
    source.close(), copy.close()
    return target


@pytest.fixture
def builds(monkeypatch) -> dict[str, int]:
    """How many times each page's data function ran (the app takes them when it is created)."""
    counts: dict[str, int] = {}
    lock = threading.Lock()
    for name in ("leaderboard", "leaderboards", "bots", "bot", "ladders"):
        real = getattr(data, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            with lock:
                counts[_name] = counts.get(_name, 0) + 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(data, name, counted)
    return counts


@pytest.fixture(autouse=True)
def long_lived(monkeypatch):
    """Entries live an hour: a page that changes in these tests changed with the database."""
    monkeypatch.setenv("ARENA_PAGE_CACHE_S", "3600")


def record_ratings(db: Path, top_rating: float) -> list[str]:
    """A rating update as the ladder records one: Xeri's game-scope Elo board refitted and stored,
    its first bot's rating set to `top_rating`. The bots' names, best first."""
    store = Store(db)
    try:
        rows = fit_leaderboard(store, "xeri", "elo", samples=0, save=False)["rows"]
        rows = [{k: v for k, v in r.items() if k != "rank"} for r in rows]
        rows[0] = {**rows[0], "rating": top_rating, "lo": None, "hi": None}
        store.save_pooled_ratings(GAME_SCOPE, "xeri", "elo", rows)
        return [r["bot"] for r in rows]
    finally:
        store.db.conn.close()


def uncached(db: Path, monkeypatch, url: str) -> httpx.Response:
    """`url` from an app without the cache, for comparison."""
    with monkeypatch.context() as m:
        m.setenv("ARENA_PAGE_CACHE_S", "0")
        app = create_app(db)
    assert not app.state.page_cache.enabled
    with TestClient(app) as c:
        return c.get(url)


# -- shared between readers -------------------------------------------------------------------------
def test_two_readers_between_updates_get_the_same_bytes_built_once(db, builds):
    app = create_app(db)
    with TestClient(app) as one, TestClient(app) as two:
        first, second = one.get("/leaderboard/xeri"), two.get("/leaderboard/xeri")
        assert first.status_code == second.status_code == 200
        assert first.content == second.content and first.headers["etag"] == second.headers["etag"]
        assert first.headers["cache-control"] == "no-cache"  # revalidate, never reuse blindly
        assert one.get("/api/leaderboard/xeri").content == two.get("/api/leaderboard/xeri").content
        assert builds["leaderboard"] == 1  # the HTML and the JSON share one build
        held = two.get("/leaderboard/xeri", headers={"If-None-Match": first.headers["etag"]})
        assert held.status_code == 304 and held.content == b""
        # Another query is another page with its own data.
        assert one.get("/leaderboard/xeri?method=pl").status_code == 200
        assert builds["leaderboard"] == 2


def test_the_cached_page_is_sent_gzipped_when_accepted(db):
    with TestClient(create_app(db)) as c:
        zipped = c.get("/api/leaderboard/xeri", headers={"Accept-Encoding": "gzip"})
        plain = c.get("/api/leaderboard/xeri", headers={"Accept-Encoding": "identity"})
    assert zipped.headers.get("content-encoding") == "gzip"
    assert "content-encoding" not in plain.headers
    assert zipped.json() == plain.json()


def test_concurrent_first_readers_build_the_page_once(db, builds):
    app = create_app(db)

    async def many() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await asyncio.gather(*(client.get("/leaderboard/xeri") for _ in range(20)))

    answers = asyncio.run(many())
    assert {a.status_code for a in answers} == {200}
    assert len({a.content for a in answers}) == 1
    assert builds["leaderboard"] == 1


# -- invalidation -----------------------------------------------------------------------------------
def test_a_recorded_rating_update_is_seen_by_the_next_reader_in_json_and_html(db, builds, monkeypatch):
    app = create_app(db)
    with TestClient(app) as c:
        before = c.get("/api/leaderboard/xeri").json()
        html_before = c.get("/leaderboard/xeri")
        assert before["source"] == "computed" and "9876" not in html_before.text
        names = record_ratings(db, 9876.0)
        after = c.get("/api/leaderboard/xeri").json()
        html_after = c.get("/leaderboard/xeri")
        assert after["source"] == "stored" and after["method"] == "elo"
        assert after["rows"][0]["bot"] == names[0] and after["rows"][0]["rating"] == 9876.0
        assert "9876" in html_after.text and html_after.headers["etag"] != html_before.headers["etag"]
        # The old tag no longer matches: the client gets the new page, not a 304.
        again = c.get("/leaderboard/xeri", headers={"If-None-Match": html_before.headers["etag"]})
        assert again.status_code == 200 and again.content == html_after.content
        assert builds["leaderboard"] == 2
        # A second update, and the index page (another page over the same marker) follows too.
        index = c.get("/api/leaderboards").json()
        assert [g["methods"] for g in index["games"] if g["game"] == "xeri"] == [["elo"]]
        record_ratings(db, 5432.0)
        assert c.get("/api/leaderboard/xeri").json()["rows"][0]["rating"] == 5432.0
        assert "5432" in c.get("/leaderboard/xeri").text
    # What the cache serves is what an app without it answers, byte for byte.
    fresh = uncached(db, monkeypatch, "/api/leaderboard/xeri")
    with TestClient(app) as c:
        assert c.get("/api/leaderboard/xeri").json() == fresh.json()
        assert c.get("/leaderboard/xeri").content == uncached(db, monkeypatch, "/leaderboard/xeri").content


def test_a_change_landing_while_a_page_is_built_is_seen_by_the_next_reader(db, monkeypatch):
    real, pending = data.leaderboard, []

    def read_then_change(*args, **kwargs):
        page = real(*args, **kwargs)
        if pending:  # the ladder records ratings just after this reader read the games
            record_ratings(db, pending.pop())
        return page

    monkeypatch.setattr(data, "leaderboard", read_then_change)
    for url, rating in (("/leaderboard/xeri", "7777"), ("/api/leaderboard/xeri", "6666")):
        pending.append(float(rating))
        with TestClient(create_app(db)) as c:
            assert rating not in c.get(url).text  # built from what it read: before the change
            assert rating in c.get(url).text, url  # its bytes are not filed as the new state's


def test_any_commit_by_another_connection_invalidates(db, builds):
    app = create_app(db)
    with TestClient(app) as c:
        assert c.get("/api/bots").status_code == 200
        assert c.get("/api/bots").status_code == 200
        assert builds["bots"] == 1
        store = Store(db)
        store.add_bot("newcomer")
        store.db.conn.close()
        assert "newcomer" in {b["name"] for b in c.get("/api/bots").json()["bots"]}
        assert builds["bots"] == 2


def test_a_database_replaced_under_the_server_is_read_afresh(db, tmp_path, builds):
    other = tmp_path / "other.db"
    shutil.copy(db, other)
    store = Store(other)
    store.add_bot("only-in-the-other-file")
    store.db.conn.close()
    with TestClient(create_app(db)) as c:
        assert "only-in-the-other-file" not in c.get("/api/bots").text
        os.replace(other, db)  # a new file (inode) at the same path
        for suffix in ("-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        assert "only-in-the-other-file" in c.get("/api/bots").text


def test_an_entry_older_than_its_max_age_is_rebuilt(db):
    now = [1000.0]
    cache = PageCache(db, max_age=2.0, clock=lambda: now[0])
    built: list[int] = []

    def build() -> int:
        built.append(1)
        return len(built)

    async def fetch() -> int:
        return await cache.fetch("page", build)

    assert asyncio.run(fetch()) == 1
    now[0] += 1.9
    assert asyncio.run(fetch()) == 1  # the database is unchanged and the entry young
    now[0] += 0.2
    assert asyncio.run(fetch()) == 2  # a live flag may have lapsed: built again
    assert (cache.hits, cache.misses) == (1, 2)


def commit_something(db: Path) -> None:
    """A commit by another connection: the database marker moves."""
    conn = sqlite3.connect(db)
    conn.execute("create table if not exists touched (x)")
    conn.execute("insert into touched values (1)")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("previous_age, stands_in", [(1.0, True), (4.5, False)])
def test_readers_during_a_rebuild_get_the_previous_build_if_young(db, previous_age, stands_in):
    now = [1000.0]
    cache = PageCache(db, max_age=2.0, clock=lambda: now[0])
    release, started = threading.Event(), threading.Event()
    versions = iter(["v1", "v2"])

    def build() -> str:
        version = next(versions)
        if version == "v2":
            started.set()
            assert release.wait(30)
        return version

    async def scenario() -> tuple[str, str, str]:
        assert await cache.fetch("page", build) == "v1"
        now[0] += previous_age
        commit_something(db)
        rebuild = asyncio.create_task(cache.fetch("page", build))  # this reader waits for v2
        while not started.is_set():
            await asyncio.sleep(0.01)
        other = asyncio.create_task(cache.fetch("page", build))
        await asyncio.sleep(0.05)
        other_done = other.done()
        release.set()
        return await rebuild, await other, other_done

    rebuilt, other, other_done = asyncio.run(scenario())
    assert rebuilt == "v2"
    # Young enough, the previous build is served at once; older, the reader waits for the rebuild.
    assert (other, other_done) == (("v1", True) if stands_in else ("v2", False))
    assert cache.stand_ins == int(stands_in)
    assert asyncio.run(cache.fetch("page", build)) == "v2"  # kept: no third build


def test_a_failed_build_is_not_kept(db):
    cache = PageCache(db, max_age=60)
    calls: list[int] = []

    def failing() -> int:
        calls.append(1)
        raise ValueError("no such page")

    for _ in range(2):
        with pytest.raises(ValueError, match="no such page"):
            asyncio.run(cache.fetch("page", failing))
    assert len(calls) == 2 and len(cache) == 0


def test_turned_off_every_request_builds_and_no_etag_is_sent(db, builds, monkeypatch):
    monkeypatch.setenv("ARENA_PAGE_CACHE_S", "0")
    with TestClient(create_app(db)) as c:
        answers = [c.get("/leaderboard/xeri") for _ in range(3)]
    assert {a.status_code for a in answers} == {200} and builds["leaderboard"] == 3
    assert "etag" not in answers[0].headers


@pytest.mark.parametrize("text, seconds", [("", 2.0), ("0", 0.0), ("0.5", 0.5), ("-3", 0.0),
                                           ("soon", 2.0), ("nan", 2.0)])
def test_the_max_age_comes_from_the_environment(monkeypatch, text, seconds):
    monkeypatch.setenv("ARENA_PAGE_CACHE_S", text)
    assert max_age_from_env() == seconds


def test_the_marker_moves_with_commits_and_files_and_is_none_without_a_file(db, tmp_path):
    marker = DatabaseMarker(db)
    first = marker.read()
    assert first is not None and marker.read() == first  # reading changes nothing
    conn = sqlite3.connect(db)
    conn.execute("create table extra (x)")
    conn.commit()
    conn.close()
    second = marker.read()
    assert second != first
    shutil.copy(db, tmp_path / "copy.db")
    os.replace(tmp_path / "copy.db", db)
    assert marker.read() not in (first, second, None)
    db.unlink()
    assert marker.read() is None
    marker.close()


# -- never shared between viewers -------------------------------------------------------------------
@pytest.fixture
def server(tmp_path):
    """(client factory, tokens): game g between a (the organiser's) and b (alice's), b crashing
    with its stderr recorded."""
    db = tmp_path / "arena.db"
    tokens = logged_game_with_authors(db, "bob")
    app = create_server_app(db)
    clients: list[TestClient] = []

    def client(token: str | None = None) -> TestClient:
        c = TestClient(app, follow_redirects=False)
        clients.append(c)
        if token is not None:
            assert form_sign_in(c, token).status_code == 303
        return c
    yield client, tokens
    for c in clients:
        c.close()


def test_a_signed_in_viewers_page_is_not_served_to_others(server):
    client, tokens = server
    anonymous, alice, bob = client(), client(tokens["alice"]), client(tokens["bob"])
    for url in ("/", "/bots", "/ladders"):
        first = anonymous.get(url)
        mine = alice.get(url)
        assert 'id="me-link">alice<' in mine.text and "etag" not in mine.headers, url
        assert 'id="me-link">bob<' in bob.get(url).text, url
        again = anonymous.get(url)
        assert "alice" not in again.text and 'id="signin-link"' in again.text, url
        assert again.content == first.content and again.headers["etag"] == first.headers["etag"]
        # A tag a signed-out browser kept is no 304 for a signed-in one: its page differs.
        assert alice.get(url, headers={"If-None-Match": first.headers["etag"]}).status_code == 200
        assert "Cookie" in mine.headers["vary"]


def test_a_bots_logs_reach_only_its_author_whoever_asked_first(server):
    client, tokens = server
    alice, anonymous, bob = client(tokens["alice"]), client(), client(tokens["bob"])
    for _ in range(2):  # the second round is served from the cached page data
        assert B_LINE in alice.get("/api/bots/b").text and B_LINE in alice.get("/bots/b").text
        for other in (anonymous, bob):
            assert B_LINE not in other.get("/api/bots/b").text
            page = other.get("/bots/b")
            assert B_LINE not in page.text and "only the bot&#39;s author sees its logs" in page.text
            assert B_LINE not in other.get("/tournaments/1").text
        assert B_LINE in alice.get("/tournaments/1").text
        # Readers not signed in share one view (with its tag); a signed-in author's is their own.
        second_anonymous = client()
        shared = anonymous.get("/api/bots/b").headers["etag"]
        assert second_anonymous.get("/api/bots/b").headers["etag"] == shared
        assert "etag" not in alice.get("/api/bots/b").headers


def test_a_game_not_yet_public_is_linked_only_for_its_author_whoever_asked_first(tmp_path):
    db = tmp_path / "arena.db"
    token = logged_game_with_authors(db)["alice"]
    app = create_server_app(db, ServerConfig(replay_delay=3600.0))
    with TestClient(app) as alice, TestClient(app) as anonymous:
        form_sign_in(alice, token, follow_redirects=False)
        for _ in range(2):
            for url in ("/api/bots/b", "/api/tournaments/1"):
                assert "hidden_games" not in alice.get(url).json(), url  # b's game: hers
                assert anonymous.get(url).json()["hidden_games"] == ["g"], url
            assert 'href="/games/g"' in alice.get("/bots/b").text
            assert 'href="/games/g"' not in anonymous.get("/bots/b").text


def test_arena_serve_shares_even_pages_with_logs(tmp_path):
    db = tmp_path / "arena.db"
    record_logged_game(db)
    with TestClient(create_app(db)) as c:
        first, second = c.get("/api/bots/b"), c.get("/api/bots/b")
    assert B_LINE in first.text and first.headers["etag"] == second.headers["etag"]


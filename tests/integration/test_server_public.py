"""What the public sees on `arena server`'s pages (arena/server/visibility.py), through Starlette's
TestClient over the web app tests' database: the replay delay (young games hidden from the public,
shown at once to their bots' authors and to organisers), versions of submitted bots hidden until
their check is clean, no author's source, check report or stderr on any public page or JSON, the
author's ladder standing and trajectory on /me, and every link under the root path.

Expected values are read from the store, not copied."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timedelta, timezone
from html import escape
from pathlib import Path
from urllib.parse import urldefrag, urlsplit

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from arena.cli import app as cli_app
from arena.server.app import ServerConfig, create_server_app
from arena.server.authors import add_author
from arena.server.visibility import Visibility, cutoff, parse_duration
from arena.store import Store
from arena.web import create_app
from tests.support.server import auth, bot_archive, form_sign_in
from tests.support.web_app import CRASH_STDERR, db  # noqa: F401 - the module fixture `db`

DELAY = 600.0  # seconds: ten minutes
LINK = re.compile(r'\b(?:href|src|action)="([^"]*)"')
REPORT_MARKER = "check-report-marker-7c1d"
SOURCE_MARKER = b"source-marker-5e2a"


@pytest.fixture
def server(db, tmp_path):  # noqa: F811 - the fixture imported above
    """(db copy, tokens, a client factory): alice owns the ladder bot lad-a and the crashing bot
    crasher (whose stderr is recorded); bob owns nothing; root is an organiser; every game was
    recorded a day ago."""
    path = tmp_path / "arena.db"
    source, copy = sqlite3.connect(db), sqlite3.connect(path)
    source.backup(copy)
    source.close()
    copy.close()
    store = Store(path)
    tokens = {"alice": add_author(store, "alice"), "bob": add_author(store, "bob"),
              "root": add_author(store, "root", role="organiser")}
    alice = store.author_named("alice")["id"]
    long_ago = (datetime.now(timezone.utc) - timedelta(days=1)).isoformat(timespec="milliseconds")
    with store.transaction():
        # as if alice had submitted them (a submitted version has a manifest)
        store.db.conn.execute("update bots set author_id = ?, manifest = coalesce(manifest, '{}') "
                              "where name in ('lad-a', 'crasher')", [alice])
        # every game public to begin with: the database was recorded moments ago
        store.db.conn.execute("update games set recorded_at = ?", [long_ago])
    store.db.conn.close()
    clients = []

    def client(config: ServerConfig | None = None, token: str | None = None, **kw) -> TestClient:
        c = TestClient(create_server_app(path, config), raise_server_exceptions=False,
                       follow_redirects=False, **kw)
        clients.append(c)
        if token is not None:
            signed = form_sign_in(c, token, kw.get("root_path", ""))
            assert signed.status_code == 303
        return c
    yield path, tokens, client
    for c in clients:
        c.close()


def query(path: Path, sql: str, args=()) -> list:
    store = Store.open_readonly(path)
    try:
        return store.db.conn.execute(sql, args).fetchall()
    finally:
        store.db.conn.close()


def execute(path: Path, sql: str, args=()) -> None:
    store = Store(path)
    try:
        with store.transaction():
            store.db.conn.execute(sql, args)
    finally:
        store.db.conn.close()


def ladder_game_of(path: Path, bot: str) -> str:
    """A ladder game `bot` played."""
    return query(path, "select g.id from games g join game_seats s on s.game_id = g.id "
                       "join bots b on b.id = s.bot_id join tournaments t on t.id = g.tournament_id "
                       "where b.name = ? and t.format = 'ladder' order by g.id limit 1", [bot])[0][0]


def make_young(path: Path, game_id: str, age_seconds: float = 1.0) -> None:
    stamp = (datetime.now(timezone.utc) - timedelta(seconds=age_seconds)).isoformat(
        timespec="milliseconds")
    execute(path, "update games set recorded_at = ? where id = ?", [stamp, game_id])


def crawl(client: TestClient, starts: list[str], root: str = "", limit: int = 400) -> dict[str, str]:
    """Every page reachable from `starts` by the links of the pages (same site, under `root`),
    with each HTML page's JSON twin under /api and each game's JSON and replay: {url: body}."""
    seen: dict[str, str] = {}
    queue = list(starts)
    while queue and len(seen) < limit:
        url = urldefrag(queue.pop(0))[0]
        if url in seen or url.endswith((".css", ".js")) or "/signout" in url or "/upload" in url:
            continue
        response = client.get(url)
        seen[url] = response.text
        if not response.headers.get("content-type", "").startswith("text/html"):
            continue
        queue += [link.replace("&amp;", "&") for link in LINK.findall(response.text)
                  if link.startswith("/") and not link.startswith("//")]
        parts = urlsplit(url)
        tail = parts.path.removeprefix(root)
        query = f"?{parts.query}" if parts.query else ""
        if tail.startswith("/games/"):
            queue += [f"{root}/api{tail}", f"{root}/api{tail}/replay"]
        elif tail not in ("/signin", "/me") and not tail.startswith("/api"):
            queue.append(f"{root}/api{tail if tail != '/' else '/leaderboards'}{query}")
    return seen


# -- the replay delay ------------------------------------------------------------------------------
def test_durations_parse_and_a_bad_one_is_refused_in_one_line(tmp_path):
    assert parse_duration("0") == 0
    assert parse_duration("10m") == parse_duration("600") == parse_duration("600s") == 10 * 60
    assert parse_duration("1h") == parse_duration("60m") and parse_duration("1.5h") == 90 * 60
    assert parse_duration("2d") == 48 * parse_duration("1h")
    runner = CliRunner()
    for bad in ("10x", "-5m", "m", "ten minutes"):
        result = runner.invoke(cli_app, ["server", "--db", str(tmp_path / "s.db"),
                                         "--replay-delay", bad])
        assert result.exit_code == 2, result.output
        assert "--replay-delay" in result.output and repr(bad) in result.output
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "s.db").exists()  # refused before anything was created


def test_the_boundary_of_the_delay_is_exact(server):
    path, _, _ = server
    game = ladder_game_of(path, "lad-b")
    recorded = query(path, "select recorded_at from games where id = ?", [game])[0][0]
    at = datetime.fromisoformat(recorded)
    visibility = Visibility(DELAY)
    store = Store.open_readonly(path)
    try:
        exactly = at + timedelta(seconds=DELAY)
        assert cutoff(DELAY, exactly) == recorded
        assert not visibility.game_hidden(store, game, None, exactly)  # as old as the delay: public
        assert visibility.game_hidden(store, game, None, exactly - timedelta(milliseconds=1))
        assert game in visibility.hidden_games(store, None, exactly - timedelta(milliseconds=1))
        assert game not in visibility.hidden_games(store, None, exactly)
        assert not Visibility(0).game_hidden(store, game, None, at)  # no delay: always public
    finally:
        store.db.conn.close()


def test_a_young_game_is_not_yet_public_but_its_author_and_organisers_see_it(server):
    path, tokens, client = server
    young = ladder_game_of(path, "lad-a")
    old = query(path, "select id from games where id != ? order by id limit 1", [young])[0][0]
    make_young(path, young)
    make_young(path, old, DELAY + 60)
    config = ServerConfig(replay_delay=DELAY)
    public = client(config)
    for url in (f"/games/{young}", f"/api/games/{young}", f"/api/games/{young}/replay"):
        r = public.get(url)
        assert r.status_code == 404 and "not yet public" in r.text and "10 min" in r.text, url
    assert public.get(f"/api/games/{young}/replay").json()["error"].startswith(
        f"game {young} is not yet public")
    assert public.get(f"/games/{old}").status_code == 200
    assert public.get(f"/api/games/{old}/replay").status_code == 200
    bob = client(config, tokens["bob"])  # signed in, but none of his bots played it
    assert bob.get(f"/games/{young}").status_code == 404
    for who in ("alice", "root"):  # lad-a's author, and an organiser
        c = client(config, tokens[who])
        assert c.get(f"/games/{young}").status_code == 200, who
        replay = c.get(f"/api/games/{young}/replay")
        assert replay.status_code == 200
        assert "private" in replay.headers["cache-control"]  # no proxy may keep it for others
    # the API's answer is the same for the public once the delay has passed
    make_young(path, young, DELAY + 1)
    assert public.get(f"/api/games/{young}/replay").status_code == 200
    # without a delay, and in `arena serve`, every game is public at once
    make_young(path, young)
    assert client().get(f"/games/{young}").status_code == 200
    with TestClient(create_app(path)) as serve:
        assert serve.get(f"/api/games/{young}/replay").status_code == 200


def test_public_game_lists_name_a_young_game_without_linking_it(server):
    path, tokens, client = server
    young = ladder_game_of(path, "lad-a")
    make_young(path, young)
    lid = query(path, "select id from tournaments where format = 'ladder'")[0][0]
    config = ServerConfig(replay_delay=DELAY)
    public, alice = client(config), client(config, tokens["alice"])
    pages = [f"/ladders/{lid}", "/bots/lad-a", "/bots/lad-b"]
    for url in pages:
        html = public.get(url).text
        assert f'href="/games/{young}"' not in html, url
        assert young in html, url  # named, without a link
        assert f'href="/games/{young}"' in alice.get(url).text, url
        data = public.get("/api" + url).json()
        assert young in data["hidden_games"]
        assert "hidden_games" not in alice.get("/api" + url).json()
    # a game older than the delay keeps its link
    other = query(path, "select g.id from games g where g.tournament_id = ? and g.id != ? "
                        "order by g.id limit 1", [lid, young])[0][0]
    assert f'href="/games/{other}"' in public.get(f"/ladders/{lid}").text


# -- submitted versions ----------------------------------------------------------------------------
def submit(client: TestClient, token: str, tmp: Path, version: str) -> int:
    archive = bot_archive(tmp, "subbot", version, SOURCE_MARKER + version.encode())
    r = client.post("/api/submissions", content=archive,
                    headers={**auth(token), "Content-Type": "application/gzip"})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def end_check(path: Path, sid: int, clean: bool) -> None:
    store = Store(path)
    try:
        store.end_check(sid, clean, json.dumps({"clean": clean, "problems": [
            {"game": "xeri", "seats": 2, "words": REPORT_MARKER}]}), None if clean else REPORT_MARKER)
    finally:
        store.db.conn.close()


def test_only_clean_versions_of_submitted_bots_are_public(server, tmp_path):
    path, tokens, client = server
    api = client()
    clean, _pending, failed = (submit(api, tokens["alice"], tmp_path, v) for v in ("1", "2", "3"))
    end_check(path, clean, True)
    end_check(path, failed, False)
    hidden = {r[0] for r in query(path, "select version from bots where name = 'subbot' and "
                                        "status in ('pending', 'rejected')")}
    assert hidden == {"2", "3"}
    public = client()
    page = public.get("/api/bots/subbot").json()
    assert page["all_versions"] == ["1"] and [v["version"] for v in page["versions"]] == ["1"]
    listed = {b["name"]: b for b in public.get("/api/bots").json()["bots"]}
    assert listed["subbot"]["versions"] == 1
    for version in hidden:
        assert public.get(f"/bots/subbot?version={version}").status_code == 404
        assert f"?version={version}" not in public.get("/bots/subbot").text
    # the author sees her own versions, an organiser every version
    for who in ("alice", "root"):
        seen = client(token=tokens[who]).get("/api/bots/subbot").json()["all_versions"]
        assert set(seen) == {"1", "2", "3"}, who
    # a bot with no clean version is not public at all
    execute(path, "update bots set status = 'pending' where name = 'subbot'")
    assert public.get("/bots/subbot").status_code == 404
    assert "subbot" not in {b["name"] for b in public.get("/api/bots").json()["bots"]}
    assert "subbot" in {b["name"] for b in client(token=tokens["alice"]).get("/api/bots").json()["bots"]}


@pytest.mark.parametrize("who", [None, "bob"])  # the public, and another author signed in
def test_no_public_page_or_json_shows_an_authors_source_report_or_stderr(server, tmp_path, who):
    path, tokens, client = server
    api = client()
    sid = submit(api, tokens["alice"], tmp_path, "1")
    end_check(path, sid, True)
    secrets = [CRASH_STDERR, escape(CRASH_STDERR), REPORT_MARKER, SOURCE_MARKER.decode()]
    public = crawl(client(token=tokens[who] if who else None),
                   ["/", "/bots", "/tournaments", "/ladders", "/bots/subbot", "/bots/crasher",
                    "/signin", "/me", f"/api/submissions/{sid}"])
    assert len(public) > 50 and any("/api/games/" in u for u in public)
    for url, body in public.items():
        for secret in secrets:
            assert secret not in body, (url, secret)
    # the crawl could have found them: the author's own pages show her stderr and report
    alice = client(token=tokens["alice"])
    mine = alice.get("/me").text + alice.get("/bots/crasher").text
    assert escape(CRASH_STDERR) in mine and REPORT_MARKER in mine


# -- the author's ladder standing and trajectory ---------------------------------------------------
def test_me_shows_the_ladder_standing_and_trajectory_of_my_bots(server):
    path, tokens, client = server
    snapshots = query(path, "select s.scope_id, s.method, s.rating, s.tables from rating_snapshots s "
                            "join bots b on b.id = s.bot_id where b.name = 'lad-a' "
                            "order by s.computed_at, s.tables")
    assert len(snapshots) >= 2
    scope_id, method = snapshots[0][0], snapshots[0][1]
    store = Store.open_readonly(path)
    board = store.pooled_ratings("ladder", scope_id, method)  # in the leaderboard page's order
    store.db.conn.close()
    rank = [r["bot"] for r in board].index("lad-a") + 1
    html = client(token=tokens["alice"]).get("/me").text
    section = html[html.index('<section id="ladders">'):html.index('<section id="bots">')]
    assert f"<td class=\"num\">{rank} of {len(board)}</td>" in section
    assert "lad-b" not in section  # only my bots
    path_d = re.search(r'<path class="series s0" d="([^"]+)"', section).group(1)
    points = [tuple(map(float, p[1:].split(","))) for p in path_d.split()]
    assert len(points) == len([s for s in snapshots if (s[0], s[1]) == (scope_id, method)])
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    assert xs == sorted(xs)  # left to right in time
    ratings = [s[2] for s in snapshots if (s[0], s[1]) == (scope_id, method)]
    # a higher rating is drawn higher (a smaller y)
    best, worst = ratings.index(max(ratings)), ratings.index(min(ratings))
    assert ys[best] <= ys[worst]
    assert f"{ratings[-1]:.0f}</td>" in section  # the numbers in a table, newest first
    assert "None of my bots is on a ladder yet" in client(token=tokens["bob"]).get("/me").text


# -- the root path ---------------------------------------------------------------------------------
@pytest.mark.parametrize("who", [None, "alice"])
def test_under_a_root_path_every_link_of_every_page_carries_it(server, who):
    path, tokens, client = server
    young = ladder_game_of(path, "lad-a")
    make_young(path, young)
    c = client(ServerConfig(replay_delay=DELAY), tokens[who] if who else None, root_path="/arena")
    pages = crawl(c, ["/arena/", "/arena/signin", "/arena/me", "/arena/nope",
                      f"/arena/games/{young}"], "/arena")
    html = {u: b for u, b in pages.items() if "<html" in b}
    assert len(html) > 20 and any("/arena/games/" in u for u in html)
    assert any("/arena/tournaments/" in u for u in html) and any("/arena/bots/" in u for u in html)
    for url, body in html.items():
        for link in LINK.findall(body):
            assert link.startswith(("/arena/", "data:", "https://", "http://")) or link == "/arena", \
                (url, link)
        data = json.loads(re.search(r'id="page-data">(.*?)</script>', body, re.S).group(1))
        assert data["root"] == "/arena"
        assert data["api"] is None or data["api"].startswith("/arena/api/"), (url, data["api"])
    nope = c.get("/arena/api/nope")  # an API error stays JSON under the root path
    assert nope.status_code == 404 and nope.headers["content-type"].startswith("application/json")
    # and the links lead somewhere: none of the crawled pages was missing but the one asked for
    missing = [u for u, b in html.items() if "<h1>404 —" in b]
    assert set(missing) <= {"/arena/nope"} | ({f"/arena/games/{young}"} if who is None else set())


def test_arena_serve_links_carry_the_root_path_too(db):  # noqa: F811
    with TestClient(create_app(db), root_path="/arena") as c:
        pages = crawl(c, ["/arena/", "/arena/ladders"], "/arena", limit=60)
    html = [b for b in pages.values() if "<html" in b]
    assert len(html) > 10
    for body in html:
        for link in LINK.findall(body):
            assert link.startswith(("/arena/", "data:")) or link == "/arena", link

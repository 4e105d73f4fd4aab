"""The author's pages of `arena server` (arena/server/pages.py) through Starlette's TestClient:
signing in with the API token, the session cookie's flags, CSRF on every form, the author's page
and its upload form, who sees which bot's logs, and escaping of every author-controlled string."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from arena.server.app import ServerConfig, create_server_app
from arena.server.authors import revoke_author
from arena.store import Store
from arena.uploads import UploadLimits
from arena.web import create_app
from tests.support.server import auth, bot_archive, csrf_of, form_sign_in, logged_game_with_authors

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
B_LINE = "b after dropping"  # a line of bot b's stderr in game g (tests/support/game_logs.py)
A_LINE = "a starts"  # a line of bot a's (no author: an organiser's bot)


@pytest.fixture
def server(tmp_path):
    """(db, tokens by author, a client factory): game g between a (the organiser's) and b
    (alice's), b crashing with its stderr recorded."""
    db = tmp_path / "arena.db"
    tokens = logged_game_with_authors(db, "bob", organisers=("root",))
    clients = []

    def client(config: ServerConfig | None = None, **kw) -> TestClient:
        c = TestClient(create_server_app(db, config), raise_server_exceptions=False,
                       follow_redirects=False, **kw)
        clients.append(c)
        return c
    yield db, tokens, client
    for c in clients:
        c.close()


def signed_in(client_factory, token: str, config: ServerConfig | None = None, **kw) -> TestClient:
    client = client_factory(config, **kw)
    assert form_sign_in(client, token).status_code == 303
    return client


def counts(db: Path) -> tuple:
    store = Store.open_readonly(db)
    try:
        q = store.db.conn.execute
        return (q("select count(*) from submissions").fetchone()[0],
                q("select count(*) from bots").fetchone()[0])
    finally:
        store.db.conn.close()


# -- signing in ------------------------------------------------------------------------------------
def test_a_good_token_opens_a_session_with_a_strict_httponly_cookie(server):
    db, tokens, client = server
    c = client()
    assert c.get("/me").headers["location"] == "/signin"  # not signed in: to the sign-in form
    r = form_sign_in(c, tokens["alice"])
    assert r.status_code == 303 and r.headers["location"] == "/me"
    cookie = [h for h in r.headers.get_list("set-cookie") if h.startswith("arena_session=")][0]
    flags = [f.strip().lower() for f in cookie.split(";")]
    assert "httponly" in flags and "samesite=strict" in flags and "path=/" in flags
    assert "secure" not in flags  # plain http (a test client): no Secure
    assert tokens["alice"] not in cookie  # the cookie is a session id, never the token
    me = c.get("/me")
    assert me.status_code == 200 and "alice" in me.text and 'id="me-link"' in me.text


def test_the_cookie_is_secure_when_the_request_came_over_tls(server):
    db, tokens, client = server
    c = client(base_url="https://testserver")
    r = form_sign_in(c, tokens["alice"])
    cookie = [h for h in r.headers.get_list("set-cookie") if h.startswith("arena_session=")][0]
    assert "secure" in [f.strip().lower() for f in cookie.split(";")]
    assert c.get("/me").status_code == 200


def test_a_wrong_or_revoked_token_does_not_sign_in_and_revoking_ends_the_session(server):
    db, tokens, client = server
    c = client()
    for bad in ("arena_nope", "", tokens["alice"] + "x"):
        r = form_sign_in(c, bad)
        assert r.status_code == 401 and "not valid" in r.text
        assert not any(h.startswith("arena_session=") for h in r.headers.get_list("set-cookie"))
    signed = signed_in(client, tokens["bob"])
    store = Store(db)
    revoke_author(store, "bob")
    store.db.conn.close()
    assert signed.get("/me").status_code == 303  # the session died with its token
    assert form_sign_in(client(), tokens["bob"]).status_code == 401


def test_signing_out_ends_the_session(server):
    db, tokens, client = server
    c = signed_in(client, tokens["alice"])
    r = c.post("/signout", data={"csrf": csrf_of(c.get("/me").text)})
    assert r.status_code == 303
    assert c.get("/me").status_code == 303


def test_under_a_root_path_the_cookie_and_the_redirects_carry_it(server):
    db, tokens, client = server
    c = client(root_path="/arena")
    form = c.get("/arena/signin")
    assert 'action="/arena/signin"' in form.text
    r = c.post("/arena/signin", data={"token": tokens["alice"], "csrf": csrf_of(form.text)})
    assert r.headers["location"] == "/arena/me"
    cookie = [h for h in r.headers.get_list("set-cookie") if h.startswith("arena_session=")][0]
    assert "path=/arena" in [f.strip().lower() for f in cookie.split(";")]
    assert 'action="/arena/me/upload"' in c.get("/arena/me").text


# -- CSRF ------------------------------------------------------------------------------------------
def test_the_sign_in_form_without_or_with_a_wrong_csrf_token_or_from_another_site_is_refused(server):
    db, tokens, client = server
    c = client()
    good = csrf_of(c.get("/signin").text)
    for data, headers in (({"token": tokens["alice"]}, {}),
                          ({"token": tokens["alice"], "csrf": "wrong"}, {}),
                          ({"token": tokens["alice"], "csrf": good}, {"Origin": "https://evil.example"})):
        r = c.post("/signin", data=data, headers=headers)
        assert r.status_code == 403
        assert not any(h.startswith("arena_session=") for h in r.headers.get_list("set-cookie"))
    assert c.get("/me").status_code == 303


def test_sign_out_and_upload_without_or_with_a_wrong_csrf_token_change_nothing(server, tmp_path):
    db, tokens, client = server
    c = signed_in(client, tokens["alice"])
    good = csrf_of(c.get("/me").text)
    archive = bot_archive(tmp_path, "rb", "1")
    before = counts(db)
    for fields, headers in (({}, {}), ({"csrf": "wrong"}, {}),
                            ({"csrf": good}, {"Origin": "https://evil.example"}),
                            ({"csrf": good}, {"Referer": "https://evil.example/x"})):
        r = c.post("/me/upload", data=fields, files={"archive": ("rb.tar.gz", archive)},
                   headers=headers)
        assert r.status_code == 403, r.text
        assert c.post("/signout", data=fields, headers=headers).status_code == 403
    assert counts(db) == before
    assert c.get("/me").status_code == 200  # still signed in
    # Another author's session's token is no good here either.
    other = signed_in(client, tokens["bob"])
    bobs = csrf_of(other.get("/me").text)
    assert c.post("/signout", data={"csrf": bobs}).status_code == 403
    # Not signed in at all: refused, nothing stored.
    r = client().post("/me/upload", data={"csrf": good}, files={"archive": ("rb.tar.gz", archive)})
    assert r.status_code == 403 and counts(db) == before


# -- the author's page and its upload form ---------------------------------------------------------
def test_the_upload_form_submits_through_the_api_path_and_me_shows_only_mine(server, tmp_path):
    db, tokens, client = server
    api = client()
    r = api.post("/api/submissions", content=bot_archive(tmp_path, "bobbot", "1"),
                 headers={**auth(tokens["bob"]), "Content-Type": "application/gzip"})
    assert r.status_code == 201
    c = signed_in(client, tokens["alice"])
    r = c.post("/me/upload", data={"csrf": csrf_of(c.get("/me").text)},
               files={"archive": ("rb.tar.gz", bot_archive(tmp_path, "alicebot", "2"))})
    assert r.status_code == 303 and r.headers["location"].startswith("/me?submitted=")
    page = c.get(r.headers["location"]).text
    assert "alicebot" in page and 'id="upload-ok"' in page
    assert "bobbot" not in page
    mine = api.get("/api/submissions", headers=auth(tokens["alice"])).json()["submissions"]
    assert [(s["bot"], s["version"], s["status"]) for s in mine] == [("alicebot", "2", "received")]


def test_a_bad_upload_shows_its_one_line_error_and_stores_nothing(server):
    db, tokens, client = server
    c = signed_in(client, tokens["alice"])
    before = counts(db)
    r = c.post("/me/upload", data={"csrf": csrf_of(c.get("/me").text)},
               files={"archive": (f"{SCRIPT}{IMG}.tar.gz", b"not an archive at all")})
    assert r.status_code == 400
    error = re.search(r'<p class="error" id="upload-error">(.*?)</p>', r.text, re.S).group(1)
    assert "\n" not in error.strip() and len(error) > 10
    assert SCRIPT not in r.text and "<img src=x" not in r.text
    assert "&lt;script&gt;" in error
    assert counts(db) == before


def test_an_archive_over_the_limit_is_refused_with_413_and_stores_nothing(server, tmp_path):
    db, tokens, client = server
    c = signed_in(client, tokens["alice"], config=ServerConfig(archive_limits=UploadLimits(archive_bytes=1000)))
    before = counts(db)
    r = c.post("/me/upload", data={"csrf": csrf_of(c.get("/me").text)},
               files={"archive": ("big.tar.gz", b"x" * 200_000)})
    assert r.status_code == 413 and "over the limit of 1,000 bytes" in r.text
    assert counts(db) == before


def test_the_check_report_and_every_author_string_is_escaped_on_me(server):
    db, tokens, client = server
    store = Store(db)
    alice = store.author_named("alice")["id"]
    hostile = SCRIPT + IMG
    sid = store.add_submission({"author_id": alice, "bot_name": hostile, "version": hostile,
                                "content_hash": "0" * 64, "archive_bytes": 1, "unpacked_bytes": 1})
    report = {"bot": hostile, "clean": False, "combos": [{"games": 2}], "median_ms": 1.0,
              "worst_ms": 2.0, "timeouts": 0, "warnings": [hostile], "stderr_bytes": 40,
              "stderr_tail": f"line one\n{hostile}",
              "problems": [{"game": hostile, "seats": 2, "words": hostile, "detail": hostile,
                            "hint": hostile, "game_id": "g"}]}
    store.end_check(sid, False, json.dumps(report), hostile)
    store.db.conn.close()
    page = signed_in(client, tokens["alice"]).get("/me").text
    assert SCRIPT not in page and "<img src=x" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 6
    assert f'id="report-{sid}"' in page and "line one" in page


# -- whose logs are seen ---------------------------------------------------------------------------
def test_an_authored_bots_logs_are_seen_only_by_its_author_and_organisers(server):
    db, tokens, client = server
    viewers = {"anonymous": client(), "bob": signed_in(client, tokens["bob"]),
               "alice": signed_in(client, tokens["alice"]), "root": signed_in(client, tokens["root"])}
    for who, c in viewers.items():
        sees = who in ("alice", "root")
        game = c.get("/games/g")
        assert game.status_code == 200
        assert A_LINE in game.text  # the organiser's bot a: everybody, as today
        assert (B_LINE in game.text) is sees, who
        assert ("hidden: only a bot's author sees its logs" in game.text) is not sees, who
        bot = c.get("/bots/b")
        assert bot.status_code == 200 and "the bot exited" in bot.text  # the failure still shows
        assert ("only the bot&#39;s author sees its logs" in bot.text) is not sees, who
        failures = c.get("/api/bots/b").json()["versions"][0]["failures"]
        assert all(f.get("hidden", False) is not sees for f in failures), who
        assert (B_LINE in c.get("/api/bots/b").text) is sees, who
        tournament = c.get("/tournaments/1")
        assert (B_LINE in tournament.text) is sees, who


def test_arena_serve_still_shows_every_bots_logs(server):
    db, tokens, client = server
    with TestClient(create_app(db)) as c:
        assert B_LINE in c.get("/games/g").text and B_LINE in c.get("/bots/b").text
        assert 'id="signin-link"' not in c.get("/").text

"""Browser sessions of `arena server` kept in the database (arena/server/sessions.py): a session
opened by one server is honoured by the next over the same database, only digests are stored,
sessions expire (idle and absolute) and are pruned, and signing out, revoking or rotating the
token ends them."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from arena.cli import app as cli
from arena.server.app import create_server_app
from arena.server.authors import add_author, hash_token, revoke_author, rotate_token
from arena.server.sessions import (
    IDLE_S,
    MAX_AGE_S,
    SESSION_COOKIE,
    TOUCH_EVERY_S,
    SessionStore,
    digest,
)
from arena.store import Store
from tests.support.server import csrf_of, form_sign_in


@pytest.fixture
def db(tmp_path) -> tuple[Path, dict[str, str]]:
    """A server database with two authors; (its path, their tokens)."""
    path = tmp_path / "arena.db"
    store = Store(path)
    tokens = {"alice": add_author(store, "alice"), "bob": add_author(store, "bob")}
    store.db.conn.close()
    return path, tokens


@pytest.fixture
def client_of():
    """Clients of fresh server apps: each call is a new server process's app over `db`."""
    clients = []

    def make(db: Path, cookie: str | None = None) -> TestClient:
        client = TestClient(create_server_app(db), follow_redirects=False)
        if cookie is not None:
            client.cookies.set(SESSION_COOKIE, cookie)
        clients.append(client)
        return client
    yield make
    for client in clients:
        client.close()


def sign_in(client: TestClient, token: str) -> str:
    """Sign in through the form; returns the session cookie's value."""
    response = form_sign_in(client, token)
    assert response.status_code == 303
    return response.cookies[SESSION_COOKIE]


def page_csrf(client: TestClient) -> str:
    me = client.get("/me")
    assert me.status_code == 200
    return csrf_of(me.text)


def session_rows(db: Path) -> list[dict]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("select * from sessions order by created_at")]
    finally:
        conn.close()


def author_id(db: Path, name: str) -> int:
    store = Store(db)
    try:
        return store.author_named(name)["id"]
    finally:
        store.db.conn.close()


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self, start: float = 1_800_000_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now


# -- across a restart -------------------------------------------------------------------------------
def test_a_session_opened_by_one_server_is_honoured_by_the_next_over_the_same_database(db, client_of):
    path, tokens = db
    first = client_of(path)
    cookie = sign_in(first, tokens["alice"])
    csrf = page_csrf(first)
    first.close()  # the server stops

    second = client_of(path, cookie)  # a new app: nothing of the first is in memory
    me = second.get("/me")
    assert me.status_code == 200 and "alice" in me.text
    assert page_csrf(second) == csrf  # the same CSRF token: its forms still post
    # Signing out through the second server deletes the row: the first (or a third) refuses it.
    assert second.post("/signout", data={"csrf": csrf}).status_code == 303
    assert session_rows(path) == []
    assert client_of(path, cookie).get("/me").headers["location"] == "/signin"


def test_only_digests_are_stored_never_the_session_id_or_its_csrf_token(db, client_of):
    path, tokens = db
    client = client_of(path)
    cookie = sign_in(client, tokens["alice"])
    csrf = page_csrf(client)
    [row] = session_rows(path)
    assert row["id_hash"] == digest(cookie)
    assert row["token_hash"] == hash_token(tokens["alice"])
    assert row["author_id"] == author_id(path, "alice")
    assert row["created_at"] <= row["last_seen_at"] < row["expires_at"]
    dump = "\n".join(sqlite3.connect(path).iterdump())
    assert cookie not in dump and csrf not in dump and tokens["alice"] not in dump


def test_a_wrong_or_overlong_cookie_is_no_session_and_writes_nothing(db, client_of):
    path, tokens = db
    sign_in(client_of(path), tokens["alice"])
    before = session_rows(path)
    for cookie in ("nope", "x" * 5000, digest("nope")):
        assert client_of(path, cookie).get("/me").headers["location"] == "/signin"
    assert session_rows(path) == before


def test_a_signed_in_page_from_another_authors_session_stays_theirs(db, client_of):
    path, tokens = db
    alice = sign_in(client_of(path), tokens["alice"])
    bob = sign_in(client_of(path), tokens["bob"])
    assert "alice" in client_of(path, alice).get("/me").text
    bob_page = client_of(path, bob).get("/me").text
    assert "bob" in bob_page and "alice" not in bob_page


# -- expiry -----------------------------------------------------------------------------------------
def test_a_session_unused_for_the_idle_time_expires_and_its_row_is_deleted(db):
    path, tokens = db
    clock = Clock()
    sessions = SessionStore(path, clock=clock)
    session_id, opened = sessions.open(author_id(path, "alice"), hash_token(tokens["alice"]))
    clock.now += IDLE_S - 1
    assert sessions.get(session_id).csrf == opened.csrf
    clock.now += IDLE_S - 1  # used just before, so not idle for long: still alive
    assert sessions.get(session_id) is not None
    clock.now += IDLE_S
    assert sessions.get(session_id) is None
    assert session_rows(path) == []


def test_use_is_written_at_most_once_a_minute(db):
    path, tokens = db
    clock = Clock()
    sessions = SessionStore(path, clock=clock)
    session_id, _ = sessions.open(author_id(path, "alice"), hash_token(tokens["alice"]))
    [opened] = session_rows(path)
    clock.now += TOUCH_EVERY_S / 2
    sessions.get(session_id)
    assert session_rows(path) == [opened]  # a page view soon after is not a write
    clock.now += TOUCH_EVERY_S
    sessions.get(session_id)
    [touched] = session_rows(path)
    assert touched["last_seen_at"] > opened["last_seen_at"]
    assert touched["expires_at"] > opened["expires_at"]


def test_a_session_in_use_still_ends_at_its_absolute_age(db):
    path, tokens = db
    clock = Clock()
    sessions = SessionStore(path, clock=clock)
    session_id, _ = sessions.open(author_id(path, "alice"), hash_token(tokens["alice"]))
    start = clock.now
    while clock.now + IDLE_S / 2 < start + MAX_AGE_S:
        clock.now += IDLE_S / 2
        assert sessions.get(session_id) is not None  # used every half idle time, for a week
    clock.now = start + MAX_AGE_S  # last used half an idle time ago: only its age ends it
    assert sessions.get(session_id) is None


def test_expired_sessions_are_pruned_at_the_next_sign_in(db):
    path, tokens = db
    clock = Clock()
    sessions = SessionStore(path, clock=clock)
    alice, bob = author_id(path, "alice"), author_id(path, "bob")
    for _ in range(3):
        sessions.open(alice, hash_token(tokens["alice"]))
    clock.now += IDLE_S + 1
    live, _ = sessions.open(bob, hash_token(tokens["bob"]))
    assert [r["id_hash"] for r in session_rows(path)] == [digest(live)]


def test_a_starting_server_prunes_the_expired_sessions_and_keeps_the_live_ones(db, client_of):
    path, tokens = db
    live = sign_in(client_of(path), tokens["bob"])
    behind = SessionStore(path, clock=Clock(time.time() - IDLE_S - 60))  # 8 hours behind
    behind.open(author_id(path, "alice"), hash_token(tokens["alice"]))  # expired a minute ago
    assert len(session_rows(path)) == 2
    client_of(path)  # a server starts
    assert [r["id_hash"] for r in session_rows(path)] == [digest(live)]


def test_an_author_keeps_a_bounded_number_of_sessions_the_oldest_going_first(db):
    path, tokens = db
    clock = Clock()
    sessions = SessionStore(path, clock=clock, max_per_author=3)
    alice = author_id(path, "alice")
    ids = []
    for _ in range(5):
        clock.now += 1
        ids.append(sessions.open(alice, hash_token(tokens["alice"]))[0])
    assert [sessions.get(i) is not None for i in ids] == [False, False, True, True, True]
    assert len(session_rows(path)) == 3


# -- revoking and rotating --------------------------------------------------------------------------
@pytest.mark.parametrize("end", [revoke_author, rotate_token])
def test_revoking_or_rotating_the_token_ends_that_authors_sessions_only(db, client_of, end):
    path, tokens = db
    alice = sign_in(client_of(path), tokens["alice"])
    bob = sign_in(client_of(path), tokens["bob"])
    store = Store(path)
    end(store, "alice")
    store.db.conn.close()
    assert [r["author_id"] for r in session_rows(path)] == [author_id(path, "bob")]
    assert client_of(path, alice).get("/me").headers["location"] == "/signin"
    assert client_of(path, bob).get("/me").status_code == 200


def test_arena_author_revoke_signs_the_author_out_of_a_running_server(db, client_of):
    path, tokens = db
    running = client_of(path)
    sign_in(running, tokens["alice"])
    assert running.get("/me").status_code == 200
    result = CliRunner().invoke(cli, ["author", "revoke", "alice", "--db", str(path)])
    assert result.exit_code == 0, result.output
    assert running.get("/me").headers["location"] == "/signin"
    assert session_rows(path) == []


def test_a_session_whose_token_was_revoked_behind_the_stores_back_is_refused_and_deleted(db):
    path, tokens = db
    sessions = SessionStore(path)
    session_id, _ = sessions.open(author_id(path, "alice"), hash_token(tokens["alice"]))
    conn = sqlite3.connect(path)  # as an older Arena's revoke would: the token only
    conn.execute("update author_tokens set revoked_at = '2026-12-06T00:00:00.000+00:00'")
    conn.commit()
    conn.close()
    assert sessions.get(session_id) is None
    assert session_rows(path) == []


@pytest.mark.parametrize("column", ["expires_at", "created_at"])
def test_a_session_row_with_a_damaged_timestamp_ends_that_session_quietly(db, column):
    path, tokens = db
    sessions = SessionStore(path)
    session_id, _ = sessions.open(author_id(path, "alice"), hash_token(tokens["alice"]))
    conn = sqlite3.connect(path)  # the file edited by hand
    conn.execute(f"update sessions set {column} = 'yesterday-ish'")
    conn.commit()
    conn.close()
    assert sessions.get(session_id) is None
    assert session_rows(path) == []

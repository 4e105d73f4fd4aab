"""`arena server` as a real subprocess: a browser signed in before the server is killed is still
signed in, with the same CSRF token, after it starts again over the same database."""

from __future__ import annotations

import signal

import httpx
import pytest

from arena.server.authors import add_author
from arena.server.sessions import SESSION_COOKIE
from arena.store import Store
from tests.support.live_server import LiveServer
from tests.support.server import csrf_of, form_sign_in

pytestmark = pytest.mark.slow


def test_a_session_survives_the_server_being_killed_and_started_again(tmp_path):
    db = tmp_path / "arena.db"
    store = Store(db)
    token = add_author(store, "alice")
    store.db.conn.close()
    server = LiveServer.start(db, tmp_path, "--checkers", "1")
    base, port = server.base, server.port
    try:
        with httpx.Client(base_url=base, follow_redirects=False, timeout=30) as browser:
            signed = form_sign_in(browser, token)
            assert signed.status_code == 303, signed.text
            cookie = signed.cookies[SESSION_COOKIE]
            csrf = csrf_of(browser.get("/me").text)
    finally:
        server.stop(signal.SIGKILL)  # no clean shutdown: nothing could be saved on the way out
    server = LiveServer.start(db, tmp_path, "--checkers", "1", port=port)
    try:
        with httpx.Client(base_url=base, follow_redirects=False, timeout=30,
                          cookies={SESSION_COOKIE: cookie}) as browser:
            me = browser.get("/me")
            assert me.status_code == 200 and "alice" in me.text
            assert csrf_of(me.text) == csrf
            assert browser.post("/signout", data={"csrf": csrf}).status_code == 303
        with httpx.Client(base_url=base, follow_redirects=False, timeout=30,
                          cookies={SESSION_COOKIE: cookie}) as replayed:
            assert replayed.get("/me").headers["location"] == "/signin"  # ended on the server
    finally:
        server.stop()

"""`arena server` as a real subprocess on 127.0.0.1: a real upload of the random bot, its real check
in the sandbox (`arena bot check`'s), the version made active for ladders, and a server killed
mid-check whose next start checks the submission again."""

from __future__ import annotations

import signal
import sqlite3
import urllib.request

import pytest

from arena.server.authors import add_author
from arena.store import Store
from tests.support.live_server import LiveServer
from tests.support.server import bot_archive

pytestmark = pytest.mark.slow


def test_a_real_upload_is_checked_clean_and_made_active(tmp_path):
    db = tmp_path / "arena.db"
    store = Store(db)
    token = add_author(store, "alice")
    store.db.conn.close()
    server = LiveServer.start(db, tmp_path, "--checkers", "1")
    try:
        assert server.api("GET", "/api/me")[0] == 401
        status, body = server.api("POST", "/api/submissions", token,
                                  bot_archive(tmp_path, "rb", "1"))
        assert status == 201, body
        checked = server.wait_checked(token, body["id"])
        assert checked["status"] == "clean", checked["reason"]
        assert checked["report"]["clean"] and checked["report"]["combos"]
        # The public pages show the version (the read-only app is mounted).
        with urllib.request.urlopen(f"{server.base}/api/bots", timeout=30) as response:
            assert "rb" in response.read().decode()
    finally:
        server.stop()
    conn = sqlite3.connect(db)
    assert conn.execute("select status from bots where name = 'rb'").fetchall() == [("active",)]
    conn.close()


def test_a_server_killed_mid_check_checks_the_submission_again_on_start(tmp_path):
    db = tmp_path / "arena.db"
    store = Store(db)
    token = add_author(store, "alice")
    store.db.conn.close()
    server = LiveServer.start(db, tmp_path, "--checkers", "1")
    try:
        status, body = server.api("POST", "/api/submissions", token,
                                  bot_archive(tmp_path, "rb", "1"))
        assert status == 201, body
    finally:
        server.stop(signal.SIGKILL)  # no clean shutdown: whatever the check was doing is lost
    # Wherever the kill came, leave it as a crash mid-check leaves it.
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("update submissions set status = 'checking', report = null, "
                     "checked_at = null where id = ?", [body["id"]])
        conn.execute("update bots set status = 'pending' where name = 'rb'")
    conn.close()
    server = LiveServer.start(db, tmp_path, "--checkers", "1")
    try:
        checked = server.wait_checked(token, body["id"])
        assert checked["status"] == "clean", checked["reason"]
    finally:
        server.stop()

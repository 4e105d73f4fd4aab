"""`arena server` as a real subprocess on 127.0.0.1: a real upload of the random bot, its real check
in the sandbox (`arena bot check`'s), the version made active for ladders, and a server killed
mid-check whose next start checks the submission again."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from arena.server.authors import add_author
from arena.store import Store
from tests.support.server import bot_archive

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
WAIT = 180  # seconds a check of the random bot may take on a loaded machine (a wait, not a limit)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(db: Path, port: int, cwd: Path, *extra: str) -> subprocess.Popen:
    out = open(cwd / "server.log", "ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "server", "--db", str(db), "--port", str(port),
         "--checkers", "1", *extra],
        stdout=out, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"arena server exited: {(cwd / 'server.log').read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            time.sleep(0.1)
    _stop(proc)
    pytest.fail("arena server did not start listening")


def _stop(proc: subprocess.Popen, sig: int = signal.SIGINT) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _call(url: str, token: str | None = None, data: bytes | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/gzip"} if data is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers,
                                     method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _wait_checked(base: str, token: str, sid: int) -> dict:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status, body = _call(f"{base}/api/submissions/{sid}", token)
        assert status == 200, body
        if body["status"] in ("clean", "failed"):
            return body
        time.sleep(0.25)
    pytest.fail(f"submission {sid} still {body['status']} after {WAIT} s")


def test_a_real_upload_is_checked_clean_and_made_active(tmp_path):
    db = tmp_path / "arena.db"
    store = Store(db)
    token = add_author(store, "alice")
    store.db.conn.close()
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = _start(db, port, tmp_path)
    try:
        assert _call(f"{base}/api/me")[0] == 401
        status, body = _call(f"{base}/api/submissions", token, bot_archive(tmp_path, "rb", "1"))
        assert status == 201, body
        checked = _wait_checked(base, token, body["id"])
        assert checked["status"] == "clean", checked["reason"]
        assert checked["report"]["clean"] and checked["report"]["combos"]
        # The public pages show the version (the read-only app is mounted).
        with urllib.request.urlopen(f"{base}/api/bots", timeout=30) as response:
            assert "rb" in response.read().decode()
    finally:
        _stop(proc)
    conn = sqlite3.connect(db)
    assert conn.execute("select status from bots where name = 'rb'").fetchall() == [("active",)]
    conn.close()


def test_a_server_killed_mid_check_checks_the_submission_again_on_start(tmp_path):
    db = tmp_path / "arena.db"
    store = Store(db)
    token = add_author(store, "alice")
    store.db.conn.close()
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = _start(db, port, tmp_path)
    try:
        status, body = _call(f"{base}/api/submissions", token, bot_archive(tmp_path, "rb", "1"))
        assert status == 201, body
    finally:
        _stop(proc, signal.SIGKILL)  # no clean shutdown: whatever the check was doing is lost
    # Wherever the kill came, leave it as a crash mid-check leaves it.
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("update submissions set status = 'checking', report = null, "
                     "checked_at = null where id = ?", [body["id"]])
        conn.execute("update bots set status = 'pending' where name = 'rb'")
    conn.close()
    proc = _start(db, port, tmp_path)
    try:
        checked = _wait_checked(base, token, body["id"])
        assert checked["status"] == "clean", checked["reason"]
    finally:
        _stop(proc)

"""50 uploads at once through a real `arena server` subprocess while a real `arena ladder` (another
process) plays and records games in the same database: every accepted upload is registered once
(one submissions row each, one bots row per distinct content, no (name, version) twice), none is
lost, no answer is a server error, the database passes its integrity check, and the ladder went
on recording games through it all."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from arena.server.authors import add_author
from arena.store import Store
from tests.support.botfolders import make_bot
from tests.support.config import ladder_toml
from tests.support.live_server import LiveServer
from tests.support.paths import ROOT
from tests.support.server import bot_archive

pytestmark = pytest.mark.slow
UPLOADS = 50
AUTHORS = 5
GAMES_WAIT_S = 300  # a wait for the ladder's next games on a loaded machine, not a limit
STOP_WAIT_S = 300  # a wait for the ladder to finish its table and stop after Ctrl-C
# No bootstrap at each refit and at the stop (samples 0): the machine is busy enough.
LADDER = ladder_toml(name="busy", seed=11, in_flight=1, time={"move_ms": 2000, "startup_ms": 20000},
                     leaderboard={"samples": 0})


def games_recorded(db) -> int:
    """Games the ladder has recorded so far."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute("select count(*) from games").fetchone()[0]
    finally:
        conn.close()


def wait_for_games(db, more_than: int, ladder: subprocess.Popen) -> int:
    """The games count once it is past `more_than` (the ladder is alive and recording)."""
    deadline = time.monotonic() + GAMES_WAIT_S
    while time.monotonic() < deadline:
        assert ladder.poll() is None, "the ladder stopped"
        count = games_recorded(db)
        if count > more_than:
            return count
        time.sleep(0.5)
    raise AssertionError(f"the ladder recorded no game past {more_than} in {GAMES_WAIT_S} s")


def test_fifty_concurrent_uploads_with_a_ladder_running_lose_and_double_nothing(tmp_path):
    db = tmp_path / "arena.db"
    store = Store(db)
    tokens = [add_author(store, f"author{i}") for i in range(AUTHORS)]
    store.db.conn.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # with an xdist worker's own bot uids
    for name in ("r1", "r2"):
        added = subprocess.run([sys.executable, "-m", "arena", "bot", "add",
                                str(make_bot(tmp_path / name, name, "1")), "--db", str(db)],
                               capture_output=True, text=True, env=env)
        assert added.returncode == 0, added.stdout + added.stderr
    # Each author: 7 bots of their own, then 2 of them again byte for byte, and one of them
    # again under the same name@version with other content (recorded as a new version).
    jobs = []
    for a, token in enumerate(tokens):
        mine = [bot_archive(tmp_path, f"a{a}b{b}", "1") for b in range(7)]
        jobs += [(token, f"a{a}b{b}", data) for b, data in enumerate(mine)]
        jobs += [(token, f"a{a}b{b}", mine[b]) for b in (0, 1)]
        jobs.append((token, f"a{a}b2", bot_archive(tmp_path, f"a{a}b2", "1", extra=b"other")))
    assert len(jobs) == UPLOADS

    config = tmp_path / "ladder.toml"
    config.write_text(LADDER)
    with open(tmp_path / "ladder.log", "wb") as out:
        ladder = subprocess.Popen([sys.executable, "-m", "arena", "ladder", "start", str(config),
                                   "--db", str(db), "--executor", "serial"], stdout=out,
                                  stderr=subprocess.STDOUT, cwd=tmp_path, env=env,
                                  start_new_session=True)
    server = None
    try:
        before = wait_for_games(db, 0, ladder)
        server = LiveServer.start(db, tmp_path, "--checkers", "1", "--per-hour", "100",
                                  "--active-versions", "100")
        start = threading.Barrier(UPLOADS)

        def upload(job):
            """One upload, sent once every thread is ready."""
            token, _, data = job
            start.wait()
            return server.api("POST", "/api/submissions", token, data, timeout=300)
        with ThreadPoolExecutor(UPLOADS) as pool:
            answers = list(pool.map(upload, jobs))
        after_uploads = wait_for_games(db, before, ladder)
        wait_for_games(db, after_uploads, ladder)  # and it goes on after them
    finally:
        if server is not None:
            server.stop()
        if ladder.poll() is None:
            os.killpg(ladder.pid, signal.SIGINT)
        asked = time.monotonic()
        try:
            ladder.wait(STOP_WAIT_S)
            print(f"the ladder stopped {time.monotonic() - asked:.1f} s after Ctrl-C")
        except subprocess.TimeoutExpired:
            os.killpg(ladder.pid, signal.SIGKILL)
            ladder.wait()
    told = (tmp_path / "ladder.log").read_text()
    # Ctrl-C's exit status, after a clean stop (a crash would not say this).
    assert ladder.returncode == 128 + signal.SIGINT and "finished tables are saved" in told, told[-2000:]

    statuses = Counter(status for status, _ in answers)
    assert statuses == {201: UPLOADS}, [body for status, body in answers if status != 201]
    ids = [body["id"] for _, body in answers]
    assert len(set(ids)) == UPLOADS

    conn = sqlite3.connect(db)
    assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    rows = dict(conn.execute("select id, bot_name || '@' || version from submissions"))
    assert sorted(rows) == sorted(ids)  # none lost, none extra
    for (_, body), (_, name, _) in zip(answers, jobs):
        assert rows[body["id"]] == f"{name}@{body['version']}" and body["bot"] == name
    versions = conn.execute("select name, version, content_hash from bots "
                            "where name not in ('r1', 'r2')").fetchall()
    assert len(versions) == len({(n, v) for n, v, _ in versions})  # no name@version twice
    assert len(versions) == len({(n, h) for n, _, h in versions})  # each content once
    distinct = {(name, data) for _, name, data in jobs}
    assert len(versions) == len(distinct) == AUTHORS * 8
    # Byte-for-byte duplicates name the version of their first upload.
    by_job = {}
    for (_, body), (_, name, data) in zip(answers, jobs):
        by_job.setdefault((name, data), set()).add(body["version"])
    assert all(len(found) == 1 for found in by_job.values()), by_job
    conn.close()

"""Every kind of stop: SIGKILL at random moments, SIGTERM, Ctrl-C, a second driver, cancel.

A real `arena run` runs in a subprocess against a file database; after each stop the run is
resumed, and the final database must equal an uninterrupted run's: pairings, games, moves,
standings data and ratings.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.stops import query, start, swiss_config, wait_for


def snapshot(path: Path) -> dict:
    """Everything that must not depend on how often the run was stopped (no times, no attempts)."""
    conn = sqlite3.connect(path)
    queries = {
        "rounds": "select stage, round, tables, byes from rounds order by 1, 2",
        "byes": "select stage, round, bot, points from byes order by 1, 2, 3",
        "matches": "select id, stage, round, table_no, bots, status from matches order by id",
        "match_bots": "select match_id, position, bot, entry, game_points, match_points "
                      "from match_bots order by 1, 2",
        "deals": "select match_id, deal, bot, points, games from deals order by 1, 2, 3",
        "games": "select id, ordinal, seed, termination, culprit_seat, steps from games order by id",
        "seats": "select game_id, seat, bot, team, score, rank from game_seats order by 1, 2",
        "moves": "select game_id, ply, step, seat, action from moves order by 1, 2",
        "ratings": "select stage, bot, rating, games, wins, draws, losses from ratings order by 1, 2",
        "history": "select stage, ordinal, bot, before, after from rating_history order by 1, 2, 3",
        "status": "select status from tournaments",
    }
    snap = {k: conn.execute(q).fetchall() for k, q in queries.items()}
    conn.close()
    return snap


def finished_matches(db: Path) -> int:
    return query(db, "select count(*) from matches where status = 'finished'")[0][0]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, dict]:
    """An uninterrupted Swiss run (no delay) and its snapshot."""
    tmp = tmp_path_factory.mktemp("reference")
    config = swiss_config(tmp, 0)
    db = tmp / "full.db"
    proc = start(config, db, "--executor", "serial", cwd=tmp)
    assert proc.wait(timeout=300) == 0, (tmp / "out.txt").read_text()
    return config, snapshot(db)


def test_sigkill_at_random_moments_then_resume_equals_an_uninterrupted_run(tmp_path, reference):
    _, full = reference
    slow = swiss_config(tmp_path, 15)  # the same games, slower, so kills land mid-run
    # Same digest is required to resume: the delay is part of the bots' commands, so resume the
    # slow config with the slow config, and compare games (which the delay does not change).
    db = tmp_path / "killed.db"
    rng = random.Random(1)
    kills = between_rounds = 0
    proc = start(slow, db, "--executor", "serial", cwd=tmp_path)
    # The tournament must exist before the first kill, or there is nothing to resume.
    assert wait_for(lambda: query(db, "select count(*) from tournaments")[0][0] == 1, timeout=60)
    while kills < 5:
        if kills == 1:
            # Between rounds: a round's pairings recorded, none of its matches finished yet.
            def between() -> bool:
                rounds = query(db, "select max(round) from rounds")[0][0] or 0
                done = query(db, "select count(*) from matches where round = ? and status = 'finished'",
                             rounds)[0][0]
                return rounds >= 2 and done == 0
            if wait_for(between, timeout=120, every=0.005):
                between_rounds += 1
        else:
            # Somewhere inside a match, after this run has recorded something of its own.
            before = finished_matches(db)
            wait_for(lambda: finished_matches(db) > before or proc.poll() is not None,  # noqa: B023
                     timeout=120)  # (called within this iteration only)
            time.sleep(rng.uniform(0.0, 1.5))
        if proc.poll() is not None:
            break
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
        proc = start(slow, db, "--executor", "serial", "--resume", cwd=tmp_path)
    proc.wait(timeout=300)
    assert proc.returncode == 0, (tmp_path / "out.txt").read_text()[-3000:]
    assert kills >= 3 and between_rounds == 1
    got, want = snapshot(db), full
    assert got["status"] == [("finished",)]
    assert got["rounds"] == want["rounds"] and len(got["rounds"]) == 4
    # Bot names are the same; commands differ only by the delay, which changes no move.
    for key in ("byes", "matches", "match_bots", "deals", "games", "seats", "moves", "ratings",
                "history"):
        assert got[key] == want[key], key


def test_sigterm_stops_cleanly_marks_interrupted_and_prints_the_full_resume_command(tmp_path):
    config = swiss_config(tmp_path, 21, bots=4)
    db = tmp_path / "a.db"
    proc = start(config, db, "--executor", "serial", "--no-pin", cwd=tmp_path)
    assert wait_for(lambda: finished_matches(db) >= 1, timeout=120)
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=60) == 130
    out = (tmp_path / "out.txt").read_text()
    assert f"--db {db} --resume --executor serial --no-pin" in out
    assert query(db, "select status from tournaments") == [("interrupted",)]
    assert query(db, "select count(*) from leases") == [(0,)]
    # The bots of the match in flight are gone with it.
    assert wait_for(lambda: not _bot_processes(config), timeout=10)
    resumed = start(config, db, "--executor", "serial", "--resume", cwd=tmp_path)
    assert resumed.wait(timeout=300) == 0, out
    assert query(db, "select status from tournaments") == [("finished",)]


def test_a_sigterm_whose_exception_is_swallowed_still_stops_the_driver_after_the_match(tmp_path):
    """A signal handler's exception is lost when it lands in a finalizer; the stop must not be."""
    from arena.config import load_config
    from arena.executors import SerialExecutor
    from arena.session import Listener
    from arena.store import Store
    from arena.tournament import run_tournament

    class Swallowing(Listener):
        def match_done(self, result):
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.5)  # the handler runs here, and its raise is swallowed below
            except KeyboardInterrupt:
                pass

    config, bots, rows = load_config(swiss_config(tmp_path, 0, bots=4))
    store = Store(tmp_path / "a.db")
    previous = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        run_tournament(config, bots, rows, store, SerialExecutor(pin=False), listener=Swallowing())
    assert signal.getsignal(signal.SIGTERM) is previous
    assert query(tmp_path / "a.db", "select status from tournaments") == [("interrupted",)]
    # Stopped after the first match (6 are planned), which is kept.
    assert query(tmp_path / "a.db", "select status, count(*) from matches group by 1") == \
        [("finished", 1)]


def test_ctrl_c_marks_interrupted(tmp_path):
    config = swiss_config(tmp_path, 20, bots=4)
    db = tmp_path / "a.db"
    proc = start(config, db, "--executor", "serial", cwd=tmp_path)
    assert wait_for(lambda: finished_matches(db) >= 1, timeout=120)
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    assert query(db, "select status from tournaments") == [("interrupted",)]
    assert "--resume --executor serial" in (tmp_path / "out.txt").read_text()


def test_a_second_driver_refuses_and_a_stale_lease_is_taken_over(tmp_path):
    config = swiss_config(tmp_path, 30, bots=4)
    db = tmp_path / "a.db"
    first = start(config, db, "--executor", "serial", cwd=tmp_path)
    assert wait_for(lambda: query(db, "select count(*) from leases")[0][0] == 1, timeout=60)
    second = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(config), "--db", str(db), "--resume",
         "--executor", "serial", "-q"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert second.returncode == 1
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and f"is being run by pid {first.pid}" in lines[0], second.stderr
    assert "Traceback" not in second.stderr
    assert first.poll() is None  # the first driver is untouched
    assert query(db, "select status from tournaments") == [("running",)]
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    # The dead driver's lease is stale (its pid is gone): --resume takes it over and finishes.
    third = start(config, db, "--executor", "serial", "--resume", cwd=tmp_path)
    assert third.wait(timeout=300) == 0, (tmp_path / "out.txt").read_text()[-2000:]
    assert query(db, "select status from tournaments") == [("finished",)]


def test_cancel_stops_a_running_driver(tmp_path):
    config = swiss_config(tmp_path, 30, bots=4)
    db = tmp_path / "a.db"
    proc = start(config, db, "--executor", "serial", cwd=tmp_path)
    assert wait_for(lambda: finished_matches(db) >= 1, timeout=120)
    out = subprocess.run([sys.executable, "-m", "arena", "tournament", "cancel", "1", "--db", str(db)],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert proc.wait(timeout=60) == 1
    assert query(db, "select status from tournaments") == [("cancelled",)]
    assert "cancelled" in (tmp_path / "out.txt").read_text()
    again = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(config), "--db", str(db), "--resume", "-q"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert again.returncode == 2 and "it is cancelled" in again.stderr


def _bot_processes(config: Path) -> list[str]:
    out = subprocess.run(["pgrep", "-f", "slow_random.py"], capture_output=True, text=True)
    pids = [p for p in out.stdout.split() if p]
    alive = []
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if " 21 " in cmd:
            alive.append(cmd)
    return alive

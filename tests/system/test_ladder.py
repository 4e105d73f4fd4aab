"""The ladder end to end: registry bots as real subprocesses, serially and on Ray.

The main test runs `arena ladder start` as a separate process, submits a new version and a
broken one while it runs, retires a bot, SIGKILLs the driver mid-match, resumes, and checks
that no table was lost or played twice, the fairness rules held, the rejected version says why,
and the published leaderboard equals a refit of the stored games.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena import rating_reports
from arena.cli import app
from arena.config import load_ladder_config
from arena.errors import ConfigError
from arena.executors import SerialExecutor
from arena.ladder import Ladder, publish_leaderboards
from arena.ladder_view import LadderView, ladder_status
from arena.registry import Registry
from arena.store import Store
from tests.support.config import ladder_toml
from tests.support.paths import BOTS, ROOT

runner = CliRunner()

def ladder_config(in_flight: int = 2, samples: int = 20) -> str:
    """The ladder tests' config (two tables in flight, a 20-sample bootstrap unless told)."""
    return ladder_toml(in_flight=in_flight, time={"move_ms": 3000, "startup_ms": 15000},
                       matchmaking={"placement_games": 4, "window": 20},
                       leaderboard={"every_tables": 10, "samples": samples})

MANIFEST = """\
name = "{name}"
version = "{version}"
command = ["python3", "{script}"{args}]
language = "python"
games = ["xeri"]
"""


def make_bot(root: Path, name: str, version: str = "1", script: str = "random_bot.py",
             args: tuple[str, ...] = ()) -> Path:
    """A bot folder holding a shipped bot script, arenabot.py and a manifest."""
    folder = root / f"{name}-{version}"
    folder.mkdir(parents=True)
    for f in (script, "arenabot.py"):
        shutil.copy(BOTS / f, folder / f)
    extra = "".join(f', "{a}"' for a in args)
    (folder / "bot.toml").write_text(MANIFEST.format(name=name, version=version, script=script,
                                                     args=extra))
    return folder


def broken_bot(root: Path) -> Path:
    """A version that crashes at its first move: its validation game must fail."""
    folder = root / "broken-1"
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(textwrap.dedent("""
        import json, sys
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] == "hello":
                print(json.dumps({"type": "ready", "name": "broken"}), flush=True)
            elif msg["type"] == "act":
                sys.stderr.write("Traceback: oops, a bug in my move code\\n")
                sys.exit(4)
    """))
    (folder / "bot.toml").write_text('name = "broken"\nversion = "1"\n'
                                     'command = ["python3", "bot.py"]\ngames = ["xeri"]\n')
    return folder


def ladder_process(config: Path, db: Path, *extra: str, resume: bool = False) -> subprocess.Popen:
    """`arena ladder start|resume` in its own session, output to a file."""
    out = open(config.parent / "out.txt", "ab")
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "ladder", "resume" if resume else "start", str(config),
         "--db", str(db), "-q", *extra],
        stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})


def query(db: Path, sql: str, args=()) -> list[tuple]:
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if predicate():
                return True
        except sqlite3.OperationalError:
            pass  # the driver holds a write lock for a moment
        time.sleep(0.2)
    return False


def finished(db: Path) -> int:
    return query(db, "select count(*) from ladder_tables where status = 'finished'")[0][0]


def check_consistent(db: Path, config_path: Path) -> None:
    """No table lost or doubled; every finished table has its games; leaderboard = refit."""
    config = load_ladder_config(config_path)
    tables = query(db, "select number, status, match_id, bots from ladder_tables order by number")
    assert [t[0] for t in tables] == list(range(len(tables)))
    assert all(t[1] == "finished" for t in tables), "a chosen table was never played"
    per_table = 2 * config.deals  # 2 seats, every deal at both rotations
    counts = dict(query(db, "select match_id, count(*) from games group by match_id"))
    assert all(counts.get(t[2]) == per_table for t in tables)
    assert sum(counts.values()) == len(tables) * per_table  # no game outside a table, none twice
    assert query(db, "select count(*) from matches where status = 'finished'")[0][0] == len(tables)
    store = Store(db)
    tid = store.db.execute("select id from tournaments where format = 'ladder'").fetchone()[0]
    published = publish_leaderboards(store, tid, samples=0)["xeri"]["rows"]
    refit = rating_reports.leaderboard(store, "xeri", samples=0, save=False, ladder_id=tid)["rows"]
    assert [(r["bot"], r["version"], round(r["rating"], 6)) for r in published] == \
        [(r["bot"], r["version"], round(r["rating"], 6)) for r in refit]


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["serial", "ray"])
def test_a_ladder_absorbs_versions_survives_sigkill_and_resumes_exactly(tmp_path, executor):
    db = tmp_path / "ladder.db"
    reg = Registry(db)
    for name, seed in (("alpha", "1"), ("beta", "2"), ("gamma", "3")):
        reg.add(make_bot(tmp_path / "src", name, args=(seed,)))
    reg.add(make_bot(tmp_path / "src", "heur", script="xeri_bot.py"))
    config = tmp_path / "lad.toml"
    config.write_text(ladder_config())
    extra = ("--executor", executor) + (("--workers", "2") if executor == "ray" else ())
    proc = ladder_process(config, db, *extra, "--games", "4000")
    try:
        assert wait_for(lambda: finished(db) >= 8, timeout=180), (tmp_path / "out.txt").read_text()
        # Mid-run: a new version of heur, a broken bot, and gamma retired.
        Registry(db).add(make_bot(tmp_path / "src", "heur", version="2", script="xeri_bot.py"))
        Registry(db).add(broken_bot(tmp_path / "src"))
        Registry(db).remove("gamma")
        assert wait_for(lambda: query(
            db, "select count(*) from game_seats s join bots b on b.id = s.bot_id "
                "where b.name = 'heur' and b.version = '2'")[0][0] >= 2, timeout=180)
        assert wait_for(lambda: finished(db) >= 20, timeout=180)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    # Tables chosen but unfinished at the kill are still pending: resume plays them, once.
    before = finished(db)
    resumed = ladder_process(config, db, *extra, "--games", "24", resume=True)
    assert resumed.wait(timeout=300) == 0, (tmp_path / "out.txt").read_text()[-3000:]
    assert finished(db) > before
    check_consistent(db, config)
    entries = {r[0]: r[1:] for r in query(
        db, "select key, status, reason, joined_tick, retired_tick from ladder_entries")}
    assert entries["broken@1"][0] == "rejected" and "validation" in entries["broken@1"][1]
    assert entries["gamma@1"][0] == "retired" and entries["heur@1"][0] == "retired"  # heur@2 replaced it
    assert entries["heur@2"][0] == "active"
    # Fairness: a retired bot has no table after its retirement; the new version got its placement.
    tables = query(db, "select number, bots from ladder_tables")
    for key in ("gamma@1", "heur@1"):
        retired = entries[key][3]
        assert all(key not in json.loads(b) for n, b in tables if n >= retired)
    joined = entries["heur@2"][2]
    assert sum("heur@2" in json.loads(b) for n, b in tables if n >= joined) >= 4
    # `arena bot show` says why the broken version was rejected, and the new version's record.
    out = runner.invoke(app, ["bot", "show", "broken", "--db", str(db)])
    assert "rejected" in out.output and "validation game failed" in out.output
    out = runner.invoke(app, ["bot", "show", "heur@2", "--db", str(db)])
    assert "ladder" in out.output and "ladder game" in out.output
    status = ladder_status(LadderView.load(Store(db)))
    assert status["status"] == "paused" and status["in_flight"] == 0
    assert status["bots_active"] == 3  # alpha, beta, heur@2




def test_resume_replays_the_same_choices_and_refuses_a_tampered_history(tmp_path):
    db = tmp_path / "l.db"
    reg = Registry(db)
    for name, seed in (("alpha", "1"), ("beta", "2"), ("gamma", "3")):
        reg.add(make_bot(tmp_path / "src", name, args=(seed,)))
    config_path = tmp_path / "lad.toml"
    config_path.write_text(ladder_config(in_flight=1, samples=0))
    config = load_ladder_config(config_path)
    first = Ladder(config, Store(db), Registry(db), SerialExecutor(pin=False), games=12).run()
    assert first.status == "paused" and first.games_played >= 12
    tables = Store(db).ladder_tables(1)
    # Resuming replays history (the matchmaker must choose the recorded tables again) and goes on.
    second = Ladder(config, Store(db), Registry(db), SerialExecutor(pin=False), games=6).run(True)
    assert second.games_played >= 6
    assert Store(db).ladder_tables(1)[:len(tables)] == tables
    # A database whose recorded tables no longer follow from its history is refused.
    query_db = sqlite3.connect(db)
    query_db.execute("update ladder_tables set bots = ? where number = 0",
                     [json.dumps(list(reversed(tables[0]["bots"])))])
    query_db.commit()
    query_db.close()
    with pytest.raises(Exception, match="differs"):
        Ladder(config, Store(db), Registry(db), SerialExecutor(pin=False), games=2).run(True)


def test_ladder_config_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[[formats]]\ngame = "chess"\n')
    with pytest.raises(ConfigError, match="chess"):
        load_ladder_config(bad)
    bad.write_text('name = "x"\n[[formats]]\ngame = "xeri"\nseats = 5\n')
    out = runner.invoke(app, ["ladder", "start", str(bad), "--db", str(tmp_path / "x.db")])
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1
    bad.write_text('name = "x"\nformats = []\n')
    with pytest.raises(ConfigError, match="formats"):
        load_ladder_config(bad)
    # Both kinds of error name a format the same way: dotted, numbered from 0.
    two = '[[formats]]\ngame = "xeri"\n[[formats]]\ngame = "xeri"\n'
    bad.write_text('name = "x"\n' + two + 'options = { nope = 1 }\n')
    with pytest.raises(ConfigError, match=r"formats\.1: .*nope"):
        load_ladder_config(bad)
    bad.write_text('name = "x"\n' + two + 'weight = "heavy"\n')
    with pytest.raises(ConfigError, match=r"formats\.1\.weight"):
        load_ladder_config(bad)


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "ladders").glob("*.toml")),
                         ids=lambda p: p.stem)
def test_shipped_ladder_configs_load(path):
    config = load_ladder_config(path)
    assert config.formats and config.name


def test_status_and_stop_of_an_unknown_ladder(tmp_path):
    db = tmp_path / "a.db"
    Store(db)
    out = runner.invoke(app, ["ladder", "status", "--db", str(db)])
    assert out.exit_code == 2 and "no ladder" in out.output
    out = runner.invoke(app, ["ladder", "stop", "nope", "--db", str(db)])
    assert out.exit_code == 2


def test_every_choice_is_recorded_after_the_results_it_rests_on(tmp_path):
    # A crash may come between any two writes: each recorded choice of table k must find the
    # tables up to k − F finished in the database, already or in the same transaction, or the
    # history could not be replayed.
    db = tmp_path / "l.db"
    reg = Registry(db)
    for name, seed in (("alpha", "1"), ("beta", "2"), ("gamma", "3")):
        reg.add(make_bot(tmp_path / "src", name, args=(seed,)))
    config_path = tmp_path / "lad.toml"
    config_path.write_text(ladder_config(samples=0))
    config = load_ladder_config(config_path)
    seen = []

    class Checked(Store):
        def record_ladder_matches(self, tournament_id, items, bot_ids, chosen=()):
            items, chosen = list(items), list(chosen)
            done = {r[0] for r in self.db.execute(
                "select number from ladder_tables where tournament_id = ? and status = "
                "'finished'", [tournament_id])} | {number for number, _ in items}
            for c in chosen:
                assert set(range(c["number"] - config.in_flight + 1)) <= done, c["number"]
                seen.append(c["number"])
            super().record_ladder_matches(tournament_id, items, bot_ids, chosen)

    run = Ladder(config, Checked(db), Registry(db), SerialExecutor(pin=False), games=30).run()
    assert run.games_played >= 30 and seen == list(range(len(seen))) and len(seen) >= 15

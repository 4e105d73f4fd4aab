"""A database written by the Arena of 2026-12-03 opens with today's Store: it migrates in place,
keeps every row, stays a plain SQLite file, and the read commands print what they printed then.

The database and the golden outputs: tests/data/README.md. Regenerate the goldens with the code
that wrote the database: `PYTHONPATH=<that checkout> python tests/integration/test_legacy_database.py`.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
LEGACY = DATA / "main-2026-12-03.sqlite"
GOLDEN = DATA / "main-2026-12-03"
WIDTH = 200  # the goldens were printed with COLUMNS=200, piped

# Golden name -> the `arena` command (its `--db` added), each a read of the database.
COMMANDS = {
    "tournament-list": ["tournament", "list"],
    "tournament-show-1": ["tournament", "show", "1"],
    "tournament-show-2": ["tournament", "show", "2"],
    "tournament-show-2-stage-1-round-2": ["tournament", "show", "2", "--stage", "1", "--round", "2"],
    "ratings-1": ["ratings", "1"],
    "ratings-1-los": ["ratings", "1", "--los"],
    "ratings-1-elo": ["ratings", "1", "--method", "elo"],
    "ratings-2-stage-2-csv": ["ratings", "2", "--stage", "2", "--format", "csv"],
    "crosstable-1": ["crosstable", "1"],
    "crosstable-2-stage-1": ["crosstable", "2", "--stage", "1"],
    "h2h": ["h2h", "random-b", "crasher"],
    "failures-1": ["failures", "1"],
    "failures-1-json": ["failures", "1", "--format", "json"],
    "ladder-status": ["ladder", "status", "legacy-ladder"],
    "leaderboard": ["leaderboard", "xeri"],
    "bot-list": ["bot", "list"],
    "bot-show": ["bot", "show", "xeri_heuristic"],
    "export-2-csv": ["tournament", "export", "2", "--format", "csv"],
    "replay": ["replay", "t1-st1-r1-m1-d0-s0"],
}


def normalised(text: str, db: Path) -> str:
    """The output with what depends on where and when it ran made neutral.

    The database's path (and the centring of a title that names it) and the ladder's games in
    the last minute (counted back from now) differ between runs; nothing else may.
    """
    lines = []
    for line in text.splitlines():
        if str(db) in line:
            line = " ".join(line.replace(str(db), "{db}").split())
        lines.append(re.sub(r"\d+ games in the last minute", "N games in the last minute",
                            line).rstrip())
    return "\n".join(lines) + "\n"


def table_counts(path: Path) -> dict[str, int]:
    """Rows per table, read with plain sqlite3."""
    conn = sqlite3.connect(path)
    try:
        names = [r[0] for r in conn.execute(
            "select name from sqlite_master where type = 'table' order by name")]
        return {n: conn.execute(f"select count(*) from [{n}]").fetchone()[0] for n in names}
    finally:
        conn.close()


@pytest.fixture
def legacy_db(tmp_path) -> Path:
    """A copy of the legacy database (the tests may migrate and write it)."""
    path = tmp_path / "legacy.sqlite"
    shutil.copyfile(LEGACY, path)
    return path


def test_the_legacy_database_covers_the_tables_it_should():
    counts = table_counts(LEGACY)
    empty = {name for name, n in counts.items() if n == 0}
    # Runner errors and node events need a failing worker or a cluster; leases are released.
    assert empty <= {"leases", "match_errors", "node_events"}
    assert LEGACY.stat().st_size < 1_500_000


def test_it_migrates_in_place_keeping_every_row(legacy_db):
    from arena.store import SCHEMA_VERSION, Store

    before = table_counts(legacy_db)
    store = Store(legacy_db)
    version = store.db.execute("select value from meta where key = 'schema_version'").fetchone()[0]
    store.db.conn.close()
    assert version == str(SCHEMA_VERSION)
    after = table_counts(legacy_db)
    assert {n: after[n] for n in before} == before  # a later schema may add tables, never lose rows


def test_it_stays_a_plain_sqlite_file_with_the_same_tables(legacy_db):
    from arena.store import Store

    before = set(table_counts(legacy_db))
    Store(legacy_db).db.conn.close()
    conn = sqlite3.connect(f"{legacy_db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
        tables = {r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")}
    finally:
        conn.close()
    assert before <= tables


def test_games_recorded_before_per_game_logs_fall_back_to_the_matchs_stderr(legacy_db):
    from arena.cli.ratings import failure_rows
    from arena.store import Store

    # The legacy crasher wrote nothing to stderr: give one of its matches a log as old code kept.
    conn = sqlite3.connect(legacy_db)
    conn.execute("insert or replace into bot_logs (match_id, bot, stderr) values "
                 "('t1-st1-r1-m2', 'crasher', 'loading\nboom at line 313\n')")
    conn.commit()
    conn.close()
    store = Store(legacy_db)
    assert store.game_logs("t1-st1-r1-m2-d0-s0") == []
    assert store.game_log_counts("t1-st1-r1-m2-d0-s0") == []
    rows = [r for r in failure_rows(store, 1) if r["match"] == "t1-st1-r1-m2"]
    assert len(rows) == 4 and {r["stderr_tail"] for r in rows} == {"loading\nboom at line 313"}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_read_commands_print_what_the_legacy_code_printed(name, legacy_db, monkeypatch):
    from typer.testing import CliRunner

    from arena.cli import app
    from arena.cli._app import console

    monkeypatch.setattr(console, "_width", WIDTH)
    result = CliRunner().invoke(app, [*COMMANDS[name], "--db", str(legacy_db)])
    assert result.exit_code == 0, result.output
    expected = (GOLDEN / f"{name}.txt").read_text()
    assert normalised(result.stdout, legacy_db) == expected


def write_goldens() -> None:
    """Print each command's output with the `arena` on PYTHONPATH into the golden files."""
    GOLDEN.mkdir(exist_ok=True)
    work = Path(os.environ.get("TMPDIR", "/tmp")) / "arena-legacy-goldens"
    work.mkdir(exist_ok=True)
    db = work / "legacy.sqlite"
    for name, args in COMMANDS.items():
        shutil.copyfile(LEGACY, db)
        done = subprocess.run([sys.executable, "-m", "arena", *args, "--db", str(db)],
                              env={**os.environ, "COLUMNS": str(WIDTH)}, capture_output=True,
                              text=True, check=True)
        (GOLDEN / f"{name}.txt").write_text(normalised(done.stdout, db))
        print(f"{name}: {len(done.stdout)} characters")


if __name__ == "__main__":
    write_goldens()

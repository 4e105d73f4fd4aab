"""Bad input to the command line: one line naming the problem, no traceback, the database untouched."""

from __future__ import annotations

import gc
import hashlib
import random
import shutil
import sqlite3

import pytest
from typer.testing import CliRunner

from arena.cli import app
from tests.support.config import write_config

runner = CliRunner()

# Commands that only read the database: none may change the file they are given.
READERS = [["ratings"], ["leaderboard", "xeri"], ["crosstable"], ["h2h", "random", "random-b"],
           ["failures"], ["replay", "t1-st1-r1-m1-d0-s0"], ["tournament", "show"],
           ["tournament", "status"], ["tournament", "export", "1"], ["bot", "list"],
           ["bot", "show", "random"], ["ladder", "status"]]


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_line_error(out, *names: str) -> str:
    """The single output line of a failed command; it names every one of `names`."""
    text = out.output.strip()
    assert out.exit_code != 0, text
    assert "Traceback" not in text and "╭" not in text, text
    assert len(text.splitlines()) == 1, text
    assert text.startswith("error: "), text
    for name in names:
        assert name in text, (name, text)
    return text


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A real database of one small serial tournament (copied by each test that changes it)."""
    folder = tmp_path_factory.mktemp("recorded")
    db = folder / "real.db"
    out = runner.invoke(app, ["run", str(write_config(folder)), "--db", str(db), "--executor",
                              "serial", "-q"])
    assert out.exit_code == 0, out.output
    # The run's connections live on in this process: close them and fold the WAL into the file,
    # or a copy of the file alone would miss the tournament.
    gc.collect()
    with sqlite3.connect(db) as conn:
        conn.execute("pragma wal_checkpoint(truncate)")
    conn.close()
    return db


@pytest.mark.parametrize("command", READERS, ids=" ".join)
def test_an_empty_file_is_refused_and_left_empty(tmp_path, command):
    db = tmp_path / "empty.db"
    db.write_bytes(b"")
    out = runner.invoke(app, [*command, "--db", str(db)])
    one_line_error(out, str(db), "empty")
    assert db.read_bytes() == b""  # no schema written into it


@pytest.mark.parametrize("kind", ["text", "foreign", "truncated"])
def test_a_file_that_is_not_an_arena_database_is_named(tmp_path, recorded, kind):
    db = tmp_path / f"{kind}.db"
    if kind == "text":
        db.write_text("hello, not a database\n")
    elif kind == "foreign":
        with sqlite3.connect(db) as conn:
            conn.execute("create table users (id integer)")
    else:
        shutil.copy(recorded, db)
        with open(db, "r+b") as fh:
            fh.truncate(40960)
    before = digest(db)
    for command in (["ratings"], ["tournament", "list"], ["bot", "list"]):
        one_line_error(runner.invoke(app, [*command, "--db", str(db)]), "not an Arena database",
                       str(db))
    assert digest(db) == before


def test_a_directory_given_as_database_is_named(tmp_path):
    out = runner.invoke(app, ["tournament", "list", "--db", str(tmp_path)])
    one_line_error(out, str(tmp_path), "is a directory")


def test_damage_past_the_first_pages_is_one_line_naming_the_file(tmp_path, recorded):
    db = tmp_path / "damaged.db"
    shutil.copy(recorded, db)
    page = 4096
    with sqlite3.connect(recorded) as conn:  # overwrite the games and moves tables' root pages
        roots = [r for (r,) in conn.execute(
            "select rootpage from sqlite_master where name in ('games', 'game_seats', 'moves')")]
    with open(db, "r+b") as fh:
        for root in roots:
            fh.seek((root - 1) * page)
            fh.write(random.Random(root).randbytes(page))
    before = digest(db)
    for command in (["crosstable"], ["tournament", "show"], ["replay", "t1-st1-r1-m1-d0-s0"],
                    ["h2h", "random", "random-b"]):
        one_line_error(runner.invoke(app, [*command, "--db", str(db)]), f"cannot read {db}",
                       "malformed")
    assert digest(db) == before


@pytest.mark.parametrize("args, names", [
    (["ratings", "--samples", "-1"], ["--samples", "'-1'"]),
    (["serve", "--port=99999"], ["--port", "'99999'"]),
    (["conformance", "xeri", "--seats", "9"], ["--seats", "'9'"]),
    (["failures", "--format", "xml"], ["--format", "'xml'"]),
    (["transcript", "xeri", "-o", "bad"], ["--option", "'bad'"]),
    (["bot", "new", "x", "--lang", "rust"], ["--lang", "'rust'"]),
    (["crosstable", "abc"], ["tournament", "integer", "'abc'"]),
    (["tournament", "cancel", "1.5"], ["tournament", "'1.5'"]),
    (["replay"], ["Missing argument", "game_id"]),
    (["nope"], ["No such command", "'nope'"]),
    (["tournament", "nope"], ["No such command", "'nope'"]),
    (["--bogus"], ["No such option", "--bogus"]),
])
def test_a_usage_error_is_one_line_with_the_bad_value(args, names):
    out = runner.invoke(app, args)
    assert out.exit_code == 2
    one_line_error(out, *names, "--help")


def test_a_group_without_a_command_still_prints_its_help():
    out = runner.invoke(app, ["tournament"])
    assert "Usage" in out.output and "export" in out.output


def test_a_config_that_is_not_utf8_is_named(tmp_path):
    config = tmp_path / "binary.toml"
    config.write_bytes(b"\xff\xfe\x00garbage")
    db = tmp_path / "a.db"
    for command in (["run", str(config), "--executor", "serial", "-q"],
                    ["ladder", "start", str(config), "--executor", "serial"]):
        out = runner.invoke(app, [*command, "--db", str(db)])
        assert out.exit_code == 2
        one_line_error(out, str(config), "not a UTF-8 text file")
    assert not db.exists()


@pytest.mark.parametrize("key, value", [("seed", "100000000000000000000"),
                                        ("deals", "100000000000000000000"),
                                        ("time.move_ms", "-100000000000000000000")])
def test_a_number_beyond_64_bits_in_a_config_is_named(tmp_path, recorded, key, value):
    db = tmp_path / "a.db"
    shutil.copy(recorded, db)
    before = digest(db)
    config = write_config(tmp_path)
    text = config.read_text()
    if key == "time.move_ms":
        text = text.replace("move_ms = 5000", f"move_ms = {value}")
    else:
        text = f"{key} = {value}\n" + text.replace(f"{key} = ", f"# {key} = ")
    config.write_text(text)
    out = runner.invoke(app, ["run", str(config), "--db", str(db), "--executor", "serial", "-q"])
    assert out.exit_code == 2
    one_line_error(out, str(config), key, value, "64-bit")
    assert digest(db) == before


def test_bot_check_names_an_unknown_sandbox():
    from tests.support.paths import BOTS

    out = runner.invoke(app, ["bot", "check", str(BOTS / "random.toml"), "--sandbox", "zz"])
    assert out.exit_code == 2
    one_line_error(out, "unknown sandbox 'zz'", "bwrap")


@pytest.mark.parametrize("command", [
    lambda f: ["transcript", "xeri", "--out", str(f.parent)],     # a folder
    lambda f: ["transcript", "xeri", "--out", str(f / "x.jsonl")],  # under a file
    lambda f: ["schema", "--out", str(f)],
    lambda f: ["bot", "new", "x", "--dir", str(f)],
], ids=["transcript-folder", "transcript-under-file", "schema", "bot-new"])
def test_an_output_path_that_cannot_be_written_is_named(tmp_path, command):
    a_file = tmp_path / "a_file"
    a_file.write_text("kept\n")
    out = runner.invoke(app, command(a_file))
    assert out.exit_code == 2
    one_line_error(out, "cannot write", str(command(a_file)[-1]))
    assert a_file.read_text() == "kept\n"


@pytest.mark.parametrize("command", [["h2h", "random", "random-b"], ["sprt", "random", "random-b"]])
def test_head_to_head_names_an_unknown_tournament(tmp_path, recorded, command):
    out = runner.invoke(app, [*command, "--tournament", "99", "--db", str(recorded)])
    one_line_error(out, "no tournament with id 99")


def sqlite_error(message: str, code: int) -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError(message)
    exc.sqlite_errorcode = code
    return exc


def test_a_database_that_cannot_be_opened_for_its_wal_is_not_called_foreign(tmp_path, recorded,
                                                                          monkeypatch):
    import sqlite_utils

    # What a WAL database in a read-only folder (no -shm file to write) answers at its opening.
    def cannot_open(self):
        raise sqlite_error("unable to open database file", sqlite3.SQLITE_CANTOPEN)

    monkeypatch.setattr(sqlite_utils.Database, "table_names", cannot_open)
    text = one_line_error(runner.invoke(app, ["tournament", "list", "--db", str(recorded)]),
                          f"cannot open {recorded}", "read-only")
    assert "not an Arena database" not in text


@pytest.mark.parametrize("code, words", [
    (sqlite3.SQLITE_READONLY, ["cannot write", "read-only"]),
    (sqlite3.SQLITE_BUSY, ["database is busy"]),
])
def test_a_database_error_mid_command_is_named_by_its_kind(tmp_path, recorded, monkeypatch, code,
                                                           words):
    from arena import reports

    def refuse(*args, **kwargs):
        raise sqlite_error("attempt to write a readonly database" if code == sqlite3.SQLITE_READONLY
                           else "database is busy", code)

    monkeypatch.setattr(reports, "tournament_report", refuse)
    text = one_line_error(runner.invoke(app, ["tournament", "show", "--db", str(recorded)]),
                          str(recorded), *words)
    assert "damaged" not in text


def test_bot_add_names_a_registry_folder_it_cannot_write(tmp_path):
    from tests.support.paths import BOTS

    db = tmp_path / "a.db"
    (tmp_path / "a.db.bots").write_text("a file where the snapshots folder goes\n")
    out = runner.invoke(app, ["bot", "add", str(BOTS / "random.toml"), "--db", str(db)])
    one_line_error(out, "cannot snapshot", str(tmp_path / "a.db.bots"))
    out = runner.invoke(app, ["bot", "list", "--db", str(db), "--json"])
    assert out.exit_code == 0 and out.output.strip() == "[]"  # nothing half-recorded


def test_an_unknown_game_in_a_config_is_named_before_its_bots_are_checked(tmp_path):
    config = write_config(tmp_path)
    config.write_text(config.read_text().replace('game = "xeri"', 'game = "nope"'))
    out = runner.invoke(app, ["run", str(config), "--db", str(tmp_path / "a.db"), "--executor",
                              "serial", "-q"])
    assert out.exit_code == 2
    text = one_line_error(out, str(config), "unknown game 'nope'")
    assert "does not play" not in text
    assert not (tmp_path / "a.db").exists()


def test_serve_names_a_port_in_use_before_saying_it_serves(recorded, monkeypatch):
    import socket

    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("the server was started"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = runner.invoke(app, ["serve", "--db", str(recorded), "--port", str(port)])
    assert out.exit_code == 2
    text = one_line_error(out, f"cannot listen on 127.0.0.1:{port}")
    assert "serving" not in text


@pytest.mark.parametrize("sql, command, where", [
    ("update moves set action = 'not json' where game_id = 't1-st1-r1-m1-d0-s0' and ply = 3",
     ["replay", "t1-st1-r1-m1-d0-s0"], "moves.action of t1-st1-r1-m1-d0-s0 ply 3"),
    ("update moves set action = 'not json' where game_id = 't1-st1-r1-m1-d0-s0' and ply = 3",
     ["tournament", "export", "1"], "moves.action of t1-st1-r1-m1-d0-s0 ply 3"),
    ("update games set options = '{bad' where id = 't1-st1-r1-m1-d0-s0'",
     ["replay", "t1-st1-r1-m1-d0-s0"], "games.options of t1-st1-r1-m1-d0-s0"),
    ("update stages set options = '{bad'", ["tournament", "show"],
     "stages.options of tournament 1 stage 1"),
    ("update stages set options = '{bad'", ["crosstable"], "stages.options of tournament 1 stage 1"),
])
def test_a_stored_json_value_that_is_not_json_is_named(tmp_path, recorded, sql, command, where):
    db = tmp_path / "edited.db"
    shutil.copy(recorded, db)
    with sqlite3.connect(db) as conn:
        conn.execute(sql)
    conn.close()
    before = digest(db)
    out = runner.invoke(app, [*command, "--db", str(db)])
    one_line_error(out, "no valid JSON", where)
    assert digest(db) == before


@pytest.mark.parametrize("command", [["run", "CONFIG", "--executor", "serial", "-q"],
                                     ["bot", "add", "BOT"]])
def test_a_directory_given_to_a_writing_command_is_named(tmp_path, command):
    from tests.support.paths import BOTS

    folder = tmp_path / "dir.db"
    folder.mkdir()
    args = [str(write_config(tmp_path)) if a == "CONFIG" else str(BOTS / "random.toml")
            if a == "BOT" else a for a in command]
    out = runner.invoke(app, [*args, "--db", str(folder)])
    one_line_error(out, f"{folder} is a directory")
    assert list(folder.iterdir()) == [] and not (tmp_path / "dir.db.bots").exists()


@pytest.mark.parametrize("command", [["ladder", "status", "zz"], ["ladder", "stop", "zz"],
                                     ["leaderboard", "xeri", "--ladder", "zz"]])
def test_an_unknown_ladder_is_named_even_when_there_is_none(recorded, command):
    before = digest(recorded)
    out = runner.invoke(app, [*command, "--db", str(recorded)])
    assert out.exit_code == 2
    one_line_error(out, "no ladder named 'zz'")
    assert digest(recorded) == before


def test_an_export_that_fails_midway_leaves_the_old_file_whole(tmp_path, recorded):
    db = tmp_path / "edited.db"
    shutil.copy(recorded, db)
    with sqlite3.connect(db) as conn:  # the last game's last move: most of the export is written
        game_id, ply = conn.execute("select game_id, max(ply) from moves where game_id = "
                                    "(select max(game_id) from moves)").fetchone()
        conn.execute("update moves set action = 'not json' where game_id = ? and ply = ?",
                     [game_id, ply])
    conn.close()
    target = tmp_path / "games.jsonl"
    target.write_text("the previous export\n")
    out = runner.invoke(app, ["tournament", "export", "1", "-o", str(target), "--db", str(db)])
    one_line_error(out, "no valid JSON", "moves.action")
    assert target.read_text() == "the previous export\n"
    assert not list(tmp_path.glob(".games.jsonl.*"))  # no temporary file left behind

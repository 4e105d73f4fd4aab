"""One program, one identity: a bots row is a program version; a name reused for another program
is a new version; a recorded config is not run again by mistake; two versions of one bot meet as
name@version and are counted apart; a `ready` naming another bot or version is warned about."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.cli._app import version_label
from arena.config import load_config
from arena.errors import ConfigError, DuplicateRun
from arena.registry import Registry, content_hash, registry_dir
from arena.store import SCHEMA_VERSION, Store
from arena.tournament import run_config
from tests.support.botfolders import make_bot as bot_folder
from tests.support.listeners import StopAfter
from tests.support.paths import BOTS

runner = CliRunner()

# Three bots, a round robin of one xeri round each way: 3 matches of 2 games, 4 games a bot.
CONFIG = """\
name = "{name}"
game = "xeri"
seed = 3
deals = 1
[options]
rounds = 1
[[bots]]
manifest = "{bots}/random.toml"
[[bots]]
name = "random-3"
manifest = "{bots}/random.toml"
[[bots]]
name = "random-2"
command = ["python3", "random_bot.py"]
workdir = "{workdir}"
"""

def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


def cli(*args: str):
    return runner.invoke(app, [*map(str, args)])


def run_cli(config: Path, db: Path, *extra: str):
    return cli("run", config, "--db", db, "--executor", "serial", "-q", *extra)


def counts(db: Path) -> dict:
    """Rows per table: what a refused run must leave as it was."""
    store = Store.open_readonly(db)
    tables = [r[0] for r in store.db.execute("select name from sqlite_master where type = 'table'")]
    return {t: store.db.execute(f"select count(*) from [{t}]").fetchone()[0] for t in tables}


def seat_counts(db: Path) -> dict[tuple[str, str], int]:
    """Games played per bots row (name, version), straight from game_seats by bot id."""
    rows = Store.open_readonly(db).db.execute(
        "select b.name, b.version, count(*) from game_seats s join bots b on b.id = s.bot_id "
        "group by b.id").fetchall()
    return {(n, v): c for n, v, c in rows}


# -- a name reused for another program --------------------------------------------------------


def test_record_bot_finds_a_program_by_identity_and_never_reuses_its_name_for_another():
    store = Store()
    first = store.record_bot("r", "1", ["python3", "r.py"], "/a")
    assert store.record_bot("r", "1", ["python3", "r.py"], "/a") == first
    assert first.version == "1" and not first.differs
    # Another folder, no content hash: another program, under name@1+<8 hex>, said how.
    other = store.record_bot("r", "1", ["python3", "r.py"], "/b")
    assert other.id != first.id and other.version.startswith("1+") and len(other.version) == 10
    assert other.asked == "1" and "folder /b, recorded /a" in other.differs
    # Found again as that version (and still said to differ from r@1).
    again = store.record_bot("r", "1", ["python3", "r.py"], "/b")
    assert again.id == other.id and again.differs
    # With a content hash: the hash and the command make the program, not the folder.
    h1, h2 = "a" * 64, "b" * 64
    hashed = store.record_bot("s", "", ["x"], "/one", content_hash=h1)
    assert store.record_bot("s", "", ["x"], "/two", content_hash=h1).id == hashed.id
    changed = store.record_bot("s", "", ["x"], "/one", content_hash=h2)
    assert changed.version == "+bbbbbbbb" and "content bbbbbbbb, recorded aaaaaaaa" in changed.differs
    # The same content run by another command: its `+` version cannot be the hash's head again.
    args = store.record_bot("s", "", ["x", "--fast"], "/one", content_hash=h2)
    assert args.id not in (hashed.id, changed.id) and args.version.startswith("+")
    assert len({hashed.version, changed.version, args.version}) == 3
    assert store.add_bot("s", "", ["x"], "/three", content_hash=h2) == changed.id


def test_a_config_reusing_a_name_for_another_program_records_a_new_version(tmp_path):
    db = tmp_path / "a.db"
    first = write(tmp_path / "one.toml", CONFIG.format(name="one", bots=BOTS, workdir=BOTS))
    out = run_cli(first, db)
    assert out.exit_code == 0, out.output
    assert "another program" not in out.output
    # Another organiser's random-2: the same name, another program (its own copy elsewhere).
    copy = bot_folder(tmp_path / "elsewhere", "random", "1")
    second = write(tmp_path / "two.toml", CONFIG.format(name="two", bots=BOTS, workdir=copy))
    out = run_cli(second, db, "--no-pin")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    notice = [i for i, line in enumerate(lines) if "another program" in line]
    # Among the run's first lines: after the executor's (wrapped at the width), before the tables.
    summary = next(i for i, line in enumerate(lines) if line.startswith("tournament "))
    assert len(notice) == 1 and notice[0] < summary, out.output
    line = lines[notice[0]]
    assert line.startswith("bot 'random-2': another program than the recorded random-2 (")
    store = Store.open_readonly(db)
    (version,) = store.db.execute(
        "select version from bots where name = 'random-2' and version != ''").fetchone()
    assert line.endswith(f"; recorded as random-2@{version}") and version.startswith("+")
    # The two programs' games never merge: each row holds its own tournament's games.
    per_row = seat_counts(db)
    assert per_row[("random-2", "")] == per_row[("random-2", version)] == 4
    assert per_row[("random", "1")] == 8  # the same manifest both times: one program
    board = json.loads(cli("leaderboard", "xeri", "--db", db, "--format", "json").output)
    shown = {(r["bot"], r["version"]): r["games"] for r in board["rows"]}
    assert shown == per_row
    # The old row kept its command and folder: nothing of the new program was written into it.
    (workdir, digest), (new_workdir, new_digest) = store.db.execute(
        "select workdir, content_hash from bots where name = 'random-2' order by id").fetchall()
    assert digest == content_hash(BOTS) and workdir == str(registry_dir(db) / digest)
    assert new_digest == content_hash(copy) != digest and new_workdir != workdir


def test_a_tournament_whose_bot_became_a_new_version_resumes_with_it(tmp_path):
    db = tmp_path / "a.db"
    first = write(tmp_path / "one.toml", CONFIG.format(name="one", bots=BOTS, workdir=BOTS))
    run_config(first, db, executor="serial", pin=False)
    copy = bot_folder(tmp_path / "elsewhere", "random", "1")
    second = write(tmp_path / "two.toml", CONFIG.format(name="two", bots=BOTS, workdir=copy))
    stop = StopAfter(1)
    with pytest.raises(KeyboardInterrupt):
        run_config(second, db, executor="serial", pin=False, listener=stop)
    assert len(stop.notices) == 1 and "recorded as random-2@+" in stop.notices[0]
    store = Store(db)
    tid = store.find_tournament("two")["id"]
    ids = store.bot_ids(tid)
    outcome = run_config(second, db, executor="serial", pin=False, resume=True)
    assert outcome.tournament_id == tid and outcome.matches_skipped == 1
    assert Store(db).bot_ids(tid) == ids  # the same rows, the new version among them
    new_id = ids["random-2"]
    (version,) = store.db.execute("select version from bots where id = ?", [new_id]).fetchone()
    assert version.startswith("+")
    assert store.db.execute("select count(*) from game_seats s join games g on g.id = s.game_id "
                            "where g.tournament_id = ? and s.bot = 'random-2' and s.bot_id != ?",
                            [tid, new_id]).fetchone()[0] == 0
    assert seat_counts(db)[("random-2", version)] == 4


# -- a recorded config run again --------------------------------------------------------------


def test_running_a_recorded_config_again_is_refused_unless_new(tmp_path):
    db = tmp_path / "a.db"
    config = write(tmp_path / "t.toml", CONFIG.format(name="cup", bots=BOTS, workdir=BOTS))
    assert run_cli(config, db).exit_code == 0
    before = counts(db)
    out = run_cli(config, db)
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1, out.output
    assert "tournament 1 ('cup', finished) holds this config already" in out.output
    assert "--new" in out.output and "Traceback" not in out.output
    assert counts(db) == before  # nothing written
    with pytest.raises(DuplicateRun):
        run_config(config, db, executor="serial")
    out = run_cli(config, db, "--resume", "--new")
    assert out.exit_code == 2 and "not both" in out.output
    # Another setting is another config: no refusal.
    other = write(tmp_path / "t2.toml", CONFIG.format(name="cup", bots=BOTS, workdir=BOTS)
                  .replace("seed = 3", "seed = 4"))
    assert run_cli(other, db).exit_code == 0
    # --new: a deliberate second run; its games are new games and count once each.
    out = run_cli(config, db, "--new")
    assert out.exit_code == 0, out.output
    store = Store.open_readonly(db)
    assert [t["id"] for t in store.same_config("cup", json.loads(
        store.tournament(1)["config"])["digest"])] == [3, 1]
    board = json.loads(cli("leaderboard", "xeri", "--db", db, "--format", "json").output)
    assert {(r["bot"], r["version"]): r["games"] for r in board["rows"]} == seat_counts(db)
    assert sum(r["games"] for r in board["rows"]) == 2 * 6 * 3  # 3 tournaments of 6 games


def test_an_unfinished_recorded_config_points_at_resume(tmp_path):
    db = tmp_path / "a.db"
    config = write(tmp_path / "t.toml", CONFIG.format(name="cup", bots=BOTS, workdir=BOTS))
    with pytest.raises(KeyboardInterrupt):
        run_config(config, db, executor="serial", pin=False, listener=StopAfter(1))
    before = counts(db)
    out = run_cli(config, db)
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1
    assert "tournament 1 ('cup', interrupted)" in out.output
    assert "--resume" in out.output and "--new" in out.output
    assert counts(db) == before
    out = run_cli(config, db, "--resume")
    assert out.exit_code == 0 and "1 matches already recorded" in out.output, out.output


# -- two versions of one registry bot ---------------------------------------------------------

TWO_VERSIONS = """\
name = "{name}"
game = "xeri"
seed = 5
deals = 1
[options]
rounds = 1
[[bots]]
bot = "rb@1"
{name1}
[[bots]]
bot = "rb@2"
{name2}
[[bots]]
manifest = "{bots}/random.toml"
"""


def test_two_versions_of_one_registry_bot_are_shown_and_counted_as_name_at_version(tmp_path):
    db = tmp_path / "a.db"
    Registry(db).add(bot_folder(tmp_path / "v1", version="1"))
    Registry(db).add(bot_folder(tmp_path / "v2", version="2"))
    config = write(tmp_path / "t.toml", TWO_VERSIONS.format(name="two", name1="", name2="",
                                                            bots=BOTS))
    out = cli("run", config, "--db", db, "--executor", "serial")
    assert out.exit_code == 0, out.output
    assert "rb@1" in out.output and "rb@2" in out.output
    store = Store.open_readonly(db)
    assert store.bot_ids(1).keys() == {"rb@1", "rb@2", "random"}
    assert {r[0] for r in store.db.execute("select distinct bot from game_seats")} == {
        "rb@1", "rb@2", "random"}
    ratings = json.loads(cli("ratings", "--db", db, "--format", "json").output)["rows"]
    assert {(r["bot"], r["version"]) for r in ratings} == {("rb@1", "1"), ("rb@2", "2"),
                                                           ("random", "1")}
    # A second tournament where the organiser named them: the same versions' games.
    renamed = write(tmp_path / "r.toml", TWO_VERSIONS.format(
        name="named", name1='name = "old"', name2='name = "new"', bots=BOTS))
    assert cli("run", renamed, "--db", db, "--executor", "serial", "-q").exit_code == 0
    between = store.db.execute(
        "select count(distinct a.game_id) from game_seats a join game_seats b "
        "on a.game_id = b.game_id join bots x on x.id = a.bot_id join bots y on y.id = b.bot_id "
        "where x.name = 'rb' and x.version = '1' and y.name = 'rb' and y.version = '2'"
    ).fetchone()[0]
    assert between == 4  # 2 games a tournament
    h2h = json.loads(cli("h2h", "rb@1", "rb@2", "--db", db, "--format", "json").output)
    assert h2h["games"] == between and h2h["wins"] + h2h["draws"] + h2h["losses"] == between
    out = cli("h2h", "rb@2", "rb@1", "--db", db)
    assert out.exit_code == 0 and f"rb@2 against rb@1: {between} games" in out.output
    # The names a tournament gave them still work, for that tournament's games.
    named = json.loads(cli("h2h", "old", "new", "--db", db, "--format", "json").output)
    assert named["games"] == 2
    # `bot show` counts every game of the version, whatever it was called in the tournament.
    shown = json.loads(cli("bot", "show", "rb@2", "--db", db, "--json").output)
    (v2,) = shown["versions"]
    assert v2["games_played"] == seat_counts(db)[("rb", "2")] == 8
    assert v2["tournaments"] == 2 and {r["tournament_id"] for r in v2["ratings"]} == {2}
    # The leaderboard: one row per version, labelled name@version on the terminal.
    board = json.loads(cli("leaderboard", "xeri", "--db", db, "--format", "json").output)
    assert {(r["bot"], r["version"]): r["games"] for r in board["rows"]} == seat_counts(db)
    assert len(board["rows"]) == 3
    table = cli("leaderboard", "xeri", "--db", db).output
    assert "rb@1" in table and "rb@2" in table and "random" in table
    rows = [{"bot": "rb"}, {"bot": "rb"}, {"bot": "random"}]
    assert version_label("rb", "2", rows) == "rb@2"  # a name with several versions
    assert version_label("random", "1", rows) == "random (1)"
    assert version_label("rb@2", "2", rows) == "rb@2"  # so named in its tournament already


def test_entries_alike_in_name_and_version_are_still_refused(tmp_path):
    db = tmp_path / "a.db"
    Registry(db).add(bot_folder(tmp_path / "v1", version="1"))
    registry = Registry(db)
    path = write(tmp_path / "t.toml", TWO_VERSIONS.format(name="x", name1="", name2="", bots=BOTS)
                 .replace("rb@2", "rb@1"))
    with pytest.raises(ConfigError, match="repeated: rb"):
        load_config(path, registry)
    path.write_text(path.read_text().replace('bot = "rb@1"\n\n', 'bot = "rb@1"\nname = "a"\n', 1))
    with pytest.raises(ConfigError, match="rb@1 is entered twice"):
        load_config(path, registry)
    # `@` in an organiser's name would pass for a version: refused.
    path = write(tmp_path / "at.toml", CONFIG.format(name="at", bots=BOTS, workdir=BOTS)
                 .replace('"random-2"', '"random@2"'))
    with pytest.raises(ConfigError, match="'@' is kept for name@version"):
        load_config(path)


# -- ready naming another bot or version ------------------------------------------------------


def test_bot_check_warns_once_when_ready_names_another_bot(tmp_path):
    folder = bot_folder(tmp_path / "liar", name="liar", version="7")  # its ready: random 1
    out = cli("bot", "check", folder, "--game", "xeri", "--deals", "1")
    assert out.exit_code == 0, out.output
    assert out.output.count("its ready message gives") == 1, out.output
    assert "name 'random' and version '1', its manifest 'liar' version '7'" in out.output
    honest = cli("bot", "check", BOTS / "random.toml", "--game", "xeri", "--deals", "1")
    assert honest.exit_code == 0 and "ready message" not in honest.output


def test_a_run_warns_once_per_bot_whose_ready_differs_from_its_manifest(tmp_path):
    db = tmp_path / "a.db"
    liar = bot_folder(tmp_path / "liar", name="liar", version="7")
    config = write(tmp_path / "t.toml", CONFIG.format(name="w", bots=BOTS, workdir=BOTS)
                   + f'[[bots]]\nmanifest = "{liar}/bot.toml"\n')
    out = run_cli(config, db)
    assert out.exit_code == 0, out.output
    warned = [line for line in out.output.splitlines() if "ready message" in line]
    assert warned == ["bot 'liar': its ready message gives name 'random' and version '1', its "
                      "manifest 'liar' version '7' (is the manifest or the bot out of date?)"]


# -- ladders ----------------------------------------------------------------------------------


def test_a_ladder_admits_two_named_versions_of_one_bot_beside_the_latest(tmp_path):
    from types import SimpleNamespace

    from arena.config import LadderConfig
    from arena.ladder import Ladder, key_of

    db = tmp_path / "a.db"
    for v in ("1", "2", "3"):
        Registry(db).add(bot_folder(tmp_path / f"rb{v}", version=v))
    Registry(db).add(bot_folder(tmp_path / "other", name="other", version="1"))
    registry = Registry(db)

    def eligible(**entrants) -> list[str]:
        config = LadderConfig.model_validate({"name": "l", "formats": [{"game": "xeri"}],
                                              "entrants": entrants})
        return [key_of(v) for v in Ladder._eligible(SimpleNamespace(config=config,
                                                                    registry=registry))]

    assert eligible() == ["other@1", "rb@3"]  # latest: each name's newest
    assert eligible(bots=["rb@1", "rb@2"]) == ["rb@1", "rb@2"]  # named versions meet as such
    assert eligible(bots=["rb", "rb@1"]) == ["rb@1", "rb@3"]
    assert eligible(bots=["rb", "rb@3"]) == ["rb@3"]
    assert eligible(versions="all", bots=["rb"]) == ["rb@1", "rb@2", "rb@3"]


# -- schema 8 ---------------------------------------------------------------------------------


def test_a_version_7_database_migrates_and_its_entrants_keep_their_names(tmp_path):
    import sqlite3

    import sqlite_utils

    from arena.store import schema as store_module

    path = tmp_path / "v7.db"
    old = Store.__new__(Store)
    old.db = sqlite_utils.Database(sqlite3.connect(path))
    for number in range(1, 8):
        store_module.MIGRATIONS[number](old)
    db = old.db
    db["meta"].insert({"key": "schema_version", "value": "7"})
    db["bots"].insert({"id": 1, "name": "perlbot-v2", "version": "2", "command": "[]",
                       "workdir": "", "language": "", "description": "", "added_at": ""})
    db["tournaments"].insert({"id": 1, "name": "t", "game": "xeri", "format": "round_robin",
                              "seats": 2, "seed": 1, "options": "{}", "config": "{}",
                              "status": "finished"})
    db["tournament_bots"].insert({"tournament_id": 1, "bot_id": 1, "entry": 0})
    db.conn.commit()
    db.conn.close()
    store = Store(path)
    assert store.db["meta"].get("schema_version")["value"] == str(SCHEMA_VERSION)
    assert {"node", "host"} <= set(store.db["matches"].columns_dict)
    assert store.bot_ids(1) == {"perlbot-v2": 1}  # no name of its own: the bots row's


def test_two_versions_entering_a_ladder_are_two_entrants_named_by_their_keys():
    store = Store()
    one, two = store.add_bot("rb", "1", ["a"]), store.add_bot("rb", "2", ["b"])
    tid = store.create_tournament("lad", "xeri", "ladder", 2, 0, {}, {}, [])
    store.ladder_entry(tid, one, "rb@1", "active", "", 0)
    store.ladder_entry(tid, two, "rb@2", "active", "", 0)
    assert store.bot_ids(tid) == {"rb@1": one, "rb@2": two}

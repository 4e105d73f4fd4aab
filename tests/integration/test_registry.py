"""The bot registry: content-addressed snapshots, versions, retire, lookup; `bot =` in configs."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.config import load_config
from arena.errors import ConfigError
from arena.registry import Registry, content_hash, registry_dir
from arena.store import Store
from arena.tournament import run_config
from tests.support.botfolders import CONFIG, MANIFEST, make_bot
from tests.support.paths import BOTS

runner = CliRunner()


def test_content_hash_is_deterministic_and_sees_paths_and_bytes(tmp_path):
    a = make_bot(tmp_path / "a")
    b = make_bot(tmp_path / "b")
    assert content_hash(a) == content_hash(b)
    (b / "__pycache__").mkdir()
    (b / "__pycache__" / "x.pyc").write_bytes(b"cache")  # caches are not content
    assert content_hash(a) == content_hash(b)
    (b / "notes.txt").write_text("x")
    assert content_hash(a) != content_hash(b)
    (b / "notes.txt").unlink()
    (b / "random_bot.py").write_text((b / "random_bot.py").read_text() + "\n# changed\n")
    assert content_hash(a) != content_hash(b)


def test_add_snapshots_and_records_the_version(tmp_path):
    db = tmp_path / "a.db"
    folder = make_bot(tmp_path / "rb")
    reg = Registry(db)
    result = reg.add(folder)
    assert result.outcome == "added" and result.version == "1"
    snap = registry_dir(db) / result.content_hash
    assert (snap / "random_bot.py").read_text() == (folder / "random_bot.py").read_text()
    assert content_hash(snap) == result.content_hash
    (v,) = reg.versions("rb")
    assert (v.name, v.version, v.status, v.author, v.language, v.games) == (
        "rb", "1", "active", "ada", "python", ["xeri"])
    assert v.command == ["python3", "random_bot.py"] and Path(v.workdir) == snap.resolve()
    assert v.added_at and v.manifest == "bot.toml"


def test_same_content_twice_is_a_no_op(tmp_path):
    db = tmp_path / "a.db"
    folder = make_bot(tmp_path / "rb")
    Registry(db).add(folder)
    again = Registry(db).add(folder / "bot.toml")  # a manifest file works as well as its folder
    assert again.outcome == "unchanged" and "nothing to do" in again.message
    assert len(Registry(db).versions()) == 1


def test_a_changed_folder_under_the_same_version_is_a_new_version(tmp_path):
    db = tmp_path / "a.db"
    folder = make_bot(tmp_path / "rb")
    first = Registry(db).add(folder)
    (folder / "random_bot.py").write_text((folder / "random_bot.py").read_text() + "\n# v2\n")
    second = Registry(db).add(folder)
    assert second.outcome == "new_version"
    assert second.version == f"1+{second.content_hash[:8]}"
    assert "already holds other content" in second.message and second.version in second.message
    assert [v.version for v in Registry(db).versions("rb")] == ["1", second.version]
    # The first snapshot is untouched by the change.
    assert "# v2" not in (registry_dir(db) / first.content_hash / "random_bot.py").read_text()
    # Bumping the version names the next one.
    (folder / "random_bot.py").write_text((folder / "random_bot.py").read_text() + "\n# v3\n")
    (folder / "bot.toml").write_text(MANIFEST.format(name="rb", version="3"))
    assert Registry(db).add(folder).version == "3"
    assert Registry(db).lookup("rb").version == "3"  # the newest active version


def test_invalid_manifests_are_refused_before_anything_is_written(tmp_path):
    db = tmp_path / "a.db"
    folder = make_bot(tmp_path / "rb")
    (folder / "bot.toml").write_text('name = "rb"\n')  # no command
    with pytest.raises(ConfigError, match="command"):
        Registry(db).add(folder)
    assert not registry_dir(db).exists() and not db.exists()
    (folder / "bot.toml").write_text(MANIFEST.format(name="rb", version="1") + 'workdir = ".."\n')
    with pytest.raises(ConfigError, match="outside the bot's folder"):
        Registry(db).add(folder)
    with pytest.raises(ConfigError, match="no such file"):
        Registry(db).add(tmp_path / "nowhere")
    (folder / "bot.toml").write_text(MANIFEST.format(name="r@b", version="1"))
    with pytest.raises(ConfigError, match="bot name 'r@b': .*only ASCII letters"):
        Registry(db).add(folder)
    (folder / "bot.toml").write_text(MANIFEST.format(name="rb", version="1").replace('"xeri"', '"poker"'))
    with pytest.raises(ConfigError, match="unknown game 'poker'"):
        Registry(db).add(folder)
    assert not registry_dir(db).exists() and not db.exists()


def test_remove_retires_and_lookup_follows(tmp_path):
    db = tmp_path / "a.db"
    folder = make_bot(tmp_path / "rb")
    Registry(db).add(folder)
    (folder / "bot.toml").write_text(MANIFEST.format(name="rb", version="2"))
    Registry(db).add(folder)
    reg = Registry(db)
    assert reg.lookup("rb").version == "2"
    assert reg.remove("rb@2") == ["rb@2"]
    assert reg.lookup("rb").version == "1"  # the newest *active* version
    assert reg.lookup("rb@2").status == "retired"  # still there: its history stays
    assert reg.remove("rb@2") == []
    with pytest.raises(ConfigError, match="retired"):
        reg.resolve("rb@2")
    assert reg.remove("rb") == ["rb@1"]
    with pytest.raises(ConfigError, match="every version of 'rb' is retired"):
        reg.lookup("rb")
    with pytest.raises(ConfigError, match="no bot named 'zz'"):
        reg.lookup("zz")
    with pytest.raises(ConfigError, match="no version '9'"):
        reg.lookup("rb@9")
    # Adding a retired version's content again brings it back.
    assert reg.add(folder).outcome == "reactivated"


def test_lookup_gives_the_snapshots_botspec(tmp_path):
    db = tmp_path / "a.db"
    result = Registry(db).add(make_bot(tmp_path / "rb"))
    spec, row = Registry(db).resolve("rb@1", args=["5"])
    assert spec.command == ("python3", "random_bot.py", "5")
    assert Path(spec.workdir) == (registry_dir(db) / result.content_hash).resolve()
    assert row["name"] == "rb" and row["version"] == "1" and row["games"] == ["xeri"]


def test_a_config_naming_registry_bots_runs_from_the_snapshots(tmp_path):
    db = tmp_path / "a.db"
    folder = make_bot(tmp_path / "rb")
    Registry(db).add(folder)
    Registry(db).add(make_bot(tmp_path / "rb2", name="rb2", version="7"))
    shutil.rmtree(folder)  # the snapshot, not the author's folder, is what plays
    shutil.rmtree(tmp_path / "rb2")
    config = tmp_path / "t.toml"
    config.write_text(textwrap.dedent(CONFIG).format(bots=BOTS))
    with pytest.raises(ConfigError, match="no registry"):
        load_config(config)
    outcome = run_config(config, db, executor="serial")
    assert outcome.games_played == 6
    store = Store(db)
    rows = store.db.execute(
        "select b.name, b.version, b.content_hash is not null from tournament_bots t "
        "join bots b on b.id = t.bot_id order by t.entry").fetchall()
    assert rows == [("rb", "1", 1), ("rb2", "7", 1), ("random", "1", 1)]  # every bot snapshotted
    assert store.db.execute("select count(*) from games where termination != 'normal'"
                            ).fetchone()[0] == 0
    # `show` sees the games, the tournament and the ratings of that version.
    info = Registry(db).show("rb@1")["versions"][0]
    assert info["tournaments"] == 1 and info["games_played"] == 4
    assert {r["method"] for r in info["ratings"]} == {"elo", "bt"}


def test_two_versions_of_one_bot_play_each_other_under_their_own_names(tmp_path):
    db = tmp_path / "a.db"
    Registry(db).add(make_bot(tmp_path / "v1", version="1"))
    Registry(db).add(make_bot(tmp_path / "v2", version="2"))
    config = tmp_path / "t.toml"
    same = 'name = "two"\ngame = "xeri"\nseed = 1\ndeals = 1\n[options]\nrounds = 1\n'
    # Without names of their own they meet as name@version ...
    config.write_text(same + '[[bots]]\nbot = "rb@1"\n[[bots]]\nbot = "rb@2"\n')
    assert run_config(config, db, executor="serial").games_played == 2
    # ... and with names of their own, too; either way the games are the registered versions'.
    config.write_text(same + '[[bots]]\nbot = "rb@1"\nname = "rb-old"\n'
                      '[[bots]]\nbot = "rb@2"\nname = "rb-new"\n')
    assert run_config(config, db, executor="serial").games_played == 2
    rows = Store(db).db.execute(
        "select t.tournament_id, t.name, b.name, b.version from tournament_bots t "
        "join bots b on b.id = t.bot_id order by t.tournament_id, t.entry").fetchall()
    assert rows == [(1, "rb@1", "rb", "1"), (1, "rb@2", "rb", "2"),
                    (2, "rb-old", "rb", "1"), (2, "rb-new", "rb", "2")]
    assert Registry(db).show("rb@1")["versions"][0]["games_played"] == 4


def test_a_config_naming_an_unknown_registry_bot_is_a_config_error(tmp_path):
    db = tmp_path / "a.db"
    Registry(db).add(make_bot(tmp_path / "rb"))
    config = tmp_path / "t.toml"
    config.write_text(textwrap.dedent(CONFIG).format(bots=BOTS))
    with pytest.raises(ConfigError, match="no bot named 'rb2'"):
        run_config(config, db, executor="serial")


def test_cli_add_list_show_remove(tmp_path):
    db = tmp_path / "a.db"
    folder = make_bot(tmp_path / "rb")
    out = runner.invoke(app, ["bot", "add", str(folder), "--db", str(db)])
    assert out.exit_code == 0 and "added rb@1" in out.output, out.output
    out = runner.invoke(app, ["bot", "add", str(folder), "--db", str(db)])
    assert out.exit_code == 0 and "nothing to do" in out.output
    out = runner.invoke(app, ["bot", "list", "--db", str(db), "--json"])
    assert [r["ref"] for r in json.loads(out.output)] == ["rb@1"]
    out = runner.invoke(app, ["bot", "show", "rb", "--db", str(db)])
    assert out.exit_code == 0 and "rb@1" in out.output and "played 0 games" in out.output
    out = runner.invoke(app, ["bot", "remove", "rb@1", "--db", str(db)])
    assert out.exit_code == 0 and "retired rb@1" in out.output
    out = runner.invoke(app, ["bot", "show", "nobody", "--db", str(db)])
    assert out.exit_code == 2 and out.output.count("\n") == 1 and "no bot named" in out.output
    out = runner.invoke(app, ["bot", "list", "--db", str(tmp_path / "none.db")])
    assert out.exit_code == 2 and "no registry" in out.output


def test_untrusted_names_are_escaped_in_the_terminal(tmp_path):
    db = tmp_path / "a.db"
    folder = make_bot(tmp_path / "rb")
    (folder / "bot.toml").write_text(MANIFEST.format(name="rb", version="1")
                                     .replace('author = "ada"', 'author = "[red]x\\u001b[2J"'))
    assert runner.invoke(app, ["bot", "add", str(folder), "--db", str(db)]).exit_code == 0
    out = runner.invoke(app, ["bot", "show", "rb", "--db", str(db)])
    assert "[red]x" in out.output and "\x1b" not in out.output and "\\x1b" in out.output


CRASHY = """\
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "crashy", "version": "1"}), flush=True)
    elif m["type"] == "act":
        raise RuntimeError("strategy broke")
"""


def test_show_lists_recent_failures_with_their_stderr_tail(tmp_path):
    db = tmp_path / "a.db"
    folder = tmp_path / "crashy"
    folder.mkdir()
    (folder / "bot.py").write_text(CRASHY)
    (folder / "bot.toml").write_text('name = "crashy"\nversion = "1"\ncommand = ["python3", "bot.py"]\n')
    Registry(db).add(folder)
    config = tmp_path / "t.toml"
    config.write_text(f'name = "c"\ngame = "crossfire"\ndeals = 1\n[[bots]]\nbot = "crashy"\n'
                      f'[[bots]]\nmanifest = "{BOTS}/random.toml"\n')
    run_config(config, db, executor="serial")
    (version,) = Registry(db).show("crashy")["versions"]
    assert version["failures"] and version["failures"][0]["termination"] == "crash"
    assert "RuntimeError: strategy broke" in version["failures"][0]["stderr_tail"]
    out = runner.invoke(app, ["bot", "show", "crashy@1", "--db", str(db)])
    assert out.exit_code == 0 and "stderr| RuntimeError: strategy broke" in out.output

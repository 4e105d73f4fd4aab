"""Bot author's kits: `arena bot new` writes a folder that passes `arena bot check` unchanged."""

from __future__ import annotations

import shutil
import tomllib

import pytest
from typer.testing import CliRunner

from arena.checker import check_bot
from arena.cli import app
from arena.errors import ConfigError
from arena.kits import example_files, kit_files, new_bot
from arena.registry import manifest_spec
from tests.support.paths import BOTS

runner = CliRunner()
NEEDS = {"python": None, "node": "node", "c": "cc"}


def _needs(lang: str) -> None:
    tool = NEEDS[lang]
    if tool and shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")


@pytest.mark.parametrize("lang", ["python", "node", "c"])
def test_a_new_bot_passes_check_unchanged(tmp_path, lang):
    _needs(lang)
    out = runner.invoke(app, ["bot", "new", "mybot", "--lang", lang, "--dir", str(tmp_path)])
    assert out.exit_code == 0, out.output
    folder = tmp_path / "mybot"
    manifest = tomllib.loads((folder / "bot.toml").read_text())
    assert manifest["name"] == "mybot" and manifest["language"] == lang
    assert (folder / "README.md").exists()
    assert not any("{{name}}" in f.read_text() for f in folder.iterdir())
    out = runner.invoke(app, ["bot", "check", str(folder)])
    assert out.exit_code == 0, out.output
    assert "mybot: clean" in out.output
    for game in manifest["games"]:
        assert f"ok  {game}" in out.output


def test_the_python_kit_carries_todays_arenabot():
    assert kit_files("python")["arenabot.py"] == (BOTS / "arenabot.py").read_text()


def test_the_python_examples_in_bots_are_written_from_the_package():
    # `python -m arena.kits bots` writes them: the package holds each file once.
    for name, text in example_files().items():
        assert (BOTS / name).read_text() == text, f"bots/{name} is stale: python -m arena.kits bots"


def test_new_refuses_a_bad_name_an_unknown_language_and_a_full_folder(tmp_path):
    with pytest.raises(ConfigError, match="bad bot name"):
        new_bot("../evil", "python", tmp_path)
    with pytest.raises(ConfigError, match="no kit"):
        new_bot("ok", "cobol", tmp_path)
    new_bot("ok", "python", tmp_path)
    with pytest.raises(ConfigError, match="not empty"):
        new_bot("ok", "python", tmp_path)
    out = runner.invoke(app, ["bot", "new", "x", "--lang", "rust", "--dir", str(tmp_path)])
    assert out.exit_code == 2


@pytest.mark.parametrize("folder, lang", [("node_bot", "node"), ("c_bot", "c")])
def test_the_example_bots_play_every_game(folder, lang):
    _needs(lang)
    spec, manifest = manifest_spec(BOTS / folder)
    report = check_bot(spec, manifest.games, deals=1)
    assert report.clean, report.problems
    assert {c.game for c in report.combos} == {"xeri", "crossfire", "crosswalk",
                                               "battlefield_cribbage"}


def test_the_example_bots_play_a_tournament(tmp_path):
    _needs("node")
    _needs("c")
    from arena.tournament import run_config

    config = tmp_path / "t.toml"
    config.write_text(
        f'name = "kits"\ngame = "crossfire"\ndeals = 1\n'
        f'[[bots]]\nmanifest = "{BOTS}/node_bot/bot.toml"\n'
        f'[[bots]]\nmanifest = "{BOTS}/c_bot/bot.toml"\n'
        f'[[bots]]\nmanifest = "{BOTS}/random.toml"\n')
    outcome = run_config(config, tmp_path / "a.db", executor="serial")
    assert outcome.games_played == 6
    from arena.store import Store

    bad = Store(tmp_path / "a.db").db.execute(
        "select count(*) from games where termination != 'normal'").fetchone()[0]
    assert bad == 0

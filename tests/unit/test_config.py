"""arena/config.py: names and labels, TOML reading, tournament and manifest validation, bot
resolution. Every bad value is one ConfigError line that names the file, the key and the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.config import (
    SHOWN_MAX,
    check_bot_name,
    check_label,
    check_title,
    import_factory,
    load_config,
    load_manifest,
    parse_config,
    parse_toml,
    read_toml,
    shown,
    time_control,
)
from arena.errors import ConfigError
from arena.protocol import DEFAULT_GRACE_MS, TimeControl
from tests.support.bots import FirstLegal
from tests.support.config import manifest_bot, python_bot, python_bots, tournament_toml
from tests.support.paths import ROOT


def two_bots() -> list[dict]:
    return [{"name": "a", "command": ["x"]}, {"name": "b", "command": ["y"]}]


def bad(raw: dict) -> str:
    """The one-line message parse_config gives for `raw`."""
    with pytest.raises(ConfigError) as info:
        parse_config({"name": "t", "game": "xeri", "bots": two_bots(), **raw}, "t.toml")
    text = str(info.value)
    assert "\n" not in text and text.startswith("t.toml: ")
    return text


# -- names ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["a", "random-2", "X_1.5+b", "9lives", "a" * 64])
def test_good_bot_names_pass(name):
    assert check_bot_name(name) == name


@pytest.mark.parametrize("name", ["", "-x", "a b", "a" * 65, "bot\u200b", "Ьot", "x@2", "a/b"])
def test_bad_bot_names_are_refused_showing_the_name_escaped(name):
    with pytest.raises(ValueError) as info:
        check_bot_name(name)
    text = str(info.value)
    assert text.startswith("bot name ") and ascii(name)[:40] in text and "\n" not in text


def test_labels_and_titles():
    assert check_label("v1.2-rc", "version") == "v1.2-rc"
    with pytest.raises(ValueError, match="version 'a b'"):
        check_label("a b", "version")
    assert check_title("Spring cup — 2026") == "Spring cup — 2026"
    for title in ("", "x" * 201, "a\nb", "right\u202eleft"):
        with pytest.raises(ValueError, match="1 to 200 characters"):
            check_title(title)


def test_shown_is_ascii_and_bounded():
    assert shown("Ьot") == ascii("Ьot")
    long = shown("x" * 10_000)
    assert len(long) < SHOWN_MAX + 40 and "(10000 characters)" in long


# -- TOML -------------------------------------------------------------------------------------------
def test_read_toml_names_the_file_and_the_problem(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        read_toml(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="not a file"):
        read_toml(tmp_path)
    (tmp_path / "bad.toml").write_text("name = \n")
    with pytest.raises(ConfigError, match=r"bad\.toml: invalid TOML"):
        read_toml(tmp_path / "bad.toml")
    (tmp_path / "latin.toml").write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(ConfigError, match="not a UTF-8 text file"):
        read_toml(tmp_path / "latin.toml")


def test_a_whole_number_sqlite_cannot_store_is_refused_with_its_key():
    with pytest.raises(ConfigError, match=r"c\.toml: seed: 99999999999999999999 does not fit"):
        parse_toml(b"seed = 99999999999999999999\n", Path("c.toml"))
    with pytest.raises(ConfigError, match=r"options\.x\[1\]"):
        parse_toml(b"[options]\nx = [1, -99999999999999999999]\n", Path("c.toml"))


def test_a_manifest_over_64_kib_is_refused_before_parsing(tmp_path):
    path = tmp_path / "bot.toml"
    path.write_text('name = "x"\ncommand = ["x"]\n' + "# pad\n" * 20_000)
    with pytest.raises(ConfigError, match="over 64 KiB"):
        load_manifest(path)


# -- tournament configs -----------------------------------------------------------------------------
def test_defaults_of_a_minimal_config():
    config = parse_config({"name": "t", "game": "xeri", "bots": two_bots()})
    assert not config.event and config.games == ["xeri"]
    stage = config.stages[0]
    assert (stage.format, stage.seats, stage.deals, stage.cycles) == ("round_robin", 2, 2, 1)
    assert config.sandbox == "auto" and config.bot_user == "seat" and config.match_attempts == 3


@pytest.mark.parametrize("raw, words", [
    ({"format": "knockout"}, "unknown format 'knockout'"),
    ({"seats": 9}, "seats"),
    ({"deals": 0}, "deals"),
    ({"sandbox": "docker"}, "sandbox must be one of"),
    ({"bot_user": "nobody"}, "bot_user"),
    ({"match_attempts": 99}, "match_attempts"),
    ({"colour": "red"}, "colour"),
    ({"event": True}, "event is derived from [[stages]]"),
    ({"time": {"move_ms": "fast"}}, "time.move_ms"),
])
def test_a_bad_value_is_one_line_naming_the_key(raw, words):
    assert words in bad(raw)


def test_the_bad_value_itself_is_quoted_and_bounded():
    text = bad({"seats": 9})
    assert "(got 9)" in text
    text = bad({"sandbox": "d" * 10_000})
    assert len(text) < 300


def test_bot_entries_need_exactly_one_source_and_a_name():
    with pytest.raises(ConfigError, match="exactly one of manifest, command, python or bot"):
        parse_config({"name": "t", "game": "xeri",
                      "bots": [{"name": "a", "command": ["x"], "python": "m:f"}, two_bots()[1]]})
    with pytest.raises(ConfigError, match="needs a name"):
        parse_config({"name": "t", "game": "xeri", "bots": [{"command": ["x"]}, two_bots()[1]]})
    with pytest.raises(ConfigError, match="'@' is kept for name@version"):
        parse_config({"name": "t", "game": "xeri",
                      "bots": [{"name": "a@2", "command": ["x"]}, two_bots()[1]]})
    with pytest.raises(ConfigError, match="bots"):
        parse_config({"name": "t", "game": "xeri", "bots": two_bots()[:1]})


def test_an_event_takes_top_level_stage_keys_as_defaults():
    config = parse_config({"name": "e", "deals": 3, "bots": two_bots(), "stages": [
        {"name": "x", "game": "xeri"}, {"name": "c", "game": "crossfire", "deals": 1}]})
    assert config.event and config.games == ["xeri", "crossfire"]
    assert [s.deals for s in config.stages] == [3, 1]
    with pytest.raises(ConfigError, match="stage names must be unique"):
        parse_config({"name": "e", "bots": two_bots(), "stages": [{"game": "xeri"},
                                                                   {"game": "xeri"}]})


def test_import_factory():
    assert import_factory("tests.support.bots:FirstLegal") is FirstLegal
    for target, words in (("nocolon", "expected module:attribute"),
                          ("tests.support.bots:Nobody", "Nobody"),
                          ("no.such.module:x", "no.such")):
        with pytest.raises(ConfigError, match=words):
            import_factory(target)


# -- load_config over files (the builders of tests/support) ------------------------------------------
def test_load_config_resolves_python_and_manifest_bots(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(tournament_toml(bots=[python_bot("p"), manifest_bot("random", args=["3"])],
                                    seed=5, deals=1, options={"rounds": 1}))
    config, specs, rows = load_config(path)
    assert config.name == "t" and config.seed == 5
    assert specs[0].in_process and specs[0].name == "p"
    assert not specs[1].in_process and specs[1].command[-1] == "3"
    assert rows[1]["games"] and "xeri" in rows[1]["games"]


def test_load_config_checks_the_game_before_the_bots(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(tournament_toml(game="chess", bots=python_bots(2)))
    with pytest.raises(ConfigError, match="unknown game 'chess'") as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_load_config_refuses_too_few_bots_for_the_tables(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(tournament_toml(game="crosswalk", seats=4, bots=python_bots(3)))
    with pytest.raises(ConfigError, match="3 bots cannot fill tables of 4 seats"):
        load_config(path)


def test_load_config_names_an_unknown_anchor_and_candidate(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(tournament_toml(bots=python_bots(3), rating={"anchor": "zed"}))
    with pytest.raises(ConfigError, match="rating.anchor: 'zed' is not one of the bots"):
        load_config(path)
    path.write_text(tournament_toml(bots=python_bots(3), format="gauntlet", candidates=["zed"]))
    with pytest.raises(ConfigError, match="candidates: no bot named 'zed'"):
        load_config(path)


def test_time_control_carries_every_field():
    config = parse_config({"name": "t", "game": "xeri", "bots": two_bots(),
                           "time": {"startup_ms": 500, "move_ms": 20, "bank_ms": 7,
                                    "grace_ms": 3}})
    assert time_control(config) == TimeControl(startup_ms=500, move_ms=20, bank_ms=7, grace_ms=3)



def test_config_time_section_reaches_the_protocol():
    config = parse_config({"name": "t", "game": "xeri", "bots": [{"name": "a", "command": ["x"]},
                                                                   {"name": "b", "command": ["y"]}],
                           "time": {"move_ms": 1500, "bank_ms": 4000, "grace_ms": 50}})
    assert time_control(config) == TimeControl(startup_ms=10_000, move_ms=1500, bank_ms=4000,
                                               grace_ms=50)
    default = parse_config({"name": "t", "game": "xeri",
                            "bots": [{"name": "a", "command": ["x"]}, {"name": "b", "command": ["y"]}]})
    assert default.time.bank_ms == 0 and default.time.grace_ms == DEFAULT_GRACE_MS



def test_every_shipped_name_is_accepted():
    from arena.config import check_bot_name, check_label, check_title

    manifests = [*(ROOT / "bots").rglob("*.toml"), *(ROOT / "arena" / "kits").rglob("bot.toml")]
    assert len(manifests) >= 8
    for path in manifests:
        raw = read_toml(path)
        check_bot_name(raw["name"].replace("{{name}}", "my-bot"))
    for path in (ROOT / "configs").rglob("*.toml"):
        raw = read_toml(path)
        check_title(raw.get("name", path.stem))
        for entry in raw.get("bots", []):
            if "name" in entry:
                check_bot_name(entry["name"])
                check_label(entry["name"], "bot name")
    for path in (ROOT / "bots").glob("*.toml"):
        load_manifest(path)


# -- stage weights ----------------------------------------------------------------------------------
@pytest.mark.parametrize("weight, words", [
    (-1, "stages.1.weight: Input should be greater than or equal to 0 (got -1)"),
    (float("nan"), "stages.1.weight: Input should be a finite number (got nan)"),
    (float("inf"), "stages.1.weight: Input should be a finite number (got inf)"),
    ("heavy", "stages.1.weight: Input should be a valid number (got 'heavy')"),
    (True, "stages.1.weight: Input should be a valid number (got True)"),
])
def test_a_bad_stage_weight_is_one_line_naming_it(weight, words):
    assert words in bad({"stages": [{"game": "xeri"}, {"game": "crossfire", "weight": weight}]})


def test_stage_weights_may_not_all_be_zero_and_a_top_level_weight_is_every_stage_default():
    assert "every stage has weight 0" in bad({"weight": 0, "stages": [{"game": "xeri"},
                                                                      {"game": "crossfire"}]})
    config = parse_config({"name": "e", "weight": 0, "bots": two_bots(), "stages": [
        {"game": "xeri"}, {"game": "crossfire", "weight": 2.5}]})
    assert [s.weight for s in config.stages] == [0.0, 2.5]

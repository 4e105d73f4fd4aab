"""arena/events.py: validating and planning a tournament's stages before anything is written,
the config digest resumes compare, and the pure ids, ordinals and seeds of matches."""

from __future__ import annotations

import pytest

from arena.config import load_config, parse_config
from arena.errors import ConfigError
from arena.events import (
    GAMES_PER_MATCH_LIMIT,
    config_digest,
    match_id,
    match_spec,
    ordinal,
    plan_event,
)
from arena.players.base import BotSpec
from arena.scheduling import History
from tests.support.bots import FirstLegal
from tests.support.paths import BOTS


def planned(n_bots: int = 4, **raw):
    """plan_event over a config of `n_bots` in-process bots (any game)."""
    bots = [{"name": f"b{i}", "python": "tests.support.bots:FirstLegal"} for i in range(n_bots)]
    config = parse_config({"name": "t", "game": "xeri", "options": {"rounds": 1}, "bots": bots,
                           **raw})
    specs = [BotSpec(b["name"], factory=FirstLegal) for b in bots]
    rows = [{"name": b["name"], "games": []} for b in bots]
    return plan_event(config, specs, rows)


def test_a_round_robin_plans_every_pairing_with_duplicate_deals():
    plan = planned(4, deals=2)
    (stage,) = plan.stages
    assert stage.games_per_match == 4  # 2 deals x 2 seat rotations
    assert stage.planned_games() == 6 * 4 and plan.planned_games() == 24
    assert stage.entrants == [0, 1, 2, 3] and stage.left_out == []


def test_swiss_rounds_default_to_log2_plus_one():
    (stage,) = planned(7, format="swiss", deals=1).stages
    assert stage.total_rounds == 4


@pytest.mark.parametrize("raw, words", [
    ({"deals": GAMES_PER_MATCH_LIMIT}, "at most 1000 games per match"),
    ({"format": "round_robin", "rounds": 3}, "only a swiss stage takes rounds"),
    ({"format": "swiss", "tiebreaks": ["coin"]}, "unknown tie-break 'coin'"),
    ({"format": "swiss", "seeding": ["b1", "b1"]}, "listed twice"),
    ({"options": {"rounds": 0}}, "rounds"),
])
def test_plans_that_cannot_be_played_are_one_line_config_errors(raw, words):
    with pytest.raises(ConfigError) as info:
        planned(4, **raw)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_an_event_names_the_stage_that_cannot_be_played():
    bots = [{"name": f"b{i}", "python": "tests.support.bots:FirstLegal"} for i in range(3)]
    config = parse_config({"name": "e", "bots": bots, "stages": [
        {"name": "x", "game": "xeri", "options": {"rounds": 1}},
        {"name": "cw", "game": "crosswalk", "seats": 4}]})
    specs = [BotSpec(b["name"], factory=FirstLegal) for b in bots]
    rows = [{"name": b["name"], "games": []} for b in bots]
    with pytest.raises(ConfigError, match="stage 'cw': 3 bots cannot fill tables of 4 seats"):
        plan_event(config, specs, rows)


def test_the_digest_follows_content_and_ignores_later_keys_at_their_defaults():
    base = {"name": "t", "game": "xeri", "bots": [{"name": "a", "command": ["x"]},
                                                  {"name": "b", "command": ["y"]}]}
    digest = config_digest(parse_config(base))
    assert len(digest) == 16
    assert config_digest(parse_config(dict(base))) == digest
    assert config_digest(parse_config({**base, "seed": 1})) != digest
    assert config_digest(parse_config({**base, "bot_user": "seat",
                                       "allow_unconfined": False})) == digest
    assert config_digest(parse_config({**base, "bot_user": "bot"})) != digest


def test_an_event_recorded_before_stage_weights_keeps_its_digest():
    # The digest the Arena of 2026-12-03 (before `weight`) gave this event: at weight 1 a stage
    # digests as it did then, so the event still resumes; another weight is another config.
    raw = {"name": "e", "seed": 3, "bots": [{"name": "a", "command": ["x"]},
                                            {"name": "b", "command": ["y"]}],
           "stages": [{"game": "xeri"}, {"game": "crossfire", "seats": 3}]}
    assert config_digest(parse_config(raw)) == "a6bd53ae1ae619da"
    raw["stages"][1]["weight"] = 1.0
    assert config_digest(parse_config(raw)) == "a6bd53ae1ae619da"
    raw["stages"][1]["weight"] = 2
    assert config_digest(parse_config(raw)) != "a6bd53ae1ae619da"


def test_ids_and_ordinals_are_pure_and_ordered():
    assert match_id(3, 1, 2, 4) == "t3-st1-r2-m4"
    assert ordinal(1, 1, 1, 0) < ordinal(1, 1, 1, 1) < ordinal(1, 1, 2, 0) < ordinal(1, 2, 0, 0)
    assert ordinal(1, 999_999, 999_999, 999) < ordinal(2, 0, 0, 0)


def test_match_specs_are_the_same_in_every_plan():
    def first_specs():
        plan = planned(4, deals=2, seed=11)
        stage = plan.stages[0]
        tables = stage.scheduler.next_round(stage.pairing, History()).tables
        return [match_spec(plan, stage, t, 1) for t in tables]

    a, b = first_specs(), first_specs()
    assert [(s.match_id, [(g.game_id, g.seed, g.ordinal) for g in s.games]) for s in a] == \
           [(s.match_id, [(g.game_id, g.seed, g.ordinal) for g in s.games]) for s in b]
    spec = a[0]
    assert spec.match_id.startswith("t1-st1-r1-m") and len(spec.games) == 4
    assert {g.seed for g in spec.games[:2]} != {g.seed for g in spec.games[2:]}  # deal 0 vs 1


def test_load_config_then_plan(tmp_path):
    from tests.support.config import python_bots, write_tournament

    path = write_tournament(tmp_path, bots=python_bots(3), format="gauntlet", candidates=["b0"],
                            deals=1, options={"rounds": 1})
    plan = plan_event(*load_config(path))
    (stage,) = plan.stages
    assert stage.pairing.candidates == (0,) and stage.planned_games() == 2 * 2



@pytest.mark.parametrize("path", sorted([*(BOTS.parent / "configs").glob("*.toml"),
                                         *(BOTS.parent / "configs" / "search").glob("*.toml")]),
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_shipped_configs_load_and_plan(path):
    from arena.events import match_spec, plan_event
    from arena.scheduling import History

    config, bots, rows = load_config(path)
    plan = plan_event(config, bots, rows)
    for stage in plan.stages:
        first = stage.scheduler.next_round(stage.pairing, History())
        specs = [match_spec(plan, stage, table, 1) for table in first.tables]
        assert specs and all(len(spec.bots) == stage.config.seats for spec in specs)
        ids = [g.game_id for spec in specs for g in spec.games]
        assert len(ids) == len(set(ids))

"""The per-game observation and action schemas kept in protocol/schema/games/."""

from __future__ import annotations

import copy
import json

import pytest

from arena.game_schemas import dumps, errors, game_schemas, samples
from arena.games import game_names, make_options
from tests.support.paths import ROOT

GAMES_DIR = ROOT / "protocol" / "schema" / "games"
SEEDS_DIR = ROOT / "seeds"


def _on_disk(name: str, kind: str) -> dict:
    return json.loads((GAMES_DIR / f"{name}.{kind}.schema.json").read_text())


@pytest.mark.parametrize("name", game_names())
def test_wrong_observations_and_actions_fail(name):
    schemas = {kind: _on_disk(name, kind) for kind in ("observation", "action")}
    obs = next(v for k, v in samples(name, seed=7, games=1) if k == "observation")
    action = next(v for k, v in samples(name, seed=7, games=1) if k == "action")
    assert errors(obs, schemas["observation"]) == [] and errors(action, schemas["action"]) == []

    missing = copy.deepcopy(obs)
    del missing["seat"]
    assert any("missing required key 'seat'" in e for e in errors(missing, schemas["observation"]))
    wrong_type = {**obs, "seat": "0"}
    assert errors(wrong_type, schemas["observation"])
    extra = {**obs, "surprise": 1}
    assert any("unexpected key" in e for e in errors(extra, schemas["observation"]))
    assert any("unexpected key" in e for e in errors({**obs, "options": {}}, schemas["observation"]))
    options = make_options(name, {}).model_dump(mode="json")
    options_schema = _on_disk(name, "options")
    assert errors(options, options_schema) == []
    assert errors({**options, next(iter(options)): {"x": 1}}, options_schema)
    assert any("unexpected key" in e for e in errors({**options, "surprise": 1}, options_schema))
    assert errors({**action, "type": "no_such_action"}, schemas["action"])
    assert errors("pass", schemas["action"])


def test_schemas_are_deterministic():
    assert dumps(game_schemas("crossfire")["action"]) == dumps(game_schemas("crossfire")["action"])


@pytest.mark.parametrize("name", game_names())
def test_seed_documents_point_at_their_schemas(name):
    text = (SEEDS_DIR / f"{name}.md").read_text()
    for kind in ("observation", "action"):
        assert f"protocol/schema/games/{name}.{kind}.schema.json" in text


def test_our_validator_agrees_with_jsonschema():
    jsonschema = pytest.importorskip("jsonschema")
    for name in game_names():
        schemas = {kind: _on_disk(name, kind) for kind in ("observation", "action")}
        for _kind, schema in schemas.items():
            jsonschema.Draft202012Validator.check_schema(schema)
        validators = {k: jsonschema.Draft202012Validator(s) for k, s in schemas.items()}
        for i, (kind, value) in enumerate(samples(name, seed=99, games=1)):
            if i % 97:
                continue  # a spread of samples is enough to compare the two validators
            assert validators[kind].is_valid(value) == (errors(value, schemas[kind]) == [])
            broken = {**value, "seat": "x"} if isinstance(value, dict) else value
            assert validators[kind].is_valid(broken) == (errors(broken, schemas[kind]) == [])

"""The per-game schemas against every game: regenerated from many random games and compared with
the files in protocol/schema/games/, and fresh games validated against them (the sweep, in the
system tier; the schema checks themselves are tests/unit/test_game_schemas.py)."""

from __future__ import annotations

import json

import pytest

from arena.game_schemas import all_game_schemas, dumps, errors, samples
from arena.games import game_names
from tests.support.paths import ROOT

GAMES_DIR = ROOT / "protocol" / "schema" / "games"


def _on_disk(name: str, kind: str) -> dict:
    return json.loads((GAMES_DIR / f"{name}.{kind}.schema.json").read_text())


def test_game_schemas_on_disk_are_up_to_date():
    schemas = all_game_schemas()
    on_disk = {p.name: p.read_text() for p in GAMES_DIR.glob("*.schema.json")}
    assert on_disk == {name: dumps(s) for name, s in schemas.items()}, (
        "protocol/schema/games is stale: run `arena schema`")


@pytest.mark.parametrize("name", game_names())
def test_fresh_random_games_validate(name):
    # Seeds unlike the generation's: the schemas must hold beyond the games they came from.
    schemas = {kind: _on_disk(name, kind) for kind in ("observation", "action")}
    count, memo = 0, {}
    for kind, value in samples(name, seed=12345, games=1):
        problems = errors(value, schemas[kind], memo=memo)
        assert not problems, f"{name} {kind} does not match its schema: {problems[:3]}"
        count += 1
    assert count > 100

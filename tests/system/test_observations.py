"""Incremental observations: the cached observation, its encoding and a build from scratch agree.

Every game builds `observation()` and `observation_json()` from parts cached as the game goes; the
conformance kit holds both to `observation_from_scratch()` at every step and for every seat, over
thousands of seeded random games in all (every game, seat count and option set), clones included.
"""

from __future__ import annotations

import orjson
import pytest

from arena.conformance import ConformanceError, case_id, cases, check_observations
from arena.games import new_game

CASES = cases()
# 5,340 games over the 127 cases; Battlefield Cribbage's long games get fewer per case.
GAMES_PER_CASE = {"crossfire": 200, "crosswalk": 40, "xeri": 60, "battlefield_cribbage": 2}


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_incremental_observations_equal_a_build_from_scratch(case):
    name, seats, options = case
    games = GAMES_PER_CASE[name]
    report = check_observations(name, seats, options, games=games, seed=13)
    assert report.games == games
    assert report.probes["incremental_observations"] >= report.steps * seats


def test_a_stale_cache_is_caught(monkeypatch):
    # A game whose cached encoding stops following its state must fail the check, naming it.
    state = new_game("xeri", {}, 2, 1)
    cls = type(state)
    first = {}

    def stale(self, seat):
        return first.setdefault(seat, orjson.dumps(self.observation(seat)))

    monkeypatch.setattr(cls, "observation_json", stale)
    with pytest.raises(ConformanceError, match="observation_json"):
        check_observations("xeri", 2, {}, games=1, seed=13)


def test_observations_carry_no_options():
    # Options travel once, in game_start (protocol arena/2): no act line resends them.
    for name, seats, options in CASES:
        state = new_game(name, options, seats, 5)
        for seat in range(seats):
            assert "options" not in state.observation(seat), (name, seats, options)

"""The conformance kit over every registered game, seat count and option set (about two thousand
checked games): the exhaustive sweep, in the system tier; the kit's own tests on a toy game are
tests/unit/test_conformance.py."""

from __future__ import annotations

import functools
import json
import random

import pytest

from arena.conformance import (
    case_id,
    cases,
    check_cross_process,
    check_determinization,
    check_game,
    hypothesis_check,
)
from arena.games import (
    game_names,
    get_game,
    new_game,
)

# -- every registered game ------------------------------------------------------------------------
#
# Games differ a hundredfold in cost (a Crossfire game is 15 moves, a four-seat Battlefield Cribbage
# game 400 moves with observations of several kilobytes), so each case gets a budget of work rather
# than a number of games. A game's work is estimated once per seat count from one plain game:
# steps x (seats + 1) + observation characters / 1000; checking costs about 150 µs a unit. Default
# options get ten times the budget of an option variant. Together: about two thousand checked games.

DEFAULT_BUDGET = 30_000
VARIANT_BUDGET = 3_500
HYPOTHESIS_BUDGET = 5_000
MAX_GAMES = 500


@functools.cache
def work_units(name: str, seats: int) -> int:
    """The estimated checking work of one game with default options (deterministic)."""
    state = new_game(name, None, seats, 0)
    rng = random.Random(0)
    steps = chars = 0
    while state.to_act() and steps < 100_000:
        chars += sum(len(json.dumps(state.observation(s))) for s in range(seats))
        state.apply({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})
        steps += 1
    return max(1, steps * (seats + 1) + chars // 1000)


def games_for(name: str, seats: int, budget: int) -> int:
    """How many games a case of this budget plays: at least one."""
    return max(1, min(MAX_GAMES, budget // work_units(name, seats)))


CASES = cases()


@pytest.mark.conformance
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_registered_game_conforms(case):
    name, seats, options = case
    budget, probe_rate = (VARIANT_BUDGET, 0.05) if options else (DEFAULT_BUDGET, 0.25)
    games = games_for(name, seats, budget)
    report = check_game(name, seats, options, games=games, probe_rate=probe_rate)
    assert report.games == games and report.steps >= games
    assert report.probes["replay"] == games and report.probes["illegal"] > 0


@pytest.mark.conformance
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_registered_game_determinizes_over_every_possible_place(case):
    name, seats, options = case
    report = check_determinization(name, seats, options, games=1, states=2, seed=0)
    assert report.probes["coverage_states"] == 2
    assert report.probes["coverage_samples"] >= 2 * seats


def test_every_registered_game_is_covered():
    names = game_names()
    assert {"xeri", "crossfire", "crosswalk", "battlefield_cribbage"} <= set(names)
    for name in names:
        for seats in get_game(name).game_type.seat_counts:
            assert (name, seats, {}) in CASES
        for variant in get_game(name).game_type.variants:
            assert any(c[0] == name and c[2] == dict(variant) for c in CASES), (name, variant)


GAME_SEATS = [(n, s) for n in game_names() for s in get_game(n).game_type.seat_counts]


@pytest.mark.conformance
@pytest.mark.parametrize("name,seats", GAME_SEATS, ids=[f"{n}-{s}p" for n, s in GAME_SEATS])
def test_registered_game_under_hypothesis(name, seats):
    examples = max(1, min(20, HYPOTHESIS_BUDGET // work_units(name, seats)))
    report = hypothesis_check(name, seats, max_examples=examples, probe_rate=0.05, derandomize=True)
    assert report.games == examples


@pytest.mark.conformance
@pytest.mark.parametrize("name", game_names())
def test_registered_game_is_independent_of_hash_seed(name):
    seats = max(get_game(name).game_type.seat_counts)
    assert check_cross_process(name, seats, games=2) > 2

"""The BFC search knowledge (arena.games.battlefield_cribbage_search): the port matches the heuristic bot, the
prior favours its choice, the show bonus is per side, and the team bot is legal and deterministic."""

from __future__ import annotations

import importlib.util
import random

import pytest

from arena.games import new_game
from arena.games.battlefield_cribbage_search import (
    heuristic_policy,
    heuristic_prior,
    heuristic_values,
    show_bonus,
)
from arena.search import ISMCTS, ISMCTSBot
from arena.search.playouts import profile_for
from tests.support.paths import ROOT

_BOT = ROOT / "bots" / "bfc_bot.py"


def _heuristic_bot():
    spec = importlib.util.spec_from_file_location("bfc_bot_under_test", _BOT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seats,options", [(4, {"team_mode": True}), (2, {}), (3, {})])
def test_the_port_picks_what_the_heuristic_bot_picks(seats, options):
    bot = _heuristic_bot()
    rng = random.Random(seats)
    checked = 0
    for seed in range(3):
        state = new_game("battlefield_cribbage", options, seats, seed)
        while state.to_act():
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            if len(legal) > 1:
                wanted = bot.choose(state.observation(seat), legal)
                assert heuristic_policy(state, seat, legal, rng) == wanted
                checked += 1
            # Mostly the heuristic's own play, sometimes random, to reach varied positions.
            pick = bot.choose(state.observation(seat), legal) if rng.random() < 0.7 \
                else rng.choice(legal)
            state.apply({seat: pick})
    assert checked > 100


def test_the_prior_is_one_for_the_heuristic_choice_and_below_for_the_rest():
    state = new_game("battlefield_cribbage", {"team_mode": True}, 4, 8)
    rng = random.Random(0)
    seen = 0
    while state.to_act() and seen < 40:
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        if len(legal) > 1:
            prior = heuristic_prior(state, seat, legal)
            values = heuristic_values(state, seat, legal)
            assert len(prior) == len(legal)
            assert max(prior) == 1.0 and all(0.0 < p <= 1.0 for p in prior)
            assert prior[values.index(max(values))] == 1.0
            seen += 1
        state.apply({seat: rng.choice(legal)})


def _play_randomly(state, rng: random.Random, plies: int) -> None:
    """Apply `plies` uniformly random moves (a turn-based game: one seat acts at a time)."""
    for _ in range(plies):
        seat = state.to_act()[0]
        state.apply({seat: rng.choice(state.legal_actions(seat))})


def test_the_show_bonus_is_shared_by_partners():
    state = new_game("battlefield_cribbage", {"team_mode": True}, 4, 3)
    _play_randomly(state, random.Random(1), 30)
    bonus = show_bonus(state)
    assert len(bonus) == 4
    assert bonus[0] == bonus[2] and bonus[1] == bonus[3]


def test_the_team_profile_uses_the_heuristic_knowledge():
    profile = profile_for("battlefield_cribbage", "policy")
    assert profile.prior is heuristic_prior and profile.prior_weight > 0
    assert profile.policy is heuristic_policy and profile.bonus is show_bonus
    assert profile.horizon is not None


def test_the_team_search_is_legal_and_deterministic():
    state = new_game("battlefield_cribbage", {"team_mode": True}, 4, 21)
    rng = random.Random(2)
    _play_randomly(state, rng, 9)
    while len(state.legal_actions(state.to_act()[0])) < 2:
        _play_randomly(state, rng, 1)
    seat = state.to_act()[0]
    before = state.full_view()
    picks = [ISMCTS(iterations=30, exploration=0.3, seed=1, profile="policy")
             .search(state, seat, random.Random(4)) for _ in range(2)]
    assert picks[0] == picks[1] and picks[0] in state.legal_actions(seat)
    assert state.full_view() == before
    bot = ISMCTSBot(iterations=20, exploration=0.3, profile="policy")
    bot.game_start({"options": {"team_mode": True}})
    obs, legal = state.observation(seat), state.legal_actions(seat)
    assert bot.choose(obs, legal) == bot.choose(obs, legal)

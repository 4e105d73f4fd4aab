"""ISMCTS playouts and rewards: policies answer legal actions, cut-offs stop at a round's end,
partners share rewards, the bot takes the options from game_start."""

from __future__ import annotations

import random

import pytest

from arena.games import new_game
from arena.games.xeri_search import xeri_fast
from arena.search import ISMCTS, ISMCTSBot
from arena.search.ismcts import _Scorer
from arena.search.playouts import Profile, declared_profiles, play_out


def _advance(state, rng, moves):
    for _ in range(moves):
        if not state.to_act():
            break
        state.apply({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})


@pytest.mark.parametrize("fast", [None, xeri_fast])
def test_a_cut_playout_stops_when_the_round_ends(fast):
    state = new_game("xeri", {"rounds": 3}, 2, 2)
    rng = random.Random(1)
    _advance(state, rng, 5)
    first = state.round
    if fast is None:
        play_out(state, rng, True, None)
    else:
        fast(state, rng, True)
    assert state.to_act() and state.round == first + 1
    if fast is None:
        play_out(state, rng, False, None)
    else:
        fast(state, rng, False)
    assert not state.to_act()


def test_partners_share_rewards_and_a_gain_is_worth_more_than_a_loss():
    state = new_game("battlefield_cribbage", {"team_mode": True}, 4, 3)
    scorer = _Scorer(state, Profile(stop_at_round_end=True, scale=10.0), 0)
    later = state.clone()
    later.pts = [later.pts[0] + 6, later.pts[1]]
    rewards = scorer.rewards(later)
    assert rewards[0] == rewards[2] > 0.5 > rewards[1] == rewards[3]
    assert rewards[0] + rewards[1] == pytest.approx(1.0)


@pytest.mark.parametrize("name", sorted(declared_profiles("tuned")))
def test_a_tuned_search_is_deterministic_given_seed_and_iterations(name):
    seats, options = (2, {"open_rows": True}) if name == "crossfire" else (2, {})
    state = new_game(name, options, seats, 8)
    _advance(state, random.Random(4), 3)
    while len(state.legal_actions(state.to_act()[0])) < 2:
        _advance(state, random.Random(5), 1)
    seat = state.to_act()[0]
    picks = [ISMCTS(iterations=60, seed=3).root_statistics(state, seat, random.Random(9))
             for _ in range(2)]
    assert picks[0] == picks[1]


def test_the_bot_takes_the_options_from_game_start():
    options = {"rounds": 1, "ten_of_diamonds": 3}
    state = new_game("xeri", options, 2, 11)
    seat = state.to_act()[0]
    obs = state.observation(seat)
    obs.pop("options", None)
    bot = ISMCTSBot(iterations=30, seed=1)
    bot.game_start({"type": "game_start", "options": options, "seat": seat})
    assert bot.choose(obs, state.legal_actions(seat)) in state.legal_actions(seat)

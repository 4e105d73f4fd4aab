"""ISMCTS: legal, deterministic given seed and iterations, every game and seat count, teams."""

from __future__ import annotations

import random

import pytest

from arena.games import new_game, play_out
from arena.search import ISMCTS, ISMCTSBot, rank_rewards

GAMES = [
    ("xeri", 2, {}),
    ("crossfire", 2, {"open_rows": True}),
    ("crosswalk", 2, {}),
    ("crosswalk", 4, {}),
    ("battlefield_cribbage", 2, {}),
    ("battlefield_cribbage", 4, {"team_mode": True}),
]


def test_rank_rewards_share_ties_and_team_places():
    assert rank_rewards([1, 2]) == [1.0, 0.0]
    assert rank_rewards([1, 1]) == [0.5, 0.5]
    # Two teams of two: partners share rank 1 or 3, so they share the reward.
    assert rank_rewards([1, 3, 1, 3]) == pytest.approx([5 / 6, 1 / 6, 5 / 6, 1 / 6])


@pytest.mark.parametrize("name,seats,options", GAMES)
def test_a_search_is_legal_and_deterministic(name, seats, options):
    state = new_game(name, options, seats, 4)
    seat = state.to_act()[0]
    before = state.full_view()
    picks = [ISMCTS(iterations=40, seed=1).search(state, seat, random.Random(7)) for _ in range(2)]
    assert picks[0] == picks[1]
    assert picks[0] in state.legal_actions(seat)
    assert state.full_view() == before


@pytest.mark.parametrize("name,seats,options", GAMES)
def test_the_bot_plays_whole_games(name, seats, options):
    bot = ISMCTSBot(iterations=8, seed=2)
    bot.game_start({"type": "game_start", "options": options, "seat": 0})
    state = new_game(name, options, seats, 9)
    result = play_out(state, [bot.choose] + [None] * (seats - 1), random.Random(3))
    assert len(result.ranks) == seats


def test_the_bot_answers_the_same_observation_the_same_way():
    state = new_game("xeri", None, 2, 11)
    seat = state.to_act()[0]
    obs, legal = state.observation(seat), state.legal_actions(seat)
    assert ISMCTSBot(iterations=50, seed=5).choose(obs, legal) == \
        ISMCTSBot(iterations=50, seed=5).choose(obs, legal)


def test_a_time_budget_still_runs_at_least_one_iteration():
    search = ISMCTS(iterations=None, time_ms=0.0)
    state = new_game("xeri", None, 2, 1)
    search.search(state, state.to_act()[0], random.Random(0))
    assert search.ops["iterations"] == 1


def test_a_prior_orders_the_untried_actions():
    from arena.search.playouts import Profile

    state = new_game("xeri", None, 2, 11)
    seat = state.to_act()[0]
    legal = state.legal_actions(seat)
    favourite = legal[-1]

    def prefer_last(det, s, actions):
        return [1.0 if a == favourite else 0.0 for a in actions]

    profile = Profile(prior=prefer_last, prior_weight=1.0)
    # One iteration tries one root action: the prior's favourite, not a random one.
    for rng_seed in range(5):
        search = ISMCTS(iterations=1, seed=rng_seed, profile=profile)
        assert search.search(state, seat, random.Random(rng_seed)) == favourite


def test_a_modelled_opponent_plays_by_the_model_and_keeps_no_statistics():
    from arena.search.playouts import Profile

    state = new_game("crossfire", {"open_rows": True}, 2, 4)
    calls = []

    def first_slot(det, s, actions, rng):
        calls.append(s)
        return actions[0]

    search = ISMCTS(iterations=60, seed=3, profile=Profile(opponent=first_slot))
    stats = search.root_statistics(state, 0, random.Random(2))
    assert calls and set(calls) == {1}
    # The tree's root holds the searcher's five slots, each tried.
    assert len(stats) == 5 and sum(n for n, _ in stats.values()) == 60


def test_a_per_game_bot_takes_the_shipped_settings_of_each_game():
    from arena.search.bot import SHIPPED, shipped_bot

    bot = ISMCTSBot(iterations=10, per_game=True)
    bot.game_start({"type": "game_start", "game": "battlefield_cribbage",
                    "options": {"team_mode": True}, "seat": 0, "players": ["a", "b", "c", "d"]})
    assert (bot.search.c, bot.search.profile) == (SHIPPED["bfc_teams"]["exploration"], "policy")
    bot.game_start({"type": "game_start", "game": "xeri", "options": {}, "seat": 1,
                    "players": ["a", "b"]})
    assert (bot.search.c, bot.search.profile) == (0.7, "tuned")
    assert bot.search.iterations == 10
    assert shipped_bot("crosswalk", 4, {}) == "crosswalk_4p"
    assert shipped_bot("crosswalk", 2, {}) == "crosswalk"
    assert shipped_bot("battlefield_cribbage", 2, {"team_mode": False}) == "bfc"

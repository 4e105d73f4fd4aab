"""The paired root search (ISMCTS profile kind "paired", the 4-seat Crosswalk bot) and what it reads
from the table: which seats play as the heuristic (PlayEvidence), a belief weighted by that, and
pairwise rewards."""

from __future__ import annotations

import math
import random
import sys

import pytest

from arena.games import new_game
from arena.games.crosswalk_model import (
    ROUND_SPREAD,
    TRUST_ATTR,
    PlayEvidence,
    cycle_constraints,
    model_belief,
    round_spread,
)
from arena.search import ISMCTS
from arena.search.bot import SHIPPED, ISMCTSBot
from arena.search.ismcts import _Scorer, action_key
from arena.search.playouts import profile_for
from tests.support.paths import ROOT

sys.path.insert(0, str(ROOT / "bots"))
import crosswalk_bot  # noqa: E402  (the heuristic, standard library only)

PAIRED = profile_for("crosswalk", "paired")


def _table_game(seed: int, watcher=None, heuristic=frozenset({1})):
    """A 4-seat game: seats in `heuristic` play the heuristic bot, the rest at random; seat 0 is
    the heuristic too unless `watcher` (an object with `choose`, seat 0's bot) is given. Yields
    every state before a match."""
    state = new_game("crosswalk", {}, 4, seed)
    rng = random.Random(seed)
    while state.to_act():
        yield state
        actions = {}
        for s in state.to_act():
            legal = state.legal_actions(s)
            obs = state.observation(s)
            if s == 0 and watcher is not None:
                actions[s] = watcher.choose(obs, legal)
            elif s == 0 or s in heuristic:
                actions[s] = crosswalk_bot.choose(obs, legal, {})
            else:
                actions[s] = rng.choice(legal)
        state.apply(actions)


def _evidence(seed: int, heuristic=frozenset({1})) -> PlayEvidence:
    evidence = PlayEvidence()
    for state in _table_game(seed, heuristic=heuristic):
        evidence.observe(state.observation(0), state)
    return evidence


def test_the_evidence_never_rules_out_a_heuristic_seat_and_tells_random_ones_apart():
    settled = 0
    for seed in range(8):
        weights = _evidence(100 + seed).weights()
        # Every play of the heuristic seat is possible under the model, so it is never excluded.
        assert weights[1] > 0.5, (seed, weights)
        settled += weights[2] < 0.05 and weights[3] < 0.05 and weights[1] > 0.95
    assert settled >= 6


def test_the_evidence_starts_over_at_a_new_game():
    evidence = _evidence(100)
    assert evidence.log_odds or evidence.ruled_out
    first = new_game("crosswalk", {}, 4, 55)
    evidence.observe(first.observation(0), first)
    assert evidence.weights() == {} and list(evidence.hand_counts) == [(0, 0)]


def test_three_heuristic_seats_all_stay_trusted():
    weights = _evidence(7, heuristic=frozenset({1, 2, 3})).weights()
    assert all(weights[o] > 0.9 for o in (1, 2, 3)), weights


def test_the_weighted_belief_trusts_a_seat_as_often_as_its_weight():
    # A position in which the cycle does not contradict seat 1 (so only the weight decides).
    state = next(s for s in _table_game(3) if s.match_in_cycle == 0 and len(s.played) >= 8
                 and cycle_constraints(s, 0)[1] is not None)
    for weight, low, high in ((0.0, 0, 0), (1.0, 400, 400), (0.3, 80, 160)):
        infer = model_belief(state, 0, weights={1: weight, 2: 0.0, 3: 0.0})
        rng = random.Random(1)
        trusted = 0
        for _ in range(400):
            det = state.determinize(0, rng)
            infer(det, rng)
            trust = getattr(det, TRUST_ATTR)
            assert 2 not in trust and 3 not in trust
            trusted += 1 in trust
            # Card accounting holds whichever pool a hand was drawn from.
            zones = det.card_zones()
            assert sorted(c for z in zones.values() for c in z) == sorted(state.deck())
        assert low <= trusted <= high, (weight, trusted)


def test_an_untrusted_seats_hand_is_drawn_from_all_its_unplayed_cards():
    # Late in a cycle the model narrows a heuristic seat's hand; distrusted, the seat gets any.
    state = next(s for seed in range(60) for s in _table_game(seed) if s.match_in_cycle >= 1
                 and cycle_constraints(s, 0)[1] is not None
                 and len(cycle_constraints(s, 0)[1]) < sum(
                     1 for c in s.deck() if c[0] == "B" and c not in s.played
                     and c not in s.hands[0] and c not in s.in_discard[0]))
    allowed = cycle_constraints(state, 0)[1]
    seen = set()
    rng = random.Random(2)
    infer = model_belief(state, 0, weights={1: 0.0})
    for _ in range(300):
        det = state.determinize(0, rng)
        infer(det, rng)
        seen.update(det.hands[1])
    assert seen - allowed


def test_pairwise_rewards_are_exact_at_the_end_and_smooth_before():
    state = new_game("crosswalk", {}, 4, 9)
    scorer = _Scorer(state, PAIRED, 0)
    rng = random.Random(0)
    while state.to_act():
        rewards = scorer._pairwise(state)
        # Every pair splits one unit: the rewards of a 4-seat table average one half.
        assert sum(rewards) == pytest.approx(2.0)
        state.apply({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})
    ranks = state.result().ranks
    want = [(sum(r > mine for r in ranks) + 0.5 * (ranks.count(mine) - 1)) / 3 for mine in ranks]
    assert scorer._pairwise(state) == pytest.approx(want)


def test_the_spread_shrinks_with_the_rounds_left():
    state = new_game("crosswalk", {"rounds": 3}, 4, 1)
    assert round_spread(state) == pytest.approx(ROUND_SPREAD * math.sqrt(3))
    state.round_scores = [[10] * 4, [10] * 4, [10] * 4]
    assert round_spread(state) == 0.0


def test_the_paired_search_is_legal_deterministic_and_counts_playouts():
    state = next(s for s in _table_game(11) if len(s.legal_actions(0)) == 3)
    before = state.full_view()
    search = ISMCTS(iterations=90, seed=1, profile=PAIRED)
    picks = [search.search(state, 0, random.Random(4)) for _ in range(2)]
    assert picks[0] == picks[1] and picks[0] in state.legal_actions(0)
    assert state.full_view() == before
    # 90 playouts: 30 determinizations, each playing all three cards.
    assert search.ops["iterations"] == 90 and search.ops["determinize"] == 30
    assert search.ops["clone"] == 90
    stats = search.root_statistics(state, 0, random.Random(4))
    assert {n for n, _ in stats.values()} == {30}
    assert all(0.0 <= mean <= 1.0 for _, mean in stats.values())
    # The same seed gives the same samples: the searched card has the best mean.
    assert stats[action_key(picks[0])][1] == max(mean for _, mean in stats.values())


def test_the_paired_search_keeps_a_ten_for_the_last_match():
    # The last two cards of a round with the 10 among them: the 10 (alone or tied, it earns 10,
    # the most a card can) must be the one kept.
    found = 0
    for seed in range(40):
        for state in _table_game(seed):
            hand = state.hands[0]
            if (not state.stock and not state.discard and len(hand) == 2 and "R10" in hand
                    and all(len(h) == 2 for h in state.hands)):
                pick = ISMCTS(iterations=100, seed=seed, profile=PAIRED).search(
                    state, 0, random.Random(seed))
                assert pick["card"] != "R10"
                found += 1
                break
        if found >= 3:
            break
    assert found >= 3


def test_the_bot_feeds_its_tracker_every_observation_and_resets_it_per_game():
    bot = ISMCTSBot(iterations=40, seed=3, profile="paired")
    bot.game_start({"game": "crosswalk", "options": {}})
    for _ in _table_game(21, watcher=bot):
        pass
    weights = bot.tracker.weights()
    assert weights[1] > weights[2] and weights[1] > weights[3]
    assert len(bot.tracker.done) >= 20  # every match of the rounds, forced ones too
    bot.game_start({"game": "crosswalk", "options": {}})
    assert bot.tracker is None


def test_the_shipped_four_seat_bot_uses_the_paired_search():
    assert SHIPPED["crosswalk_4p"]["profile"] == "paired"
    assert PAIRED.paired and PAIRED.tracker is PlayEvidence
    # Other games have no paired profile: the kind falls back to their "policy" profile.
    assert profile_for("xeri", "paired") == profile_for("xeri", "policy")


@pytest.mark.parametrize("options", [{"lead_tie": "no_move"}, {"movement": "relative"}])
def test_under_other_rules_the_paired_search_models_nobody_and_stays_legal(options):
    state = new_game("crosswalk", options, 4, 17)
    rng = random.Random(3)
    while len(state.legal_actions(0)) < 2:
        state.apply({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})
    evidence = PlayEvidence()
    evidence.observe(state.observation(0), state)
    assert evidence.weights() == {}
    scorer = _Scorer(state, PAIRED, 0)
    assert scorer.model is None and scorer.infer is None
    picks = [ISMCTS(iterations=40, seed=2, profile=PAIRED).search(state, 0, random.Random(1))
             for _ in range(2)]
    assert picks[0] == picks[1] and picks[0] in state.legal_actions(0)

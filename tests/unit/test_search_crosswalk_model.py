"""The exact Crosswalk heuristic model (arena.games.crosswalk_model): the port picks what the bot
picks, the inferred hands agree with the bot's past play, and other play is not trusted."""

from __future__ import annotations

import random
import sys

import pytest

from arena.games import new_game
from arena.games.crosswalk_model import (
    TRUST_ATTR,
    cycle_constraints,
    heuristic_pick,
    known_discards,
    model_belief,
    model_opponent,
    model_prior,
)
from arena.games.crosswalk_playout import crosswalk_prior
from arena.search import ISMCTS
from arena.search.playouts import profile_for
from tests.support.paths import ROOT

sys.path.insert(0, str(ROOT / "bots"))
import crosswalk_bot  # noqa: E402  (the heuristic opponent, standard library only)


def _heuristic_games(seats: int, games: int, noise: float = 0.3, first: int = 0):
    """States of games where seat 0 plays partly at random and the others as the heuristic."""
    for g in range(first, first + games):
        state = new_game("crosswalk", {}, seats, 900 + g)
        rng = random.Random(g)
        while state.to_act():
            yield state
            actions = {}
            for s in state.to_act():
                legal = state.legal_actions(s)
                if s == 0 and rng.random() < noise:
                    actions[s] = rng.choice(legal)
                else:
                    actions[s] = crosswalk_bot.choose(state.observation(s), legal, {})
            state.apply(actions)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_the_port_picks_what_the_heuristic_bot_picks(seats):
    checked = 0
    for state in _heuristic_games(seats, 8, noise=0.5):
        for s in state.to_act():
            legal = state.legal_actions(s)
            if len(legal) > 1:
                wanted = crosswalk_bot.choose(state.observation(s), legal, {})["card"]
                assert heuristic_pick(state, s) == wanted
                checked += 1
    assert checked > 300


@pytest.mark.parametrize("seats", [2, 4])
def test_the_inferred_hands_contain_the_true_hand_and_the_model_opponent_is_exact(seats):
    narrowed = 0
    for state in _heuristic_games(seats, 4):
        allowed = cycle_constraints(state, 0)
        for o, cards in allowed.items():
            # Every true heuristic seat is trusted and its real hand is among the allowed cards.
            assert cards is not None and set(state.hands[o]) <= cards
            unknown = [c for c in state.deck() if c[0] in state.seat_colours[o]
                       and c not in state.played]
            narrowed += len(cards) < len(unknown)
        infer = model_belief(state, 0)
        det = state.determinize(0, random.Random(len(state.played)))
        infer(det, random.Random(1))
        assert getattr(det, TRUST_ATTR) == frozenset(range(1, seats))
        for o, cards in allowed.items():
            assert set(det.hands[o]) <= cards and len(det.hands[o]) == len(state.hands[o])
            assert det.hands[o] == sorted(det.hands[o], key=state.deck().index)
        # Nothing lost or duplicated by the swaps.
        zones = det.card_zones()
        assert sorted(c for z in zones.values() for c in z) == sorted(state.deck())
        legal = state.legal_actions(1)
        if len(legal) > 1:
            want = crosswalk_bot.choose(state.observation(1), legal, {})
            assert model_opponent(_trusting(state), 1, legal, random.Random(0)) == want
    assert narrowed > 20


def _trusting(state):
    """A copy of the true state that models every seat (all hands known: the model must be exact)."""
    new = state.clone()
    setattr(new, TRUST_ATTR, frozenset(range(state.num_seats)))
    return new


def test_a_random_player_is_soon_not_trusted():
    state = new_game("crosswalk", {}, 2, 5)
    rng = random.Random(2)
    distrusted = 0
    decisions = 0
    while state.to_act():
        if state.match_in_cycle >= 2:
            decisions += 1
            distrusted += cycle_constraints(state, 0)[1] is None
        state.apply({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})
    assert distrusted > decisions / 3


def test_an_untrusted_seat_plays_at_random_in_the_model():
    state = next(s for s in _heuristic_games(2, 1) if len(s.legal_actions(1)) > 2)
    legal = state.legal_actions(1)
    picks = {model_opponent(state, 1, legal, random.Random(i))["card"] for i in range(40)}
    assert len(picks) > 1


@pytest.mark.parametrize("options", [{}, {"lead_tie": "no_move"}])
def test_the_model_search_is_legal_and_deterministic(options):
    # Under other rules nothing is modelled (no belief): the search still plays legally.
    state = new_game("crosswalk", options, 2, 31)
    rng = random.Random(0)
    for _ in range(7):
        state.apply({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})
    before = state.full_view()
    search = ISMCTS(iterations=60, seed=1, profile=profile_for("crosswalk", "policy"))
    picks = [search.search(state, 0, random.Random(5)) for _ in range(2)]
    assert picks[0] == picks[1] and picks[0] in state.legal_actions(0)
    assert state.full_view() == before


@pytest.mark.parametrize("seats", [2, 4])
def test_the_model_prior_is_the_tuned_prior(seats):
    checked = 0
    for state in _heuristic_games(seats, 4):
        legal = state.legal_actions(0)
        if len(legal) > 1:
            assert model_prior(state, 0, legal) == pytest.approx(crosswalk_prior(state, 0, legal))
            checked += 1
    assert checked > 20


@pytest.mark.parametrize("seats", [2, 4])
def test_known_discards_of_a_rebuilt_state_are_in_the_pile(seats):
    from arena.games.crosswalk import CrosswalkState
    claimed = 0
    for state in _heuristic_games(seats, 6):
        rebuilt = CrosswalkState.from_observation(state.observation(0), {})
        mine = known_discards(rebuilt, 0)
        # Never a wrong claim: a card said to be in the discard pile is there.
        assert set(mine) <= set(state.discard)
        claimed += bool(mine)
        if mine:
            infer = model_belief(rebuilt, 0)
            det = rebuilt.determinize(0, random.Random(claimed))
            infer(det, random.Random(claimed))
            assert det.discard[:len(mine)] == mine and len(det.discard) == len(state.discard)
            assert len(det.stock) == len(state.stock)
            for o in range(1, seats):
                assert not set(det.hands[o]) & set(mine)
    assert claimed > 20


def test_a_playout_below_the_roots_round_scores_that_round_alone():
    from arena.games.crosswalk_model import ROUND_ATTR, model_fast
    state = next(s for s in _heuristic_games(2, 1) if s.round == 1 and s.played)
    det = state.determinize(0, random.Random(3))
    setattr(det, ROUND_ATTR, 0)
    played = list(det.played)
    model_fast(det, random.Random(4), True)
    # Nothing played; the running round now adds the same to both seats.
    assert det.played == played and det.to_act()
    assert det.scores()[0] - det.scores()[1] == sum(r[0] - r[1] for r in det.round_scores)
    assert set(det.pawns.values()) == {1}
    # In the root's own round the playout plays the round out as usual.
    det = state.determinize(0, random.Random(3))
    setattr(det, ROUND_ATTR, 1)
    model_fast(det, random.Random(4), True)
    assert len(det.round_scores) == 2


@pytest.mark.parametrize("options", [{"movement": "relative"}, {"lead_tie": "no_move"}])
def test_under_other_rules_every_seat_is_searched_not_modelled(options):
    from arena.search.ismcts import _Scorer

    state = new_game("crosswalk", options, 2, 3)
    scorer = _Scorer(state, profile_for("crosswalk", "policy"), 0)
    assert scorer.model is None and scorer.infer is None
    modelled = _Scorer(new_game("crosswalk", {}, 2, 3), profile_for("crosswalk", "policy"), 0)
    assert modelled.model is not None

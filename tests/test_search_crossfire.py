"""Crossfire's search profile: the gain table agrees with the engine's rules; the playout plays
each seat's best-gaining card and stops at the deal's end when asked."""

from __future__ import annotations

import random

import pytest

from arena.games import new_game
from arena.games.crossfire import resolve_round
from arena.search.playouts import (
    _CF_DECK,
    _CF_INDEX,
    _crossfire_gain,
    crossfire_fast,
    crossfire_prior,
)

POINT = {"dealer": 1, "opponent": -1, None: 0}


def direct_gain(card: str, neutral: str, dealer: bool, tie_rule: str) -> float:
    """The table's entry computed one round at a time with the engine's resolve_round."""

    def value(n: str) -> float:
        others = [c for c in _CF_DECK if c not in (card, n)]
        if dealer:
            return sum(POINT[resolve_round(card, n, o, tie_rule)[2]] for o in others) / 50
        return -sum(POINT[resolve_round(o, n, card, tie_rule)[2]] for o in others) / 50

    mean = sum(value(n) for n in _CF_DECK if n != card) / 51
    return value(neutral) - mean


@pytest.mark.parametrize("tie_rule", ["position", "played_cards"])
def test_the_gain_table_is_the_engine_rules_averaged(tie_rule):
    rng = random.Random(5)
    table = _crossfire_gain(tie_rule)
    for _ in range(6):
        card, neutral = rng.sample(_CF_DECK, 2)
        for role in (0, 1):
            entry = table[role][_CF_INDEX[card]][_CF_INDEX[neutral]]
            assert entry == pytest.approx(direct_gain(card, neutral, bool(role), tie_rule))


def test_a_greedy_playout_plays_each_seats_best_gaining_card():
    state = new_game("crossfire", {"open_rows": True}, 2, 3)
    gain = _crossfire_gain("position")
    neutral = _CF_INDEX[state.neutral]
    best = []
    for seat in (0, 1):
        role = 1 if state.dealer == seat else 0
        best.append(max(state.rows[seat], key=lambda c: gain[role][_CF_INDEX[c]][neutral]))
    crossfire_fast(state, random.Random(1), False, plies=1, greedy=1.0)
    played = state.history[-1]
    dealer = played["dealer"]
    assert (played["dealer_card"], played["opponent_card"]) == (best[dealer], best[dealer ^ 1])
    prior = crossfire_prior(new_game("crossfire", {"open_rows": True}, 2, 3), dealer,
                            [{"type": "play_slot", "slot": k} for k in range(5)])
    assert max(range(5), key=prior.__getitem__) == new_game(
        "crossfire", {"open_rows": True}, 2, 3).rows[dealer].index(best[dealer])


@pytest.mark.parametrize("seed", range(4))
def test_a_playout_cut_at_the_deal_stops_with_the_deal(seed):
    state = new_game("crossfire", {"open_rows": True}, 2, seed)
    state._apply({0: {"type": "play_slot", "slot": 0}, 1: {"type": "play_slot", "slot": 1}})
    crossfire_fast(state, random.Random(seed), True)
    assert state.deal_index == 2 and state.round_in_deal == 1 and len(state.history) == 5
    crossfire_fast(state, random.Random(seed), False)
    assert state.over and len(state.history) == 15


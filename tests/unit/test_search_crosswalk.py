"""Crosswalk search profile: the heuristic-rule prior and playouts (arena.games.crosswalk_playout)."""

from __future__ import annotations

import random
import sys

import pytest

from arena.games import new_game
from arena.games.crosswalk_playout import (
    crosswalk_fast,
    crosswalk_prior,
    final_values,
    finish_round,
    keep_values,
)
from arena.search import ISMCTS
from arena.search.playouts import profile_for
from tests.support.paths import ROOT

sys.path.insert(0, str(ROOT / "bots"))
import crosswalk_bot  # noqa: E402  (the heuristic opponent, standard library only)


def _positions(seats: int, options: dict | None = None, games: int = 6):
    """States along partly random games, at decisions with a choice for the first actor."""
    for g in range(games):
        state = new_game("crosswalk", options or {}, seats, 40 + g)
        rng = random.Random(g)
        while state.to_act():
            seat = state.to_act()[0]
            if len(state.legal_actions(seat)) > 1:
                yield state, seat
            state.apply({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})


def test_keep_values_is_the_heuristics_expected_space():
    rng = random.Random(3)
    for _ in range(50):
        below = sorted(rng.random() for _ in range(11))
        below[10] = 1.0
        dist = [below[0]] + [below[h] - below[h - 1] for h in range(1, 11)]
        closed = keep_values(below)
        summed = final_values(dist, [f"R{x}" for x in range(1, 11)])
        assert closed[1:] == pytest.approx(summed)


@pytest.mark.parametrize("seats", [2, 4])
def test_the_prior_favours_the_card_the_heuristic_plays(seats):
    checked = 0
    for state, seat in _positions(seats):
        legal = state.legal_actions(seat)
        prior = crosswalk_prior(state, seat, legal)
        assert len(prior) == len(legal) and all(0.0 <= p <= 1.0 for p in prior)
        pick = crosswalk_bot.choose(state.observation(seat), legal, {})
        assert prior[legal.index(pick)] == max(prior)
        checked += 1
    assert checked > 20


def test_the_prior_is_flat_under_other_rules():
    state, seat = next(_positions(2, {"lead_tie": "no_move"}))
    assert set(crosswalk_prior(state, seat, state.legal_actions(seat))) == {0.5}


@pytest.mark.parametrize("seats", [2, 4])
def test_a_playout_scores_the_round_and_stops_at_its_end(seats):
    for i, (state, seat) in enumerate(_positions(seats, games=2)):
        if not state.played:
            continue
        det = state.determinize(seat, random.Random(i))
        start, finished = det.round, len(det.round_scores)
        crosswalk_fast(det, random.Random(i), True)
        assert len(det.round_scores) == finished + 1
        points = det.round_scores[-1]
        assert all(10 <= p <= 100 and p % 10 == 0 for p in points)
        assert det.over or (det.round == start + 1 and det.to_act())
        if not det.over:
            # The next round is dealt as the engine deals it: every hand its seat's own colours.
            for s, hand in enumerate(det.hands):
                assert all(c[0] in det.seat_colours[s] for c in hand)


@pytest.mark.parametrize("seats", [3, 4])
def test_finish_round_returns_the_last_cards_that_set_the_round_points(seats):
    # At 3-4 seats the last match sets every pawn: the points follow from the cards returned.
    checked = 0
    for i, (state, seat) in enumerate(_positions(seats, games=2)):
        det = state.determinize(seat, random.Random(i))
        played = set(det.played)
        last = finish_round(det, random.Random(i), 0.5)
        assert sorted(last) == list(range(seats))
        assert all(c[0] in det.seat_colours[s] and c not in played for s, c in last.items())
        numbers = {s: int(c[1:]) for s, c in last.items()}
        lead = max(numbers.values())
        assert det.round_scores[-1] == [10 * (lead if n == lead else lead - n)
                                        for _, n in sorted(numbers.items())]
        checked += 1
    assert checked > 10


def test_a_playout_from_a_fresh_round_stops_at_once():
    # The tree has just finished the round: its scores are the result, the next round is noise.
    state = new_game("crosswalk", {}, 2, 3)
    det = state.determinize(0, random.Random(0))
    before = det.full_view()
    crosswalk_fast(det, random.Random(0), True)
    assert det.full_view() == before


def test_a_playout_without_a_cut_plays_the_game_out():
    state, seat = next(_positions(4, games=1))
    det = state.determinize(seat, random.Random(1))
    crosswalk_fast(det, random.Random(2), False)
    assert det.over and len(det.round_scores) == det.options.rounds


@pytest.mark.parametrize("options", [{}, {"lead_tie": "colour_order:RBGY", "movement": "relative"}])
def test_the_tuned_search_is_legal_and_deterministic(options):
    state, seat = next(_positions(2, options, games=1))
    before = state.full_view()
    search = ISMCTS(iterations=60, seed=1, profile=profile_for("crosswalk"))
    picks = [search.search(state, seat, random.Random(5)) for _ in range(2)]
    assert picks[0] == picks[1] and picks[0] in state.legal_actions(seat)
    assert state.full_view() == before

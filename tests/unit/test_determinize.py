"""Determinization: every game's `determinize` and `from_observation`, and the kit's checks of it."""

from __future__ import annotations

import random

import pytest

from arena.conformance import ConformanceError, check_determinization, check_game
from arena.games import get_game, new_game
from arena.games.chance import HiddenDeal
from arena.games.xeri import XeriState

CASES = [
    ("xeri", 2, {}),
    ("xeri", 2, {"redeal_if": "any_pair_or_top_jack"}),
    ("xeri", 4, {}),
    ("crossfire", 2, {}),
    ("crossfire", 2, {"open_rows": True, "game_length": "reshuffle_to_25_rounds"}),
    ("crosswalk", 2, {}),
    ("crosswalk", 3, {}),
    ("crosswalk", 4, {}),
    ("battlefield_cribbage", 2, {}),
    ("battlefield_cribbage", 4, {"team_mode": True}),
]


def _states(name, seats, options, seed, every=3):
    """States along one random game, every `every` steps."""
    rng = random.Random(seed)
    state = new_game(name, options, seats, seed)
    step = 0
    while state.to_act():
        if step % every == 0:
            yield state.clone()
        state.apply({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})
        step += 1


@pytest.mark.parametrize("name,seats,options", CASES)
def test_from_observation_rebuilds_what_the_seat_sees(name, seats, options):
    cls = get_game(name)
    for state in _states(name, seats, options, seed=3):
        for seat in range(seats):
            obs = state.observation(seat)
            rebuilt = cls.from_observation(obs, state.options.model_dump(mode="json"))
            assert rebuilt.observation(seat) == obs
            assert rebuilt.to_act() == state.to_act()
            assert rebuilt.legal_actions(seat) == state.legal_actions(seat)


@pytest.mark.parametrize("name,seats,options", CASES)
def test_determinized_copies_do_not_replay_the_real_future(name, seats, options):
    state = list(_states(name, seats, options, seed=5, every=1))[1]
    futures = set()
    for k in range(8):
        det = state.determinize(0, random.Random(k))
        det.rollout(random.Random(99))
        futures.add(repr(det.full_view()))
    assert len(futures) > 1
    assert state.observation(0) == list(_states(name, seats, options, seed=5, every=1))[1] \
        .observation(0)


def test_xeri_rejected_pile_cards_stay_in_the_stock_during_the_first_deal():
    for seed in range(200):
        state = new_game("xeri", None, 2, seed)
        if state.redeals:
            break
    rejected = {c for pile in state.redeals for c in pile} - set(state.pile)
    assert rejected <= set(state.unknown_deal(0).cards)
    for k in range(50):
        det = state.determinize(0, random.Random(k))
        assert not rejected & set(det.hands[1])


def test_hidden_deal_possible_places_respect_capacity():
    deal = HiddenDeal(["a", "b", "c"])
    deal.add("hand", 1, ["a", "b"])
    deal.add("stock", 2)
    assert deal.possible() == {"a": {"hand", "stock"}, "b": {"hand", "stock"}, "c": {"stock"}}
    full = HiddenDeal(["a", "b", "c"])
    full.add("hand", 2, ["a", "b"])
    full.add("stock", 1)
    assert full.possible() == {"a": {"hand"}, "b": {"hand"}, "c": {"stock"}}


@pytest.mark.parametrize("name,seats,options", CASES)
def test_coverage_of_every_possible_place(name, seats, options):
    report = check_determinization(name, seats, options, games=1, states=2, seed=1)
    assert report.probes["coverage_states"] == 2


def _leaky_place(self, seat, placed):
    """Keeps the opponent's true hand: determinization that uses hidden information."""
    hands = [h[:] for h in self.hands]
    XeriState._place_unknown.__wrapped__(self, seat, placed)
    self.hands = hands
    self.stock = sorted(self.stock)


def _narrow_deal(self, seat):
    """Never puts the lowest unknown card in the opponent's hand."""
    deal = XeriState.unknown_deal.__wrapped__(self, seat)
    low = min(deal.cards)
    for i, zone in enumerate(deal.zones):
        if zone.name.startswith("hand_"):
            deal.zones[i] = type(zone)(zone.name, zone.size,
                                       frozenset(c for c in deal.cards if c != low))
    return deal


def _patch(monkeypatch, name, fn):
    fn.__wrapped__ = getattr(XeriState, name)
    monkeypatch.setattr(XeriState, name, lambda self, *a: fn(self, *a))


def test_the_kit_catches_determinization_that_leaks(monkeypatch):
    _patch(monkeypatch, "_place_unknown", _leaky_place)
    with pytest.raises(ConformanceError, match="determinize"):
        check_game("xeri", 2, games=1)


def test_the_kit_catches_determinization_that_misses_places(monkeypatch):
    _patch(monkeypatch, "unknown_deal", _narrow_deal)
    with pytest.raises(ConformanceError, match="unknown_deal"):
        check_game("xeri", 2, games=3)

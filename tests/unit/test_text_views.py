"""Text views of the games (arena/games/<game>_text.py): what a seat's drawing shows and hides,
the full drawing, the actions in words, what a step did; the conformance kit's check of them."""

from __future__ import annotations

import random

import pytest

from arena.conformance import ConformanceError, cases, check_text_view
from arena.games import game_names, get_game, new_game
from arena.games.text import TextView, action_words, new_entries, text_view
from arena.replay_text import redact

SETUPS = [("xeri", 2, {}), ("xeri", 4, {}), ("crossfire", 2, {}), ("crossfire", 2, {"open_rows": True}),
          ("crosswalk", 2, {}), ("crosswalk", 4, {}), ("battlefield_cribbage", 2, {}),
          ("battlefield_cribbage", 3, {})]


def played(game: str, seats: int, options: dict, steps: int, seed: int = 4):
    """A game after `steps` random steps (fewer if it ends)."""
    state, rng = new_game(game, options, seats, seed), random.Random(seed)
    for _ in range(steps):
        if not state.to_act():
            break
        state.apply({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})
    return state


def test_every_registered_game_has_a_text_view():
    for name in game_names():
        assert isinstance(get_game(name).text_view(), TextView), name


@pytest.mark.parametrize("game,seats,options", SETUPS)
def test_a_seats_drawing_shows_its_own_cards_and_none_hidden_from_it(game, seats, options):
    view = text_view(game)
    for steps in (0, 5, 17, 40):
        state = played(game, seats, options, steps)
        for seat in range(seats):
            text = "\n".join(view.observation(state.observation(seat)))
            words = set(text.replace("[", " ").replace("]", " ").split())
            assert not words & state.hidden_from(seat), (steps, seat)
            zones = state.card_zones()
            own = next(zones[z] for z in (f"hand_{seat}", f"hand{seat}", f"slots_{seat}_face_up",
                                          f"row_{seat}") if z in zones)
            known = [c for c in own if c not in state.hidden_from(seat)]
            assert all(c in words for c in known), (known, text)


@pytest.mark.parametrize("game,seats,options", SETUPS)
def test_the_full_drawing_shows_every_hand(game, seats, options):
    view = text_view(game)
    state = played(game, seats, options, 9)
    text = "\n".join(view.full(state.full_view()))
    hidden_somewhere = set().union(*(state.hidden_from(s) for s in range(seats)))
    shown = [c for c in state.deck() if c in text]
    # The full view draws cards no seat sees (hands, stock, face-down rows).
    assert hidden_somewhere & set(shown)
    assert sum(f"seat {s}" in text for s in range(seats)) == seats


def test_actions_in_words():
    assert text_view("xeri").action({"type": "play", "card": "7S"}) == "play 7S"
    assert text_view("crossfire").action({"type": "play_slot", "slot": 2}) == "play slot 2"
    bfc = text_view("battlefield_cribbage").action
    assert bfc({"type": "take_line", "replace_slot": 3}) == "take the line's card into slot 3"
    assert bfc({"type": "reveal", "slots": [0, 4]}) == "reveal slots 0,4"
    assert action_words({"type": "crib_discard", "slot": 1}) == "crib discard slot 1"


def test_what_a_step_did_comes_from_the_two_views():
    state = played("crossfire", 2, {}, 0)
    before = state.observation(0)
    state.apply({s: state.legal_actions(s)[0] for s in state.to_act()})
    said = text_view("crossfire").events(before, state.observation(0))
    assert len(said) == 1 and said[0].startswith("round 1: ")
    assert new_entries([1, 2], [1, 2, 3]) == [3]
    assert new_entries([1, 2], [5]) == [5]  # started over: a new round


def test_an_action_card_the_seat_cannot_know_shows_as_question_marks():
    assert redact({"type": "play", "card": "AS"}, {"AS"}) == {"type": "play", "card": "??"}
    assert redact([{"cards": ["AS", "KS"]}], {"AS"}) == [{"cards": ["??", "KS"]}]


@pytest.mark.parametrize("game", ["xeri", "crossfire", "crosswalk", "battlefield_cribbage"])
def test_the_conformance_kit_passes_every_games_text_view(game):
    for case in cases([game])[:3]:
        assert check_text_view(*case, seed=1) > 0


def test_the_conformance_kit_refuses_a_game_without_a_text_view(monkeypatch):
    from arena.games.xeri import XeriState

    monkeypatch.setattr(XeriState, "text_view", classmethod(lambda cls: None))
    with pytest.raises(ConformanceError, match="not a TextView"):
        check_text_view("xeri", 2)


def test_the_conformance_kit_catches_a_drawing_that_shows_a_hidden_card(monkeypatch):
    from arena.games.xeri import XeriState

    deck = new_game("xeri", {}, 2, 1).deck()
    leaky = TextView(observation=lambda obs: ["the stock: " + " ".join(deck)],
                     full=lambda view: [], events=lambda a, b: [])
    monkeypatch.setattr(XeriState, "text_view", classmethod(lambda cls: leaky))
    with pytest.raises(ConformanceError, match="shows hidden cards"):
        check_text_view("xeri", 2)

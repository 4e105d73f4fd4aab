"""Tests of the 4-player partnership form of Xeri (partners 0+2 against 1+3), seeds/xeri.md."""

from __future__ import annotations

import json
import random

import pytest

from arena.cards import standard_deck
from arena.conformance import json_strings
from arena.games import make_options, new_game
from arena.games.xeri import XeriState

DECK = standard_deck()


def game4(options=None, seed=0) -> XeriState:
    """A new 4-seat game."""
    return new_game("xeri", options or {}, 4, seed)


def play_random(game: XeriState, rng: random.Random, steps: int | None = None) -> None:
    """Random legal plays: `steps` of them, or to the end."""
    while not game.is_over() and (steps is None or steps > 0):
        seat = game.to_act()[0]
        game.apply({seat: rng.choice(game.legal_actions(seat))})
        steps = None if steps is None else steps - 1


def table(hands, pile, *, dealer=3, to_act=None, stock=(), captured=((), ())) -> XeriState:
    """A 4-seat game set to a position: every card not placed goes to team 1's captured pile."""
    game = game4()
    placed = {c for h in hands for c in h} | set(pile) | set(stock) | set(captured[0]) \
        | set(captured[1])
    rest = [c for c in DECK if c not in placed]
    game.hands = [list(h) for h in hands]
    game.pile = list(pile)
    game.stock = list(stock)[::-1]
    game.captured = [list(captured[0]), list(captured[1]) + rest]
    game.ncaptured = [len(game.captured[0]), len(game.captured[1])]
    game.card_pts = [sum(game._points[c] for c in game.captured[s]) for s in (0, 1)]
    game.redeals = []
    game.dealer = game.round_dealer = dealer
    game.deal_in_round = 1 if not stock else 0
    game.current = (dealer + 1) % 4 if to_act is None else to_act
    game._reset_round_json()
    return game


def play(game: XeriState, card: str) -> None:
    """Play `card` for the seat to act."""
    seat = game.to_act()[0]
    game.apply({seat: {"type": "play", "card": card}})


def test_four_seats_play_in_two_partnerships():
    game = game4()
    assert 4 in XeriState.game_type.seat_counts
    assert game.teams() == [[0, 2], [1, 3]]
    obs = game.observation(1)
    assert obs["team"] == 1 and obs["partner"] == 3
    assert obs["hand_counts"] == [6, 6, 6, 6] and obs["stock_count"] == 52 - 4 - 24


@pytest.mark.parametrize("seed", range(6))
def test_deal_and_play_pass_clockwise_from_the_dealers_left(seed):
    game = game4(seed=seed)
    dealer = game.dealer
    assert game.to_act() == [(dealer + 1) % 4]
    order = []
    while game.deal_in_round == 0:
        order.append(game.to_act()[0])
        stock = game.full_view()["stock"]  # in dealing order
        play(game, game.hands[order[-1]][0])
    assert order == [(dealer + 1 + k) % 4 for k in range(24)]
    # The second deal: six cards each, from the dealer's left round to the dealer.
    for k in range(4):
        assert set(game.hands[(dealer + 1 + k) % 4]) == set(stock[6 * k: 6 * k + 6])
    assert game.to_act() == [(dealer + 1) % 4] and not game.stock


def test_each_round_has_two_deals_and_the_deal_passes_left():
    game = game4({"rounds": 4}, seed=3)
    dealers, rng = [], random.Random(1)
    while not game.is_over():
        if not dealers or dealers[-1] != (game.round, game.round_dealer):
            dealers.append((game.round, game.round_dealer))
        assert game.deal_in_round in (0, 1)
        play_random(game, rng, 1)
    first = dealers[0][1]
    assert dealers == [(r, (first + r) % 4) for r in range(4)]
    assert len(game.round_results) == 4


def test_per_deal_rotation_moves_the_dealer_left_after_each_deal():
    game = game4({"dealer_rotation": "per_deal"}, seed=2)
    dealer = game.dealer
    play_random(game, random.Random(0), 24)
    assert game.deal_in_round == 1 and game.dealer == (dealer + 1) % 4
    assert game.to_act() == [(dealer + 2) % 4]


def test_partners_share_captured_piles_and_scores():
    # Seat 0 leads (dealer 3); seat 2 takes the pile with a jack for its side (team 0).
    game = table([["2S", "3S"], ["4S", "5S"], ["JD", "6S"], ["7S", "8S"]], ["9S", "KS"])
    play(game, "2S")
    play(game, "4S")
    play(game, "JD")
    obs = game.observation(1)
    assert obs["history"][-1] == {"seat": 2, "card": "JD", "captured": ["9S", "KS", "2S", "4S", "JD"],
                                  "xeri": 0}
    assert game.card_zones()["captured_0"] == ["9S", "KS", "2S", "4S", "JD"]
    assert obs["last_capturer"] == 2 and obs["captured_counts"][0] == 5
    scores = game.scores()
    assert scores[0] == scores[2] == 2 and scores[1] == scores[3]


def test_a_xeri_scores_for_the_capturers_side():
    game = table([["2S", "3S"], ["QS", "5S"], ["6S", "7S"], ["JD", "8S"]], ["QH"], to_act=1,
                 dealer=0)
    play(game, "QS")  # seat 1 takes the lone QH: a 10-point xeri for team 1
    assert game.observation(0)["xeri"] == [{"seat": 1, "cards": ["QH", "QS"], "value": 10}]
    assert game.card_zones()["xeri_1"] == ["QH", "QS"]
    assert game.observation(0)["round_points"][1] - game.card_pts[1] == 10
    assert game.scores()[1] == game.scores()[3]


@pytest.mark.parametrize("rule,taker", [("nobody", None), ("dealer", 3)])
def test_a_pile_nobody_captured_follows_uncaptured_leftover(rule, taker):
    game = table([["2S"], ["KD"], ["4H"], ["5C"]], ["KS"], dealer=3)
    game.options = make_options("xeri", {"uncaptured_leftover": rule})
    for card in ("2S", "KD", "4H", "5C"):
        play(game, card)
    assert game.round_results[-1]["leftover"] == {"seat": taker, "count": 5}


def test_round_end_leftover_goes_to_the_last_capturers_side_and_scoring_is_per_side():
    # The last four plays of a round: seat 1 captures, then the leftover pile goes to team 1.
    game = table([["2S"], ["2D"], ["4H"], ["5C"]], ["KS"], dealer=3)
    play(game, "2S")
    play(game, "2D")  # seat 1 takes KS 2S 2D
    play(game, "4H")
    play(game, "5C")
    result = game.round_results[-1]
    assert result["leftover"] == {"seat": 1, "count": 2}
    assert sum(result["captured_counts"]) == 52 and result["most_cards"] == 1
    assert result["points"][1] == result["card_points"][1] + result["xeri_points"][1] + 3
    assert result["points"][0] == result["card_points"][0] + result["xeri_points"][0]
    assert sum(result["card_points"]) == 22


def test_hands_are_private_even_from_partners():
    rng = random.Random(4)
    game = game4(seed=9)
    for _ in range(40):
        for seat in range(4):
            text = json.dumps(game.observation(seat))
            hidden = game.hidden_from(seat)
            partner = (seat + 2) % 4
            assert set(game.hands[partner]) <= hidden
            assert not (json_strings(game.observation(seat)) & hidden)
            assert game.observation(seat)["my_hand"] == game.hands[seat]
            assert all(c not in text for c in game.hands[partner] if c not in game.pile)
        play_random(game, rng, 1)


def test_a_whole_game_ends_with_team_ranks():
    game = game4(seed=5)
    play_random(game, random.Random(5))
    result = game.result()
    assert result.scores[0] == result.scores[2] and result.scores[1] == result.scores[3]
    assert result.ranks[0] == result.ranks[2] and result.ranks[1] == result.ranks[3]
    assert sorted(game.card_zones()["captured_0"] + game.card_zones()["captured_1"]
                  + game.card_zones()["xeri_0"] + game.card_zones()["xeri_1"]) == sorted(DECK)


def test_from_observation_and_determinize_keep_what_the_seat_sees():
    options = {"jack_xeri": "jack_on_jack_20"}
    game = game4(options, seed=11)
    play_random(game, random.Random(2), 30)
    for seat in range(4):
        obs = game.observation(seat)
        rebuilt = XeriState.from_observation(obs, make_options("xeri", options).model_dump())
        assert rebuilt.num_seats == 4 and rebuilt.observation(seat) == obs
        assert rebuilt.legal_actions(seat) == game.legal_actions(seat)
        partners = set()
        for k in range(6):
            det = game.determinize(seat, random.Random(k))
            assert det.observation(seat) == obs
            partners.add(tuple(det.hands[(seat + 2) % 4]))
        assert len(partners) > 1  # the partner's hand is unknown to the seat

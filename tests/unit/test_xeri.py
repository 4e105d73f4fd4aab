"""Tests of Xeri (arena/games/xeri.py) against the rules spec, and of the heuristic Xeri bot."""

from __future__ import annotations

import importlib.util
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cards import derive_seed, make_rng, standard_deck
from arena.conformance import json_strings
from arena.errors import GameOptionsError, IllegalActionError
from arena.games import make_options, new_game, play_out
from arena.games.xeri import MAX_EXTRA_ROUNDS, XeriState
from tests.support.paths import ROOT

DECK = standard_deck()
JACK_MODES = ["any_jack_20", "jack_on_jack_20", "pisti_equal_rank_only"]
POINT_CARDS = {c for c in DECK if c[0] in "AKQJT"} | {"2C"}


def position(hands, pile, *, stock_count=0, rest_to=1, captured=((), ()), options=None,
             **kwargs) -> XeriState:
    """A position with the given hands and pile: `stock_count` unplaced cards form the stock (in
    deck order), the other unplaced cards go to seat `rest_to`'s captured pile."""
    used = {*hands[0], *hands[1], *pile, *captured[0], *captured[1]}
    rest = [c for c in DECK if c not in used]
    stock, rest = rest[:stock_count], rest[stock_count:]
    piles = [list(captured[0]), list(captured[1])]
    piles[rest_to] += rest
    return XeriState.from_position(
        options, hands=hands, pile=pile, stock=stock, captured=piles, **kwargs
    )


def play(game: XeriState, card: str) -> None:
    """Play `card` for the seat to act."""
    seat = game.to_act()[0]
    game.apply({seat: {"type": "play", "card": card}})


def random_game(options=None, seed=0, rng_seed=None):
    """Play a whole game with uniformly random choices; yields the game after every step."""
    game = new_game("xeri", options or {}, 2, seed)
    rng = random.Random(seed if rng_seed is None else rng_seed)
    yield game
    while not game.is_over():
        seat = game.to_act()[0]
        game.apply({seat: rng.choice(game.legal_actions(seat))})
        yield game




# -- spec §10: the test-case table, under every jack_xeri variant ---------------------------------

HAND0 = ["2H", "3D", "4S", "5C", "7H"]
HAND1 = ["8D", "9C", "AH", "2D", "4H", "5S"]


def _row(pile, card, mode) -> XeriState:
    game = position([[card, *HAND0], HAND1], pile, stock_count=24,
                    options={"jack_xeri": mode})
    assert game.to_act() == [0]
    play(game, card)
    return game


@pytest.mark.parametrize("mode", JACK_MODES)
@pytest.mark.parametrize("card", ["6S", "JD"])
def test_capture_of_four_card_pile_is_not_a_xeri(mode, card):
    game = _row(["3H", "8S", "KC", "6D"], card, mode)
    obs = game.observation(0)
    assert obs["pile"] == []
    assert obs["captured_counts"] == [5, 52 - 12 - 4 - 24]
    assert obs["xeri"] == []
    assert obs["history"][-1] == {"seat": 0, "card": card,
                                  "captured": ["3H", "8S", "KC", "6D", card], "xeri": 0}
    assert obs["last_capturer"] == 0
    assert obs["to_act"] == 1


@pytest.mark.parametrize("mode", JACK_MODES)
def test_jack_on_empty_pile_starts_a_pile(mode):
    game = _row([], "JD", mode)
    obs = game.observation(1)
    assert obs["pile"] == ["JD"]
    assert obs["history"][-1]["captured"] is None
    assert obs["captured_counts"][0] == 0
    assert obs["last_capturer"] is None


@pytest.mark.parametrize("mode", JACK_MODES)
def test_equal_rank_on_lone_card_is_a_ten_point_xeri(mode):
    game = _row(["QS"], "QH", mode)
    obs = game.observation(0)
    assert obs["xeri"] == [{"seat": 0, "cards": ["QS", "QH"], "value": 10}]
    assert obs["captured_counts"][0] == 2
    assert obs["round_points"][0] == 10 + 2
    assert game.card_zones()["xeri_0"] == ["QS", "QH"]
    assert game.card_zones()["captured_0"] == []


@pytest.mark.parametrize("mode,value", [("any_jack_20", 20), ("jack_on_jack_20", 10),
                                        ("pisti_equal_rank_only", 0)])
def test_jack_on_lone_other_card_depends_on_jack_xeri(mode, value):
    game = _row(["QS"], "JC", mode)
    obs = game.observation(0)
    assert obs["pile"] == []
    assert obs["captured_counts"][0] == 2
    assert obs["history"][-1]["xeri"] == value
    if value:
        assert obs["xeri"] == [{"seat": 0, "cards": ["QS", "JC"], "value": value}]
        assert game.card_zones()["captured_0"] == []
    else:
        assert obs["xeri"] == []
        assert game.card_zones()["captured_0"] == ["QS", "JC"]
    assert obs["round_points"][0] == value + 2


@pytest.mark.parametrize("mode", JACK_MODES)
def test_jack_on_lone_jack_is_twenty_everywhere(mode):
    game = _row(["JS"], "JH", mode)
    obs = game.observation(0)
    assert obs["xeri"] == [{"seat": 0, "cards": ["JS", "JH"], "value": 20}]
    assert obs["round_points"][0] == 22


@pytest.mark.parametrize("mode", JACK_MODES)
def test_non_matching_card_goes_on_top(mode):
    game = _row(["QS"], "4D", mode)
    obs = game.observation(1)
    assert obs["pile"] == ["QS", "4D"]
    assert obs["history"] == [{"seat": 0, "card": "4D", "captured": None, "xeri": 0}]
    assert obs["captured_counts"] == [0, 52 - 12 - 1 - 24]


# -- round-end scoring ----------------------------------------------------------------------------

def _sweep(options=None) -> XeriState:
    """Seat 0 has captured 49 cards and takes the last two with the round's last card."""
    return position([["8C"], []], ["3H", "8S"], rest_to=0, to_act=0, dealer=0,
                    options={"rounds": 1, **(options or {})})


def test_capturing_all_52_cards_scores_25():
    game = _sweep()
    play(game, "8C")
    assert game.is_over()
    result = game.round_results[-1]
    assert result["captured_counts"] == [52, 0]
    assert result["card_points"] == [22, 0]
    assert result["points"] == [25, 0]
    assert game.scores() == [25, 0]
    assert game.result().ranks == [1, 2]


def test_ten_of_diamonds_worth_three():
    game = _sweep({"ten_of_diamonds": 3})
    play(game, "8C")
    assert game.round_results[-1]["points"] == [26, 0]


def test_ten_of_diamonds_default_two_when_captured():
    game = _row(["KC", "TD"], "JD", "any_jack_20")
    assert game.observation(0)["round_points"][0] == 2 + 1 + 1  # TD 2, KC 1, JD 1


def test_leftover_goes_to_last_capturer_not_as_xeri():
    game = position([["5C"], []], ["QS"], to_act=0, dealer=0, last_capturer=1,
                    options={"rounds": 1})
    play(game, "5C")
    result = game.round_results[-1]
    assert result["leftover"] == {"seat": 1, "count": 2}
    assert result["xeri_points"] == [0, 0]
    assert game.card_zones()["captured_1"][-2:] == ["QS", "5C"]


@pytest.mark.parametrize("rule,taker", [("nobody", None), ("dealer", 0)])
def test_uncaptured_leftover(rule, taker):
    game = position([["5C"], []], ["QS", "3H"], to_act=0, dealer=0, rest_to=1,
                    options={"rounds": 1, "uncaptured_leftover": rule})
    play(game, "5C")
    result = game.round_results[-1]
    assert result["leftover"] == {"seat": taker, "count": 3}
    if taker is None:
        assert game.card_zones()["pile"] == ["QS", "3H", "5C"]
        assert result["captured_counts"] == [0, 49]
        assert result["card_points"] == [0, 21]  # QS is lost to both
    else:
        assert game.card_zones()["pile"] == []
        assert result["captured_counts"] == [3, 49]
        assert result["card_points"] == [1, 21]
    assert sorted(sum(game.card_zones().values(), [])) == sorted(DECK)


@pytest.mark.parametrize("allowed,value", [(True, 10), (False, 0)])
def test_xeri_on_last_card(allowed, value):
    game = position([["QH"], []], ["QS"], to_act=0, dealer=0,
                    options={"rounds": 1, "xeri_on_last_card": allowed})
    play(game, "QH")
    result = game.round_results[-1]
    assert result["xeri_points"] == [value, 0]
    assert result["xeri_counts"] == [1 if value else 0, 0]
    assert result["captured_counts"] == [2, 50]


def test_xeri_before_the_last_card_counts_when_last_card_xeris_are_off():
    game = position([["QH", "3C"], ["4D"]], ["QS"], to_act=0, dealer=0,
                    options={"xeri_on_last_card": False})
    play(game, "QH")
    assert game.observation(1)["xeri"] == [{"seat": 0, "cards": ["QS", "QH"], "value": 10}]


def test_most_cards_tie_gives_no_bonus():
    game = _tied_position({"rounds": 1})
    play(game, "8C")
    result = game.round_results[-1]
    assert result["captured_counts"] == [26, 26]
    assert result["most_cards"] is None
    assert result["points"] == [11, 11]
    assert game.result().ranks == [1, 1]


# -- dealing and dealer rotation ------------------------------------------------------------------

def test_deal_order_non_dealer_then_dealer_then_pile():
    checked = 0
    for seed in range(20):
        game = new_game("xeri", {}, 2, seed)
        if game.redeals:
            continue
        # The game RNG picks the first dealer and a base seed; each round shuffles with its own RNG.
        rng = make_rng(seed)
        dealer = rng.randrange(2)
        deck = list(DECK)
        random.Random(derive_seed("xeri", rng.getrandbits(63), 0)).shuffle(deck)
        view = game.full_view()
        assert view["dealer"] == dealer
        assert sorted(view["hands"][1 - dealer]) == sorted(deck[-6:])
        assert sorted(view["hands"][dealer]) == sorted(deck[-12:-6])
        assert view["pile"] == deck[-16:-12][::-1]
        assert view["stock"] == deck[:-16][::-1]
        assert game.to_act() == [1 - dealer]
        checked += 1
    assert checked >= 10


def test_first_dealer_is_random():
    dealers = {new_game("xeri", {}, 2, seed).dealer for seed in range(30)}
    assert dealers == {0, 1}


@pytest.mark.parametrize("rotation", ["per_round", "per_deal"])
def test_dealer_rotation(rotation):
    game = new_game("xeri", {"dealer_rotation": rotation}, 2, 3)
    rng = random.Random(3)
    first = game.dealer
    seen = []  # (round, deal, dealer, leader) at the start of each deal
    while not game.is_over():
        obs = game.observation(0)
        if len(obs["my_hand"]) == 6 and obs["opponent_hand_count"] == 6:
            seen.append((obs["round"], obs["deal_in_round"], obs["dealer"], obs["to_act"]))
        seat = game.to_act()[0]
        game.apply({seat: rng.choice(game.legal_actions(seat))})
    assert len(seen) == 8
    for rnd, deal, dealer, leader in seen:
        round_dealer = first ^ (rnd & 1)
        expected = round_dealer ^ (deal & 1) if rotation == "per_deal" else round_dealer
        assert dealer == expected
        assert leader == 1 - dealer
    assert [r["dealer"] for r in game.round_results] == [first, 1 - first]


# -- redeal ---------------------------------------------------------------------------------------

def _redeal_bad(pile, rule):
    if pile[-1][0] == "J":
        return True
    if rule == "top_two_or_top_jack":
        return pile[-1][0] == pile[-2][0]
    return len({c[0] for c in pile}) < 4


@pytest.mark.parametrize("rule", ["top_two_or_top_jack", "any_pair_or_top_jack"])
def test_redeal_rule(rule):
    redealt = lower_pairs = 0
    for seed in range(150):
        game = new_game("xeri", {"redeal_if": rule}, 2, seed)
        assert not _redeal_bad(game.pile, rule)
        for rejected in game.redeals:
            assert _redeal_bad(list(rejected), rule)
        redealt += bool(game.redeals)
        lower_pairs += len({c[0] for c in game.pile}) < 4
        assert sorted(sum(game.card_zones().values(), [])) == sorted(DECK)
    assert redealt > 0
    if rule == "any_pair_or_top_jack":
        assert lower_pairs == 0
    else:
        assert lower_pairs > 0


def test_rejected_pile_is_public_and_not_hidden():
    seed = next(s for s in range(200) if new_game("xeri", {}, 2, s).redeals)
    game = new_game("xeri", {}, 2, seed)
    rejected = set(game.redeals[0])
    obs = game.observation(0)
    assert obs["redeals"][0] == list(game.redeals[0])
    assert not rejected & game.hidden_from(0)
    assert not json_strings(obs) & game.hidden_from(0)


# -- game length, target score and tiebreak -------------------------------------------------------

def test_default_game_is_two_rounds():
    for game in random_game(seed=5):  # noqa: B007 (the last game is used below)
        pass
    assert [r["round"] for r in game.round_results] == [0, 1]
    assert game.scores() == game.round_results[-1]["totals"]
    assert sum(r["card_points"][0] + r["card_points"][1] for r in game.round_results) == 44


def test_target_score_plays_whole_rounds_until_reached():
    for game in random_game({"target_score": 75, "rounds": 1}, seed=8):  # noqa: B007
        pass
    totals = [r["totals"] for r in game.round_results]
    assert max(totals[-1]) >= 75
    assert all(max(t) < 75 for t in totals[:-1])
    assert len(totals) >= 2


def _tied_position(options, totals=(0, 0)) -> XeriState:
    """Last play of a round after which both seats have 26 cards and 11 card points."""
    seat0 = ["AS", "AH", "AD", "AC", "KS", "KH", "KD", "KC", "QS", "QH", "QD"]
    zeros = [c for c in DECK if c not in POINT_CARDS and c not in ("3H", "8S", "8C")]
    seat1 = [c for c in DECK if c in POINT_CARDS and c not in seat0]
    captured = (seat0 + zeros[:12], seat1 + zeros[12:])
    return XeriState.from_position(options, hands=[["8C"], []], pile=["3H", "8S"],
                                   captured=captured, dealer=0, to_act=0, last_capturer=1,
                                   totals=totals)


def test_tiebreak_draw_ends_tied():
    game = _tied_position({"rounds": 1, "tiebreak": "draw"})
    play(game, "8C")
    assert game.is_over()
    assert game.result().ranks == [1, 1]


def test_tiebreak_extra_round_is_played():
    game = _tied_position({"rounds": 1, "tiebreak": "extra_round"}, totals=(4, 4))
    play(game, "8C")
    assert not game.is_over()
    obs = game.observation(0)
    assert obs["round"] == 1 and obs["extra_round"] is True
    assert obs["scores"] == [15, 15]
    rng = random.Random(0)
    while not game.is_over():
        seat = game.to_act()[0]
        game.apply({seat: rng.choice(game.legal_actions(seat))})
    assert game.round_results[-1]["extra_round"] is True
    final = game.round_results[-1]["totals"]
    assert final[0] != final[1] or len(game.round_results) == 1 + MAX_EXTRA_ROUNDS


def test_tiebreak_extra_rounds_are_bounded():
    game = _tied_position({"rounds": 1, "tiebreak": "extra_round"})
    game.extra_rounds = MAX_EXTRA_ROUNDS  # as if the bound had already been used up
    play(game, "8C")
    assert game.is_over()
    assert game.result().ranks == [1, 1]


def test_target_score_tie_goes_to_extra_round():
    game = _tied_position({"target_score": 50, "tiebreak": "extra_round"}, totals=(40, 40))
    play(game, "8C")
    assert not game.is_over()
    assert game.observation(1)["scores"] == [51, 51]


def test_max_steps_bounds_random_games():
    for options in ({}, {"rounds": 3}, {"target_score": 40, "tiebreak": "extra_round"}):
        steps = sum(1 for _ in random_game(options, seed=2)) - 1
        assert steps <= XeriState.max_steps(make_options("xeri", options), 2)
        assert steps % 48 == 0


# -- determinism, actions, clone ------------------------------------------------------------------

def test_same_seed_same_game_and_different_seeds_differ():
    views_a = [g.full_view() for g in random_game(seed=11)]
    views_b = [g.full_view() for g in random_game(seed=11)]
    assert views_a == views_b
    other = new_game("xeri", {}, 2, 12).full_view()
    assert other != views_a[0]


def test_illegal_actions_raise_and_change_nothing():
    game = new_game("xeri", {}, 2, 4)
    seat = game.to_act()[0]
    before = game.full_view()
    rng_before = game.rng.getstate()
    not_held = next(c for c in DECK if c not in game.hands[seat])
    bad = [
        {seat: {"type": "play", "card": not_held}},
        {seat: {"type": "play", "card": game.hands[1 - seat][0]}},
        {seat: {"type": "discard", "card": game.hands[seat][0]}},
        {seat: {"type": "play", "card": game.hands[seat][0], "extra": 1}},
        {seat: {"card": game.hands[seat][0]}},
        {seat: "play"},
        {1 - seat: {"type": "play", "card": game.hands[1 - seat][0]}},
        {0: {"type": "play", "card": game.hands[0][0]},
         1: {"type": "play", "card": game.hands[1][0]}},
        {},
    ]
    for actions in bad:
        with pytest.raises(IllegalActionError):
            game.apply(actions)
        assert game.full_view() == before
        assert game.rng.getstate() == rng_before
    assert game.legal_actions(1 - seat) == []


def test_apply_accepts_exactly_the_legal_actions():
    game = new_game("xeri", {}, 2, 9)
    rng = random.Random(9)
    while not game.is_over():
        seat = game.to_act()[0]
        legal = game.legal_actions(seat)
        assert legal == [{"type": "play", "card": c} for c in game.hands[seat]]
        for card in rng.sample(DECK, 3):
            probe = game.clone()
            action = {"type": "play", "card": card}
            if action in legal:
                probe.apply({seat: action})
            else:
                with pytest.raises(IllegalActionError):
                    probe.apply({seat: action})
        game.apply({seat: rng.choice(legal)})
    with pytest.raises(IllegalActionError):
        game.apply({0: {"type": "play", "card": "AS"}})


def test_clone_is_independent_and_replays_identically():
    game = new_game("xeri", {}, 2, 21)
    rng = random.Random(1)
    for _ in range(47):  # up to the last play of round 0: the next play deals round 1
        seat = game.to_act()[0]
        game.apply({seat: rng.choice(game.legal_actions(seat))})
    copy = game.clone()
    before = game.full_view()
    seat = copy.to_act()[0]
    action = copy.legal_actions(seat)[0]
    copy.apply({seat: action})
    assert game.full_view() == before
    game.apply({seat: action})
    assert game.full_view() == copy.full_view()
    assert game.observation(0)["round"] == 1


def _step(game, rng):
    """Apply one random play; return the action dict applied."""
    seat = game.to_act()[0]
    actions = {seat: rng.choice(game.legal_actions(seat))}
    game.apply(actions)
    return actions


def test_mid_round_clone_sees_the_same_later_deals_as_the_original():
    # Later rounds (and their redeals) must come from the seed alone: a clone taken mid-round, and
    # another clone played on with other choices, must not change what the original is dealt.
    later_redeals = 0
    for seed in range(6):
        game = new_game("xeri", {"rounds": 3, "redeal_if": "any_pair_or_top_jack"}, 2, seed)
        rng = random.Random(seed)
        played = [_step(game, rng) for _ in range(20)]
        copy = game.clone()
        detour = game.clone()
        other = random.Random(1000 + seed)
        while not detour.is_over():
            _step(detour, other)
        while not game.is_over():
            actions = _step(game, rng)
            copy.apply(actions)
            played.append(actions)
            assert copy.full_view() == game.full_view()
            later_redeals += game.round > 0 and len(game.history) == 0 and len(game.redeals)
        replay = new_game("xeri", {"rounds": 3, "redeal_if": "any_pair_or_top_jack"}, 2, seed)
        for actions in played:
            replay.apply(actions)
        assert replay.full_view() == game.full_view()
    assert later_redeals > 0


# -- options --------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw,name", [
    ({"partnership_4p": True}, "partnership_4p"),
    ({"rouns": 3}, "rouns"),
    ({"rounds": 0}, "rounds"),
    ({"target_score": 0}, "target_score"),
    ({"jack_xeri": "always"}, "jack_xeri"),
    ({"ten_of_diamonds": 4}, "ten_of_diamonds"),
    ({"redeal_if": "never"}, "redeal_if"),
    ({"dealer_rotation": "per_trick"}, "dealer_rotation"),
    ({"uncaptured_leftover": "opponent"}, "uncaptured_leftover"),
    ({"tiebreak": "coin"}, "tiebreak"),
    ({"xeri_on_last_card": "maybe"}, "xeri_on_last_card"),
])
def test_bad_options_name_the_option(raw, name):
    with pytest.raises(GameOptionsError, match=name):
        new_game("xeri", raw, 2, 0)


@pytest.mark.parametrize("seats", [1, 3, 5])
def test_two_or_four_seats_only(seats):
    with pytest.raises(GameOptionsError, match=str(seats)):
        new_game("xeri", {}, seats, 0)


def test_defaults_match_the_spec():
    opts = make_options("xeri").model_dump()
    assert opts == {"rounds": 2, "target_score": None, "dealer_rotation": "per_round",
                    "jack_xeri": "any_jack_20", "xeri_on_last_card": True,
                    "ten_of_diamonds": 2, "redeal_if": "top_two_or_top_jack",
                    "uncaptured_leftover": "nobody", "tiebreak": "draw"}


def test_from_position_rejects_bad_positions():
    with pytest.raises(ValueError, match="placed once"):
        XeriState.from_position(hands=[["AS"], []], pile=["KS"])
    with pytest.raises(ValueError, match="impossible deal"):
        position([["AS", "2S", "3S"], ["4S"]], ["KS"])
    with pytest.raises(ValueError, match="cannot be to act"):
        position([["AS"], ["4S"]], ["KS"], to_act=0, stock_count=12, captured=((), ()), dealer=0)


# -- observation and information ------------------------------------------------------------------

def test_observation_shape_and_no_legal_actions():
    game = new_game("xeri", {}, 2, 6)
    for seat in (0, 1):
        obs = game.observation(seat)
        assert json.loads(json.dumps(obs)) == obs
        assert obs["game"] == "xeri" and obs["seat"] == seat
        assert "legal_actions" not in obs
        assert obs["my_hand"] == game.hands[seat]
        assert obs["opponent_hand_count"] == 6
        assert obs["stock_count"] == 36
        for key in ("dealer", "round", "deal_in_round", "to_act", "scores", "pile",
                    "captured_counts", "xeri", "last_capturer", "history", "round_results"):
            assert key in obs


@pytest.mark.parametrize("options", [{}, {"redeal_if": "any_pair_or_top_jack",
                                          "dealer_rotation": "per_deal"}])
def test_observation_never_leaks_hidden_cards(options):
    for seed in range(3):
        for game in random_game(options, seed=seed):
            for seat in (0, 1):
                hidden = game.hidden_from(seat)
                obs = game.observation(seat)
                assert not json_strings(obs) & hidden
                opponent = set(game.hands[1 - seat]) - {c for p in game.redeals for c in p}
                assert opponent <= hidden
                assert set(game.stock) - {c for p in game.redeals for c in p} <= hidden
                assert not hidden & set(game.hands[seat])


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    options=st.fixed_dictionaries({}, optional={
        "rounds": st.integers(1, 3),
        "jack_xeri": st.sampled_from(JACK_MODES),
        "xeri_on_last_card": st.booleans(),
        "ten_of_diamonds": st.sampled_from([2, 3]),
        "dealer_rotation": st.sampled_from(["per_round", "per_deal"]),
        "redeal_if": st.sampled_from(["top_two_or_top_jack", "any_pair_or_top_jack"]),
        "uncaptured_leftover": st.sampled_from(["nobody", "dealer"]),
        "tiebreak": st.sampled_from(["draw", "extra_round"]),
    }),
)
def test_random_play_finishes_with_all_cards_accounted(seed, options):
    limit = XeriState.max_steps(make_options("xeri", options), 2)
    steps = -1
    for game in random_game(options, seed=seed):
        steps += 1
        assert steps <= limit
        zones = game.card_zones()
        assert sorted(c for cards in zones.values() for c in cards) == sorted(DECK)
        if not game.is_over():
            assert game.legal_actions(game.to_act()[0])
    points = [r["points"] for r in game.round_results]
    for result in game.round_results:
        assert sum(result["captured_counts"]) == 52
        assert sum(result["card_points"]) == 20 + options.get("ten_of_diamonds", 2)
    assert game.scores() == [sum(p[s] for p in points) for s in (0, 1)]


# -- the heuristic bot ----------------------------------------------------------------------------

def _load_bot():
    path = ROOT / "bots" / "xeri_bot.py"
    spec = importlib.util.spec_from_file_location("xeri_bot", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_heuristic_beats_random():
    bot = _load_bot()
    games, wins = 200, 0
    for i in range(games):
        game = new_game("xeri", {}, 2, 7000 + i)
        hero = i % 2
        policies = [None, None]
        policies[hero] = bot.choose
        ranks = play_out(game, policies, random.Random(i)).ranks
        wins += ranks[hero] < ranks[1 - hero]
    assert wins / games > 0.65


def test_from_position_forgets_the_seed_deals_rejected_piles():
    seed = next(s for s in range(200) if new_game("xeri", {}, 2, s).redeals)
    deck = standard_deck()
    opponent = deck[:4]
    position = XeriState.from_position(
        None, hands=[deck[4:8], opponent], pile=deck[8:10], stock=[],
        captured=[deck[10:30], deck[30:]], dealer=1, seed=seed,
    )
    assert position.observation(0)["redeals"] == []
    assert position.hidden_from(0) == set(opponent)


# -- cached observations (issue 13) ---------------------------------------------------------------

def test_observations_leave_the_options_to_game_start():
    for seat, obs in ((s, new_game("xeri", {"rounds": 3}, 2, 4).observation(s)) for s in (0, 1)):
        assert "options" not in obs and obs["seat"] == seat


@pytest.mark.parametrize("options", [{}, {"dealer_rotation": "per_deal", "tiebreak": "extra_round",
                                          "target_score": 60}])
def test_cached_encoding_follows_the_game_and_its_clones(options):
    rng = random.Random(2)
    game = new_game("xeri", options, 2, 8)
    clones = []
    while not game.is_over():
        seat = game.to_act()[0]
        for s in (0, 1):
            assert json.loads(game.observation_json(s)) == game.observation_from_scratch(s)
        if rng.random() < 0.05:
            clones.append(game.clone())
        for clone in clones:
            if not clone.is_over():
                s = clone.to_act()[0]
                clone.apply({s: rng.choice(clone.legal_actions(s))})
                assert json.loads(clone.observation_json(s)) == clone.observation_from_scratch(s)
        game.apply({seat: rng.choice(game.legal_actions(seat))})
    assert json.loads(game.observation_json(0)) == game.observation(0)
    assert game.observation(0)["round_results"] == game.round_results


def test_observation_is_the_callers_own():
    game = new_game("xeri", {}, 2, 3)
    for card in list(game.hands[game.to_act()[0]])[:1]:
        play(game, card)
    obs = game.observation(0)
    obs["history"][0]["card"] = "XX"
    obs["pile"].append("XX")
    obs["my_hand"].clear()
    again = game.observation(0)
    assert again["history"][0]["card"] != "XX" and "XX" not in again["pile"] and again["my_hand"]
    assert json.loads(game.observation_json(0)) == again


@pytest.mark.parametrize("options", [{}, {"jack_xeri": "jack_on_jack_20", "ten_of_diamonds": 3}])
def test_from_observation_takes_the_options_of_game_start(options):
    game = new_game("xeri", options, 2, 12)
    rng = random.Random(3)
    for _ in range(30):
        seat = game.to_act()[0]
        game.apply({seat: rng.choice(game.legal_actions(seat))})
    for seat in (0, 1):
        obs = game.observation(seat)
        rebuilt = XeriState.from_observation(obs, make_options("xeri", options).model_dump())
        assert rebuilt.options == game.options
        assert rebuilt.observation(seat) == obs
        assert json.loads(rebuilt.observation_json(seat)) == obs
        assert rebuilt.legal_actions(seat) == game.legal_actions(seat)


def test_the_inline_shuffle_keeps_every_seeds_deal():
    from arena.games.xeri import _shuffle

    for seed in range(500):
        for n in (52, 40, 28, 2, 1, 0):
            expected, got = DECK[:n], DECK[:n]
            random.Random(seed).shuffle(expected)
            _shuffle(random.Random(seed), got)
            assert got == expected

"""Tests for Battlefield Cribbage (seeds/battlefield_cribbage.md; the specification's §16 cases, §13 example,
options, teams, stand-off, the two-card rule, information hiding, card accounting, views (unchanged
byte for byte, never aliasing the game) and the bot."""

from __future__ import annotations

import json
import random
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.conformance import json_strings, scribble
from arena.errors import GameOptionsError, IllegalActionError
from arena.games import get_game, make_options, new_game, play_out
from arena.games.battlefield_cribbage import (
    MAX_ROUNDS,
    TURN_CAP,
    BattlefieldCribbageState,
)
from arena.games.cribbage_scoring import best_discards, ceasefire_score, hand_score
from tests.support.paths import ROOT

BOTS = ROOT / "bots"
sys.path.insert(0, str(BOTS))
import bfc_bot  # noqa: E402

GAME = "battlefield_cribbage"


def position(num_seats=2, options=None, **kw) -> BattlefieldCribbageState:
    """A state at a chosen position (see BattlefieldCribbageState.from_position); filler cards of
    FILL_PILE that the position already uses elsewhere are dropped from the draw pile."""
    used = {c for h in kw["hands"] for c in h} | set(kw["line"]) | set(kw.get("crib", ()))
    kw["draw_pile_top_first"] = [
        c for c in kw["draw_pile_top_first"] if not (c in FILL_PILE and c in used)
    ]
    return BattlefieldCribbageState.from_position(options, num_seats, **kw)


def act(g, action):
    """Apply `action` for the seat to act."""
    g.apply({g.to_act()[0]: action})


def finish_show(g):
    """Resolve pending crib_discard decisions with the first legal discard."""
    while not g.is_over() and g.phase == "crib_discard":
        act(g, g.legal_actions(g.cur)[0])


def events(g, kind=None, previous=False):
    """Events of the current (or previous) round, optionally of one kind."""
    view = g.full_view()
    log = view["previous_round_history"] if previous else view["history"]
    return [e for e in log if kind is None or e["event"] == kind]




FILL_PILE = ["QC", "QD", "QH", "QS", "KC", "KH", "KS", "8C"]
UP1 = [True, False, False, False, False]


# -- §16 line scoring ------------------------------------------------------------------------------

def test_overflow_resets_line_and_right_neighbour_scores_go():
    # 3 seats, dealer 0: seat 2 places, its right neighbour is seat 1.
    g = position(3, hands=[["AC", "2C", "3C", "4C", "6C"], ["AD", "2D", "3D", "4D", "6D"],
                           ["AS", "2S", "3S", "4S", "6S"]],
                 line=["TH", "KS", "9D"], draw_pile_top_first=["5C"] + FILL_PILE, to_act=2)
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})
    assert g.line == ["5C"]
    assert g.out[-3:] == ["TH", "KS", "9D"]
    assert g.scores() == [0, 1, 0]
    turn = events(g, "turn")[-1]
    assert (turn["reset"], turn["go_to"], turn["points"]) == (True, 1, 0)


def test_place_two_on_29_scores_31_and_line_stays():
    g = position(hands=[["AC", "3C", "4C", "6C", "7C"], ["AD", "3D", "4D", "6D", "7D"]],
                 line=["TH", "KS", "9D"], draw_pile_top_first=["2C", "5H"] + FILL_PILE, to_act=1)
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})
    assert g.scores() == [0, 2]
    assert g.line == ["TH", "KS", "9D", "2C"] and g.total == 31
    # The next card overflows the 31 line: the 31-maker (seat 1, right of seat 0) gets the go.
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})
    assert g.line == ["5H"]
    assert g.scores() == [0, 3]


def test_reset_at_31_option_clears_line_without_go():
    g = position(options={"reset_at_31": True},
                 hands=[["AC", "3C", "4C", "6C", "7C"], ["AD", "3D", "4D", "6D", "7D"]],
                 line=["TH", "KS", "9D"], draw_pile_top_first=["2C", "5H"] + FILL_PILE, to_act=1)
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})
    assert g.scores() == [0, 2]
    assert g.line == [] and g.total == 0
    assert [a["type"] for a in g.legal_actions(0)] == ["draw"]  # empty line: nothing to take
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})
    assert g.line == ["5H"] and g.scores() == [0, 2]


@pytest.mark.parametrize(
    "line, card, bfc, standard",
    [
        (["5C", "6C", "6D"], "7H", 8, 0),  # double run
        (["6C", "7C", "5D"], "6H", 8, 3),  # tail 6-7-5-6 double run; standard: run 7-5-6
        (["5C", "JK", "6D"], "7H", 0, 0),  # the joker blocks every group
    ],
)
def test_line_groups_and_standard_pegging(line, card, bfc, standard):
    for rule, expected in (("bfc_groups", bfc), ("standard_pegging", standard)):
        g = position(options={"line_scoring": rule},
                     hands=[["AC", "2C", "3C", "4C", "9C"], ["AD", "2D", "3D", "4D", "9D"]],
                     line=line, draw_pile_top_first=[card] + FILL_PILE, to_act=1)
        act(g, {"type": "draw"})
        act(g, {"type": "place_drawn"})
        assert g.scores() == [0, expected], rule


def test_group_cap_option():
    # A-A-2-2-3 then 3: capped at 5 cards the tail A-2-2-3-3 pays 16; uncapped A-A-2-2-3-3 pays 30.
    for cap, expected in ((5, 16), (None, 30)):
        g = position(options={"line_group_max_cards": cap},
                     hands=[["4C", "5C", "6C", "7C", "9C"], ["4D", "5D", "6D", "7D", "9D"]],
                     line=["AS", "AH", "2S", "2H", "3S"], draw_pile_top_first=["3H"] + FILL_PILE,
                     to_act=1)
        act(g, {"type": "draw"})
        act(g, {"type": "place_drawn"})
        assert g.scores() == [0, expected]


def test_joker_on_line_option():
    # Dropping the joker on a line at 15: inert scores nothing, zero_value_scored re-scores the 15.
    for mode, expected in (("inert", 0), ("zero_value_scored", 2)):
        g = position(options={"joker_on_line": mode},
                     hands=[["4C", "5C", "6C", "7C", "9C"], ["4D", "5D", "6D", "7D", "9D"]],
                     line=["TH", "5S"], draw_pile_top_first=["JK"] + FILL_PILE, to_act=1)
        act(g, {"type": "draw"})
        act(g, {"type": "place_drawn"})
        assert g.line == ["TH", "5S", "JK"] and g.total == 15
        assert g.scores() == [0, expected]


def test_take_line_removes_end_card_and_rescores():
    g = position(hands=[["4C", "5C", "6C", "7C", "9C"], ["5D", "4D", "6D", "7D", "9D"]],
                 face_up=[UP1, UP1], line=["TH", "3S", "2S"], draw_pile_top_first=FILL_PILE,
                 to_act=1)
    # Take the 2 (line back to 13) and put the 5 from slot 0 on it: 18, no score; slot 0 holds 2S.
    act(g, {"type": "take_line", "replace_slot": 0})
    assert g.line == ["TH", "3S", "5D"] and g.total == 18
    assert g.observation(0)["hands"][1][0] == {"slot": 0, "card": "2S"}
    # Seat 0 takes the 5 back and lays a face-down card (revealed as it goes to the line).
    act(g, {"type": "take_line", "replace_slot": 3})
    assert g.line == ["TH", "3S", "7C"]
    turn = events(g, "turn")[-1]
    assert turn["was_face_down"] and turn["card_in"] == "5D" and turn["placed"] == "7C"


# -- §16 round end, common card, show --------------------------------------------------------------

def test_common_jack_placer_then_dealer_heels():
    g = position(hands=[["AC", "2C", "3C", "4C", "9C"], ["AD", "2D", "3D", "4D", "9D"]],
                 line=["5H"], draw_pile_top_first=["JD", "8S"], to_act=1)
    assert {"type": "draw"} not in g.legal_actions(1)
    act(g, {"type": "flip_common"})
    finish_show(g)
    log = events(g, previous=True)
    turn = next(e for e in log if e["event"] == "turn")
    common = next(e for e in log if e["event"] == "common")
    assert turn["points"] == 2  # 5 + J = 15
    assert common == {"event": "common", "seat": 1, "card": "JD", "last_card": 1, "heels": 2,
                      "heels_to": 0}
    assert log.index(turn) < log.index(common)


def test_placer_points_come_before_heels_for_the_win():
    g = position(hands=[["AC", "2C", "3C", "4C", "9C"], ["AD", "2D", "3D", "4D", "9D"]],
                 line=["5H"], draw_pile_top_first=["JD", "8S"], to_act=1, scores=[119, 118])
    act(g, {"type": "flip_common"})
    assert g.is_over()
    assert g.scores() == [119, 121]  # 15 for 2 + last card: seat 1 wins before the dealer's heels
    assert g.result().ranks == [2, 1]


def test_final_placement_31_scores_line_without_last_card():
    g = position(hands=[["AC", "3C", "4C", "6C", "9C"], ["AD", "3D", "4D", "6D", "7D"]],
                 line=["TH", "KS", "9D"], draw_pile_top_first=["2C", "8S"], to_act=1)
    act(g, {"type": "flip_common"})
    finish_show(g)
    log = events(g, previous=True)
    assert next(e for e in log if e["event"] == "turn")["points"] == 2
    assert next(e for e in log if e["event"] == "common")["last_card"] == 0


def test_final_card_scoring_option():
    hands = [["AC", "3C", "4C", "6C", "9C"], ["AD", "3D", "4D", "6D", "9D"]]
    for mode, line_pts, last in (("line_plus_last", 2, 1), ("last_only_unless_31", 0, 1)):
        g = position(options={"final_card_scoring": mode}, hands=hands, line=["TH"],
                     draw_pile_top_first=["5H", "8S"], to_act=1)
        act(g, {"type": "flip_common"})
        finish_show(g)
        log = events(g, previous=True)
        assert next(e for e in log if e["event"] == "turn")["points"] == line_pts
        assert next(e for e in log if e["event"] == "common")["last_card"] == last


def test_joker_common_kills_everything():
    hands = [["5C", "5D", "5S", "JH", "TC"], ["4D", "5H", "6D", "7D", "8D"]]
    for kills, last in ((True, 0), (False, 1)):
        g = position(options={"joker_common_kills_last_card": kills}, hands=hands, line=["TH"],
                     draw_pile_top_first=["JK", "8S"], to_act=1, crib=["2H", "3H"])
        act(g, {"type": "flip_common"})
        assert g.common == "JK"
        assert g.phase == "crib_discard"  # a killed hand may send any card
        assert len(g.legal_actions(1)) == 5
        finish_show(g)
        log = events(g, previous=True)
        common = next(e for e in log if e["event"] == "common")
        assert (common["last_card"], common["heels"]) == (last, 0)
        shows = [e for e in log if e["event"] in ("show", "crib")]
        assert [e["points"] for e in shows] == [0, 0, 0]
        assert all(e["killed"] for e in shows if e["event"] == "show")
        assert g.scores() == [0, last]


def test_best_four_of_five_29_and_king_to_crib():
    g = position(hands=[["AC", "2C", "3C", "4C", "9H"], ["JS", "5H", "5C", "5D", "KD"]],
                 line=["9D"], draw_pile_top_first=["5S", "8S"], to_act=1)
    act(g, {"type": "flip_common"})
    finish_show(g)
    show = next(e for e in events(g, previous=True) if e["event"] == "show")
    assert show == {"event": "show", "seat": 1, "cards": ["JS", "5H", "5C", "5D", "KD"],
                    "killed": False, "discard": "KD", "points": 29}


def test_show_order_crib_and_tied_discard_choice():
    # Seat 1 (dealer's left) shows first; its hand ties between discards -> a crib_discard decision.
    five = ["2H", "3S", "9C", "KD", "QH"]
    best, tied = best_discards(five, "AS")
    assert len(tied) > 1
    g = position(hands=[["4C", "6C", "8C", "TC", "2D"], five], line=["9D"],
                 draw_pile_top_first=["AS", "8S"], to_act=1, crib=["7H", "7S"])
    act(g, {"type": "flip_common"})
    assert (g.phase, g.cur) == ("crib_discard", 1)
    assert [a["slot"] for a in g.legal_actions(1)] == tied
    obs = g.observation(0)
    assert [h["card"] for h in obs["hands"][1]] == five  # shown hand is face up for everybody
    assert all(h["card"] is None for h in obs["hands"][0])  # the dealer shows later
    act(g, {"type": "crib_discard", "slot": tied[-1]})
    finish_show(g)
    log = events(g, previous=True)
    shows = [e for e in log if e["event"] in ("show", "crib")]
    assert [(e["event"], e["seat"]) for e in shows] == [("show", 1), ("show", 0), ("crib", 0)]
    assert shows[0]["points"] == best and shows[0]["discard"] == five[tied[-1]]
    crib = shows[2]["cards"]
    assert sorted(crib) == sorted(["7H", "7S", five[tied[-1]], shows[1]["discard"]])
    assert shows[2]["points"] == hand_score(crib, "AS", crib=True)


def test_hand_choice_free_scores_chosen_four():
    five = ["JS", "5H", "5C", "5D", "KD"]
    g = position(options={"hand_choice": "free"}, hands=[["AC", "2C", "3C", "4C", "9H"], five],
                 line=["9D"], draw_pile_top_first=["5S", "8S"], to_act=1)
    act(g, {"type": "flip_common"})
    assert [a["slot"] for a in g.legal_actions(1)] == [0, 1, 2, 3, 4]
    act(g, {"type": "crib_discard", "slot": 0})  # throw the jack: 5-5-5-K + 5 = 28
    finish_show(g)
    show = next(e for e in events(g, previous=True) if e["event"] == "show")
    assert (show["discard"], show["points"]) == ("JS", 28)


@pytest.mark.parametrize("rule, slots", [("allowed", [0, 1, 2, 3, 4]), ("forbidden", [0, 1, 3, 4]),
                                         ("forced", [2])])
def test_joker_to_crib_option(rule, slots):
    g = position(options={"joker_to_crib": rule},
                 hands=[["AC", "2C", "3C", "4C", "9H"], ["5H", "5C", "JK", "5D", "KD"]],
                 line=["9D"], draw_pile_top_first=["5S", "8S"], to_act=1)
    act(g, {"type": "flip_common"})
    if len(slots) > 1:
        assert [a["slot"] for a in g.legal_actions(1)] == slots
        act(g, g.legal_actions(1)[-1])
    finish_show(g)
    log = events(g, previous=True)
    show = next(e for e in log if e["event"] == "show")
    assert show["killed"] and show["points"] == 0
    crib = next(e for e in log if e["event"] == "crib")
    assert (crib["points"] == 0) == ("JK" in crib["cards"])
    if rule == "forced":
        assert show["discard"] == "JK"


def _ceasefire_seed(opts, want=None):
    """A seed whose first round is a cease-fire, with the game frozen after it (target 1)."""
    opts = {"target": 1, "win_check": "end_of_round_highest", **opts}
    for seed in range(20000):
        g = new_game(GAME, opts, 2, seed)
        if g.is_over() and (want is None or want(g)):
            return g
    raise AssertionError("no cease-fire seed found")


def test_cease_fire_round():
    g = _ceasefire_seed({})
    assert g.line == ["JK"] and g.rounds_log[0]["cease_fire"]
    log = events(g)
    assert log[0] == {"event": "cease_fire", "dealer": g.dealer, "points": 1}
    hands = [e for e in log if e["event"] == "cease_fire_hand"]
    assert [e["seat"] for e in hands] == [(g.dealer + 1) % 2, g.dealer]
    for e in hands:
        assert e["points"] == ceasefire_score(e["cards"], "five_only")
        assert e["cards"] == g.hand[e["seat"] * 5:e["seat"] * 5 + 5]
    expected = [0, 0]
    expected[g.dealer] += 1
    for e in hands:
        expected[e["seat"]] += e["points"]
    assert g.scores() == expected
    assert not any(e["event"] == "crib" for e in log)


def test_ceasefire_flush_option():
    def four_of_a_suit(g):
        for s in range(2):
            suits = [c[1] for c in g.hand[s * 5:s * 5 + 5]]
            if max(suits.count(x) for x in "SHDC") == 4 and "JK" not in g.hand[s * 5:s * 5 + 5]:
                return True
        return False

    g = _ceasefire_seed({"ceasefire_flush": "four_or_five"}, four_of_a_suit)
    for e in events(g, "cease_fire_hand"):
        assert e["points"] == ceasefire_score(e["cards"], "four_or_five")
    assert any(ceasefire_score(e["cards"], "four_or_five") == ceasefire_score(e["cards"]) + 4
               for e in events(g, "cease_fire_hand"))


# -- §13 worked four-player example ----------------------------------------------------------------

def test_worked_four_player_team_example():
    up = [[True, True, False, False, False], [True, True, False, False, False],
          [True, True, True, True, False], [True, True, False, False, False]]
    g = position(4, {"team_mode": True}, dealer=0, to_act=3, face_up=up,
                 hands=[["6C", "7C", "8C", "9S", "AS"], ["JC", "2D", "5D", "6D", "7D"],
                        ["2S", "3S", "4S", "5S", "AH"], ["6S", "7S", "6H", "7H", "8H"]],
                 line=["TH", "9C", "8D"],
                 draw_pile_top_first=["8S", "2C", "3D", "4H", "KD", "QC", "QD", "QH"])
    assert g.teams() == [[0, 2], [1, 3]]
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})  # 27 + 8 > 31: seat 2 (seat 3's right) scores the go
    assert g.line == ["8S"] and g.scores() == [1, 0, 1, 0]
    assert g.observation(1)["scores"] == {"team0": 1, "team1": 0}
    for _ in range(2):  # seats 0 and 1 draw and lay
        act(g, {"type": "draw"})
        act(g, {"type": "place_drawn"})
    assert g.cur == 2
    act(g, {"type": "take_line", "replace_slot": 4})  # last face-down slot: seat 2 goes out
    assert g.went_out == 2 and g.finals == [3, 0, 1] and g.cur == 3
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})  # 8-2-A-4 = 15 for seat 3
    assert g.scores() == [1, 2, 1, 2]
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})  # seat 0: K -> 25
    assert g.cur == 1 and g.finals == [1]
    act(g, {"type": "take_line", "replace_slot": 0})  # seat 1 lays the jack: the common card
    finish_show(g)
    log = events(g, previous=True)
    common = next(e for e in log if e["event"] == "common")
    assert common == {"event": "common", "seat": 1, "card": "JC", "last_card": 1, "heels": 2,
                      "heels_to": 0}
    shows = [e for e in log if e["event"] in ("show", "crib")]
    assert [(e["event"], e["seat"]) for e in shows] == [
        ("show", 1), ("show", 2), ("show", 3), ("show", 0), ("crib", 0)]
    assert len(shows[-1]["cards"]) == 4
    for e in shows[:4]:
        assert e["points"] == best_discards(e["cards"], "JC")[0]
    team0 = 1 + 2 + shows[1]["points"] + shows[3]["points"] + shows[4]["points"]
    team1 = 2 + 1 + shows[0]["points"] + shows[2]["points"]
    assert g.scores() == [team0, team1, team0, team1]


def test_first_turns_reveal_and_clockwise_order():
    g = new_game(GAME, {}, 4, 3)
    order = []
    for _ in range(8):
        seat = g.cur
        order.append(seat)
        if g.phase == "reveal":
            assert len(g.legal_actions(seat)) == 10
            act(g, {"type": "reveal", "slots": [1, 4]})
            assert g.observation(seat)["hands"][seat][1]["card"] is not None
        act(g, g.legal_actions(seat)[0])
        if g.phase == "after_draw":
            act(g, {"type": "place_drawn"})
    d = g.dealer
    assert order == [(d + 1 + k) % 4 for k in range(8)]
    assert g.first_done == [True] * 4


def test_auto_reveal_option():
    g = new_game(GAME, {"reveal_choice": "auto_lowest_slots"}, 3, 5)
    seat = g.cur
    assert g.phase == "main"
    assert [h["card"] is not None for h in g.observation(seat)["hands"][seat]] == [
        True, True, False, False, False]


# -- two-card rule, going out, final turns ---------------------------------------------------------

def test_two_card_rule_during_final_turns_ends_round_at_once():
    g = position(3, hands=[["AC", "2C", "3C", "4C", "6C"], ["AD", "2D", "3D", "4D", "6D"],
                           ["AS", "2S", "3S", "4S", "6S"]],
                 line=["9H"], draw_pile_top_first=["7S", "8S"], dealer=0, to_act=1, went_out=0,
                 final_turns=[1, 2])
    legal = g.legal_actions(1)
    assert {"type": "draw"} not in legal and legal[-1] == {"type": "flip_common"}
    act(g, {"type": "flip_common"})
    if g.phase == "crib_discard":
        assert g.common == "7S" and g.pile == ["8S"]
    finish_show(g)
    log = events(g, previous=True)
    common = next(e for e in log if e["event"] == "common")
    assert (common["seat"], common["card"]) == (1, "7S")  # the upper of the two cards
    assert [e["seat"] for e in log if e["event"] == "turn"] == [1]  # seat 2's final turn skipped
    assert g.round == 2 and g.pile != ["8S"]


def test_take_line_at_two_cards_continues_round():
    g = position(hands=[["AC", "2C", "3C", "4C", "6C"], ["AD", "2D", "3D", "4D", "6D"]],
                 line=["9H"], draw_pile_top_first=["7S", "8S"], to_act=1)
    act(g, {"type": "take_line", "replace_slot": 0})
    assert g.cur == 0 and g.round == 1 and len(g.pile) == 2
    assert [a["type"] for a in g.legal_actions(0)][-1] == "flip_common"


def test_going_out_only_at_end_of_own_turn_and_others_do_not():
    up_all_but_one = [True, True, True, True, False]
    g = position(3, hands=[["AC", "2C", "3C", "4C", "6C"], ["AD", "2D", "3D", "4D", "6D"],
                           ["AS", "2S", "3S", "4S", "6S"]],
                 face_up=[up_all_but_one] * 3, line=["9H"], draw_pile_top_first=FILL_PILE,
                 dealer=0, to_act=1)
    act(g, {"type": "take_line", "replace_slot": 4})
    assert g.went_out == 1 and g.finals == [2, 0]
    act(g, {"type": "take_line", "replace_slot": 4})  # seat 2 also all face up: no effect
    assert g.went_out == 1 and g.cur == 0
    act(g, {"type": "draw"})
    act(g, {"type": "replace", "slot": 2})  # the card leaving slot 2 (3C) is the common card
    assert g.round == 2 or g.phase == "crib_discard"
    finish_show(g)
    common = next(e for e in events(g, previous=True) if e["event"] == "common")
    assert (common["seat"], common["card"]) == (0, "3C")


# -- stand-off ------------------------------------------------------------------------------------

def _swap_position(options=None):
    # Seats swap the lone line card with their face-up slot 0: no scoring, no draws.
    return position(options=options, hands=[["4C", "2C", "3C", "6C", "7C"],
                                            ["5D", "2D", "3D", "6D", "7D"]],
                    face_up=[UP1, UP1], line=["9H"], draw_pile_top_first=FILL_PILE, dealer=0,
                    to_act=1)


def test_standoff_snapshot_repeat_forces_dealer_to_draw():
    g = _swap_position()
    forced_at = None
    for turn in range(20):
        if g.cur == 0 and g.legal_actions(0) == [{"type": "draw"}]:
            forced_at = turn
            break
        act(g, {"type": "take_line", "replace_slot": 0})
    assert forced_at == 7  # table repeats at the dealer's 4th turn (a 3-cycle of line cards)
    assert g.observation(1)["standoff_forced"]
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})
    assert len(g.legal_actions(1)) == 6  # seat 1 is free again


def test_standoff_max_line_takes_option():
    g = _swap_position({"standoff_rule": "max_line_takes_without_draw:3"})
    act(g, {"type": "take_line", "replace_slot": 0})
    assert len(g.legal_actions(0)) == 6  # 1 take so far
    act(g, {"type": "take_line", "replace_slot": 0})
    act(g, {"type": "take_line", "replace_slot": 0})
    assert g.cur == 0 and g.legal_actions(0) == [{"type": "draw"}]


def test_turn_cap_forces_every_seat_to_draw():
    g = _swap_position({"standoff_rule": "max_line_takes_without_draw:999999"})
    for _ in range(TURN_CAP):
        act(g, {"type": "take_line", "replace_slot": 0})
    assert g.legal_actions(g.cur) == [{"type": "draw"}]
    assert g.observation(0)["forced_reason"] == "turn_cap"


# -- winning, teams, skunk -------------------------------------------------------------------------

def test_immediate_win_by_go_point_on_opponents_turn():
    g = position(hands=[["AC", "2C", "3C", "4C", "6C"], ["AD", "2D", "3D", "4D", "6D"]],
                 line=["TH", "KS", "9D"], draw_pile_top_first=["5C"] + FILL_PILE, to_act=1,
                 scores=[120, 50])
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})
    assert g.is_over() and g.to_act() == [] and g.scores() == [121, 50]
    assert g.result().ranks == [1, 2]
    with pytest.raises(IllegalActionError):
        act_seat = {0: {"type": "draw"}}
        g.apply(act_seat)


def test_end_of_round_highest_finishes_the_round():
    g = position(options={"win_check": "end_of_round_highest"},
                 hands=[["AC", "2C", "3C", "4C", "6C"], ["AD", "2D", "3D", "4D", "6D"]],
                 line=["TH", "KS", "9D"], draw_pile_top_first=["5C", "KH", "8S"], to_act=1,
                 scores=[120, 110])
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})
    assert not g.is_over() and g.scores()[0] == 121
    act(g, {"type": "flip_common"})
    finish_show(g)
    assert g.is_over() and g.end_reason == "target"
    s = g.scores()
    assert g.result().ranks == ([1, 2] if s[0] > s[1] else [2, 1] if s[1] > s[0] else [1, 1])
    assert g.rounds_log[0]["round"] == 1


def test_team_points_are_shared_and_ranked_together():
    g = position(4, {"team_mode": True},
                 hands=[["AC", "2C", "3C", "4C", "6C"], ["AD", "2D", "3D", "4D", "6D"],
                        ["AS", "2S", "3S", "4S", "6S"], ["AH", "2H", "3H", "4H", "6H"]],
                 line=["TH", "KS", "9D"], draw_pile_top_first=["5C"] + FILL_PILE, to_act=1,
                 scores=[120, 30])
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})  # seat 1 overflows: seat 0 scores the go for team {0, 2}
    assert g.is_over() and g.scores() == [121, 30, 121, 30]
    assert g.result().ranks == [1, 3, 1, 3]  # competition ranks per seat: partners share them


@pytest.mark.parametrize(
    "loser, grade", [(91, None), (90, "single"), (61, "single"), (60, "double")]
)
def test_skunk_reporting(loser, grade):
    g = position(options={"skunk_scoring": True},
                 hands=[["AC", "2C", "3C", "4C", "6C"], ["AD", "2D", "3D", "4D", "6D"]],
                 line=["TH", "KS", "9D"], draw_pile_top_first=["5C"] + FILL_PILE, to_act=1,
                 scores=[120, loser])
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})
    obs = g.observation(1)
    assert obs["game_over"] and obs["winners"] == [0] and obs["skunk"] == grade
    assert g.full_view()["skunk"] == grade


def test_skunk_off_reports_nothing():
    g = position(hands=[["AC", "2C", "3C", "4C", "6C"], ["AD", "2D", "3D", "4D", "6D"]],
                 line=["TH", "KS", "9D"], draw_pile_top_first=["5C"] + FILL_PILE, to_act=1,
                 scores=[120, 0])
    act(g, {"type": "draw"})
    act(g, {"type": "place_drawn"})
    assert g.observation(0)["skunk"] is None and g.observation(0)["winners"] == [0]


# -- options validation, determinism, illegal actions ----------------------------------------------

def test_option_errors_name_the_option():
    with pytest.raises(GameOptionsError, match="team_mode"):
        new_game(GAME, {"team_mode": True}, 2, 1)
    with pytest.raises(GameOptionsError, match="team_mode"):
        new_game(GAME, {"team_mode": True}, 3, 1)
    for bad in ("max_line_takes_without_draw:0", "max_line_takes_without_draw:x", "forever"):
        with pytest.raises(GameOptionsError, match="standoff_rule"):
            make_options(GAME, {"standoff_rule": bad})
    with pytest.raises(GameOptionsError, match="line_group_max_cards"):
        make_options(GAME, {"line_group_max_cards": 4})
    with pytest.raises(GameOptionsError):
        new_game(GAME, {}, 5, 1)
    assert new_game(GAME, {"team_mode": True}, 4, 1).teams() == [[0, 2], [1, 3]]
    assert get_game(GAME).game_type.seat_counts == (2, 3, 4)


def _random_game(n, opts, seed, steps=None):
    g = new_game(GAME, opts, n, seed)
    rng = random.Random(seed)
    trace = []
    while not g.is_over() and (steps is None or len(trace) < steps):
        seat = g.to_act()[0]
        action = rng.choice(g.legal_actions(seat))
        trace.append(action)
        g.apply({seat: action})
    return g, trace


def test_determinism():
    a, trace = _random_game(3, {}, 11, steps=150)
    b = new_game(GAME, {}, 3, 11)
    for action in trace:
        b.apply({b.to_act()[0]: action})
    assert a.full_view() == b.full_view()
    c = new_game(GAME, {}, 3, 12)
    assert c.full_view() != new_game(GAME, {}, 3, 11).full_view()


def test_illegal_actions_raise_and_change_nothing():
    g, _ = _random_game(2, {}, 4, steps=40)
    before = json.dumps(g.full_view(), sort_keys=True)
    seat = g.to_act()[0]
    bad = [{"type": "flip_common"} if len(g.pile) > 2 else {"type": "draw"},
           {"type": "take_line", "replace_slot": 7}, {"type": "nonsense"}, "draw",
           {"type": "crib_discard", "slot": 0}]
    for action in bad:
        with pytest.raises(IllegalActionError):
            g.apply({seat: action})
    with pytest.raises(IllegalActionError):
        g.apply({1 - seat: g.legal_actions(seat)[0]})
    with pytest.raises(IllegalActionError):
        g.apply({})
    assert json.dumps(g.full_view(), sort_keys=True) == before


def _advance(g, rng, steps):
    """Play up to `steps` random actions."""
    for _ in range(steps):
        if g.is_over():
            return
        seat = g.to_act()[0]
        g.apply({seat: rng.choice(g.legal_actions(seat))})


def test_clone_is_independent():
    # Both ways, and across a round end (the clone shares the logged events, not the logs).
    g, _ = _random_game(4, {"team_mode": True}, 8, steps=60)
    c = g.clone()
    before = json.dumps(g.full_view())
    _advance(c, random.Random(1), 80)
    assert c.round > g.round
    assert json.dumps(g.full_view()) == before
    after = json.dumps(c.full_view())
    _advance(g, random.Random(2), 80)
    assert json.dumps(c.full_view()) == after


def test_mutating_views_never_changes_the_game():
    # The views copy the round logs, which clones share: scribbling over any part of a view (the
    # list fields of logged events included) must leave the game and its later views unchanged.
    g = new_game(GAME, {}, 2, 21)
    rng = random.Random(21)
    seen = set()
    while not g.is_over():
        views = [lambda s=s: g.observation(s) for s in range(2)] + [g.full_view]
        texts = [json.dumps(view()) for view in views]
        for view in views:
            scribble(view())
        assert [json.dumps(view()) for view in views] == texts
        full = g.full_view()
        seen.update(e["event"] for e in full["history"] + full["previous_round_history"])
        if full["rounds"]:
            seen.add("rounds")
        seat = g.to_act()[0]
        g.apply({seat: rng.choice(g.legal_actions(seat))})
    assert {"reveal", "went_out", "show", "crib", "rounds"} <= seen


def test_observation_leaves_options_to_game_start():
    # Options travel once, in game_start: from_observation takes them beside the observation,
    # and a crib_discard choice under hand_choice=free depends on them.
    options = {"hand_choice": "free", "target": 61}
    g = new_game(GAME, options, 3, 5)
    rng = random.Random(5)
    while g.phase != "crib_discard":
        _advance(g, rng, 1)
    seat = g.cur
    obs = g.observation(seat)
    assert "options" not in obs and "options" not in json.loads(g.observation_json(seat))
    start = g.options.model_dump(mode="json")
    rebuilt = BattlefieldCribbageState.from_observation(obs, start)
    assert rebuilt.observation(seat) == obs
    assert rebuilt.legal_actions(seat) == g.legal_actions(seat) == [
        {"type": "crib_discard", "slot": k} for k in range(5)]
    assert g.full_view()["options"] == g.options.model_dump()


def test_encoded_observation_follows_the_game_and_ignores_callers_changes():
    # observation_json reuses encoded history, round summaries and hands: it must follow every
    # step and round, and neither scribbling over views or actions nor a clone's or a
    # determinized copy's moves may reach it.
    g = new_game(GAME, {"target": 61}, 2, 33)
    rng = random.Random(33)
    rounds_seen = 0
    while not g.is_over():
        for seat in range(2):
            assert json.loads(g.observation_json(seat)) == g.observation(seat)
            scribble(g.observation(seat))
        seat = g.to_act()[0]
        legal = g.legal_actions(seat)
        scribble(g.legal_actions(seat))
        assert g.legal_actions(seat) == legal
        for copy in (g.clone(), g.determinize(seat, random.Random(len(g.log)))):
            _advance(copy, random.Random(7), 5)
            assert json.loads(copy.observation_json(seat)) == copy.observation(seat)
        assert json.loads(g.observation_json(seat)) == g.observation_from_scratch(seat)
        g.apply({seat: rng.choice(legal)})
        rounds_seen = max(rounds_seen, len(json.loads(g.observation_json(0))["rounds"]))
    assert rounds_seen >= 2 and json.loads(g.observation_json(1)) == g.observation(1)


# -- information model -----------------------------------------------------------------------------

def test_drawn_card_seen_only_by_drawer_and_face_down_never():
    g = position(hands=[["AC", "2C", "3C", "4C", "6C"], ["AD", "2D", "3D", "4D", "6D"]],
                 face_up=[UP1, UP1], line=["9H"], draw_pile_top_first=FILL_PILE, to_act=1,
                 crib=["KD", "TD"])
    act(g, {"type": "draw"})
    mine, theirs = g.observation(1), g.observation(0)
    assert mine["pending_drawn_card"] == "QC" and theirs["pending_drawn_card"] is None
    assert "QC" not in set(json_strings(theirs))
    for obs in (mine, theirs):
        strings = set(json_strings(obs))
        for face_down in ["2C", "3C", "4C", "6C", "2D", "3D", "4D", "6D", "KD", "TD", "QD"]:
            assert face_down not in strings
        assert obs["hands"][1][1] == {"slot": 1, "card": None}
        assert obs["crib"] == {"face_down_count": 2, "face_up": []}
        assert "legal_actions" not in obs


def test_observation_shape():
    g = new_game(GAME, {"team_mode": True}, 4, 2)
    obs = g.observation(1)
    assert json.loads(json.dumps(obs)) == obs
    for key in ("game", "seat", "num_players", "team_mode", "teams", "scores", "score_list",
                "target", "dealer", "round", "to_act", "phase", "hands", "line", "line_total",
                "out_of_play", "draw_pile_count", "crib", "first_turn_done", "went_out",
                "final_turns_remaining", "standoff_forced", "pending_drawn_card", "common_card",
                "history", "rounds"):
        assert key in obs
    assert obs["game"] == GAME and obs["seat"] == 1 and obs["draw_pile_count"] == 32
    assert obs["scores"] == {"team0": 0, "team1": 0} and obs["score_list"] == [0, 0, 0, 0]
    assert [len(h) for h in obs["hands"]] == [5, 5, 5, 5]


def _check_invariants(g):
    deck = sorted(g.deck())
    assert len(deck) == 53
    zones = g.card_zones()
    assert sorted(c for cards in zones.values() for c in cards) == deck
    for seat in range(g.num_seats):
        hidden = g.hidden_from(seat)
        own_down = set(zones[f"slots_{seat}_face_down"])
        assert own_down <= hidden
        assert not hidden & set(json_strings(g.observation(seat)))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mode=st.sampled_from([(2, False), (3, False), (4, False), (4, True)]),
    seed=st.integers(0, 2**31),
    extra=st.sampled_from([
        {}, {"reset_at_31": True, "hand_choice": "free", "joker_to_crib": "forced"},
        {"line_scoring": "standard_pegging", "win_check": "end_of_round_highest",
         "standoff_rule": "max_line_takes_without_draw:2", "reveal_choice": "auto_lowest_slots"},
        {"joker_on_line": "zero_value_scored", "line_group_max_cards": None,
         "final_card_scoring": "last_only_unless_31", "joker_common_kills_last_card": False},
    ]),
)
def test_random_play_finishes_and_accounts_for_every_card(mode, seed, extra):
    n, team = mode
    opts = {"team_mode": team, "target": 61, **extra}
    g = new_game(GAME, opts, n, seed)
    rng = random.Random(seed)
    limit = type(g).max_steps(g.options, n)
    steps = 0
    while not g.is_over():
        if steps % 3 == 0:
            _check_invariants(g)
        seat = g.to_act()[0]
        g.apply({seat: rng.choice(g.legal_actions(seat))})
        steps += 1
        assert steps <= limit
    _check_invariants(g)
    assert max(g.scores()) >= 61 and g.end_reason == "target"
    assert g.round < MAX_ROUNDS


# -- the heuristic bot -----------------------------------------------------------------------------

def _bot_match(n, team, games, target):
    """Games of bfc_bot against random; returns the bot side's win rate."""
    wins = 0.0
    for i in range(games):
        g = new_game(GAME, {"team_mode": team, "target": target}, n, 1000 + i)
        bot_seats = {i % 2, i % 2 + 2} if team else {i % 2}
        policies = [bfc_bot.choose if s in bot_seats else None for s in range(n)]
        ranks = play_out(g, policies, random.Random(i)).ranks
        best = {s for s in range(n) if ranks[s] == 1}
        if best <= bot_seats:
            wins += 1
        elif best & bot_seats:
            wins += 0.5
    return wins / games


# The bot games use target 61 (half a game) to keep the file fast; measured win rates at 61 were
# 0.91 (2 players) and 0.99 (teams), and 0.98 / 0.99 at the full 121 (100 games each).
def test_bot_beats_random_two_players():
    assert _bot_match(2, False, 100, 61) >= 0.8


def test_bot_team_beats_random_team():
    assert _bot_match(4, True, 100, 61) >= 0.85

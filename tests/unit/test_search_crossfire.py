"""Crossfire's search profile (arena.games.crossfire_search): the gain table agrees with the
engine's rules; playouts play each seat's best-gaining card; the heuristic's port picks what the bot
picks; the belief re-deal draws only rows that explain the other seat's plays, and every such row;
a seat that does not play by the heuristic is told apart."""

from __future__ import annotations

import random
import sys
from collections import Counter
from itertools import combinations

import pytest

from arena.games import crossfire_search as cf
from arena.games import new_game
from arena.games.crossfire import resolve_round
from arena.search.ismcts import ISMCTS, _Scorer
from arena.search.playouts import profile_for
from tests.support.paths import ROOT

sys.path.insert(0, str(ROOT / "bots"))
import crossfire_bot  # noqa: E402

POINT = {"dealer": 1, "opponent": -1, None: 0}
OPEN = {"open_rows": True}


def direct_gain(card: str, neutral: str, dealer: bool, tie_rule: str) -> float:
    """The table's entry computed one round at a time with the engine's resolve_round."""

    def value(n: str) -> float:
        others = [c for c in cf._DECK if c not in (card, n)]
        if dealer:
            return sum(POINT[resolve_round(card, n, o, tie_rule)[2]] for o in others) / 50
        return -sum(POINT[resolve_round(o, n, card, tie_rule)[2]] for o in others) / 50

    mean = sum(value(n) for n in cf._DECK if n != card) / 51
    return value(neutral) - mean


def heuristic_game(seed: int, options: dict, on_round=None):
    """Play a game with the heuristic bot at both seats, calling on_round(state) before each."""
    state = new_game("crossfire", options, 2, seed)
    while state.to_act():
        if on_round is not None:
            on_round(state)
        state.apply({s: crossfire_bot.choose(state.observation(s), state.legal_actions(s), options)
                     for s in (0, 1)})
    return state


@pytest.mark.parametrize("tie_rule", ["position", "played_cards"])
def test_the_gain_table_is_the_engine_rules_averaged(tie_rule):
    rng = random.Random(5)
    table = cf.gain_table(tie_rule)
    for _ in range(6):
        card, neutral = rng.sample(cf._DECK, 2)
        for role in (0, 1):
            entry = table[role][cf._INDEX[card]][cf._INDEX[neutral]]
            assert entry == pytest.approx(direct_gain(card, neutral, bool(role), tie_rule))


def test_a_greedy_playout_plays_each_seats_best_gaining_card():
    state = new_game("crossfire", OPEN, 2, 3)
    gain = cf.gain_table("position")
    neutral = cf._INDEX[state.neutral]
    best = []
    for seat in (0, 1):
        role = 1 if state.dealer == seat else 0
        best.append(max(state.rows[seat], key=lambda c: gain[role][cf._INDEX[c]][neutral]))
    cf.fast_playout(state, random.Random(1), False, plies=1, greedy=1.0)
    played = state.history[-1]
    dealer = played["dealer"]
    assert (played["dealer_card"], played["opponent_card"]) == (best[dealer], best[dealer ^ 1])


@pytest.mark.parametrize("seed", range(4))
def test_a_playout_cut_at_the_deal_stops_with_the_deal(seed):
    state = new_game("crossfire", OPEN, 2, seed)
    state._apply({0: {"type": "play_slot", "slot": 0}, 1: {"type": "play_slot", "slot": 1}})
    cf.fast_playout(state, random.Random(seed), True)
    assert state.deal_index == 2 and state.round_in_deal == 1 and len(state.history) == 5
    cf.fast_playout(state, random.Random(seed), False)
    assert state.over and len(state.history) == 15


@pytest.mark.parametrize("options", [
    OPEN,
    {"open_rows": True, "tie_rule": "played_cards", "dealer_rotation": "per_game"},
    {"open_rows": True, "game_length": "reshuffle_to_25_rounds", "tiebreak": "sudden_death"},
])
def test_the_port_picks_what_the_heuristic_bot_picks(options):
    decisions = []

    def compare(state):
        for seat in (0, 1):
            legal = state.legal_actions(seat)
            if len(legal) > 1:
                bot = crossfire_bot.choose(state.observation(seat), legal, options)
                decisions.append(cf.heuristic_pick(state, seat, legal) == bot)

    for seed in range(40):
        heuristic_game(seed, options, compare)
    assert len(decisions) > 900 and all(decisions)


def test_the_search_model_picks_what_the_port_picks_below_the_root():
    """model_pick adds to the root's memoized discard sums; its picks must not change."""
    picks = []

    def compare(root):
        cf.prepare(root)
        rng = random.Random(len(root.history))
        det = root.determinize(0, rng)
        while det.to_act():
            actions = {}
            for seat in (0, 1):
                legal = det.legal_actions(seat)
                actions[seat] = cf.model_pick(det, seat, legal)
                picks.append(actions[seat] == cf.heuristic_pick(det, seat, legal))
            det._apply(actions)

    for seed in range(6):
        heuristic_game(100 + seed, {"open_rows": True, "game_length": "reshuffle_to_25_rounds"},
                       compare)
    assert len(picks) > 2000 and all(picks)


def _unknown(state, seat):
    known = set(state.discards) | {state.neutral} | {c for c in state.rows[seat] if c}
    return [c for c in cf._DECK if c not in known]


def test_belief_draws_only_rows_that_explain_the_plays_and_keeps_the_observation():
    checked = 0

    def check(root):
        nonlocal checked
        for seat in (0, 1):
            infer = cf.belief(root, seat)
            if root.round_in_deal == 1:
                assert infer is None  # nothing played yet this deal
                continue
            other = seat ^ 1
            choices = cf._deal_choices(root, other)
            tabs = cf.tables("position")
            true_row = [cf._INDEX[c] for c in root.rows[other] if c]
            assert infer.explains(true_row)
            rng = random.Random(checked)
            for _ in range(3):
                det = root.determinize(seat, rng)
                infer(det, rng)
                assert det.observation(seat) == root.observation(seat)
                cards = [c for zone in det.card_zones().values() for c in zone]
                assert sorted(cards) == sorted(cf._DECK)
                row = [cf._INDEX[c] for c in det.rows[other] if c]
                assert cf._consistent(choices, row, tabs)
            checked += 1

    for seed in range(8):
        heuristic_game(200 + seed, OPEN, check)
    assert checked > 150


def test_belief_draws_every_explaining_row_alike():
    """Late in a deal the rows that explain the plays can be listed: the draws cover them all,
    each about equally often (the posterior of a uniform deal under a deterministic player)."""
    found = None

    def find(root):
        nonlocal found
        if found is None and root.round_in_deal == 4:
            found = root.clone()

    seed = 300
    while found is None:
        heuristic_game(seed, OPEN, find)
        seed += 1
    root, seat = found, 0
    other = seat ^ 1
    choices = cf._deal_choices(root, other)
    tabs = cf.tables("position")
    unknown = [cf._INDEX[c] for c in _unknown(root, seat)]
    explaining = {frozenset(row) for row in combinations(unknown, 2)
                  if cf._consistent(choices, list(row), tabs)}
    infer = cf.belief(root, seat)
    rng = random.Random(7)
    counts = Counter()
    draws = 300 * len(explaining)
    for _ in range(draws):
        det = root.determinize(seat, rng)
        infer(det, rng)
        counts[frozenset(cf._INDEX[c] for c in det.rows[other] if c)] += 1
    # Draws that found no explaining row within the tries keep the plain determinization.
    drawn = sum(counts[row] for row in explaining)
    assert drawn > 0.95 * draws
    assert set(counts) >= explaining
    expected = drawn / len(explaining)
    assert all(abs(counts[row] - expected) < 5 * expected ** 0.5 + 3 for row in explaining)


def test_a_heuristic_seat_is_identified_and_a_random_one_is_soon_told_apart():
    verdicts = []
    heuristic_game(400, OPEN, lambda state: verdicts.append(cf.identify(state, 0)))
    assert all(verdicts)
    rng = random.Random(4)
    told = []
    for seed in range(10):
        state = new_game("crossfire", OPEN, 2, 500 + seed)
        while state.to_act():
            state.apply({s: rng.choice(state.legal_actions(s)) for s in (0, 1)})
            if state.to_act() and state.deal_index == 3:
                told.append(not cf.identify(state, 0))
    # By the third deal two whole random rows have been replayed against the rule.
    assert sum(told) > 0.9 * len(told)


def test_without_open_rows_nothing_is_modelled():
    state = new_game("crossfire", {}, 2, 1)
    assert not cf.identify(state, 0)


def test_the_search_models_a_heuristic_seat_and_searches_a_random_one_by_statistics():
    profile = profile_for("crossfire")
    heuristic_root = new_game("crossfire", OPEN, 2, 600)
    random_root = new_game("crossfire", OPEN, 2, 600)
    rng = random.Random(1)
    for _ in range(12):
        heuristic_root.apply({s: crossfire_bot.choose(heuristic_root.observation(s),
                                                      heuristic_root.legal_actions(s))
                              for s in (0, 1)})
        random_root.apply({0: crossfire_bot.choose(random_root.observation(0),
                                                   random_root.legal_actions(0)),
                           1: rng.choice(random_root.legal_actions(1))})
    modelled = _Scorer(heuristic_root, profile, 0)
    assert modelled.model is cf.model_pick and modelled.infer is not None
    unmodelled = _Scorer(random_root, profile, 0)
    assert unmodelled.model is None and unmodelled.infer is None
    for root in (heuristic_root, random_root):
        picks = [ISMCTS(iterations=150, seed=3).search(root, 0, random.Random(9))
                 for _ in range(2)]
        assert picks[0] == picks[1] and picks[0] in root.legal_actions(0)

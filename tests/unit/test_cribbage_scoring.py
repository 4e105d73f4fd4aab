"""Tests of arena.games.cribbage_scoring: the rules' worked examples, brute force, properties."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations, combinations_with_replacement
from math import comb, prod

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cards import JOKER, standard_deck
from arena.games.cribbage_scoring import (
    best_discards,
    ceasefire_score,
    hand_breakdown,
    hand_score,
    heels,
    line_breakdown,
    line_points,
    naive_hand_score,
    pegging_points,
    pip,
    rank_value,
)

DECK = standard_deck()
RANKS = "A23456789TJQK"


def deals(n: int) -> st.SearchStrategy[list[str]]:
    """n distinct cards of the 52-card deck."""
    return st.lists(st.sampled_from(DECK), min_size=n, max_size=n, unique=True)


def cards(text: str) -> list[str]:
    """'5H 5S JK' -> ['5H', '5S', 'JK']."""
    return text.split()


def line_of(ranks: str) -> list[str]:
    """Distinct cards for a rank string such as '566-7' or '5*67' ('*' = joker, '-' ignored).

    Repeated ranks get successive suits so every card is unique.
    """
    used: Counter[str] = Counter()
    out = []
    for r in ranks.replace("-", ""):
        if r == "*":
            out.append(JOKER)
            continue
        out.append(r + "SHDC"[used[r]])
        used[r] += 1
    return out


# --- independent brute-force reference (parses the card strings itself) -------------------------


def _ref_rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def _ref_pip(card: str) -> int:
    return min(_ref_rank(card), 10)


def ref_parts(hand: list[str], starter: str, crib: bool = False) -> dict[str, int]:
    """Show value by counting subsets, straight from the rule text of cribbage_scoring.md §2."""
    five = [*hand, starter]
    fifteens = 2 * sum(
        1 for k in range(2, 6) for sub in combinations(five, k) if sum(map(_ref_pip, sub)) == 15
    )
    pairs = 2 * sum(1 for x, y in combinations(five, 2) if x[0] == y[0])
    runs = 0
    for length in (5, 4, 3):
        found = 0
        for sub in combinations(five, length):
            ranks = sorted(map(_ref_rank, sub))
            if ranks == list(range(ranks[0], ranks[0] + length)):
                found += 1
        if found:
            runs = length * found
            break
    flush = 0
    if len({c[1] for c in hand}) == 1:
        flush = 5 if starter[1] == hand[0][1] else (0 if crib else 4)
    nobs = sum(1 for c in hand if c[0] == "J" and c[1] == starter[1])
    total = fifteens + pairs + runs + flush + nobs
    return {"fifteens": fifteens, "pairs": pairs, "runs": runs, "flush": flush, "nobs": nobs,
            "total": total}


# --- cards ---------------------------------------------------------------------------------------


def test_pip_and_rank_values() -> None:
    assert [pip(r + "S") for r in RANKS] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10]
    assert [rank_value(r + "D") for r in RANKS] == list(range(1, 14))
    assert pip(JOKER) == 0 and rank_value(JOKER) == 0


@pytest.mark.parametrize("bad", ["10H", "1S", "KX", "", "jk", "Q"])
def test_invalid_card_is_rejected(bad: str) -> None:
    with pytest.raises(ValueError):
        pip(bad)
    with pytest.raises(ValueError):
        rank_value(bad)


def test_heels_only_for_a_jack_common_card() -> None:
    assert [heels("J" + s) for s in "SHDC"] == [2, 2, 2, 2]
    assert heels(JOKER) == 0  # "JK" starts with J but is the joker
    assert heels("QS") == 0 and heels("AS") == 0


# --- show scoring: worked examples of cribbage_scoring.md §2 ------------------------------------

WORKED = [
    # hand, starter, crib, fifteens, pairs, runs, flush, nobs, total
    ("5H 5S 5D JC", "5C", False, 16, 12, 0, 0, 1, 29),
    ("5H 5S 5D 5C", "KH", False, 16, 12, 0, 0, 0, 28),
    ("4C 4D 5S 6H", "6C", False, 8, 4, 12, 0, 0, 24),
    ("7C 7D 8H 8S", "9C", False, 8, 4, 12, 0, 0, 24),
    ("3C 3D 3H 4S", "5C", False, 6, 6, 9, 0, 0, 21),
    ("6D 7C 7H 8S", "2D", False, 8, 2, 6, 0, 0, 16),
    ("3C 4D 5H 5S", "6C", False, 4, 2, 8, 0, 0, 14),
    ("2H 4H 6H 8H", "KC", False, 0, 0, 0, 4, 0, 4),
    ("2H 4H 6H 8H", "KC", True, 0, 0, 0, 0, 0, 0),
    ("2H 4H 6H 8H", "KH", True, 0, 0, 0, 5, 0, 5),
    ("JS 2D 4C 9H", "7S", False, 2, 0, 0, 0, 1, 3),
    ("AC 3D 8S TH", "QC", False, 0, 0, 0, 0, 0, 0),
]


@pytest.mark.parametrize("hand,starter,crib,fifteens,pairs,runs,flush,nobs,total", WORKED)
def test_worked_hand_examples(
    hand, starter, crib, fifteens, pairs, runs, flush, nobs, total
) -> None:
    expected = {"fifteens": fifteens, "pairs": pairs, "runs": runs, "flush": flush, "nobs": nobs,
                "total": total}
    assert hand_breakdown(cards(hand), starter, crib) == expected
    assert hand_score(cards(hand), starter, crib) == total
    assert naive_hand_score(cards(hand), starter, crib) == total
    assert ref_parts(cards(hand), starter, crib) == expected


def test_hand_flush_with_matching_starter_is_five() -> None:
    assert hand_breakdown(cards("2H 4H 6H 8H"), "KH")["flush"] == 5
    assert hand_score(cards("2H 4H 6H 8H"), "KH") == 5
    # Starter's suit alone never makes a flush: three hand hearts + heart starter.
    assert hand_breakdown(cards("2H 4H 6H 8C"), "KH")["flush"] == 0


def test_nobs_needs_the_jack_in_hand_not_the_starter() -> None:
    assert hand_breakdown(cards("JH 2C 4S 9D"), "KH")["nobs"] == 1
    assert hand_breakdown(cards("JC 2C 4S 9D"), "KH")["nobs"] == 0
    assert hand_breakdown(cards("KH 2C 4S 9D"), "JH")["nobs"] == 0


# Named patterns of §2: (ranks in the pattern, runs, pairs); fillers keep the hand at 5 cards.
PATTERNS = [
    ("456", 3, 0),
    ("4556", 6, 2),
    ("34556", 8, 2),
    ("33345", 9, 6),
    ("44566", 12, 4),
]


@pytest.mark.parametrize("pattern,runs,pairs", PATTERNS)
def test_named_patterns_in_a_hand(pattern: str, runs: int, pairs: int) -> None:
    five = line_of(pattern + "9K"[: 5 - len(pattern)])
    parts = hand_breakdown(five[:4], five[4])
    assert (parts["runs"], parts["pairs"]) == (runs, pairs)


@pytest.mark.parametrize("pattern,runs,pairs", PATTERNS)
def test_named_patterns_on_the_line_in_any_order(pattern: str, runs: int, pairs: int) -> None:
    rng = random.Random(pattern)
    base = line_of(pattern)
    for _ in range(20):
        order = rng.sample(base, len(base))
        parts = line_breakdown(order)
        assert (parts["runs"], parts["pairs"], parts["group_cards"]) == (runs, pairs, len(base))


def test_hand_score_rejects_jokers_and_wrong_sizes() -> None:
    with pytest.raises(ValueError):
        hand_score(cards("5H 5S 5D JK"), "5C")
    with pytest.raises(ValueError):
        hand_score(cards("5H 5S 5D JC"), JOKER)
    with pytest.raises(ValueError):
        hand_score(cards("5H 5S 5D"), "5C")
    with pytest.raises(ValueError):
        hand_breakdown(cards("5H 5S 5D JC 2C"), "5C")
    with pytest.raises(ValueError):
        best_discards(cards("5H 5S 5D JC"), "5C")
    with pytest.raises(ValueError):
        best_discards(cards("5H 5S 5D JC JK"), "5C")


# --- rank-multiset shortcut against subset counting, over every five-card rank multiset ---------


def _all_rank_multisets() -> list[tuple[int, ...]]:
    return [
        ms
        for ms in combinations_with_replacement(range(1, 14), 5)
        if max(Counter(ms).values()) <= 4
    ]


def _cards_for(ranks: tuple[int, ...]) -> list[str]:
    """Real cards with these ranks, suits chosen so that the first four are never one suit."""
    used: Counter[int] = Counter()
    out = []
    for r in ranks:
        out.append(RANKS[r - 1] + "SHDC"[used[r]])
        used[r] += 1
    return out


def test_run_multiplicity_shortcut_matches_subset_counting_on_all_multisets() -> None:
    multisets = _all_rank_multisets()
    assert len(multisets) == 6175
    for ranks in multisets:
        counts = Counter(ranks)
        brute_runs = 0
        for length in (5, 4, 3):
            found = sum(
                1 for sub in combinations(ranks, length)
                if sorted(sub) == list(range(min(sub), min(sub) + length))
            )
            if found:
                brute_runs = length * found
                break
        # The formula of §2 on maximal blocks of consecutive present ranks.
        formula = 0
        r = 1
        while r <= 13:
            if counts[r]:
                start = r
                while r <= 13 and counts[r]:
                    r += 1
                if r - start >= 3:
                    formula += (r - start) * prod(counts[x] for x in range(start, r))
            r += 1
        five = _cards_for(ranks)
        parts = hand_breakdown(five[:4], five[4])
        ref = ref_parts(five[:4], five[4])
        assert brute_runs == formula == parts["runs"], ranks
        assert (parts["fifteens"], parts["pairs"]) == (ref["fifteens"], ref["pairs"]), ranks
        assert hand_score(five[:4], five[4]) == parts["total"] == ref["total"], ranks


def test_hand_score_matches_brute_force_on_random_hands() -> None:
    rng = random.Random(20240601)
    # A thin deck (two suits, all jacks) makes flushes and nobs common enough to be exercised.
    thin = [c for c in DECK if c[1] in "HS" or c[0] == "J"]
    for i in range(3000):
        five = rng.sample(DECK if i % 2 else thin, 5)
        crib = i % 3 == 0
        expected = ref_parts(five[:4], five[4], crib)
        assert hand_score(five[:4], five[4], crib) == expected["total"], five
        assert hand_breakdown(five[:4], five[4], crib) == expected, five
        assert naive_hand_score(five[:4], five[4], crib) == expected["total"], five


# --- best four of five ---------------------------------------------------------------------------


def test_best_discards_spec_example_29_discarding_the_king() -> None:
    assert best_discards(cards("JS 5H 5C 5D KD"), "5S") == (29, [4])


def test_best_discards_reports_every_tied_discard() -> None:
    # Throwing K or Q keeps run A-2-3-4 (4) + two fifteens (4) = 8; throwing the 4 leaves A-2-3 (3)
    # + K+2+3, Q+2+3 = 7; throwing the 2 or the 3 leaves only K+A+4, Q+A+4 = 4.
    five = cards("2C 3D 4H KS QD")
    assert [hand_score(five[:i] + five[i + 1:], "AH") for i in range(5)] == [4, 4, 7, 8, 8]
    assert best_discards(five, "AH") == (8, [3, 4])


def test_best_discards_flush_and_nobs_judged_on_kept_cards() -> None:
    # Keeping the four hearts: 4-flush (4). Keeping the club jack with a club common: nobs only (1).
    five = cards("2H 4H 6H 8H JC")
    assert [hand_score(five[:i] + five[i + 1:], "KC") for i in range(5)] == [1, 1, 1, 1, 4]
    assert best_discards(five, "KC") == (4, [4])
    # With a heart common the kept hearts make a 5-flush.
    assert best_discards(five, "KH") == (5, [4])
    # All five of one suit: every discard keeps a flush, 5 points with a matching common card.
    five = cards("2D 4D 6D 8D QD")
    assert all(hand_breakdown(five[:i] + five[i + 1:], "KD")["flush"] == 5 for i in range(5))
    assert best_discards(five, "KD") == (5, [0, 1, 2, 3, 4])
    assert best_discards(five, "KS") == (4, [0, 1, 2, 3, 4])


@settings(max_examples=300, deadline=None)
@given(deals(6), st.permutations(range(5)))
def test_best_discards_is_max_over_kept_fours_and_follows_permutation(deal, perm) -> None:
    five, common = deal[:5], deal[5]
    scores = [hand_score(five[:i] + five[i + 1:], common) for i in range(5)]
    value, idx = best_discards(five, common)
    assert value == max(scores)
    assert idx == [i for i in range(5) if scores[i] == value]
    shuffled = [five[p] for p in perm]
    value2, idx2 = best_discards(shuffled, common)
    assert value2 == value
    assert sorted(perm[i] for i in idx2) == idx


# --- property tests of the show ------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(deals(5), st.permutations(range(4)), st.booleans())
def test_hand_score_is_invariant_under_permutation_of_the_hand(five, perm, crib) -> None:
    hand, starter = five[:4], five[4]
    value = hand_score(hand, starter, crib)
    assert hand_score([hand[p] for p in perm], starter, crib) == value
    assert value == ref_parts(hand, starter, crib)["total"]
    # A crib never scores more than the same cards as a hand (only the 4-flush differs).
    assert hand_score(hand, starter, True) <= hand_score(hand, starter, False)


# --- cease-fire ----------------------------------------------------------------------------------


def test_ceasefire_examples() -> None:
    assert ceasefire_score(cards("5H 5S 5D 5C KH")) == 28
    # No nobs without a starter: the 29 hand is worth 28 in a cease-fire.
    assert ceasefire_score(cards("5H 5S 5D JC 5C")) == 28
    assert ceasefire_score(cards("2H 4H 6H 8H TH")) == 5
    assert ceasefire_score(cards("2H 4H 6H 8H TH"), "four_or_five") == 5
    assert ceasefire_score(cards("2H 4H 6H 8H KC")) == 0
    assert ceasefire_score(cards("2H 4H 6H 8H KC"), "four_or_five") == 4
    # Three of a suit is never a flush.
    assert ceasefire_score(cards("2H 4H 6H 8C KC"), "four_or_five") == 0
    with pytest.raises(ValueError):
        ceasefire_score(cards("2H 4H 6H 8H KC"), "four")
    with pytest.raises(ValueError):
        ceasefire_score(cards("2H 4H 6H 8H JK"))
    with pytest.raises(ValueError):
        ceasefire_score(cards("2H 4H 6H 8H"))


@settings(max_examples=300, deadline=None)
@given(deals(5), st.permutations(range(5)))
def test_ceasefire_is_the_crib_value_without_nobs(five, perm) -> None:
    value = ceasefire_score(five)
    parts = hand_breakdown(five[:4], five[4], crib=True)
    assert value == parts["total"] - parts["nobs"]
    assert ceasefire_score([five[p] for p in perm]) == value
    extra = ceasefire_score(five, "four_or_five") - value
    most = max(Counter(c[1] for c in five).values())
    assert extra == (4 if most == 4 else 0)


def test_ceasefire_distribution_exact() -> None:
    """cribbage_scoring.md §4.4: mean 4.66, maximum 28, 29 impossible, zero in 8.63 %."""
    hist: Counter[int] = Counter()
    for ranks in _all_rank_multisets():
        counts = Counter(ranks)
        ways = prod(comb(4, m) for m in counts.values())
        flushes = 4 if len(counts) == 5 else 0
        five = _cards_for(ranks)
        if len(counts) == 5:
            # Four spades and a heart: no five-card flush.
            plain = [RANKS[r - 1] + s for r, s in zip(ranks, "SSSSH")]
            hist[ceasefire_score([RANKS[r - 1] + "S" for r in ranks])] += flushes
        else:
            plain = five
        hist[ceasefire_score(plain)] += ways - flushes
    total = sum(hist.values())
    assert total == comb(52, 5)
    mean = sum(v * n for v, n in hist.items()) / total
    assert round(mean, 2) == 4.66
    assert round(100 * hist[0] / total, 2) == 8.63
    assert max(hist) == 28 and hist[29] == 0


# --- statistics of cribbage_scoring.md §4 (sampled: the exact sets are 10^8 deals) ---------------


def test_random_hand_statistics_sampled() -> None:
    """§4.2: a random 4-card hand + starter averages 4.77 and scores 0 in 7.76 %."""
    rng = random.Random(7)
    n = 150_000
    total = zeros = 0
    for _ in range(n):
        five = rng.sample(DECK, 5)
        v = hand_score(five[:4], five[4])
        total += v
        zeros += v == 0
    assert abs(total / n - 4.77) < 0.04
    assert abs(zeros / n - 0.0776) < 0.004


def test_best_four_of_five_statistics_sampled() -> None:
    """§4.1-2: best 4 of 5: mean 7.04, zero 1.37 %, ties 52.46 %; with the joker 6.24, 12.5 %."""
    rng = random.Random(11)
    n = 80_000
    total = zeros = ties = 0
    for _ in range(n):
        deal = rng.sample(DECK, 6)
        value, idx = best_discards(deal[:5], deal[5])
        total += value
        zeros += value == 0
        ties += len(idx) >= 2
    assert abs(total / n - 7.04) < 0.07
    assert abs(zeros / n - 0.0137) < 0.0025
    assert abs(ties / n - 0.5246) < 0.01

    deck53 = [*DECK, JOKER]
    total = zeros = 0
    for _ in range(n):
        deal = rng.sample(deck53, 6)
        value = 0 if JOKER in deal else best_discards(deal[:5], deal[5])[0]
        total += value
        zeros += value == 0
    assert abs(total / n - 6.24) < 0.07
    assert abs(zeros / n - 0.125) < 0.006


# --- standard pegging ----------------------------------------------------------------------------


def test_worked_pegging_sequence() -> None:
    laid = line_of("465556")
    expected = [(4, 0), (10, 0), (15, 5), (20, 2), (25, 6), (31, 2)]
    for i, (count, points) in enumerate(expected, start=1):
        assert pegging_points(laid[:i]) == points, laid[:i]
        parts = line_breakdown(laid[:i], rule="standard_pegging")
        assert (parts["count"], parts["total"]) == (count, points)


def test_pegging_run_on_the_end_and_broken_runs() -> None:
    assert pegging_points(line_of("23423")) == 3
    assert pegging_points(line_of("4665")) == 0  # a repeated rank breaks the run
    assert pegging_points(line_of("5556")) == 0  # count 21; 5-5-6 is no run, 6 pairs nothing
    assert pegging_points(line_of("A2345")) == 5 + 2  # run of five, count 15
    assert pegging_points(line_of("KQJ")) == 3  # face cards run by rank
    assert pegging_points(line_of("QKA")) == 0  # no K-A wrap
    assert pegging_points(line_of("T5")) == 2
    assert pegging_points(line_of("5555")) == 12
    assert pegging_points(line_of("K783")) == 0  # go example: no points for the card itself
    assert pegging_points(line_of("K7832")) == 0
    assert pegging_points([]) == 0


# --- BFC line scoring (§6.5 and §16) ------------------------------------------------------------


@pytest.mark.parametrize(
    "ranks,bfc,standard",
    [
        ("TK9-2", 2, 2),       # 31 for 2
        ("566-7", 8, 0),       # double run
        ("675-6", 8, 3),       # whole tail 6-7-5-6 is a double run; standard: 7-5-6
        ("5*6-7", 0, 0),       # the joker blocks; 5+0+6+7 = 18
        ("5666-7", 15, 0),     # triple run (count 30)
        ("5566-7", 16, 0),     # double-double run (count 29)
        ("A223-4", 10, 3),     # double run of four (count 12)
        ("5667-8", 10, 3),     # the brief's double run of four, over 31 but still a group
        ("46-5", 5, 5),        # run 3 + fifteen
        ("5", 0, 0),           # a fresh line after an overflow scores nothing by itself
    ],
)
def test_bfc_line_examples(ranks: str, bfc: int, standard: int) -> None:
    line = line_of(ranks)
    assert line_points(line) == bfc
    assert line_points(line, rule="standard_pegging") == standard


def test_line_group_parts() -> None:
    parts = line_breakdown(line_of("46-5"))
    assert parts == {"count": 15, "fifteen": 2, "thirty_one": 0, "group_cards": 3, "pairs": 0,
                     "runs": 3, "total": 5}
    parts = line_breakdown(line_of("TK9-2"))
    assert (parts["thirty_one"], parts["fifteen"], parts["group_cards"]) == (2, 0, 0)
    assert parts["total"] == 2
    assert line_breakdown([])["total"] == 0 and line_points([]) == 0


def test_line_group_cap() -> None:
    six = line_of("AA2233")  # count 12
    assert line_points(six) == 16  # capped: tail A-2-2-3-3 = 3*4 + 4
    assert line_points(six, max_group_cards=None) == 30  # uncapped: 3*8 + 6
    triple = line_of("56667")
    assert line_points(triple, max_group_cards=4) == 0  # 5 cards with a repeat; no shorter group
    assert line_points(triple, max_group_cards=5) == 15
    # An all-distinct run is never capped (count 21).
    assert line_points(line_of("A23456")) == 6
    assert line_points(line_of("A23456"), max_group_cards=3) == 6


def test_line_pair_group_is_not_extended_by_other_ranks() -> None:
    assert line_points(line_of("655")) == 2  # 6-5-5: ranks {5,6} are no run group
    assert line_points(line_of("7555")) == 6
    assert line_points(line_of("6*66")) == 2  # the joker before the pair blocks the older 6


def test_joker_modes() -> None:
    # 5 + K + joker = 15: inert scores nothing; zero_value_scored re-scores the fifteen.
    line = [*line_of("5K"), JOKER]
    assert line_points(line) == 0
    assert line_points(line, joker="zero_value_scored") == 2
    line = [*line_of("TK92"), JOKER]  # 31 then the joker
    assert line_points(line) == 0
    assert line_points(line, joker="zero_value_scored") == 2
    # The joker never joins a pair or run group, in either mode.
    line = [*line_of("55"), JOKER]
    assert line_points(line, joker="zero_value_scored") == 0
    line = [*line_of("6"), JOKER, *line_of("57")]
    assert line_points(line, joker="zero_value_scored") == 0
    assert line_points(line, rule="standard_pegging", joker="zero_value_scored") == 0
    # 5-JK-6-7 = 18 in both modes.
    assert line_points(line_of("5*67"), joker="zero_value_scored") == 0
    assert line_points([JOKER]) == 0
    assert line_points([JOKER], joker="zero_value_scored") == 0


def test_line_argument_validation() -> None:
    line = line_of("566")
    with pytest.raises(ValueError):
        line_points(line, rule="hand")
    with pytest.raises(ValueError):
        line_points(line, joker="wild")
    with pytest.raises(ValueError):
        line_points(line, max_group_cards=1)
    with pytest.raises(ValueError):
        line_points(["5H", "XX"])


# --- line property tests -------------------------------------------------------------------------

real_lines = st.lists(st.sampled_from(DECK), min_size=1, max_size=9, unique=True)


@settings(max_examples=300, deadline=None)
@given(real_lines)
def test_line_standard_rule_equals_pegging_points(line) -> None:
    assert line_points(line, rule="standard_pegging") == pegging_points(line)


@settings(max_examples=300, deadline=None)
@given(real_lines, st.sampled_from([5, 4, None]))
def test_bfc_groups_never_pay_less_than_standard_pegging(line, cap) -> None:
    bfc = line_points(line, max_group_cards=cap)
    standard = line_points(line, rule="standard_pegging")
    assert bfc >= standard
    if len({c[0] for c in line}) == len(line):
        # With no repeated rank the tail-group rule is exactly the run-on-the-end rule.
        assert bfc == standard


@settings(max_examples=200, deadline=None)
@given(real_lines, st.sampled_from(RANKS), st.integers(2, 4), st.booleans())
def test_pure_pair_group_scores_2_6_12(prefix, rank, k, zero_value) -> None:
    group = [rank + s for s in "SHDC"[:k]]
    prefix = [c for c in prefix if c not in group]
    line = [*prefix, JOKER, *group]
    mode = "zero_value_scored" if zero_value else "inert"
    parts = line_breakdown(line, joker=mode)
    assert (parts["pairs"], parts["runs"], parts["group_cards"]) == (k * (k - 1), 0, k)
    assert parts["total"] == k * (k - 1) + parts["fifteen"] + parts["thirty_one"]


# Multiplicities of the consecutive ranks of a run group of at most 5 cards (block of 3 to 5 ranks).
RUN_SHAPES = [
    shape
    for length in (3, 4, 5)
    for shape in combinations_with_replacement(range(1, 4), length)
    if sum(shape) <= 5
]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(RUN_SHAPES), st.integers(1, 11), st.randoms(use_true_random=False))
def test_run_group_in_any_order_scores_like_a_hand_pattern(shape, low, rnd) -> None:
    mults = list(shape)
    rnd.shuffle(mults)
    low = min(low, 14 - len(mults))
    group = [RANKS[low - 1 + i] + s for i, m in enumerate(mults) for s in "SHDC"[:m]]
    rnd.shuffle(group)
    parts = line_breakdown([JOKER, *group])
    assert parts["runs"] == len(mults) * prod(mults)
    assert parts["pairs"] == sum(m * (m - 1) for m in mults)
    assert parts["group_cards"] == len(group)
    if len(group) == 5:
        # Same pairs and runs as the five cards shown as a hand.
        hand = hand_breakdown(group[:4], group[4])
        assert (hand["pairs"], hand["runs"]) == (parts["pairs"], parts["runs"])


@settings(max_examples=200, deadline=None)
@given(real_lines, real_lines, st.sampled_from(["bfc_groups", "standard_pegging"]))
def test_joker_blocks_everything_before_it(before, tail, rule) -> None:
    before = [c for c in before if c not in tail]
    full = line_breakdown([*before, JOKER, *tail], rule=rule)
    alone = line_breakdown(tail, rule=rule)
    assert (full["pairs"], full["runs"], full["group_cards"]) == (
        alone["pairs"], alone["runs"], alone["group_cards"])

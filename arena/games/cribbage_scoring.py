"""Cribbage scoring for Battlefield Cribbage: show values, cease-fire hands and line pegging.

Rules: standard cribbage show scoring, and Battlefield Cribbage's line scoring, heels and cease-fire
hands as seeds/battlefield_cribbage.md describes them. Cards are `arena.cards` codes ("AS".."KC",
"TD" for ten); the joker "JK" has 0 pips and no rank or suit.

Every function is pure. `hand_score` and `best_discards` are on the hot path of search bots: the
part of a hand's value that depends only on its five ranks (fifteens, pairs, runs) is cached in a
table keyed by the rank multiset (6,175 possible keys); flush and nobs are added from the suits.
Cards of one hand are assumed distinct; that is not checked on the hot path.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from arena.cards import JOKER, RANK_VALUE, RANKS, SUITS

__all__ = [
    "CEASEFIRE_FLUSH",
    "LINE_JOKER_MODES",
    "LINE_RULES",
    "best_discards",
    "ceasefire_score",
    "hand_breakdown",
    "hand_score",
    "heels",
    "line_breakdown",
    "line_points",
    "naive_hand_score",
    "pegging_points",
    "pip",
    "rank_value",
]

LINE_RULES = ("bfc_groups", "standard_pegging")
LINE_JOKER_MODES = ("inert", "zero_value_scored")
CEASEFIRE_FLUSH = ("five_only", "four_or_five")

_JACK = RANK_VALUE["J"]
# A rank multiset is keyed by the sum of one 3-bit counter per rank: order-free, and no sort needed.
_RANK_BITS = 3

_PIP: dict[str, int] = {JOKER: 0}
_RANK: dict[str, int] = {JOKER: 0}
# card -> (rank-multiset weight, suit index, suit index if the card is a jack else -1)
_INFO: dict[str, tuple[int, int, int]] = {}
for _s_index, _s in enumerate(SUITS):
    for _r in RANKS:
        _card = _r + _s
        _value = RANK_VALUE[_r]
        _PIP[_card] = min(_value, 10)
        _RANK[_card] = _value
        _INFO[_card] = (
            1 << (_RANK_BITS * (_value - 1)),
            _s_index,
            _s_index if _value == _JACK else -1,
        )


def pip(card: str) -> int:
    """Pip value for fifteens and the line total: A=1, 2-9 face value, T/J/Q/K=10, joker 0."""
    try:
        return _PIP[card]
    except KeyError:
        raise ValueError(f"not a card: {card!r}") from None


def rank_value(card: str) -> int:
    """Rank for pairs and runs: A=1 ... K=13; the joker has no rank (0)."""
    try:
        return _RANK[card]
    except KeyError:
        raise ValueError(f"not a card: {card!r}") from None


def heels(common: str) -> int:
    """His heels: 2 (to the dealer) if the common card is a jack, else 0; the joker is no jack."""
    return 2 if rank_value(common) == _JACK else 0


# ---------------------------------------------------------------------------------------------
# Rank-multiset part of a hand: fifteens, pairs, runs
# ---------------------------------------------------------------------------------------------


def _counts_from_key(key: int) -> list[int]:
    """Rank multiplicities (index 1..13) of a rank-multiset key."""
    mask = (1 << _RANK_BITS) - 1
    return [0] + [(key >> (_RANK_BITS * i)) & mask for i in range(13)]


def rank_parts(counts: Sequence[int]) -> tuple[int, int, int]:
    """(fifteens, pairs, runs) points of cards with rank multiplicities counts[1..13]."""
    ways = [1] + [0] * 15  # ways[t] = number of card subsets with pip total t
    for rank in range(1, 14):
        p = min(rank, 10)
        for _ in range(counts[rank]):
            for t in range(15, p - 1, -1):
                ways[t] += ways[t - p]
    pairs = sum(m * (m - 1) for m in counts)
    runs = 0
    length, product = 0, 1
    # A sentinel zero after K closes the last block.
    for m in list(counts[1:]) + [0]:
        if m:
            length += 1
            product *= m
        else:
            if length >= 3:
                runs += length * product
            length, product = 0, 1
    return 2 * ways[15], pairs, runs


# Filled on demand (a full build costs ~0.1 s at import): at most 6,175 keys for real hands.
_RANK_TABLE: dict[int, int] = {}


def _rank_points(key: int) -> int:
    """Fifteens+pairs+runs of a rank-multiset key, computed once per key and then cached."""
    pts = _RANK_TABLE.get(key)
    if pts is None:
        pts = _RANK_TABLE[key] = sum(rank_parts(_counts_from_key(key)))
    return pts


def _bad_cards(what: str, cards: object) -> ValueError:
    """The error for a malformed hand: wrong size, an unknown card or a joker."""
    return ValueError(f"{what}: expected valid non-joker cards, got {cards!r}")


# ---------------------------------------------------------------------------------------------
# Show scoring
# ---------------------------------------------------------------------------------------------


def hand_score(hand: Sequence[str], starter: str, crib: bool = False) -> int:
    """Show value of 4 cards + starter: fifteens, pairs, runs, flush (crib: 5-card only), nobs."""
    try:
        a, b, c, d = hand
        wa, sa, ja = _INFO[a]
        wb, sb, jb = _INFO[b]
        wc, sc, jc = _INFO[c]
        wd, sd, jd = _INFO[d]
        ws, ss, _ = _INFO[starter]
    except (KeyError, ValueError, TypeError):
        raise _bad_cards("hand_score", (hand, starter)) from None
    key = wa + wb + wc + wd + ws
    try:
        pts = _RANK_TABLE[key]
    except KeyError:
        pts = _rank_points(key)
    if sa == sb == sc == sd:
        if ss == sa:
            pts += 5
        elif not crib:
            pts += 4
    if ja == ss or jb == ss or jc == ss or jd == ss:
        pts += 1
    return pts


def hand_breakdown(hand: Sequence[str], starter: str, crib: bool = False) -> dict[str, int]:
    """hand_score split into fifteens, pairs, runs, flush, nobs and total (display, tests)."""
    if len(hand) != 4 or any(card not in _INFO for card in (*hand, starter)):
        raise _bad_cards("hand_breakdown", (hand, starter))
    counts = [0] * 14
    for card in (*hand, starter):
        counts[_RANK[card]] += 1
    fifteens, pairs, runs = rank_parts(counts)
    suits = {card[1] for card in hand}
    flush = 0
    if len(suits) == 1:
        if starter[1] in suits:
            flush = 5
        elif not crib:
            flush = 4
    nobs = sum(1 for card in hand if card[0] == "J" and card[1] == starter[1])
    return {
        "fifteens": fifteens,
        "pairs": pairs,
        "runs": runs,
        "flush": flush,
        "nobs": nobs,
        "total": fifteens + pairs + runs + flush + nobs,
    }


def best_discards(five: Sequence[str], common: str) -> tuple[int, list[int]]:
    """Max hand score keeping 4 of `five` with `common`; ascending discard indices reaching it."""
    try:
        c0, c1, c2, c3, c4 = five
        w0, s0, j0 = _INFO[c0]
        w1, s1, j1 = _INFO[c1]
        w2, s2, j2 = _INFO[c2]
        w3, s3, j3 = _INFO[c3]
        w4, s4, j4 = _INFO[c4]
        total, ss, _ = _INFO[common]
    except (KeyError, ValueError, TypeError):
        raise _bad_cards("best_discards", (five, common)) from None
    total += w0 + w1 + w2 + w3 + w4
    table = _RANK_TABLE
    try:
        scores = [table[total - w0], table[total - w1], table[total - w2], table[total - w3],
                  table[total - w4]]
    except KeyError:
        scores = [_rank_points(total - w) for w in (w0, w1, w2, w3, w4)]
    # If four of the five share a suit, it is s0's when s0 == s1, otherwise s2's (s0 or s1 is odd).
    major = s0 if s0 == s1 else s2
    if (s0 == major) + (s1 == major) + (s2 == major) + (s3 == major) + (s4 == major) >= 4:
        suits = (s0, s1, s2, s3, s4)
        bonus = 5 if ss == major else 4
        if suits.count(major) == 5:
            scores = [x + bonus for x in scores]
        else:
            odd = 0
            while suits[odd] == major:
                odd += 1
            scores[odd] += bonus
    if ss == j0 or ss == j1 or ss == j2 or ss == j3 or ss == j4:
        # Nobs counts for every discard except the jack itself.
        scores = [x + 1 for x in scores]
        scores[(j0, j1, j2, j3, j4).index(ss)] -= 1
    best = max(scores)
    if scores.count(best) == 1:
        return best, [scores.index(best)]
    return best, [i for i in range(5) if scores[i] == best]


def ceasefire_score(five: Sequence[str], flush: str = "five_only") -> int:
    """Cease-fire value of five cards, no starter: 15s, pairs, runs, flush; no nobs (BFC §10)."""
    if flush not in CEASEFIRE_FLUSH:
        raise ValueError(f"ceasefire flush must be one of {CEASEFIRE_FLUSH}, got {flush!r}")
    try:
        infos = [_INFO[card] for card in five]
    except (KeyError, TypeError):
        raise _bad_cards("ceasefire_score", five) from None
    if len(infos) != 5:
        raise _bad_cards("ceasefire_score", five)
    pts = _rank_points(sum(info[0] for info in infos))
    suit_counts = [0, 0, 0, 0]
    for info in infos:
        suit_counts[info[1]] += 1
    most = max(suit_counts)
    if most == 5:
        pts += 5
    elif most == 4 and flush == "four_or_five":
        pts += 4
    return pts


def naive_hand_score(hand: Sequence[str], starter: str, crib: bool = False) -> int:
    """Slow brute-force reference for hand_score (subset counting), for tests and benchmarks."""
    cards = [*hand, starter]
    pts = 0
    for size in range(2, 6):
        for subset in combinations(cards, size):
            if sum(_PIP[card] for card in subset) == 15:
                pts += 2
    for x, y in combinations(cards, 2):
        if _RANK[x] == _RANK[y]:
            pts += 2
    for size in (5, 4, 3):
        runs = 0
        for subset in combinations(cards, size):
            ranks = sorted(_RANK[card] for card in subset)
            if all(ranks[i + 1] == ranks[i] + 1 for i in range(size - 1)):
                runs += 1
        if runs:
            pts += size * runs
            break
    if len({card[1] for card in hand}) == 1:
        if starter[1] == hand[0][1]:
            pts += 5
        elif not crib:
            pts += 4
    pts += sum(1 for card in hand if _RANK[card] == _JACK and card[1] == starter[1])
    return pts


# ---------------------------------------------------------------------------------------------
# Pegging and the BFC line
# ---------------------------------------------------------------------------------------------


def _line_ranks(cards: Sequence[str]) -> tuple[list[int], int]:
    """Ranks (joker 0) and pip total of a card sequence."""
    try:
        ranks = [_RANK[card] for card in cards]
        total = sum(_PIP[card] for card in cards)
    except (KeyError, TypeError):
        raise ValueError(f"expected a sequence of cards, got {cards!r}") from None
    return ranks, total


def _pegging_groups(ranks: Sequence[int]) -> tuple[int, int]:
    """(pair chain length, run length) on the end for standard pegging; 0 where there is none."""
    n = len(ranks)
    if n == 0 or ranks[-1] == 0:
        return 0, 0
    last = ranks[-1]
    same = 1
    while same < n and ranks[n - 1 - same] == last:
        same += 1
    seen: set[int] = set()
    low, high, run = 14, 0, 0
    for k in range(1, n + 1):
        r = ranks[n - k]
        # A joker (no rank) or a repeated rank ends every longer run on the end.
        if r == 0 or r in seen:
            break
        seen.add(r)
        low, high = min(low, r), max(high, r)
        if k >= 3 and high - low == k - 1:
            run = k
    return (same if same >= 2 else 0), run


def _bfc_group(ranks: Sequence[int], max_group_cards: int | None) -> tuple[int, int, int]:
    """(tail length, pairs, runs) of the longest tail that is a BFC pair or run group (§6.5)."""
    n = len(ranks)
    counts: dict[int, int] = {}
    low, high = 14, 0
    repeated = False
    best = (0, 0, 0)
    for k in range(1, n + 1):
        r = ranks[n - k]
        if r == 0:
            break
        m = counts.get(r, 0) + 1
        counts[r] = m
        repeated = repeated or m > 1
        low, high = min(low, r), max(high, r)
        if k < 2:
            continue
        distinct = len(counts)
        if distinct == 1:
            best = (k, k * (k - 1), 0)
            continue
        if repeated and max_group_cards is not None and k > max_group_cards:
            # Two ranks and a repeat already: no longer tail can be a pair group or a run group.
            break
        if distinct >= 3 and high - low == distinct - 1:
            product = 1
            pairs = 0
            for mult in counts.values():
                product *= mult
                pairs += mult * (mult - 1)
            best = (k, pairs, distinct * product)
    return best


def _check_line_args(rule: str, max_group_cards: int | None, joker: str) -> None:
    """Raise ValueError for an unknown line rule or joker mode, or a group cap below 2."""
    if rule not in LINE_RULES:
        raise ValueError(f"line rule must be one of {LINE_RULES}, got {rule!r}")
    if joker not in LINE_JOKER_MODES:
        raise ValueError(f"joker mode must be one of {LINE_JOKER_MODES}, got {joker!r}")
    if max_group_cards is not None and (
        isinstance(max_group_cards, bool)
        or not isinstance(max_group_cards, int)
        or max_group_cards < 2
    ):
        raise ValueError(f"max_group_cards must be None or an int >= 2, got {max_group_cards!r}")


def pegging_points(cards: Sequence[str]) -> int:
    """Standard pegging points of the last of `cards` (laid since the last reset).

    15 and 31 score 2, pairs on the end 2/6/12, the longest run on the end its length. A joker, if
    present, counts 0 pips and has no rank, so it breaks pairs and runs.
    """
    ranks, total = _line_ranks(cards)
    same, run = _pegging_groups(ranks)
    return (2 if total == 15 else 0) + (2 if total == 31 else 0) + same * (same - 1) + run


def _line_parts(
    line: Sequence[str], rule: str, max_group_cards: int | None, joker: str
) -> tuple[int, int, int, int, int]:
    """(count, count points, group cards, pairs, runs) of a line after its last placement."""
    _check_line_args(rule, max_group_cards, joker)
    ranks, total = _line_ranks(line)
    if not ranks or (joker == "inert" and ranks[-1] == 0):
        return total, 0, 0, 0, 0
    count_points = (2 if total == 15 else 0) + (2 if total == 31 else 0)
    if rule == "bfc_groups":
        cards, pairs, runs = _bfc_group(ranks, max_group_cards)
        return total, count_points, cards, pairs, runs
    same, run = _pegging_groups(ranks)
    return total, count_points, (same or run), same * (same - 1), run


def line_points(
    line: Sequence[str],
    rule: str = "bfc_groups",
    max_group_cards: int | None = 5,
    joker: str = "inert",
) -> int:
    """BFC points for the placer of the line's last card: 15, 31, pairs/runs by `rule` (§6.5)."""
    _, count_points, _, pairs, runs = _line_parts(line, rule, max_group_cards, joker)
    return count_points + pairs + runs


def line_breakdown(
    line: Sequence[str],
    rule: str = "bfc_groups",
    max_group_cards: int | None = 5,
    joker: str = "inert",
) -> dict[str, int]:
    """line_points split into count, fifteen, thirty_one, group_cards, pairs, runs and total."""
    total, count_points, cards, pairs, runs = _line_parts(line, rule, max_group_cards, joker)
    scored = count_points > 0
    return {
        "count": total,
        "fifteen": 2 if scored and total == 15 else 0,
        "thirty_one": 2 if scored and total == 31 else 0,
        "group_cards": cards,
        "pairs": pairs,
        "runs": runs,
        "total": count_points + pairs + runs,
    }

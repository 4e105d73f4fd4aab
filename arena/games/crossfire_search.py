"""Crossfire (open rows) for ISMCTS: playouts, the heuristic bot's decision on the engine's state,
and what its past choices in a deal say about the cards it still holds.

`bots/crossfire_bot.py` plays, of its face-down cards, the one whose expected round result beside
this neutral (the other seat's card uniform over every card not in its row, not the neutral, not in
the discard pile) most exceeds that card's average over all neutrals. `heuristic_pick` computes the
same choice from a state in a few table lookups per card (integer sums, the same float arithmetic,
so ties break the same way). A seat that plays this way tells something with every card: the cards
it kept scored lower, at that round, than the one it played. `belief` turns that into a re-deal of
each determinization: the other seat's row is drawn only among rows that would have made its
choices of this deal, so the search predicts its next card from what it could really hold. A seat
whose play so far no rule-abiding row explains is not this heuristic; `identify` tells the search
to fall back to plain decoupled UCT against it. Playouts play each seat's best-gaining card (the
same measure, with the whole deck as the pool: one lookup) most of the time. `SEARCH` is the
profile and shipped bot made of these (returned by CrossfireState.search_hooks).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from arena.cards import standard_deck
from arena.games.crossfire import resolve_round
from arena.search.hooks import SearchHooks
from arena.search.playouts import Profile

_DECK = standard_deck(jokers=0)
_INDEX = {card: i for i, card in enumerate(_DECK)}
# The bot's own deck order (suits S H D C, ranks A 2 .. K), which its baseline sums run over: the
# same order gives the same float rounding.
_BOT_DECK = [r + s for s in "SHDC" for r in "A23456789TJQK"]

# CONTRIB[role][n][c][x]: what the other seat's card x adds to the card c's round result beside
# neutral n (+1 c's seat scores, -1 the other), role 1: c is the dealer's card; 0 for repeated cards.
# FULL[role][n][c]: the sum over every x; BASE[role][c]: the bot's baseline (the card's expected
# result against a random neutral and a random other card).
_TABLES: dict[str, tuple] = {}


def tables(tie_rule: str) -> tuple:
    """(CONTRIB, FULL, BASE) for one tie rule, built once (about 0.3 s)."""
    built = _TABLES.get(tie_rule)
    if built is not None:
        return built
    point = {"dealer": 1, "opponent": -1, None: 0}
    size = len(_DECK)
    # value[d][n][o], the dealer's result, over deck indices.
    value = [[[0] * size for _ in range(size)] for _ in range(size)]
    for d, dc in enumerate(_DECK):
        for n, nc in enumerate(_DECK):
            if n == d:
                continue
            row = value[d][n]
            for o, oc in enumerate(_DECK):
                if o != d and o != n:
                    row[o] = point[resolve_round(dc, nc, oc, tie_rule)[2]]
    contrib = [
        [[[-value[x][n][c] for x in range(size)] for c in range(size)] for n in range(size)],
        [[value[c][n] for c in range(size)] for n in range(size)],
    ]
    full = [[[sum(xs) for xs in by_card] for by_card in contrib[role]] for role in (0, 1)]
    base = [[0.0] * size for _ in (0, 1)]
    for role in (0, 1):
        for c in range(size):
            total = 0.0
            for neutral in _BOT_DECK:
                n = _INDEX[neutral]
                if n != c:
                    total += full[role][n][c] / 50
            base[role][c] = total / 51
    built = _TABLES[tie_rule] = (contrib, full, base)
    return built


_GAIN: dict[str, list[list[list[float]]]] = {}


def gain_table(tie_rule: str) -> list[list[list[float]]]:
    """gain[role][card][neutral]: the card's expected round result beside this neutral against a
    uniformly random other card, minus its average over all neutrals (0 when card == neutral)."""
    table = _GAIN.get(tie_rule)
    if table is None:
        _, full, base = tables(tie_rule)
        size = len(_DECK)
        table = _GAIN[tie_rule] = [
            [[0.0 if n == c else full[role][n][c] / 50 - base[role][c] for n in range(size)]
             for c in range(size)]
            for role in (0, 1)
        ]
    return table


def fast_playout(state, rng: random.Random, stop_at_round_end: bool, plies: int | None = None,
                 greedy: float = 0.7) -> None:
    """Crossfire playout: each seat plays the card of its (determinized) row that gains most
    beside the neutral (with probability `greedy`; else a random one), so cards that are good
    anywhere are kept for later as a real player keeps them. Stops after `plies` rounds or, if
    asked, at the end of the deal."""
    gain = gain_table(state.options.tie_rule)
    index = _INDEX
    rand = rng.random
    start = state.deal_index
    left = -1 if plies is None else plies
    while not state.over and left:
        left -= 1
        if stop_at_round_end and state.deal_index != start:
            return
        n = index[state.neutral]
        # A new deal replaces the row and slot lists.
        rows, free = state.rows, state._slots
        picks = []
        for seat in (0, 1):
            slots = free[seat]
            if len(slots) == 1 or rand() >= greedy:
                picks.append(slots[int(rand() * len(slots))])
                continue
            table = gain[1 if state.dealer == seat else 0]
            row = rows[seat]
            picks.append(max(slots, key=lambda k: table[index[row[k]]][n]))
        state._play((picks[0], picks[1]))


def _scores(cards: list[int], n: int, excluded: list[int], role: int, tabs: tuple) -> list[float]:
    """The bot's score of each card of a row (deck indices) beside neutral n; `excluded` are the
    discards, which with the row and the neutral are out of the other seat's pool."""
    contrib, full, base = tabs
    by_card = contrib[role][n]
    pool = len(_DECK) - len(cards) - 1 - len(excluded)
    out = []
    for c in cards:
        xs = by_card[c]
        total = full[role][n][c]
        for x in excluded:
            total -= xs[x]
        for y in cards:
            total -= xs[y]  # xs[c] is 0
        out.append(total / pool - base[role][c])
    return out


def heuristic_pick(state, seat: int, legal: list, rng: random.Random | None = None) -> dict:
    """The slot `bots/crossfire_bot.py` plays from `seat`'s view of `state` (open rows)."""
    if len(legal) == 1 or state.neutral is None:
        return legal[0]
    tabs = tables(state.options.tie_rule)
    row = state.rows[seat]
    cards = [_INDEX[row[a["slot"]]] for a in legal]
    discards = [_INDEX[c] for c in state.discards]
    scores = _scores(cards, _INDEX[state.neutral], discards, 1 if state.dealer == seat else 0, tabs)
    best = 0
    for i in range(1, len(scores)):
        if scores[i] > scores[best]:
            best = i
    return legal[best]


# The running search's root: its discard pile (as deck indices) and reshuffle count, and a memo of
# each (role, neutral, card)'s sum over that pile. Every state a search's model sees descends from
# its root, so its pile starts with the root's: only the cards discarded since need adding up.
_SEARCH: dict = {}


def prepare(root) -> None:
    """Build the tables and start a search's memo (call once per search, before model_pick)."""
    gain_table(root.options.tie_rule)
    _SEARCH.clear()
    _SEARCH.update(tabs=tables(root.options.tie_rule), pile=[_INDEX[c] for c in root.discards],
                   reshuffles=root._reshuffles, memo={})


def model_pick(state, seat: int, legal: list, rng: random.Random | None = None) -> dict:
    """`heuristic_pick` for the states of the running search (`prepare` ran on its root): the
    root's discard sums come from the memo."""
    pile = _SEARCH["pile"]
    discards = state.discards
    if len(legal) == 1 or state.neutral is None:
        return legal[0]
    if state._reshuffles != _SEARCH["reshuffles"] or len(discards) < len(pile):
        return heuristic_pick(state, seat, legal)
    contrib, full, base = _SEARCH["tabs"]
    memo = _SEARCH["memo"]
    role = 1 if state.dealer == seat else 0
    n = _INDEX[state.neutral]
    by_card = contrib[role][n]
    full_n = full[role][n]
    base_r = base[role]
    row = state.rows[seat]
    cards = [_INDEX[row[a["slot"]]] for a in legal]
    extra = [_INDEX[c] for c in discards[len(pile):]]
    pool = len(_DECK) - len(cards) - 1 - len(discards)
    best, best_score = 0, None
    for i, c in enumerate(cards):
        xs = by_card[c]
        key = (role * 52 + n) * 52 + c
        total = memo.get(key)
        if total is None:
            total = memo[key] = full_n[c] - sum([xs[x] for x in pile])
        for x in extra:
            total -= xs[x]
        for y in cards:
            total -= xs[y]
        score = total / pool - base_r[c]
        if best_score is None or score > best_score:
            best, best_score = i, score
    return legal[best]


def _deal_choices(state, other: int) -> list[tuple[int, int, list[int], int]]:
    """The other seat's plays in the current deal: (its card, neutral, discards then, role)."""
    done = state.round_in_deal - 1
    if done <= 0 or state.neutral is None:
        return []
    entries = state.history[-done:]
    role = 1 if state.dealer == other else 0
    discards = [_INDEX[c] for c in state.discards]
    out = []
    for back, entry in enumerate(reversed(entries)):
        card = entry["dealer_card"] if role else entry["opponent_card"]
        # The discard pile grew by the three cards of each later round of the deal.
        before = discards[: len(discards) - 3 * (back + 1)]
        out.append((_INDEX[card], _INDEX[entry["neutral"]], before, role))
    out.reverse()
    return out


def _consistent(choices, row: list[int], tabs: tuple, unseen: int = 0) -> bool:
    """True if a seat holding `row` now would have made `choices` (ties count as agreeing).
    With `unseen` more cards in its row that are not in `row`, a score may exceed the played
    card's by what those cards can shift the two (each card moves a sum by at most one and the
    pool by one: at most 4 * unseen / pool in all)."""
    for j, (card, n, discards, role) in enumerate(choices):
        held = [card] + [c for c, *_ in choices[j + 1:]] + row
        scores = _scores(held, n, discards, role, tabs)
        pool = len(_DECK) - len(held) - unseen - 1 - len(discards)
        if max(scores) > scores[0] + 4 * unseen / pool + 1e-12:
            return False
    return True


def identify(state, seat: int) -> bool:
    """Whether the other seat's play so far fits the heuristic: each finished deal's row (all of
    it shown by now) replayed by the rule gives its plays, and this deal's plays agree among
    themselves. Deals before a reshuffle of the discards are not replayed (their piles are gone)."""
    if not state.options.open_rows:
        return False
    tabs = tables(state.options.tie_rule)
    other = seat ^ 1
    history = state.history
    current = state.round_in_deal - 1 if state.neutral is not None else 0
    finished = len(history) - current
    if not state.sudden_death and len(state.discards) == 3 * len(history):
        # No reshuffle yet: the pile before a round is every card of the rounds before it.
        pile = [_INDEX[c] for e in history for c in (e["dealer_card"], e["neutral"],
                                                      e["opponent_card"])]
        start = 0
        for size in state._sizes:
            if start + size > finished:
                break
            entries = history[start:start + size]
            role = 1 if entries[0]["dealer"] == other else 0
            plays = [_INDEX[e["dealer_card"] if role else e["opponent_card"]] for e in entries]
            for j in range(size - 1):
                at = start + j
                scores = _scores(plays[j:], _INDEX[entries[j]["neutral"]], pile[: 3 * at], role,
                                 tabs)
                if max(scores) > scores[0]:
                    return False
            start += size
    unseen = len(state._slots[other]) if state.neutral is not None else 0
    return _consistent(_deal_choices(state, other), [], tabs, unseen)


def belief(root, seat: int) -> Callable | None:
    """A re-deal of determinizations that keeps the other seat's row consistent with its plays
    of this deal under the heuristic (None when it has made none, or nothing fits)."""
    other = seat ^ 1
    if not root.options.open_rows or root.sudden_death:
        return None
    choices = _deal_choices(root, other)
    if not choices:
        return None
    tabs = tables(root.options.tie_rule)
    slots = list(root._slots[other])
    k = len(slots)
    known = set(root.discards) | {root.neutral} | {c for c in root.rows[seat] if c}
    unknown = [_INDEX[c] for c in _DECK if c not in known]
    # A candidate card could be in the row: with this deal's played cards alone (and k - 1 more
    # unseen) it would have scored no more than the card played at each earlier round. The exact
    # test runs on each drawn row.
    candidates = [c for c in unknown if _consistent(choices, [c], tabs, k - 1)]
    if len(candidates) < k:
        return None
    deck = _DECK
    contrib, full, base = tabs
    # Per earlier round j: the played card, the pool size without the drawn row, and per card c
    # (played later or a candidate) its sum less the discards then and this deal's later plays,
    # so that a drawn row only subtracts its own cards.
    checks = []
    for j, (card, n, discards, role) in enumerate(choices):
        known = [card] + [x for x, *_ in choices[j + 1:]]
        by_card = contrib[role][n]
        sums = {}
        for c in set(known) | set(candidates):
            xs = by_card[c]
            sums[c] = full[role][n][c] - sum(xs[x] for x in discards) - sum(xs[y] for y in known)
        pool = len(_DECK) - len(known) - k - 1 - len(discards)
        checks.append((card, known[1:], by_card, sums, pool, base[role]))

    def explains(row: list[int]) -> bool:
        """Whether a seat holding `row` now would have made this deal's plays."""
        for card, later, by_card, sums, pool, base_r in checks:
            xs = by_card[card]
            # Ties (to rounding) agree: the slot order that breaks them is not known.
            top = (sums[card] - sum([xs[y] for y in row])) / pool - base_r[card] + 1e-12
            for c in later + row:
                xs = by_card[c]
                if (sums[c] - sum([xs[y] for y in row])) / pool - base_r[c] > top:
                    return False
        return True

    # Rows drawn so far that explain the plays: draws from the posterior, so when a few fresh tries
    # find none (a rare, tightly explained deal) one of them is drawn again instead.
    found: list[list[int]] = []

    def infer(det, rng: random.Random) -> None:
        """Draw the other seat's row among the candidates until it explains its plays."""
        for _ in range(20 if found else 2000):
            row = rng.sample(candidates, k)
            if explains(row):
                found.append(row)
                break
        else:
            if not found:
                return  # keep the plain determinization
            row = found[int(rng.random() * len(found))]
        chosen = set(row)
        rest = [deck[c] for c in unknown if c not in chosen]
        rng.shuffle(rest)
        cards = det.rows[other]
        for slot, c in zip(slots, row):
            cards[slot] = deck[c]
        det.stock = rest

    infer.explains = explains  # for tests: the exact test of a drawn row
    return infer


SEARCH = SearchHooks(
    profiles={
        # The other seat modelled as the heuristic (exactly: `model_pick`) with its row drawn to
        # explain its plays of the deal; a seat that does not play by it is searched with
        # decoupled UCT instead. Playouts by the heuristic's measure (70 % of cards).
        "tuned": Profile(stop_at_round_end=False, scale=3.0, fast=fast_playout, opponent=model_pick,
                         belief=belief, identify=identify, prepare=prepare),
    },
    bots={"crossfire": {"iterations": 400}},
)

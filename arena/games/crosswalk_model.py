"""An exact model of the Crosswalk heuristic (bots/crosswalk_bot.py) for ISMCTS, and inference from it.

The heuristic is deterministic given its hand and the public cards: it plays the card with the
lowest "final-card" value (ties: the higher number, then the first in hand order). So inside a
determinization its card can be computed exactly (`heuristic_pick`, on the engine's state, no
observation built), and its past plays reveal its hand: every card it still holds was in its hand
at each match of the current cycle and was then worth more than the card it played. `belief`
re-deals each determinization so the modelled hands obey that, which makes the opponents' last
cards (which decide the pawns) predictable to the search.

A seat whose plays this cycle contradict the model (another bot) is not modelled: it plays random
cards in the tree and playouts, and its hand is dealt as the plain determinization deals it.
Only the default rules (all_lead ties, absolute movement) are modelled.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping

from arena.games.crosswalk_playout import (
    CARD_NUMBER,
    crosswalk_fast,
    crosswalk_prior,
    default_rules,
    final_values,
    opponent_max,
    unplayed_row,
)

_COLOUR_INDEX = {c: i for i, c in enumerate("RBGY")}
_CARD_KEY = {c: (_COLOUR_INDEX[c[0]], n) for c, n in CARD_NUMBER.items()}
# The attribute a determinization carries: the seats modelled as the heuristic in it.
TRUST_ATTR = "_cw_exact"
# ... and the round of the search's root, and the searching seat.
ROUND_ATTR = "_cw_round"
SEAT_ATTR = "_cw_seat"


# (the seats' colours, the round's played cards joined) -> per seat, the heuristic's value of each
# number: the determinizations of one search share every tree node's played cards, so the values
# are computed once per node for all seats. Cleared when large (a search adds a few thousand).
_VALUES: dict[tuple[str, str], list[list[float] | None]] = {}


def _values_for(state, seat: int) -> list[float]:
    """The heuristic's value of each number for `seat` now, from the shared table."""
    key = (",".join(state.seat_colours), "".join(state.played))
    per_seat = _VALUES.get(key)
    if per_seat is None:
        if len(_VALUES) > 50000:
            _VALUES.clear()
        per_seat = _VALUES[key] = [None] * state.num_seats
    values = per_seat[seat]
    if values is None:
        values = per_seat[seat] = _number_values(state.played, state, seat)
    return values


def heuristic_pick(state, seat: int) -> str:
    """The card the heuristic bot plays for `seat` in `state` (default rules, all hands known)."""
    hand = state.hands[seat]
    if len(hand) == 1:
        return hand[0]
    values = _values_for(state, seat)
    # The bot's rule: the lowest (value, -number), the first in hand order among equals.
    best, best_key = hand[0], None
    for card in hand:
        n = CARD_NUMBER[card]
        k = (values[n], -n)
        if best_key is None or k < best_key:
            best, best_key = card, k
    return best


def model_opponent(state, seat: int, legal: list, rng: random.Random):
    """Opponent model for the tree: the heuristic's exact card for a trusted seat, else random."""
    if seat in getattr(state, TRUST_ATTR, ()):
        card = heuristic_pick(state, seat)
        # legal_actions lists the hand in order, one action per card.
        return legal[state.hands[seat].index(card)]
    return legal[int(rng.random() * len(legal))]


def model_fast(state, rng: random.Random, stop_at_round_end: bool, plies: int | None = None,
               rest: float = 0.75, own: bool = False) -> None:
    """Playouts in which the trusted seats (and with `own` the searching seat) always play the
    heuristic's rule, the rest a share `rest` of their cards; a tree that has played past the
    root's round is scored by that round alone."""
    start = getattr(state, ROUND_ATTR, None)
    if stop_at_round_end and start is not None and state.round != start:
        # Below the round's end the tree branches on a fresh deal it cannot plan for, and playing
        # that round out would only add its noise to the reward: every pawn goes back to space 1,
        # which adds the same points to every seat, so the margins are the finished round's.
        state.pawns = dict.fromkeys(state.pawns, 1)
        state._public_json = None
        return
    exact = getattr(state, TRUST_ATTR, frozenset())
    if own and hasattr(state, SEAT_ATTR):
        exact = exact | {getattr(state, SEAT_ATTR)}
    crosswalk_fast(state, rng, stop_at_round_end, plies, greedy=rest, exact=exact)


def model_fast_random_rest(state, rng: random.Random, stop_at_round_end: bool,
                           plies: int | None = None) -> None:
    """model_fast for the paired root search: the searching seat plays on by the heuristic's
    rule (the search improves on it one decision at a time) and the seats not modelled as the
    heuristic play uniformly random cards (a seat whose plays the heuristic does not explain)."""
    model_fast(state, rng, stop_at_round_end, plies, rest=0.0, own=True)


# (the seats' colours, played cards joined) -> every seat's cumulative unplayed counts, shared by
# the seats' values at one node; cleared with _VALUES's size.
_ROWS: dict[tuple[str, str], dict[int, list[int]]] = {}


def _number_values(played: list[str], state, seat: int) -> list[float]:
    """values[x] = the heuristic's final-card value of a number x for `seat` after `played`."""
    key = (",".join(state.seat_colours), "".join(played))
    cums = _ROWS.get(key)
    if cums is None:
        if len(_ROWS) > 50000:
            _ROWS.clear()
        played_set = set(played)
        cums = _ROWS[key] = {s: unplayed_row(state.seat_colours[s], played_set)
                             for s in range(state.num_seats)}
    # The same floating-point steps as heuristic_card, so ties break as the bot breaks them.
    return [0.0] + final_values(opponent_max(cums, seat), [f"R{x}" for x in range(1, 11)])


def _kept_after(values: list[float], card: str):
    """A test: could `other` have stayed in hand when the heuristic played `card` (values: that
    match's values per number)? The bot plays the minimum of (value, -number) and, among equal
    numbers, the first card in hand order (colour order R B G Y)."""
    n = CARD_NUMBER[card]
    key = (values[n], -n)
    colour = _COLOUR_INDEX[card[0]]

    def kept(other: str) -> bool:
        m = CARD_NUMBER[other]
        k = (values[m], -m)
        return k > key or (m == n and _COLOUR_INDEX[other[0]] > colour)

    return kept


def cycle_constraints(root, seat: int) -> dict[int, set[str] | None]:
    """Per other seat: the cards its current hand may hold if it plays as the heuristic (None: its
    plays this cycle contradict the model, or its hand cannot be filled from those cards)."""
    n = root.num_seats
    played = root.played
    m = root.match_in_cycle
    start = len(played) - m * n
    known = set(played) | set(root.hands[seat]) | set(root.in_discard[seat])
    out: dict[int, set[str] | None] = {}
    # Every seat takes part in every match of a round (all run out together), so match j of the
    # cycle is played[start + j*n : start + (j+1)*n] in seat order.
    if start < 0 or len(root.participants) != n:
        return {o: None for o in range(n) if o != seat}
    tests: list[tuple[int, object]] = []
    for j in range(m):
        before = played[:start + j * n]
        match = played[start + j * n:start + (j + 1) * n]
        for o in range(n):
            if o != seat:
                tests.append((o, j, _kept_after(_number_values(before, root, o), match[o])))
    for o in range(n):
        if o == seat:
            continue
        size = len(root.hands[o])
        candidates = {c for c in root._deck if c[0] in root.seat_colours[o] and c not in known}
        ok = True
        for owner, j, kept in tests:
            if owner != o:
                continue
            # The hand at match j held the cards o played later this cycle and its current hand
            # (at least two cards, so the bot chose by value).
            later = [played[start + i * n + o] for i in range(j + 1, m)]
            if not all(kept(c) for c in later):
                ok = False
                break
            candidates = {c for c in candidates if kept(c)}
        out[o] = candidates if ok and len(candidates) >= size else None
    return out


def known_discards(root, seat: int) -> list[str]:
    """The seat's own discards that are surely still in the discard pile: the engine's record, or
    (a state rebuilt from an observation has none) all of this round's when the stock's size says
    the pile has not been reshuffled into the stock this round."""
    if root.in_discard[seat]:
        return list(root.in_discard[seat])
    mine = root.discarded_by[seat]
    if not mine:
        return []
    # Without a reshuffle the stock has lost exactly the cards drawn this round: five per seat
    # per cycle plus whole re-deals of five, and never more than the deck (a reshuffle happens
    # only once the deck has been drawn through).
    drawn = len(root._deck) - len(root.stock)
    extra = drawn - 5 * root.num_seats * (root.cycle + 1)
    if extra < 0 or extra % 5 or len(root.discard) < len(mine):
        return []
    return list(mine)


def model_identify(root, seat: int) -> bool:
    """Whether to model the other seats at all: only under the rules the heuristic's values are
    computed for (elsewhere the search gives every seat statistics of its own)."""
    return default_rules(root)


def model_belief(root, seat: int, weights: Mapping[int, float] | None = None):
    """The belief hook: a function re-dealing a determinization so the trusted seats' hands agree
    with their plays this cycle (and the seat's own discards stay in the pile when it knows they
    are there), marking the trusted seats as modelled; None under other rules.

    With `weights` (per seat, the probability that it plays as the heuristic, from a
    PlayEvidence), each determinization trusts a seat the cycle does not contradict with that
    probability, so the search plays against a mixture of what the other seats may be."""
    if not default_rules(root):
        return None
    n = root.num_seats
    allowed = cycle_constraints(root, seat)
    sure = frozenset(o for o, a in allowed.items() if a is not None)
    odds = sorted((o, weights.get(o, 1.0)) for o in sure) if weights is not None else None

    def trusted(rng: random.Random) -> frozenset:
        if odds is None:
            return sure
        return frozenset(o for o, p in odds if p >= 1.0 or (p > 0.0 and rng.random() < p))

    base = set(root.played) | set(root.hands[seat])
    for mine in (known_discards(root, seat), []):
        unknown = set(root._deck) - base - set(mine)
        # Per seat: the cards its hand may hold if it plays as the heuristic, and if it does not.
        pools, free = {}, {}
        for o in range(n):
            if o == seat:
                continue
            own = {c for c in root._deck if c[0] in root.seat_colours[o]}
            free[o] = sorted(own & unknown, key=_CARD_KEY.__getitem__)
            pools[o] = free[o] if allowed[o] is None else sorted(
                allowed[o] & unknown, key=_CARD_KEY.__getitem__)
        rest_discard = len(root.discard) - len(mine)
        if rest_discard >= 0 and all(len(pools[o]) >= len(root.hands[o]) for o in pools):
            break
    else:
        # The model and the seat's knowledge disagree: only mark the trusted seats.
        def mark(det, rng: random.Random) -> None:
            setattr(det, TRUST_ATTR, trusted(rng))
            setattr(det, ROUND_ATTR, root.round)
            setattr(det, SEAT_ATTR, seat)

        return mark
    unknown_list = sorted(unknown, key=_CARD_KEY.__getitem__)
    sizes = {o: len(root.hands[o]) for o in pools}

    def infer(det, rng: random.Random) -> None:
        # A fresh deal of everything the seat cannot place: each other hand uniformly from its
        # pool (pools are disjoint: a seat only ever holds its own colours; a seat not modelled
        # in this determinization draws from all its unplayed cards), the rest shuffled into the
        # discard pile (after the known discards) and the stock.
        trust = trusted(rng)
        setattr(det, TRUST_ATTR, trust)
        setattr(det, ROUND_ATTR, root.round)
        setattr(det, SEAT_ATTR, seat)
        taken = set()
        for o, pool in pools.items():
            hand = rng.sample(pool if o in trust else free[o], sizes[o])
            taken.update(hand)
            det.hands[o] = sorted(hand, key=_CARD_KEY.__getitem__)
        rest = [c for c in unknown_list if c not in taken]
        rng.shuffle(rest)
        det.discard = mine + rest[:rest_discard]
        det.stock = rest[rest_discard:]
        det.in_discard[seat] = list(mine)
        det._public_json = None

    return infer


def model_prior(state, seat: int, legal: list) -> list[float]:
    """crosswalk_prior from the shared value table: 1 for the card the heuristic would play down
    to 0 for the one it keeps longest; flat 0.5 under other rules or with one card."""
    if len(legal) < 2 or not default_rules(state) or len(state.participants) != state.num_seats:
        return crosswalk_prior(state, seat, legal)
    values = _values_for(state, seat)
    v = [values[CARD_NUMBER[a["card"]]] for a in legal]
    lo, hi = min(v), max(v)
    if hi - lo < 1e-9:
        return [0.5] * len(legal)
    return [(hi - x) / (hi - lo) for x in v]


# The standard deviation of the difference of two seats' points in one round at a 4-seat table
# (measured over 2,100 rounds: 36.9 between two heuristic seats, 40.1 between the heuristic and a
# random seat, 40.7 between two random seats).
ROUND_SPREAD = 38.0


def round_spread(state) -> float:
    """The spread of a pair's point difference still to come: ROUND_SPREAD per round left."""
    left = state.options.rounds - len(state.round_scores)
    return ROUND_SPREAD * math.sqrt(max(0, left))


# The log-odds at which a seat's evidence stops moving (a seat is then settled either way).
_LOG_ODDS_CAP = 30.0


class PlayEvidence:
    """Per game, from every observation of one seat: how likely each other seat plays as the
    heuristic rather than uniformly at random.

    A Crosswalk seat plays in every match, and a heuristic seat holding k >= 2 cards plays the one
    it values least, so the k - 1 cards it kept all score above the card it played. If its other
    cards are any k - 1 of its unplayed cards (uniformly), that has probability
    C(m, k - 1) / C(u, k - 1), with u its other unplayed cards and m those scoring above; a
    uniformly random seat plays that card with probability 1 / k. Each match's likelihood ratio
    is added to the seat's log-odds, which start even at its first choice; a card the heuristic
    could not have played settles it. A seat not yet seen choosing has no weight, and the belief
    models it as the heuristic. The hand sizes come from the observation at the match, the cards
    from a later one, so the tracker must see every observation of the game (forced moves too).
    Only the default rules are modelled; under other rules nothing is recorded.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything (a new game)."""
        self.hand_counts: dict[tuple[int, int], list[int]] = {}  # (round, match) -> counts
        self.done: set[tuple[int, int]] = set()
        self.log_odds: dict[int, float] = {}
        # Seats that played a card the heuristic never plays from that hand: settled for good.
        self.ruled_out: set[int] = set()

    def observe(self, observation: dict, state) -> None:
        """Fold in one observation (and `state`, the state it describes)."""
        n = observation["num_players"]
        played = observation["played_this_round"]
        # A match in which a seat sits out breaks the "n cards per match" layout of the record.
        if len(observation["participants"]) != n or not default_rules(state):
            return
        current = observation["round"], len(played) // n
        if current == (0, 0) and any(key != current for key in self.hand_counts):
            self.reset()  # a new game without a game_start
        self.hand_counts.setdefault(current, list(observation["hand_counts"]))
        for key, counts in self.hand_counts.items():
            if key[0] != current[0] or key[1] >= current[1] or key in self.done:
                continue
            self.done.add(key)
            before = played[:key[1] * n]
            match = played[key[1] * n:(key[1] + 1) * n]
            for o in range(n):
                if o != observation["seat"] and counts[o] >= 2:
                    self._update(o, counts[o], before, match[o], state)

    def _update(self, o: int, k: int, before: list[str], card: str, state) -> None:
        kept = _kept_after(_number_values(before, state, o), card)
        seen = set(before)
        colours = state.seat_colours[o]
        others = [c for c in state._deck if c[0] in colours and c not in seen and c != card]
        above = sum(1 for c in others if kept(c))
        p_model = math.comb(above, k - 1) / math.comb(len(others), k - 1) if len(others) >= k - 1 else 0.0
        if p_model <= 0.0:
            self.ruled_out.add(o)
            return
        odds = self.log_odds.get(o, 0.0) + math.log(p_model * k)
        self.log_odds[o] = max(-_LOG_ODDS_CAP, min(_LOG_ODDS_CAP, odds))

    def weights(self) -> dict[int, float]:
        """Per seat seen choosing: the probability it plays as the heuristic."""
        out = {o: 1.0 / (1.0 + math.exp(-x)) for o, x in self.log_odds.items()}
        out.update(dict.fromkeys(self.ruled_out, 0.0))
        return out

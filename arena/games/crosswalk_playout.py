"""Crosswalk playouts and prior for ISMCTS, from the heuristic bot's idea on the engine's state.

A pawn ends where its colour's last card put it, so a card is judged as a "final card": the space
it earns against the highest card the other participants could show, each showing one of its
unplayed cards at random (bots/crosswalk_bot.py does the same on the observation). Keeping the
best final cards and playing the others first is what the heuristic opponent does, so playouts
that play this way predict it well and keep 10s for the end of the round, where they decide it.
Only the default rules (all_lead ties, absolute movement) get the rule; other variants play out at
random and have a flat prior.
"""

from __future__ import annotations

import random

# SPACE[x][h]: the space a card x earns when the others' highest card is h (0: no other card),
# under all_lead ties and absolute movement: the lead (or a tie) earns x, a lower card the gap.
SPACE = [[0.0] * 11] + [[float(x if x >= h else h - x) for h in range(11)] for x in range(1, 11)]
CARD_NUMBER = {f"{c}{n}": n for c in "RBGY" for n in range(1, 11)}


def default_rules(state) -> bool:
    """True when the state plays the rules the final-card values are computed for."""
    opts = state.options
    return opts.lead_tie == "all_lead" and opts.movement == "absolute"


def unplayed_row(colours, played: set) -> list[int]:
    """cum[h] = the unplayed cards of `colours` numbered h or less (h = 0..10)."""
    cum = [0] * 11
    for colour in colours:
        for n in range(1, 11):
            if colour + str(n) not in played:
                cum[n] += 1
    for n in range(1, 11):
        cum[n] += cum[n - 1]
    return cum


def _unplayed_cumulative(state) -> dict[int, list[int]]:
    """Per participant: cum[h] = its unplayed own cards numbered h or less (h = 0..10)."""
    played = set(state.played)
    return {s: unplayed_row(state.seat_colours[s], played) for s in state.participants}


def _all_below(rows) -> list[float]:
    """below[h] = P(every seat of `rows` (cumulative unplayed counts) shows a number <= h), each
    showing one of its unplayed cards uniformly; seats with none left are skipped."""
    below = [1.0] * 11
    for cum in rows:
        total = cum[10]
        if total:
            for h in range(11):
                below[h] *= cum[h] / total
    return below


def opponent_max(cums: dict[int, list[int]], seat: int) -> list[float]:
    """P(the highest card the other participants show is h), h = 0..10, each showing one of its
    unplayed cards uniformly."""
    below = _all_below(cum for s, cum in cums.items() if s != seat)
    return [below[0]] + [below[h] - below[h - 1] for h in range(1, 11)]


def final_values(dist: list[float], hand: list[str]) -> list[float]:
    """Each card's expected space as a final card against the others' highest card `dist`."""
    out = []
    for card in hand:
        row = SPACE[CARD_NUMBER[card]]
        out.append(sum(p * v for p, v in zip(dist, row) if p))
    return out


def keep_values(below: list[float]) -> list[float]:
    """values[x] = the expected space of a final card x (x = 1..10) when P(the others' highest
    card <= h) is below[h]: x * P(H <= x) + E[(H - x); H > x], in closed form (10 steps)."""
    values = [0.0] * 11
    tail = 0.0  # sum over h > x of h * P(H = h)
    for x in range(10, 0, -1):
        values[x] = x * (2.0 * below[x] - 1.0) + tail
        tail += x * (below[x] - below[x - 1])
    return values


def heuristic_card(dist: list[float], hand: list[str]) -> str:
    """The heuristic's pick: the card least worth keeping (ties: the higher number)."""
    values = final_values(dist, hand)
    best, key = hand[0], None
    for card, v in zip(hand, values):
        k = (v, -CARD_NUMBER[card])
        if key is None or k < key:
            best, key = card, k
    return best


def crosswalk_prior(state, seat: int, legal: list) -> list[float]:
    """Per legal card, 1 for the card the heuristic would play down to 0 for the one it keeps
    longest (its final-card value rescaled); flat 0.5 under other rules."""
    if not default_rules(state) or len(legal) < 2:
        return [0.5] * len(legal)
    dist = opponent_max(_unplayed_cumulative(state), seat)
    values = final_values(dist, [a["card"] for a in legal])
    lo, hi = min(values), max(values)
    if hi - lo < 1e-9:
        return [0.5] * len(legal)
    return [(hi - v) / (hi - lo) for v in values]


def crosswalk_fast(state, rng: random.Random, stop_at_round_end: bool, plies: int | None = None,
                   greedy: float = 0.75, exact: frozenset = frozenset()) -> None:
    """Play on with the heuristic's rule for every seat (with probability `greedy`, else a random
    card); stops after `plies` matches or at the round's end if asked. The rest of a round is
    simulated here on plain lists (see finish_round); other rules than the default, or a ply
    limit, go through the engine with random cards. Seats in `exact` always play the rule (they
    are modelled as the deterministic heuristic)."""
    if stop_at_round_end and not state.played:
        # A playout follows at least one match of the tree, so an empty played pile means the
        # tree itself has just finished the root's round: that round's scores are the result
        # (playing the next round would only add its noise).
        return
    if plies is None and default_rules(state):
        start = state.round
        while state.participants:
            finish_round(state, rng, greedy, exact)
            if stop_at_round_end and state.round != start:
                return
        return
    rand = rng.random
    left = -1 if plies is None else plies
    start = state.round
    while left and state.participants:
        if stop_at_round_end and state.round != start:
            return
        left -= 1
        state.apply_validated({s: {"type": "play", "card": h[int(rand() * len(h))]}
                      for s in state.participants for h in (state.hands[s],)})


def finish_round(state, rng: random.Random, greedy: float,
                 exact: frozenset = frozenset()) -> dict[int, str]:
    """Play the current round to its end (default rules), let the engine score it, and return
    each seat's final card (the round's last match, which set every pawn).

    The engine's own match loop spends most of a playout on bookkeeping a playout never reads
    (played and discard records, hash-seeded shuffles, observations' caches); this replays its
    deal, sort and re-deal steps on copies with `rng` shuffles (the determinization has already
    re-drawn every later shuffle, so both are equally unknown), then puts the final pawns and
    empty piles on the state and calls its _advance, which scores the round and deals the next.
    """
    rand = rng.random
    n = state.num_seats
    seat_colours = state.seat_colours
    hands = [h[:] for h in state.hands]
    stock = state.stock[:]
    discard = state.discard[:]
    own_left = state.own_left[:]
    pawns = dict(state.pawns)
    number = CARD_NUMBER
    played = set(state.played)
    # cum[s][h]: seat s's unplayed own cards numbered h or less, kept up to date as cards go.
    cum = [unplayed_row(seat_colours[s], played) for s in range(n)]
    participants = list(state.participants)
    dealer = state.dealer
    # Per seat: the share of its cards played by the rule (1 for a seat modelled as the heuristic).
    rate = [1.0 if s in exact else greedy for s in range(n)]

    def draw(count: int) -> list[str]:
        # A uniformly drawn card of the (already randomly ordered) stock each time, which is a
        # shuffle's distribution without the shuffle; the discard pile becomes the stock when
        # the stock runs out, as in the engine.
        nonlocal stock, discard
        out = []
        while count > 0:
            if not stock:
                if not discard:
                    break
                stock, discard = discard, []
            i = int(rand() * len(stock))
            stock[i], stock[-1] = stock[-1], stock[i]
            out.append(stock.pop())
            count -= 1
        return out

    while True:
        # One match: every participant picks, all are revealed together.
        chosen = []
        for s in participants:
            hand = hands[s]
            if len(hand) == 1 or (rate[s] < 1.0 and rand() >= rate[s]):
                card = hand[int(rand() * len(hand))]
            else:
                values = keep_values(_all_below(cum[o] for o in participants if o != s))
                card, key = hand[0], None
                for c in hand:
                    k = number[c]
                    v = (round(values[k], 9), -k)
                    if key is None or v < key:
                        card, key = c, v
            chosen.append((s, card))
        lead = max(number[c] for _, c in chosen)
        for s, card in chosen:
            hands[s].remove(card)
            own_left[s] -= 1
            k = number[card]
            row = cum[s]
            for h in range(k, 11):
                row[h] -= 1
            pawns[card[0]] = lead if k == lead else lead - k
        if all(hands[s] for s in participants):
            continue
        # The cycle ends: the rest of every hand goes back to the discard pile.
        for s in participants:
            discard.extend(hands[s])
            hands[s] = []
        if not stock and not discard:
            break
        order = [t for t in ((dealer + 1 + i) % n for i in range(n)) if own_left[t]]
        dealt = draw(5 * len(order))
        for i, t in enumerate(order):
            hands[t] = dealt[i::len(order)]
        # As the engine: every hand is sorted before any re-deal (which may draw on the pile).
        for t in order:
            own = seat_colours[t]
            discard.extend(c for c in hands[t] if c[0] not in own)
            hands[t] = [c for c in hands[t] if c[0] in own]
        for t in order:
            own = seat_colours[t]
            while not hands[t]:
                dealt = draw(5)
                discard.extend(c for c in dealt if c[0] not in own)
                hands[t] = [c for c in dealt if c[0] in own]
        participants = sorted(order)
    state._public_json = None
    state.pawns = pawns
    state.hands = [[] for _ in range(n)]
    state.stock = []
    state.discard = []
    state.own_left = [0] * n
    state.participants = []
    state._advance()
    return dict(chosen)

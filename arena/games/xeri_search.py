"""Xeri's search knowledge for ISMCTS: a fast playout that captures what pays and lays what
hands the next player least, a uniformly random one, a position bonus for cut playouts, and the
profiles and shipped bot they make (`SEARCH`, returned by XeriState.search_hooks)."""

from __future__ import annotations

import random

from arena.search.hooks import SearchHooks
from arena.search.playouts import Profile


def xeri_fast(state, rng: random.Random, stop_at_round_end: bool, plies: int | None = None,
              capture: float = 0.9) -> None:
    """Xeri playout on the determinized state: take the most valuable pile on offer (a lone card
    is a xeri; a jack is spent only on a xeri or a pile worth points), else lay the card that
    hands the next player the least (its hand is known in the determinization: a card it can
    match or jack gives it the pile). With probability 1 - `capture` a random card instead.
    Stops after `plies` plays or at the round's end if asked."""
    rand = rng.random
    hands = state.hands
    points = state._points
    jack_xeri = state.options.jack_xeri
    start_round = state.round
    left = -1 if plies is None else plies
    while state.current >= 0 and left:
        left -= 1
        if stop_at_round_end and state.round != start_round:
            return
        seat = state.current
        hand = hands[seat]
        if capture <= 0 or len(hand) == 1 or rand() >= capture:
            state._play(seat, hand[int(rand() * len(hand))])
            continue
        pile = state.pile
        n = len(pile)
        worth = sum(points[c] for c in pile) + 0.3 * n
        card, best = None, 0.5
        if n:
            top = pile[-1][0]
            for c in hand:
                r = c[0]
                if r == top:
                    value = worth + (10 if n == 1 else 0) + 1
                elif r == "J":
                    value = worth + (_jack_xeri_value(pile[0], jack_xeri) if n == 1 else 0) - 3
                else:
                    continue
                if value > best:
                    card, best = c, value
        if card is None:
            other = hands[(seat + 1) % len(hands)]
            ranks = {c[0] for c in other}
            has_jack = "J" in ranks
            card, low = None, None
            for c in hand:
                r = c[0]
                given = 0.0
                if r in ranks:
                    given = worth + points[c] + (10 if n == 0 else 0)
                elif has_jack:
                    given = worth + points[c] + (_jack_xeri_value(c, jack_xeri) if n == 0 else 0)
                # Keep jacks: each one is a later capture or xeri.
                cost = given + (4 if r == "J" else 0) + points[c] * 0.3 + 0.1 * rand()
                if low is None or cost < low:
                    card, low = c, cost
        state._play(seat, card)


def _jack_xeri_value(lone: str, jack_xeri: str) -> int:
    """Points of a xeri that a jack makes on the lone card `lone`."""
    if jack_xeri == "any_jack_20" or lone[0] == "J":
        return 20
    return 10 if jack_xeri == "jack_on_jack_20" else 0


def xeri_random(state, rng: random.Random, stop_at_round_end: bool,
                plies: int | None = None) -> None:
    """Uniformly random Xeri plays, without action lists (xeri_fast never capturing on purpose,
    one draw per play); stops after `plies` plays or at the round's end if asked."""
    xeri_fast(state, rng, stop_at_round_end, plies, capture=0.0)


def xeri_bonus(state) -> list[float]:
    """What a Xeri position holds beyond its points: captured cards (toward the 3-point most-cards
    bonus) and jacks in hand (each a later capture or xeri)."""
    n = state.ncaptured
    jacks = [sum(1 for c in hand if c[0] == "J") for hand in state.hands]
    return [0.12 * n[s % len(n)] + 2.0 * jacks[s] for s in range(len(jacks))]


SEARCH = SearchHooks(
    profiles={
        # Playouts cut 8 plies below the root (or at the round's end) and scored with the bonus.
        "tuned": Profile(stop_at_round_end=True, scale=8.0, fast=xeri_fast, horizon=8,
                         bonus=xeri_bonus),
        "random": Profile(stop_at_round_end=False, rank_weight=1.0, fast=xeri_random),
    },
    # About 100-180 ms of CPU per move here (bench/search_bench.py), under configs' move_ms.
    bots={"xeri": {"iterations": 600}},
)

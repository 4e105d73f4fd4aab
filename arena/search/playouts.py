"""Per-game playout settings for ISMCTS: how far a playout runs, how it plays, how it is scored.

A `Profile` says whether a playout stops at the end of the current round (the game's `round`
counter changes: every game here scores its rounds on their own, so the score margin then is a
good static evaluation and the rest of a long game is mostly noise) and the points that make a
margin "large" (`scale`: a margin gain of `scale` is worth a reward of 0.5 + 0.5 * tanh(1)).
`policy` is a cheap state-based playout rule (seat, legal actions, rng) -> action, or None for
uniformly random play.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from arena.cards import standard_deck
from arena.games.base import JSON, GameState
from arena.games.cribbage_scoring import line_points, pip

_BFC_PIP: dict[str, int] = {c: pip(c) for c in standard_deck(jokers=1)}

PlayoutPolicy = Callable[[GameState, int, list, random.Random], JSON]


@dataclass(frozen=True)
class Profile:
    """How ISMCTS plays out and scores the states of one game."""

    stop_at_round_end: bool = False
    scale: float = 10.0
    # Share of a finished game's reward that is its rank (win/draw/loss); the rest is the margin.
    rank_weight: float = 0.5
    policy: PlayoutPolicy | None = None
    # A fast playout function (state, rng, stop_at_round_end) replacing the generic loop.
    fast: Callable[[GameState, random.Random, bool], None] | None = None


def play_out(state: GameState, rng: random.Random, stop_at_round_end: bool,
             policy: PlayoutPolicy | None) -> None:
    """Play `state` on with `policy` (random if None) until it is over or, if asked, its round ends."""
    start_round = getattr(state, "round", None) if stop_at_round_end else None
    rand = rng.random
    while True:
        acting = state.to_act()
        if not acting:
            return
        if start_round is not None and state.round != start_round:
            return
        actions = {}
        for s in acting:
            legal = state.legal_actions(s)
            if len(legal) == 1:
                actions[s] = legal[0]
            elif policy is None:
                actions[s] = legal[int(rand() * len(legal))]
            else:
                actions[s] = policy(state, s, legal, rng)
        state._apply(actions)


# -- Xeri -------------------------------------------------------------------------------------------

def xeri_fast(state, rng: random.Random, stop_at_round_end: bool, capture: float = 0.9) -> None:
    """Xeri playout: take the pile with a matching card when possible, with a jack when the pile
    holds more than one card, else play a card that is not a jack, preferring ranks the pile top
    does not invite; stops at the round's end if asked."""
    rand = rng.random
    hands = state.hands
    start_round = state.round
    while state.current >= 0:
        if stop_at_round_end and state.round != start_round:
            return
        seat = state.current
        hand = hands[seat]
        pile = state.pile
        card = None
        if rand() < capture:
            if pile:
                top = pile[-1][0]
                for c in hand:
                    if c[0] == top:
                        card = c
                        break
                if card is None and len(pile) > 1:
                    for c in hand:
                        if c[0] == "J":
                            card = c
                            break
            if card is None:
                plain = [c for c in hand if c[0] != "J"]
                if plain:
                    card = plain[int(rand() * len(plain))]
        if card is None:
            card = hand[int(rand() * len(hand))]
        state._play(seat, card)


def xeri_random(state, rng: random.Random, stop_at_round_end: bool) -> None:
    """Uniformly random Xeri plays, without action lists; stops at the round's end if asked."""
    rand = rng.random
    hands = state.hands
    start_round = state.round
    while state.current >= 0:
        if stop_at_round_end and state.round != start_round:
            return
        hand = hands[state.current]
        state._play(state.current, hand[int(rand() * len(hand))])


# -- Battlefield Cribbage ----------------------------------------------------------------------------

def _bfc_lay_points(state, card: str) -> float:
    """Points (placer's minus the go point given away) of laying `card` on the line now."""
    pip = _BFC_PIP[card]
    opts = state.options
    if state.total + pip > 31:
        line, given = [card], 1.0
    else:
        line, given = state.line + [card], 0.0
    points = line_points(line, opts.line_scoring, opts.line_group_max_cards, opts.joker_on_line)
    # A line left at 5 or 21 invites the next seat's 15 or 31 with any ten-card.
    total = sum(_BFC_PIP[c] for c in line)
    invite = 0.6 if total in (5, 21) else 0.0
    return points - given - invite


def bfc_policy(state, seat: int, legal: list, rng: random.Random) -> JSON:
    """BFC playout rule: usually draw; after a draw lay the card (the drawn one or the one it
    replaces) that scores most on the line, preferring to turn a face-down slot up and to keep
    fives and the joker out of the line's way; other decisions at random."""
    kind = legal[0]["type"]
    rand = rng.random
    if kind == "draw":
        if rand() < 0.85:
            return legal[0]
        return legal[int(rand() * len(legal))]
    if kind != "place_drawn":
        return legal[int(rand() * len(legal))]
    drawn = state.pending
    base = seat * 5
    hand, up = state.hand, state.up
    best, best_value = legal[0], _bfc_lay_points(state, drawn) + _bfc_lay_bonus(drawn)
    for action in legal[1:]:
        i = base + action["slot"]
        old = hand[i]
        if old is None:
            continue
        # Turning a face-down slot up brings going out (and a known hand) closer.
        value = _bfc_lay_points(state, old) + _bfc_lay_bonus(old) + (0.8 if not up[i] else 0.0) \
            + 0.05 * rand()
        if value > best_value:
            best, best_value = action, value
    return best


def _bfc_lay_bonus(card: str) -> float:
    """What laying `card` (rather than keeping it) is worth to the hand: the joker kills a hand
    and is best laid, fives make fifteens and are worth keeping."""
    if card == "JK":
        return 1.5
    if card[0] == "5":
        return -1.0
    return 0.0


PROFILES: dict[str, Profile] = {
    "xeri": Profile(stop_at_round_end=True, scale=12.0, fast=xeri_fast),
    "crossfire": Profile(stop_at_round_end=False, scale=3.0),
    "crosswalk": Profile(stop_at_round_end=True, scale=40.0),
    "battlefield_cribbage": Profile(stop_at_round_end=True, scale=12.0, policy=bfc_policy),
}

RANDOM_PROFILES: dict[str, Profile] = {
    "xeri": Profile(stop_at_round_end=False, rank_weight=1.0, fast=xeri_random),
}


def profile_for(game: str, kind: str = "tuned") -> Profile:
    """The profile of `game`: "tuned" (the defaults above) or "random" (whole-game random
    playouts, rank rewards: plain ISMCTS)."""
    if kind == "random":
        return RANDOM_PROFILES.get(game, Profile(stop_at_round_end=False, rank_weight=1.0))
    return PROFILES.get(game, Profile())

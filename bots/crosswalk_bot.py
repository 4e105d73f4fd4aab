#!/usr/bin/env python3
"""A Crosswalk heuristic: keep the card that would make the best last card, play the others first.

A pawn ends a round where the last card of its colour put it. Every seat plays one own card in every
match and all seats own equally many cards, so with one colour each the round's final match alone
decides every seat's score. The bot scores each card in hand as a "final card": the expected space it
earns against the highest card the other participants could show, assuming each of them shows one of
its unplayed cards at random. It plays the card with the lowest such value, so the best candidates
stay in hand (or go back to the pool with the unplayed rest of the hand) for the end. With relative
movement every step counts, so it plays the card with the best expected step now instead.
Standard library only.
"""

from __future__ import annotations

COLOUR_ORDER_PREFIX = "colour_order:"
# The game's defaults for the two options this bot reads; a game's own come in its game_start.
DEFAULT_OPTIONS = {"lead_tie": "all_lead", "movement": "absolute"}


def _number(card: str) -> int:
    return int(card[1:])


def _opponent_max_distribution(obs: dict) -> list[float]:
    """P(the highest card shown by the other participants is h), for h = 0..10 (0: nobody else)."""
    played = set(obs["played_this_round"])
    owner = obs["colour_owner"]
    me = obs["seat"]
    below = [1.0] * 11  # below[h] = P(every other participant shows a number <= h)
    for seat in obs["participants"]:
        if seat == me:
            continue
        numbers = [
            n for colour, s in owner.items() if s == seat
            for n in range(1, 11) if f"{colour}{n}" not in played
        ]
        if not numbers:
            continue
        for h in range(11):
            below[h] *= sum(1 for n in numbers if n <= h) / len(numbers)
    return [below[0]] + [below[h] - below[h - 1] for h in range(1, 11)]


def _space(card: str, lead: int, obs: dict, options: dict) -> float:
    """Expected space (absolute) or step (relative) `card` earns when the others' highest is `lead`."""
    x = _number(card)
    tie_rule = options["lead_tie"]
    if x > lead:
        return x
    if x < lead:
        return lead - x
    if tie_rule == "all_lead":
        return x
    if tie_rule == "no_move":
        # Nobody moves: the pawn stays (absolute) or takes no step (relative).
        return 0.0 if options["movement"] == "relative" else obs["pawns"][card[0]]
    order = tie_rule[len(COLOUR_ORDER_PREFIX):]
    rivals = [c for c, s in obs["colour_owner"].items() if s in obs["participants"] and c != card[0]]
    first = all(order.index(card[0]) < order.index(c) for c in rivals if c in order)
    # Losing the tie leaves the card 0 behind: space 1, or no step when relative.
    if first:
        return x
    return 0.0 if options["movement"] == "relative" else 1.0


def card_values(obs: dict, hand: list[str], options: dict) -> dict[str, float]:
    """Each card's expected space (or step) against the other participants' unplayed cards."""
    dist = _opponent_max_distribution(obs)
    return {card: sum(p * _space(card, h, obs, options) for h, p in enumerate(dist) if p)
            for card in hand}


def choose(observation: dict, legal_actions: list, options: dict | None = None) -> dict:
    """Pick the card to play in this match; `options` are the game's (from game_start)."""
    options = {**DEFAULT_OPTIONS, **(options or {})}
    hand = [a["card"] for a in legal_actions]
    if len(hand) == 1:
        return legal_actions[0]
    values = card_values(observation, hand, options)
    if options["movement"] == "relative":
        pick = max(hand, key=lambda c: (values[c], _number(c)))
    else:
        pick = min(hand, key=lambda c: (values[c], -_number(c)))
    return next(a for a in legal_actions if a["card"] == pick)


if __name__ == "__main__":
    from arenabot import run

    game_options: dict = {}  # protocol arena/2: the options come once per game, in game_start
    run(lambda obs, legal: choose(obs, legal, game_options), name="crosswalk_heuristic",
        version="1", on_game_start=lambda msg: game_options.update(msg["options"]))

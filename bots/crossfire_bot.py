#!/usr/bin/env python3
"""Crossfire heuristic for the open_rows house rule. Standard library only.

With open rows the bot sees its own face-down cards. For each of them it computes the exact expected
round result (+1 it scores, -1 the other seat scores) against the face-up neutral card, averaged over
every card the opponent could hold (all cards not in its row, not the neutral and not in the discard
pile), with the movement rules applied. It then subtracts what the same card is worth on average
against a random neutral card, so it spends a card when this neutral suits it better than usual and
keeps cards that are strong everywhere for later. With hidden rows every slot is alike, so it plays
the first legal one.
"""

from __future__ import annotations

RANK_ORDER = {r: v for v, r in enumerate("23456789TJQKA", start=2)}
DECK = [r + s for s in "SHDC" for r in "A23456789TJQK"]


def round_value(dealer_card: str, neutral: str, opponent_card: str, played_cards_rule: bool) -> int:
    """+1 if the dealer scores, -1 if the opponent scores, 0 if nobody (movement, then comparison)."""
    d, n, o = dealer_card[1], neutral[1], opponent_card[1]
    if d == n:
        left, middle, right = (opponent_card, dealer_card, neutral) if n == o else (
            neutral, dealer_card, opponent_card)
    elif d == o:
        left, middle, right = opponent_card, neutral, dealer_card
    elif n == o:
        left, middle, right = dealer_card, opponent_card, neutral
    else:
        left, middle, right = dealer_card, neutral, opponent_card
    lv, mv, rv = RANK_ORDER[left[0]], RANK_ORDER[middle[0]], RANK_ORDER[right[0]]
    if (lv <= mv and rv <= mv) or lv == rv:
        return 0
    if played_cards_rule and dealer_card[0] == opponent_card[0]:
        return 0
    return 1 if lv > rv else -1


def card_value(card: str, neutral: str, pool: list[str], dealer: bool, played_rule: bool) -> float:
    """My expected round result playing `card` beside `neutral`, opponent card uniform over `pool`."""
    if not pool:
        return 0.0
    total = 0
    if dealer:
        for other in pool:
            total += round_value(card, neutral, other, played_rule)
    else:
        for other in pool:
            total -= round_value(other, neutral, card, played_rule)
    return total / len(pool)


_BASELINE: dict[tuple[str, bool, bool], float] = {}


def baseline(card: str, dealer: bool, played_rule: bool) -> float:
    """A card's expected round result against a random neutral and a random opponent card."""
    key = (card, dealer, played_rule)
    if key not in _BASELINE:
        others = [c for c in DECK if c != card]
        total = 0.0
        for neutral in others:
            pool = [c for c in others if c != neutral]
            total += card_value(card, neutral, pool, dealer, played_rule)
        _BASELINE[key] = total / len(others)
    return _BASELINE[key]


def choose(observation: dict, legal_actions: list, options: dict | None = None) -> dict:
    """The slot whose card gains most from this neutral card (any slot when rows are hidden);
    `options` are the game's (from game_start)."""
    row = observation.get("my_row")
    neutral = observation.get("neutral")
    if not row or not neutral or len(legal_actions) == 1:
        return legal_actions[0]
    cards = {entry["slot"]: entry["card"] for entry in row}
    known = set(cards.values()) | {neutral} | set(observation.get("discards", ()))
    pool = [c for c in DECK if c not in known]
    dealer = observation["dealer"] == observation["seat"]
    played_rule = (options or {}).get("tie_rule") == "played_cards"
    best, best_score = legal_actions[0], None
    for action in legal_actions:
        card = cards[action["slot"]]
        score = card_value(card, neutral, pool, dealer, played_rule) - baseline(card, dealer, played_rule)
        if best_score is None or score > best_score:
            best, best_score = action, score
    return best


if __name__ == "__main__":
    from arenabot import run

    game_options: dict = {}  # protocol arena/2: the options come once per game, in game_start
    run(lambda obs, legal: choose(obs, legal, game_options), name="crossfire_heuristic",
        version="1", on_game_start=lambda msg: game_options.update(msg["options"]))

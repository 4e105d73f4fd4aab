#!/usr/bin/env python3
"""A heuristic Xeri bot: takes valuable piles, keeps jacks for xeris, avoids feeding the opponent.

Standard library only. `choose(observation, legal_actions)` is importable for in-process use. The
bot tracks which cards are still unseen (in the opponent's hand or the stock) from the observation,
and scores each card of its hand by what it wins now minus what the opponent is likely to win next.
"""

from __future__ import annotations

from math import comb

RANKS = "A23456789TJQK"
SUITS = "SHDC"
DECK = [r + s for s in SUITS for r in RANKS]
# Each captured card brings the "most cards" bonus (3 points) a little closer.
CARD_WEIGHT = 0.15
# What holding on to a jack is worth: it can take any pile later, including a lone card as a xeri.
JACK_KEEP = {"any_jack_20": 6.0, "jack_on_jack_20": 3.5, "pisti_equal_rank_only": 2.5}
# Bonus for playing a card whose rank we still hold: if it survives, we take the pile next turn.
FOLLOW_UP = 0.6


def card_points(card: str, ten_of_diamonds: int) -> int:
    """Points a captured card is worth at the end of the round."""
    if card == "TD":
        return ten_of_diamonds
    if card == "2C":
        return 1
    return 1 if card[0] in "AKQJT" else 0


def xeri_value(lone: str, card: str, jack_xeri: str) -> int:
    """Value of capturing the single card `lone` with `card` (0 if that is no xeri)."""
    if card[0] != "J":
        return 10 if lone[0] == card[0] else 0
    if jack_xeri == "any_jack_20" or lone[0] == "J":
        return 20
    return 10 if jack_xeri == "jack_on_jack_20" else 0


def p_holds(wanted: int, hand_size: int, unseen: int) -> float:
    """Chance that a hand of `hand_size` cards drawn from `unseen` cards holds one of `wanted`."""
    if wanted <= 0 or hand_size <= 0 or unseen <= 0:
        return 0.0
    hand_size = min(hand_size, unseen)
    return 1.0 - comb(unseen - wanted, hand_size) / comb(unseen, hand_size)


def unseen_cards(obs: dict) -> set[str]:
    """Cards that are in the opponent's hand or the stock, as far as this seat can tell."""
    seen = set(obs["my_hand"]) | set(obs["pile"])
    for play in obs["history"]:
        seen.add(play["card"])
        if play["captured"]:
            seen.update(play["captured"])
    return set(DECK) - seen


def choose(obs: dict, legal: list, options: dict | None = None) -> dict:
    """Pick the play with the best immediate gain minus the expected gain it hands the opponent.

    `options` are the game's (from game_start); missing ones take the game's defaults.
    """
    if len(legal) == 1:
        return legal[0]
    opts = options or {}
    td = opts.get("ten_of_diamonds", 2)
    jack_xeri = opts.get("jack_xeri", "any_jack_20")
    last_xeri_ok = opts.get("xeri_on_last_card", True)
    per_deal = opts.get("dealer_rotation") == "per_deal"

    hand = [a["card"] for a in legal]
    pile = obs["pile"]
    unseen = unseen_cards(obs)
    n_unseen = len(unseen)
    unseen_by_rank: dict[str, int] = {}
    for c in unseen:
        unseen_by_rank[c[0]] = unseen_by_rank.get(c[0], 0) + 1

    opp_cards = obs["opponent_hand_count"]
    stock = obs["stock_count"]
    # The opponent answers our card now, or with a fresh hand after the deal; under per_deal the
    # player of a deal's last card leads the next deal, so the answer comes a turn later.
    reply_scale = 1.0
    if opp_cards == 0:
        opp_cards = 6 if stock else 0
        reply_scale = 0.3 if per_deal else 1.0
    last_play = stock == 0 and obs["opponent_hand_count"] == 0 and len(hand) == 1
    # Jacks matter less as the round runs out of turns to use them.
    plays_left = stock + len(hand) + obs["opponent_hand_count"]
    jack_keep = JACK_KEEP.get(jack_xeri, 3.0) * min(1.0, plays_left / 12)

    def worth(cards: list[str]) -> float:
        return sum(card_points(c, td) for c in cards) + CARD_WEIGHT * len(cards)

    def risk(new_pile: list[str]) -> float:
        top = new_pile[-1]
        value = worth(new_pile)
        p_rank = p_holds(unseen_by_rank.get(top[0], 0), opp_cards, n_unseen)
        lone = len(new_pile) == 1
        rank_gain = value + (xeri_value(top, top, jack_xeri) if lone else 0)
        expected = p_rank * rank_gain
        if top[0] != "J":
            p_jack = p_holds(unseen_by_rank.get("J", 0), opp_cards, n_unseen)
            jack_gain = value + (xeri_value(top, "J" + top[1], jack_xeri) if lone else 0)
            expected += (1 - p_rank) * p_jack * jack_gain
        return reply_scale * expected

    best, best_score = legal[0], float("-inf")
    for action in legal:
        card = action["card"]
        rank = card[0]
        if pile and (rank == "J" or pile[-1][0] == rank):
            score = worth(pile + [card])
            if len(pile) == 1 and not (last_play and not last_xeri_ok):
                score += xeri_value(pile[0], card, jack_xeri)
            if rank == "J" and pile[-1][0] != "J":
                score -= jack_keep
            # Leaving an empty pile is safe: whatever the opponent starts, we may take as a xeri.
            score += 1.0
        else:
            score = -risk(pile + [card])
            if rank == "J":
                score -= jack_keep
            if any(c != card and c[0] == rank for c in hand):
                score += FOLLOW_UP
            # Prefer shedding cards worth nothing to either side.
            score -= 0.3 * card_points(card, td)
        if score > best_score:
            best, best_score = action, score
    return best


if __name__ == "__main__":
    from arenabot import run

    game_options: dict = {}  # protocol arena/2: the options come once per game, in game_start
    run(lambda obs, legal: choose(obs, legal, game_options), name="xeri_heuristic", version="1",
        on_game_start=lambda msg: game_options.update(msg["options"]))

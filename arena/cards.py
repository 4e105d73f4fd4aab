"""Card codes, decks and seeded randomness shared by every game.

A card is a short string: rank (`A 2-9 T J Q K`) + suit (`S H D C`), e.g. `"TD"`; the joker is `"JK"`.
Crosswalk uses its own colour cards (`"R7"`, `"B10"`), built with `colour_deck`.
"""

from __future__ import annotations

import hashlib
import random

RANKS = "A23456789TJQK"
SUITS = "SHDC"
JOKER = "JK"
RANK_VALUE = {r: i + 1 for i, r in enumerate(RANKS)}  # A=1 … K=13


def standard_deck(jokers: int = 0) -> list[str]:
    """The 52 cards in a fixed order, followed by `jokers` jokers."""
    return [r + s for s in SUITS for r in RANKS] + [JOKER] * jokers


def colour_deck(colours: str = "RBGY", numbers: int = 10) -> list[str]:
    """A deck of coloured number cards, e.g. R1..R10 for each colour."""
    return [f"{c}{n}" for c in colours for n in range(1, numbers + 1)]


def rank(card: str) -> str:
    """The rank character of a standard card (`"T"` for `"TD"`)."""
    return card[0]


def suit(card: str) -> str:
    """The suit character of a standard card (`"D"` for `"TD"`)."""
    return card[1]


def derive_seed(*parts: object) -> int:
    """A 63-bit seed derived from the parts; stable across processes and Python versions."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def make_rng(seed: int) -> random.Random:
    """The game RNG for a seed: all chance in a game comes from one of these."""
    return random.Random(seed)


def seeded_shuffle(cards: list[str], key: str) -> None:
    """Shuffle `cards` in place into an order that depends only on `key` (at most 57 cards)."""
    # Fisher-Yates whose swap indices are the mixed-radix digits of a 256-bit SHA-256 number: each
    # of the n! orders comes out with a bias below n!/2**256 (nil for 40 cards). Seeding a
    # random.Random per shuffle costs several times more, and a reshuffle of the stock happens
    # about every other match in Crosswalk.
    x = int.from_bytes(hashlib.sha256(key.encode()).digest(), "big")
    for i in range(len(cards) - 1, 0, -1):
        x, j = divmod(x, i + 1)
        cards[i], cards[j] = cards[j], cards[i]

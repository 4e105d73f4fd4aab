"""Chance shared by every game: the seeds of future deals, and re-dealing what a seat cannot know.

Each game draws its initial deal from `GameState.rng` and keys every later shuffle (the next round's
deal, a reshuffle of a discard pile) on one *future seed* drawn from that RNG at construction
(`future_seed`). A clone shares the seed, so it replays the real later deals; `determinize` replaces
the seed with a fresh one from the searcher's RNG, so a determinized copy does not.

The cards of the current deal that a seat cannot place are described by a `HiddenDeal`: the cards,
and for each zone (named as in `card_zones()`) how many of them it holds and which of them it may
hold. `HiddenDeal.sample` deals them again at random; `HiddenDeal.possible` says, for each card,
every zone some consistent deal puts it in (a small max-flow), which the conformance kit compares
with what the samples show.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

# Seeds of future chance are 63-bit like arena.cards.derive_seed's.
SEED_BITS = 63


def future_seed(rng: random.Random) -> int:
    """A fresh seed for the later deals of a game, drawn from `rng`."""
    return rng.getrandbits(SEED_BITS)


@dataclass(frozen=True)
class Zone:
    """A zone's share of a hidden deal: `size` unknown cards, each from `allowed` (None: any)."""

    name: str
    size: int
    allowed: frozenset[str] | None = None


@dataclass
class HiddenDeal:
    """The cards a seat cannot place, and the zones they may be in (restricted zones first)."""

    cards: list[str]
    zones: list[Zone] = field(default_factory=list)

    def add(self, name: str, size: int, allowed: Iterable[str] | None = None) -> None:
        """Add a zone holding `size` of the cards, each one of `allowed` (None: any of them)."""
        if size:
            self.zones.append(Zone(name, size, None if allowed is None else frozenset(allowed)))

    def sample(self, rng: random.Random) -> dict[str, list[str]]:
        """A random deal of the cards into the zones, zone by zone in the order they were added."""
        # Restricted zones come first and, in every game, restrict to disjoint sets or leave enough
        # unrestricted cards for the zones after them, so this greedy order never gets stuck.
        left = sorted(self.cards)
        out: dict[str, list[str]] = {}
        for zone in self.zones:
            if zone.allowed is None:
                pool = left
            else:
                pool = [c for c in left if c in zone.allowed]
            if len(pool) < zone.size:
                raise ValueError(f"hidden deal: zone {zone.name} needs {zone.size} of {len(pool)}")
            chosen = rng.sample(pool, zone.size)
            out[zone.name] = chosen
            taken = set(chosen)
            left = [c for c in left if c not in taken]
        if left:
            raise ValueError(f"hidden deal: {len(left)} cards without a zone")
        return out

    def allowed_zones(self, card: str) -> list[str]:
        """The zones whose restriction admits `card` (capacity aside)."""
        return [z.name for z in self.zones if z.allowed is None or card in z.allowed]

    def check(self, actual: dict[str, Sequence[str]]) -> str | None:
        """Why the true placement `actual` (zone -> its unknown cards) is not a deal of this one."""
        sizes = {z.name: z.size for z in self.zones}
        have = {name: len(cards) for name, cards in actual.items() if cards}
        if have != sizes:
            return f"zone sizes {have} are not the declared {sizes}"
        for name, cards in actual.items():
            for card in cards:
                if name not in self.allowed_zones(card):
                    return f"{card} is in {name}, a zone it may not be in"
        return None

    def possible(self) -> dict[str, set[str]]:
        """For each card, every zone that some consistent deal puts it in."""
        names = [z.name for z in self.zones]
        allowed = {c: self.allowed_zones(c) for c in self.cards}
        base = _Flow(self.cards, self.zones, allowed)
        if base.max_flow() < len(self.cards):
            raise ValueError("hidden deal: no consistent deal exists")
        out: dict[str, set[str]] = {}
        for card in self.cards:
            out[card] = set()
            for name in allowed[card]:
                if name in names and _Flow(self.cards, self.zones, allowed, (card, name)).max_flow() \
                        == len(self.cards):
                    out[card].add(name)
        return out


class _Flow:
    """Bipartite cards -> zones flow (augmenting paths), optionally with one card pinned."""

    def __init__(self, cards, zones, allowed, pin=None):
        self.cards = list(cards)
        self.cap = {z.name: z.size for z in zones}
        self.allowed = dict(allowed)
        if pin is not None:
            self.allowed[pin[0]] = [pin[1]]

    def max_flow(self) -> int:
        """Cards placed by a maximum matching respecting zone capacities."""
        members: dict[str, list[str]] = {z: [] for z in self.cap}

        def augment(card: str, current: str | None, seen: set[str]) -> bool:
            # Place `card` (now in zone `current`, or unplaced) in another zone, moving others on.
            for zone in self.allowed[card]:
                if zone == current or zone in seen or zone not in self.cap:
                    continue
                seen.add(zone)
                if len(members[zone]) < self.cap[zone]:
                    members[zone].append(card)
                    return True
                for other in list(members[zone]):
                    if augment(other, zone, seen):
                        members[zone].remove(other)
                        members[zone].append(card)
                        return True
            return False

        return sum(1 for card in self.cards if augment(card, None, set()))

"""Schedulers: which bots meet at which table in which round, as a pure function of the config.

A `Table` lists the bots (by entry index) of one match in their starting seat order; the match then
rotates the seats so each bot sits in each position. Swiss and gauntlet schedulers, which depend on
results so far, will implement the same `rounds` interface.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations


@dataclass(frozen=True)
class Table:
    """One match to play: its round, its number within the round, and its bots by entry index."""

    round: int
    number: int
    bots: tuple[int, ...]


def round_robin(num_bots: int, seats: int, cycles: int = 1) -> list[list[Table]]:
    """Every group of `seats` bots meets once per cycle; one round per cycle."""
    rounds = []
    for cycle in range(cycles):
        groups = list(combinations(range(num_bots), seats))
        rounds.append([Table(cycle, i, group) for i, group in enumerate(groups)])
    return rounds


def seatings(num_seats: int, deals: int, duplicate: bool) -> list[tuple[int, int, tuple[int, ...]]]:
    """(deal, rotation, seating) for each game of a match; seating[seat] = table position.

    With `duplicate`, every deal is played once per rotation so each bot plays every hand from every
    seat; otherwise deal d is played once, in rotation d mod seats.
    """
    plans = []
    for deal in range(deals):
        rotations = range(num_seats) if duplicate else [deal % num_seats]
        for r in rotations:
            plans.append((deal, r, tuple((s + r) % num_seats for s in range(num_seats))))
    return plans

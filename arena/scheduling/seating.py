"""Seatings within a match: which table position sits in which seat in each game."""

from __future__ import annotations


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

"""Interval ends the data does not bound.

A bot that never lost to the rest of its pool (a perfect record, or a set that only ever beat
the others) has no finite maximum-likelihood rating: the data says "at least this good" and
nothing more. Its rating is held by the weak prior of `arena.ratings.fitting`, and a bootstrap
percentile above it would only measure that prior (it came out as `+0`). So that end is open:
`hi` is None and `hi_open` is True (shown `+∞`); the other end, which the data does bound, stays.
Likewise `lo` for a bot that never beat the rest. Which end is open follows from the row's flag,
so stored tables (also those written before this rule) read the same way. Light to import.
"""

from __future__ import annotations

OPEN_ABOVE = frozenset({"all wins", "no losses vs rest"})
OPEN_BELOW = frozenset({"all losses", "no wins vs rest"})


def open_ends(row: dict) -> dict:
    """The row with `lo_open` / `hi_open` set, and the open end's bound (lo or hi) set to None.

    Only a row with an interval has open ends (Elo and fits without bootstrap have none).
    """
    has_interval = row.get("lo") is not None or row.get("hi") is not None
    flag = row.get("flag")
    out = {**row, "lo_open": has_interval and flag in OPEN_BELOW,
           "hi_open": has_interval and flag in OPEN_ABOVE}
    if out["lo_open"]:
        out["lo"] = None
    if out["hi_open"]:
        out["hi"] = None
    return out

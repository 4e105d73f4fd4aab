"""An interval end the data does not bound is open, not `+0` (issue 25)."""

from __future__ import annotations

from arena.cli._app import interval_text, rating_records
from arena.ratings import rate
from arena.ratings.bounds import open_ends


def duel(winner: str, loser: str, n: int, start: int = 0) -> list[dict]:
    """n two-seat games that `winner` wins."""
    return [{"id": f"{winner}-{loser}-{i}", "ordinal": start + i,
             "seats": [{"bot": winner, "team": 0, "rank": 1}, {"bot": loser, "team": 1, "rank": 2}]}
            for i in range(n)]


def test_a_bot_with_all_wins_has_no_upper_bound_and_one_with_all_losses_no_lower():
    games = duel("top", "mid", 4) + duel("mid", "low", 3, 10) + duel("low", "mid", 2, 20) \
        + duel("top", "low", 3, 30) + duel("x", "mid", 1, 40) + duel("mid", "x", 1, 41) \
        + duel("x", "floor", 3, 50) + duel("low", "floor", 2, 60)
    rows = {r["bot"]: r for r in rate(games, "bt", samples=60, seed=4).rows}
    top, floor = rows["top"], rows["floor"]
    assert top["flag"] == "all wins" and top["hi"] is None
    assert top["lo"] is not None and top["lo"] < top["rating"] - 50  # the bounded end stays
    assert floor["flag"] == "all losses" and floor["lo"] is None and floor["hi"] > floor["rating"]
    assert all(r["lo"] is not None and r["hi"] is not None for b, r in rows.items()
               if b not in ("top", "floor"))
    records = {r["bot"]: r for r in rating_records(list(rows.values()))}
    assert records["top"]["hi_open"] and not records["top"]["lo_open"]
    assert records["top"]["plus"] is None and records["top"]["minus"] > 50
    assert interval_text(records["top"]).endswith(" +∞")
    assert interval_text(records["floor"]).startswith("−∞ +")


def test_a_stored_row_with_a_perfect_record_reads_as_open():
    # A table stored before the rule kept a bootstrap percentile there (it came out as +0).
    stored = {"bot": "a", "rating": 1932.0, "lo": 1723.0, "hi": 1932.0, "flag": "all wins"}
    row = open_ends(stored)
    assert row["hi"] is None and row["hi_open"] and row["lo"] == 1723.0 and not row["lo_open"]
    assert not open_ends({**stored, "lo": None, "hi": None})["hi_open"]  # no interval, no end
    (record,) = rating_records([{**stored, "games": 3, "wins": 3, "draws": 0, "losses": 0,
                                 "points": 3, "score_pct": 100.0}])
    assert interval_text(record) == "−209 +∞"

"""Elo: exact values, multi-seat tables, teams, and order by ordinal."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, strategies as st

from arena.ratings import Side, elo, elo_deltas, expected_score


def game(ordinal, *ranks, teams=None, bots="abcd"):
    """A game record with one seat per rank (optionally grouped into teams)."""
    teams = teams or list(range(len(ranks)))
    return {"id": f"g{ordinal}", "ordinal": ordinal,
            "seats": [{"bot": bots[i], "team": teams[i], "rank": r} for i, r in enumerate(ranks)]}


def test_two_player_win_and_draw_k32():
    r = {"a": 1600.0, "b": 1400.0}
    win = elo_deltas(r, [Side(("a",), 1), Side(("b",), 2)], 32)
    assert r["a"] + win["a"] == pytest.approx(1607.6881, abs=1e-4)
    assert r["b"] + win["b"] == pytest.approx(1392.3119, abs=1e-4)
    draw = elo_deltas(r, [Side(("a",), 1), Side(("b",), 1)], 32)
    assert r["a"] + draw["a"] == pytest.approx(1591.6881, abs=1e-4)
    assert r["b"] + draw["b"] == pytest.approx(1408.3119, abs=1e-4)


def test_four_seats_pairwise_scaled_by_k_over_n_minus_one():
    r = {"a": 1600.0, "b": 1550.0, "c": 1520.0, "d": 1439.0}
    d = elo_deltas(r, [Side((x,), i + 1) for i, x in enumerate("abcd")], 32)
    after = [r[x] + d[x] for x in "abcd"]
    assert after == pytest.approx([1611.7224, 1553.9880, 1515.1115, 1428.1781], abs=1e-4)


def test_team_is_rated_by_its_mean_and_members_share_the_change():
    r = {"a": 1600.0, "c": 1400.0, "b": 1500.0, "d": 1500.0}
    d = elo_deltas(r, [Side(("a", "c"), 1), Side(("b", "d"), 2)], 32)
    # Team means are equal (1500 v 1500): a win is worth K/2 to each member.
    assert d == pytest.approx({"a": 16.0, "c": 16.0, "b": -16.0, "d": -16.0})


def test_ratings_follow_ordinal_not_arrival_order():
    games = [game(i, *random.Random(i).choice([(1, 2), (2, 1), (1, 1)])) for i in range(50)]
    shuffled = games[:]
    random.Random(3).shuffle(shuffled)
    assert elo(games) == elo(shuffled)
    reversed_ordinals = [dict(g, ordinal=-g["ordinal"]) for g in games]
    assert elo(reversed_ordinals)[0] != elo(games)[0]


def test_table_counts_pairwise_results():
    table, history = elo([game(0, 1, 2, 2), game(1, 3, 1, 2)], bots="abc")
    rows = {r["bot"]: r for r in table}
    assert (rows["a"]["wins"], rows["a"]["draws"], rows["a"]["losses"]) == (2, 0, 2)
    assert (rows["b"]["wins"], rows["b"]["draws"], rows["b"]["losses"]) == (2, 1, 1)
    assert rows["b"]["score_pct"] == pytest.approx(62.5)
    assert [h["ordinal"] for h in history] == [0, 0, 0, 1, 1, 1]
    assert all(rows[x]["games"] == 2 for x in "abc")


@given(st.lists(st.permutations([1, 2, 3, 4]), min_size=1, max_size=20))
def test_elo_is_zero_sum_for_individual_tables(orders):
    table, _ = elo([game(i, *order) for i, order in enumerate(orders)])
    assert sum(r["rating"] for r in table) == pytest.approx(4 * 1500, abs=1e-3)


@given(st.floats(-800, 800), st.floats(-800, 800))
def test_expected_scores_sum_to_one(a, b):
    assert expected_score(a, b) + expected_score(b, a) == pytest.approx(1.0)

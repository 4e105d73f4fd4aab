"""Elo: exact values, multi-seat tables, teams, and order by ordinal."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.errors import ConfigError
from arena.ratings import (
    DEFAULT_K,
    DEFAULT_RATING,
    METHODS,
    Side,
    default_method,
    elo,
    elo_deltas,
    expected_score,
    rate,
)


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


# --- rate(): the front door ---------------------------------------------------------------

ROW_KEYS = ["bot", "rating", "lo", "hi", "games", "wins", "draws", "losses", "points",
            "score_pct", "flag"]


def duels(n=60, seed=0):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.sample("abcd", 2)
        out.append(game(i, *rng.choice([(1, 2), (2, 1), (1, 1), (1, 2)]),
                        bots=a + b))
    return out


def test_defaults_live_in_one_place():
    assert (DEFAULT_RATING, DEFAULT_K) == (1500.0, 32.0)
    assert METHODS == ("elo", "bt", "pl")


def test_default_method_by_number_of_sides():
    assert default_method(duels()) == "bt"
    assert default_method(duels() + [game(99, 1, 2, 3)]) == "pl"
    # Four seats in two partnerships are two sides.
    assert default_method([game(0, 1, 2, 1, 2, teams=[0, 1, 0, 1])]) == "bt"


def test_rate_elo_is_the_incremental_table_with_common_columns():
    games = duels()
    result = rate(games, "elo", bots=["idle"])
    table, history = elo(games, bots=["idle"])
    assert result.method == "elo" and result.history == history and result.los == {}
    assert [r["bot"] for r in result.rows] == [r["bot"] for r in table]
    assert all(list(r) == ROW_KEYS and r["lo"] is None and r["hi"] is None for r in result.rows)
    idle = next(r for r in result.rows if r["bot"] == "idle")
    assert idle["flag"] == "no games" and idle["rating"] == DEFAULT_RATING


@pytest.mark.parametrize("method", ["bt", "pl"])
def test_rate_ml_rows_intervals_and_los(method):
    result = rate(duels(), method, bots=["idle"], samples=40, seed=3)
    assert result.method == method and result.history == [] and result.groups == []
    rows = {r["bot"]: r for r in result.rows}
    assert [r["rating"] for r in result.rows] == sorted((r["rating"] for r in result.rows),
                                                        reverse=True)
    for bot in "abcd":
        r = rows[bot]
        assert list(r) == ROW_KEYS
        assert r["lo"] < r["rating"] < r["hi"]
        assert r["wins"] + r["draws"] + r["losses"] == r["games"]
        assert r["points"] == r["wins"] + r["draws"] / 2
        for other in "abcd":
            if other != bot:
                assert result.los[bot][other] + result.los[other][bot] == pytest.approx(1.0)
    assert rows["idle"] == {"bot": "idle", "rating": DEFAULT_RATING, "lo": None, "hi": None,
                            "games": 0, "wins": 0.0, "draws": 0.0, "losses": 0.0, "points": 0.0,
                            "score_pct": 0.0, "flag": "no games"}
    assert rate(duels(), method, samples=40, seed=3) == rate(duels(), method, samples=40, seed=3)


def test_rate_without_bootstrap_has_no_interval_but_a_los_from_the_curvature():
    result = rate(duels(), "bt", samples=0)
    assert all(r["lo"] is None and r["hi"] is None for r in result.rows)
    best, worst = result.rows[0]["bot"], result.rows[-1]["bot"]
    assert result.los[best][worst] > 0.5


def test_rate_reports_pools_that_never_met_and_anchors():
    games = (duels() + [game(100 + i, 1, 2, bots="xy") for i in range(3)]
             + [game(200, 2, 1, bots="xy")])
    for method in METHODS:
        result = rate(games, method, samples=0)
        assert sorted(map(sorted, result.groups)) == [["a", "b", "c", "d"], ["x", "y"]]
    anchored = rate(games, "pl", anchor=("a", 2000.0), average=1000.0, samples=0)
    rows = {r["bot"]: r["rating"] for r in anchored.rows}
    assert rows["a"] == pytest.approx(2000.0)
    assert rows["x"] + rows["y"] == pytest.approx(2000.0)
    assert "x" not in anchored.los["a"]


def test_rate_counts_like_elo():
    games = [game(0, 1, 2, 2), game(1, 3, 1, 2)]
    elo_rows = {r["bot"]: r for r in rate(games, "elo").rows}
    pl_rows = {r["bot"]: r for r in rate(games, "pl", samples=0).rows}
    for bot in "abc":
        for key in ("games", "wins", "draws", "losses", "points", "score_pct"):
            assert pl_rows[bot][key] == elo_rows[bot][key]


def test_rate_rejects_unknown_methods():
    with pytest.raises(ConfigError, match="unknown rating method 'glicko'"):
        rate(duels(), "glicko")

"""Team games (Battlefield Cribbage teams, Xeri partnerships) give sensible ratings and intervals,
even on an event too small to pin every partner down (issue 25)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.ratings import rate


def team_games(strengths: list[float], tables: int, seed: int) -> list[dict]:
    """4-seat games of two partnerships drawn at random, won by the stronger mean as the model says."""
    rng = np.random.default_rng(seed)
    s = np.asarray(strengths, dtype=float)
    games = []
    for t in range(tables):
        four = rng.choice(len(s), 4, replace=False)
        first, second = four[[0, 2]], four[[1, 3]]
        p_first = 1 / (1 + 10 ** ((s[second].mean() - s[first].mean()) / 400))
        first_wins = rng.random() < p_first
        seats = [{"bot": f"b{four[k]}", "team": k % 2,
                  "rank": 1 if (k % 2 == 0) == first_wins else 2} for k in range(4)]
        games.append({"id": str(t), "ordinal": t, "seats": seats})
    return games


def spearman(x: list[float], y: list[float]) -> float:
    """Rank correlation (no ties in these tests)."""
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


@pytest.mark.parametrize("method", ["bt", "pl"])
def test_known_strengths_are_recovered_with_moderate_intervals(method):
    strengths = list(np.linspace(400, -400, 8))
    bots = [f"b{i}" for i in range(8)]
    result = rate(team_games(strengths, 400, seed=3), method, bots=bots, samples=60, seed=1)
    rating = {r["bot"]: r["rating"] for r in result.rows}
    assert spearman([rating[b] for b in bots], strengths) >= 0.9
    assert rating["b0"] > rating["b7"] + 300
    for r in result.rows:
        assert r["lo"] <= r["rating"] <= r["hi"]
        assert 50 < r["hi"] - r["lo"] < 500


def test_a_small_team_event_has_finite_ratings_and_intervals():
    # 12 tables of 8 bots: the fit used to run off to ratings of ±10,000 with intervals of
    # 20,000-58,000 Elo and rank bots with half their games won below those with a quarter.
    bots = [f"b{i}" for i in range(8)]
    result = rate(team_games(list(np.linspace(300, -300, 8)), 12, seed=1), "bt", bots=bots,
                  samples=100, seed=1)
    for r in result.rows:
        assert 900 < r["rating"] < 2100
        assert r["hi"] - r["lo"] < 1000
    # A better score is a better rating here: everyone met everyone's partners often enough.
    by_rating = [r["score_pct"] for r in result.rows]
    assert by_rating[0] == max(by_rating) and by_rating[-1] == min(by_rating)


def test_partners_who_always_play_together_share_a_finite_rating():
    # a+b always beat c+d: nothing tells a from b, and the pair's edge has no finite estimate.
    games = [{"id": str(i), "ordinal": i,
              "seats": [{"bot": "a", "team": 0, "rank": 1}, {"bot": "c", "team": 1, "rank": 2},
                        {"bot": "b", "team": 0, "rank": 1}, {"bot": "d", "team": 1, "rank": 2}]}
             for i in range(6)]
    rows = {r["bot"]: r for r in rate(games, "bt", samples=50, seed=2).rows}
    assert rows["a"]["rating"] == pytest.approx(rows["b"]["rating"], abs=0.01)
    assert rows["c"]["rating"] == pytest.approx(rows["d"]["rating"], abs=0.01)
    assert 0 < rows["a"]["rating"] - rows["c"]["rating"] < 1500

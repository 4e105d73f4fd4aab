"""LOS, trinomial and pentanomial Elo differences, the LOS matrix and fishtest's GSPRT."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from arena.ratings import sprt
from arena.ratings.sequential import SequentialTest, bounds, llr
from arena.ratings.stats import (
    elo_diff_pentanomial,
    elo_diff_trinomial,
    los,
    los_matrix,
    score_to_elo,
)


def test_los_4307_wins_4063_losses():
    assert los(4307, 4063) == pytest.approx(0.9962, abs=5e-5)
    assert los(0, 0) == 0.5
    assert los(10, 10) == 0.5


def test_pentanomial_elo_and_interval():
    elo, lo, hi = elo_diff_pentanomial([485, 1923, 2942, 1937, 594])
    assert elo == pytest.approx(5.11, abs=5e-3)
    assert lo == pytest.approx(1.21, abs=5e-3)
    assert hi == pytest.approx(9.02, abs=5e-3)


def test_trinomial_matches_a_direct_computation():
    w, d, l = 120, 200, 80  # noqa: E741 (wins, draws, losses)
    n = w + d + l
    mu = (w + d / 2) / n
    sd = math.sqrt((w * (1 - mu) ** 2 + d * (0.5 - mu) ** 2 + l * mu ** 2) / n / n)
    to_elo = lambda s: -400 * math.log10(1 / s - 1)  # noqa: E731
    margin = (to_elo(mu + 1.959964 * sd) - to_elo(mu - 1.959964 * sd)) / 2
    elo, lo, hi = elo_diff_trinomial(w, d, l)
    assert elo == pytest.approx(to_elo(mu))
    assert (lo, hi) == pytest.approx((to_elo(mu) - margin, to_elo(mu) + margin), abs=1e-4)
    assert elo_diff_trinomial(5, 5, 5)[0] == pytest.approx(0.0)


def test_score_to_elo_edges():
    assert score_to_elo(1.0) == math.inf and score_to_elo(0.0) == -math.inf
    assert score_to_elo(0.75) == pytest.approx(190.8485, abs=1e-4)


def test_los_matrix_from_samples_and_covariance():
    samples = np.array([[3.0, 1.0, np.nan], [0.0, 2.0, np.nan], [5.0, 1.0, 4.0], [1.0, 1.0, 2.0]])
    m = los_matrix(["a", "b", "c"], [2.0, 1.0, 3.0], samples=samples)
    assert m["a"]["b"] == pytest.approx((2 + 0.5) / 4)
    assert m["b"]["a"] == pytest.approx(1 - m["a"]["b"])
    assert m["c"]["a"] == pytest.approx(0.5)  # only the two samples in which c was rated
    cov = np.array([[100.0, 20.0, np.nan], [20.0, 100.0, np.nan], [np.nan, np.nan, 50.0]])
    m = los_matrix(["a", "b", "c"], [1510.0, 1500.0, 1400.0], covariance=cov)
    assert m["a"]["b"] == pytest.approx(0.5 * (1 + math.erf(10 / math.sqrt(160) / math.sqrt(2))))
    assert "c" not in m["a"] and m["c"] == {}  # other pool: never compared


def direct_llr(counts, elo0, elo1, model):
    """The GSPRT's LLR by brute force: constrained multinomial MLEs with SLSQP."""
    counts = np.asarray(counts, float)
    scores = np.linspace(0, 1, len(counts))
    counts = np.where(counts == 0, 1e-3, counts)
    freq = counts / counts.sum()

    def constrained(target):
        if model == "logistic":
            constraint = lambda q: q @ scores - 1 / (1 + 10 ** (-target / 400))  # noqa: E731
        else:
            t = target / (800 / math.log(10)) * (1 if len(counts) == 3 else math.sqrt(2))

            def constraint(q):
                mu = q @ scores
                return (mu - 0.5) - t * math.sqrt(q @ (scores - mu) ** 2)
        res = minimize(lambda q: -freq @ np.log(q), freq, method="SLSQP",
                       bounds=[(1e-12, 1)] * len(freq),
                       constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1},
                                    {"type": "eq", "fun": constraint}],
                       options={"ftol": 1e-15, "maxiter": 1000})
        return res.x

    q0, q1 = constrained(elo0), constrained(elo1)
    return counts.sum() * freq @ (np.log(q1) - np.log(q0))


@pytest.mark.parametrize("counts,elo0,elo1,model", [
    ([1100, 2300, 1250], 0, 2, "logistic"),
    ([300, 1500, 3100, 1600, 350], 0, 2, "normalized"),
    ([300, 1500, 3100, 1600, 350], -1, 3, "logistic"),
    ([900, 2000, 1050], 0, 5, "normalized"),
    ([0, 40, 100, 45, 0], 0, 2, "logistic"),
])
def test_llr_matches_a_direct_numeric_evaluation(counts, elo0, elo1, model):
    assert llr(counts, elo0, elo1, model) == pytest.approx(direct_llr(counts, elo0, elo1, model),
                                                           rel=1e-4, abs=1e-4)


def test_sprt_bounds_and_decisions():
    lower, upper = bounds(0.05, 0.05)
    assert (lower, upper) == pytest.approx((math.log(0.05 / 0.95), math.log(0.95 / 0.05)))
    assert sprt([1000, 2000, 1400], 0, 5).decision == "H1"
    assert sprt([1400, 2000, 1000], 0, 5).decision == "H0"
    undecided = sprt([10, 20, 11], 0, 5)
    assert undecided.decision is None and lower < undecided.llr < upper
    with pytest.raises(ValueError, match="model"):
        sprt([1, 2, 3], 0, 5, model="gaussian")


def test_sequential_test_stops_once_decided():
    test = SequentialTest(0, 5, pentanomial=True)
    pattern = [0, 0.5, 0.5, 1, 1, 1, 1, 1.5, 1.5, 1.5, 2]
    played = 0
    while not test.stop and played < 100_000:
        test.add(pattern[played % len(pattern)])
        played += 1
    assert test.result().decision == "H1"
    assert test.counts == pytest.approx(np.bincount(
        [int(2 * pattern[i % len(pattern)]) for i in range(played)], minlength=5))
    with pytest.raises(ValueError):
        test.add(0.3)


def test_the_package_sprt_is_the_function_whatever_was_imported_before():
    import subprocess
    import sys
    code = ("import arena.ratings.sequential, arena.scheduling.gauntlet\n"
            "from arena.ratings import sprt\n"
            "print(callable(sprt) and sprt.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "arena.ratings.sequential"

"""Head-to-head statistics: likelihood of superiority and Elo differences with 95 % margins.

- `los(wins, losses)`: the normal approximation used by cutechess and Ordo; draws carry no
  information about who is better, so they are left out.
- `elo_diff_trinomial(wins, draws, losses)`: as cutechess. The per-game score (1, 0.5, 0) has
  mean mu and variance var; mu's standard error is sqrt(var / n). The margin is half the Elo
  distance between mu -/+ 1.96 standard errors, reported symmetrically around Elo(mu).
- `elo_diff_pentanomial(counts)`: as fastchess, for duplicate-deal pairs scoring 0, 0.5, 1, 1.5 or
  2 points: the pair is the unit, so the variance is that of the per-pair score (which keeps the
  luck that the two rotations of a deal cancel out of the error bar).
- `los_matrix`: P(bot a is stronger than bot b) for every two bots of a fit, either the share of
  bootstrap samples in which a's rating beats b's (ties count half) or, without samples, the
  normal approximation Phi((R_a - R_b) / sd(R_a - R_b)) with the covariance from the inverse
  Hessian of the likelihood. Pairs in different pools (never compared) are left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import ndtr, ndtri

Z95 = float(ndtri(0.975))  # 1.959963984540054


def los(wins: float, losses: float) -> float:
    """Likelihood of superiority: 0.5 * (1 + erf((w - l) / sqrt(2 (w + l))))."""
    if wins + losses <= 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def score_to_elo(score: float) -> float:
    """The Elo difference whose expected score is `score` (±inf at 1 and 0)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def _elo_with_margin(scores: Sequence[float],
                     counts: Sequence[float]) -> tuple[float, float, float]:
    """Elo of the mean score and its symmetric 95 % interval, from a score distribution."""
    counts = np.asarray(counts, dtype=float)
    scores = np.asarray(scores, dtype=float)
    n = counts.sum()
    if n <= 0:
        return 0.0, -math.inf, math.inf
    mean = float(counts @ scores / n)
    variance = float(counts @ (scores - mean) ** 2 / n)
    error = Z95 * math.sqrt(variance / n)
    elo = score_to_elo(mean)
    margin = (score_to_elo(mean + error) - score_to_elo(mean - error)) / 2.0
    return elo, elo - margin, elo + margin


def elo_diff_trinomial(wins: float, draws: float, losses: float) -> tuple[float, float, float]:
    """(Elo difference, low, high) of the 95 % interval from W/D/L counts, as cutechess."""
    return _elo_with_margin([1.0, 0.5, 0.0], [wins, draws, losses])


def elo_diff_pentanomial(counts: Sequence[float]) -> tuple[float, float, float]:
    """(Elo difference, low, high) from pair counts scoring 0, 0.5, 1, 1.5, 2, as fastchess."""
    if len(counts) != 5:
        raise ValueError(f"pentanomial counts need 5 entries, got {len(counts)}")
    return _elo_with_margin([0.0, 0.25, 0.5, 0.75, 1.0], counts)


def los_matrix(bots: Sequence[str], ratings: Sequence[float], *,
               samples: np.ndarray | None = None,
               covariance: np.ndarray | None = None,
               pools: Sequence[int] | None = None) -> dict[str, dict[str, float]]:
    """P(a stronger than b) for every two bots: from bootstrap samples, else from the covariance.

    `pools` (one label per bot, -1 for none) leaves out pairs that were never compared.
    """
    ratings = np.asarray(ratings, dtype=float)
    n = len(bots)
    if samples is not None and len(samples):
        samples = np.asarray(samples, dtype=float)
        known = ~np.isnan(samples)
        prob = np.full((n, n), np.nan)
        for a in range(n):
            both = known[:, [a]] & known
            better = (samples[:, [a]] > samples) & both
            tied = (samples[:, [a]] == samples) & both
            counted = both.sum(axis=0)
            with np.errstate(invalid="ignore", divide="ignore"):
                prob[a] = (better.sum(axis=0) + 0.5 * tied.sum(axis=0)) / counted
            prob[a, counted == 0] = np.nan
    elif covariance is not None:
        cov = np.asarray(covariance, dtype=float)
        var = np.diag(cov)
        spread = var[:, None] + var[None, :] - 2 * cov
        with np.errstate(invalid="ignore", divide="ignore"):
            z = (ratings[:, None] - ratings[None, :]) / np.sqrt(np.maximum(spread, 0.0))
        prob = ndtr(z)
        prob[np.isnan(spread)] = np.nan
    else:
        raise ValueError("los_matrix needs bootstrap samples or a covariance")
    if pools is not None:
        label = np.asarray(pools)
        prob[(label[:, None] != label[None, :]) | (label[:, None] < 0)] = np.nan
    out: dict[str, dict[str, float]] = {}
    for a in range(n):
        row = {bots[b]: float(prob[a, b]) for b in range(n) if b != a and not np.isnan(prob[a, b])}
        out[bots[a]] = row
    return out

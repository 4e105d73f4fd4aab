"""Sequential probability ratio test, as fishtest's GSPRT.

H0: the Elo difference is elo0; H1: it is elo1. Results are either trinomial counts
(losses, draws, wins) or pentanomial counts of duplicate-deal pairs scoring 0, 0.5, 1, 1.5, 2
points, both in ascending order of score (fishtest's order). Zero counts are replaced by 1e-3 to
keep the log-likelihoods finite.

The test is generalised: under each hypothesis the outcome distribution is the maximum-likelihood
distribution on the observed outcomes subject to that hypothesis, found with a Lagrange multiplier
(one root of a secular equation, solved by scipy's brentq). The LLR is
N * sum_i p_i * log(q1_i / q0_i) for the observed frequencies p and the two constrained fits.

Models. "logistic": the hypotheses fix the expected score s = 1 / (1 + 10 ** (-elo / 400)).
"normalized": they fix the t-value (mu - 0.5) / sigma to nelo / (800 / ln 10) per game, sqrt(2)
times that per pentanomial pair; its constrained fit is found by fishtest's fixed-point iteration.

Bounds: lower = log(beta / (1 - alpha)), upper = log((1 - beta) / alpha); the decision is "H1"
once the LLR reaches the upper bound, "H0" once it falls to the lower one, else None (go on).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

NELO_PER_T = 800.0 / math.log(10.0)  # normalised Elo per unit of t-value
MODELS = ("logistic", "normalized")


@dataclass(frozen=True)
class SprtResult:
    """The state of a test: its LLR, both bounds and the decision ("H0", "H1" or None)."""

    llr: float
    lower: float
    upper: float
    decision: str | None
    elo0: float
    elo1: float
    model: str


def _distribution(counts: Sequence[float]) -> tuple[float, np.ndarray, np.ndarray]:
    """(total, outcome scores in [0, 1], frequencies), zero counts regularised."""
    counts = np.asarray(counts, dtype=float)
    if len(counts) not in (3, 5):
        raise ValueError("SPRT counts need 3 (L, D, W) or 5 (pentanomial) entries, "
                         f"got {len(counts)}")
    if np.any(counts < 0):
        raise ValueError("SPRT counts cannot be negative")
    counts = np.where(counts == 0, 1e-3, counts)
    total = counts.sum()
    return total, np.linspace(0.0, 1.0, len(counts)), counts / total


def _tilted(freq: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """The distribution freq_i / (1 + x * shift_i) with x the root that makes its mean shift 0."""
    lo, hi = -1.0 / shift.max(), -1.0 / shift.min()
    eps = 1e-12 * (hi - lo)

    def secular(x: float) -> float:
        """Mean of the shift under the tilted distribution (zero at the root)."""
        return float(np.sum(freq * shift / (1.0 + x * shift)))

    x = brentq(secular, lo + eps, hi - eps, xtol=1e-15, rtol=1e-15, maxiter=500)
    return freq / (1.0 + x * shift)


def _mle_with_mean(scores: np.ndarray, freq: np.ndarray, mean: float) -> np.ndarray:
    """Maximum-likelihood distribution on `scores` with the given mean."""
    return _tilted(freq, scores - mean)


def _mle_with_t(scores: np.ndarray, freq: np.ndarray, ref: float, t: float) -> np.ndarray:
    """Maximum-likelihood distribution on `scores` with (mean - ref) / sd = t."""
    q = np.full(len(freq), 1.0 / len(freq))
    for _ in range(100):
        mu = q @ scores
        sigma = math.sqrt(q @ (scores - mu) ** 2)
        # Stationarity of the Lagrangian, linearised around the current mean and deviation.
        shift = scores - ref - t * sigma * (1.0 + ((mu - scores) / sigma) ** 2) / 2.0
        new = _tilted(freq, shift)
        done = np.max(np.abs(new - q)) < 1e-12
        q = new
        if done:
            break
    return q


def llr(counts: Sequence[float], elo0: float, elo1: float, model: str = "logistic") -> float:
    """Generalised log-likelihood ratio of H1 (elo1) against H0 (elo0) for the counts."""
    total, scores, freq = _distribution(counts)
    if model == "logistic":
        q0, q1 = (_mle_with_mean(scores, freq, 1.0 / (1.0 + 10.0 ** (-e / 400.0)))
                  for e in (elo0, elo1))
    elif model == "normalized":
        per_unit = 1.0 if len(counts) == 3 else math.sqrt(2.0)
        q0, q1 = (_mle_with_t(scores, freq, 0.5, e / NELO_PER_T * per_unit) for e in (elo0, elo1))
    else:
        raise ValueError(f"unknown SPRT model {model!r}; choose one of {', '.join(MODELS)}")
    return float(total * np.sum(freq * (np.log(q1) - np.log(q0))))


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper) LLR bounds for error rates alpha (false H1) and beta (false H0)."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def sprt(counts: Sequence[float], elo0: float, elo1: float, alpha: float = 0.05,
         beta: float = 0.05, model: str = "logistic") -> SprtResult:
    """GSPRT of elo0 against elo1 on trinomial (L, D, W) or pentanomial counts."""
    lower, upper = bounds(alpha, beta)
    value = llr(counts, elo0, elo1, model)
    decision = "H1" if value >= upper else "H0" if value <= lower else None
    return SprtResult(value, lower, upper, decision, elo0, elo1, model)


class SequentialTest:
    """A running SPRT that a gauntlet feeds results into and asks whether to stop."""

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05,
                 model: str = "logistic", pentanomial: bool = False):
        if model not in MODELS:
            raise ValueError(f"unknown SPRT model {model!r}; choose one of {', '.join(MODELS)}")
        self.elo0, self.elo1, self.alpha, self.beta, self.model = elo0, elo1, alpha, beta, model
        self.counts = [0] * (5 if pentanomial else 3)

    def add(self, points: float) -> None:
        """Record one game's score (0, 0.5, 1) or, pentanomial, one pair's points (0 to 2)."""
        slot = points * 2
        if slot != int(slot) or not 0 <= slot < len(self.counts):
            raise ValueError(f"a score of {points} does not fit {len(self.counts)} outcomes")
        self.counts[int(slot)] += 1

    def result(self) -> SprtResult:
        """The test on every result so far."""
        return sprt(self.counts, self.elo0, self.elo1, self.alpha, self.beta, self.model)

    @property
    def stop(self) -> bool:
        """True once a hypothesis is accepted."""
        return self.result().decision is not None

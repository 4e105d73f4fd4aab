"""Bradley–Terry ratings: maximum likelihood over all pairwise results at once.

Model. Side i beats side j with probability 1 / (1 + 10 ** ((R_j - R_i) / 400)), the Elo scale
(400 points = 10:1 odds). A draw counts as half a win and half a loss: it contributes
0.5 * log P(i beats j) + 0.5 * log P(j beats i). All games are fitted together, so the result does
not depend on their order (as Ordo).

Tables of N > 2 sides contribute their N(N-1)/2 pairwise results by rank (a shared rank is a draw),
each weighted 1/(N-1): every side then takes part in pairs worth one game in total, so a 4-seat
table weighs about as much per player as one 2-player game and large tables do not swamp the pool.

Teams. A side's strength is the mean of its members' ratings and every member shares it, as in the
incremental Elo. Members who always play together get equal shares (the data cannot tell them
apart).

Pairwise results are first summed into a sparse win matrix over side compositions (points and
games for every pair of compositions that met), so the likelihood costs one pass over the pairs
that actually met, not over the games. Anchoring, pools that never met and perfect records are
handled as described in `arena.ratings.fitting`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from scipy import sparse
from scipy.special import expit

from arena.ratings.elo import DEFAULT_RATING
from arena.ratings.fitting import PRECISE, Fit, Objective, Tables, compact, compile_games, fit_pools


class BradleyTerryObjective(Objective):
    """Negative log-likelihood of the pairwise results of one pool's tables."""

    def __init__(self, tables: Tables):
        a, b, score, weight = tables.pairs
        ua, ub = tables.side_unit[a], tables.side_unit[b]
        n_units = tables.unit_members.shape[0]
        # One entry per unordered pair of compositions: the win matrix in coordinate form.
        swap = ua > ub
        first, second = np.where(swap, ub, ua), np.where(swap, ua, ub)
        points = weight * np.where(swap, 1.0 - score, score)
        pair, inverse = np.unique(first * n_units + second, return_inverse=True)
        self.points = np.bincount(inverse, points)
        self.weight = np.bincount(inverse, weight)
        first, second = np.divmod(pair, n_units)
        strength = tables.unit_strength
        difference = strength[first] - strength[second]
        self.difference = compact(difference)
        self.difference_t = compact(difference.T)
        self.n_bots = tables.n_bots
        self.n_tables = tables.n_tables
        self._curvature_at: tuple[bytes, np.ndarray] | None = None

    def value_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Negative log-likelihood of the win matrix and its gradient."""
        d = self.difference @ theta
        value = np.sum(self.weight * np.logaddexp(0.0, -d) + (self.weight - self.points) * d)
        return float(value), self.difference_t @ (self.weight * expit(d) - self.points)

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Hessian times v: D' diag(n p (1 - p)) D v."""
        return self.difference_t @ (self._curvature(theta) * (self.difference @ v))

    def hessian(self, theta: np.ndarray) -> np.ndarray:
        """D' diag(n p (1 - p)) D, dense."""
        weighted = self.difference_t @ sparse.diags(self._curvature(theta))
        product = weighted @ self.difference
        return product.toarray() if sparse.issparse(product) else np.asarray(product)

    def _curvature(self, theta: np.ndarray) -> np.ndarray:
        key = theta.tobytes()
        if self._curvature_at is None or self._curvature_at[0] != key:
            d = self.difference @ theta
            self._curvature_at = (key, self.weight * expit(d) * expit(-d))
        return self._curvature_at[1]


def fit_tables(tables: Tables, *, average: float = DEFAULT_RATING,
               anchor: tuple[str, float] | None = None, start: np.ndarray | None = None,
               tolerance: float = PRECISE) -> Fit:
    """Bradley–Terry fit of compiled tables."""
    return fit_pools(tables, "bt", BradleyTerryObjective, average=average, anchor=anchor,
                     start=start, tolerance=tolerance)


def bradley_terry(games: Iterable[dict], *, bots: Iterable[str] = (),
                  average: float = DEFAULT_RATING,
                  anchor: tuple[str, float] | None = None) -> Fit:
    """Bradley–Terry maximum-likelihood ratings of games (pool mean `average` or `anchor`)."""
    return fit_tables(compile_games(games, bots), average=average, anchor=anchor)

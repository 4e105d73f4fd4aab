"""Plackett–Luce ratings: maximum likelihood over whole finishing orders.

Model. With gamma = 10 ** (R / 400) (the Elo scale), a table's finishing order is drawn by
picking the winner among all sides with probability gamma_i / sum(gamma), then the runner-up
among the rest, and so on. For two sides this is Bradley–Terry.

Ties. A tied block's likelihood is the geometric mean of the likelihoods of every ordering of its
sides (the sides of later blocks still come after it). Averaging log-likelihoods over those
orderings is exact and cheap: when q sides of a block of m are still unplaced, they are a uniformly
random q-subset, so the block contributes, for each q, the mean over its q-subsets Q of
-log(sum of gamma over Q and the later blocks). For two sides a tie gives
0.5 * log P(i first) + 0.5 * log P(j first): Bradley–Terry with a draw counting half.

Teams are rated as in Bradley–Terry (a side is its members' mean, every member shares it).
Anchoring, pools that never met and perfect records are handled as in `arena.ratings.fitting`.

Vectorisation. Tables are grouped by their number of sides and tie pattern; each pattern's terms
(the sets whose log-sum-exp enters the likelihood) are built once and applied to all its tables.
Terms of equal size form one (terms × size) array whose strengths come from a single sparse
matrix product with the bot strengths (and whose gradient goes back through its transpose), so
value, gradient and Hessian-vector product are a handful of numpy operations over every table.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from itertools import combinations
from math import comb

import numpy as np
from scipy import sparse

from arena.ratings.elo import DEFAULT_RATING
from arena.ratings.fitting import PRECISE, Fit, Objective, Tables, compact, compile_games, fit_pools


@cache
def _pattern_terms(n: int, tie_mask: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """Terms (positions in finishing order, weight) of an n-side table with the given ties.

    Bit k of tie_mask says positions k and k+1 share a rank.
    """
    blocks, block = [], [0]
    for pos in range(1, n):
        if tie_mask >> (pos - 1) & 1:
            block.append(pos)
        else:
            blocks.append(block)
            block = [pos]
    blocks.append(block)
    terms = []
    for k, block in enumerate(blocks):
        later = tuple(p for b in blocks[k + 1:] for p in b)
        m = len(block)
        for q in range(1, m + 1):
            for subset in combinations(block, q):
                terms.append((subset + later, 1.0 / comb(m, q)))
    return tuple(terms)


def _row_max(values: np.ndarray) -> np.ndarray:
    """Maximum of each row, column by column (numpy's reduce along a short axis is slow)."""
    top = values[:, 0].copy()
    for column in range(1, values.shape[1]):
        np.maximum(top, values[:, column], out=top)
    return top


class PlackettLuceObjective(Objective):
    """Negative log-likelihood of the finishing orders of one pool's tables."""

    def __init__(self, tables: Tables):
        sizes = tables.sides_per_table()
        n_sides = len(tables.side_rank)
        by_rank = np.lexsort((tables.side_rank, tables.side_table()))
        # Numerator: every side's own strength once, less the singleton terms (which cancel it).
        coefficient = np.zeros(n_sides)
        by_width: dict[int, tuple[list[np.ndarray], list[np.ndarray]]] = {}
        for n in np.unique(sizes[sizes >= 2]):
            start = tables.side_start[:-1][sizes == n]
            ordered = by_rank[start[:, None] + np.arange(n)]
            ranks = tables.side_rank[ordered]
            masks = (ranks[:, 1:] == ranks[:, :-1]) @ (1 << np.arange(n - 1))
            coefficient[ordered.ravel()] += 1.0
            for mask in np.unique(masks):
                these = ordered[masks == mask]
                for positions, weight in _pattern_terms(int(n), int(mask)):
                    if len(positions) == 1:
                        np.add.at(coefficient, these[:, positions[0]], -weight)
                        continue
                    sides, weights = by_width.setdefault(len(positions), ([], []))
                    sides.append(these[:, list(positions)])
                    weights.append(np.full(len(these), weight))
        strength = tables.unit_strength[tables.side_unit]
        # The numerator is linear in the bot strengths.
        self.linear = np.asarray(strength.T @ coefficient).ravel()
        # Per term width, one matrix from bot strengths to the strengths of every term's sides.
        self.groups = []
        for width, (sides, weights) in sorted(by_width.items()):
            gather = strength[np.concatenate(sides).ravel()]
            self.groups.append((width, compact(gather), compact(gather.T),
                                np.concatenate(weights)))
        self.n_bots = tables.n_bots
        self.n_tables = tables.n_tables
        self._softmax_at: tuple[bytes, list[np.ndarray]] | None = None

    def _softmax(self, theta: np.ndarray) -> tuple[float, list[np.ndarray]]:
        """Weighted sum of the terms' log-sum-exp, and each term's softmax over its sides."""
        total, softmax = 0.0, []
        for width, gather, _, weight in self.groups:
            values = (gather @ theta).reshape(-1, width)
            top = _row_max(values)
            e = np.exp(values - top[:, None])
            norm = e @ np.ones(width)
            total += float(weight @ (top + np.log(norm)))
            softmax.append(e / norm[:, None])
        self._softmax_at = (theta.tobytes(), softmax)
        return total, softmax

    def value_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Negative log-likelihood of the finishing orders and its gradient."""
        value, softmax = self._softmax(theta)
        grad = -self.linear.copy()
        for (_, _, scatter, weight), p in zip(self.groups, softmax):
            grad += scatter @ (weight[:, None] * p).ravel()
        return value - float(self.linear @ theta), grad

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Hessian times v: each term adds w (diag(p) - p p') over its sides."""
        if self._softmax_at is None or self._softmax_at[0] != theta.tobytes():
            self._softmax(theta)
        out = np.zeros(self.n_bots)
        for (width, gather, scatter, weight), p in zip(self.groups, self._softmax_at[1]):
            vs = (gather @ v).reshape(-1, width)
            vs -= np.einsum("ij,ij->i", p, vs)[:, None]
            vs *= p
            vs *= weight[:, None]
            out += scatter @ vs.ravel()
        return out

    def hessian(self, theta: np.ndarray) -> np.ndarray:
        """The Hessian, dense: each term's w (diag(p) - p p') block mapped onto the bots."""
        _, softmax = self._softmax(theta)
        out = np.zeros((self.n_bots, self.n_bots))
        for (width, gather, scatter, weight), p in zip(self.groups, softmax):
            slot = np.arange(len(p) * width).reshape(-1, width)
            rows = np.repeat(slot, width, axis=1).ravel()
            cols = np.tile(slot, (1, width)).ravel()
            block = weight[:, None, None] * (p[:, :, None] * np.eye(width)
                                              - p[:, :, None] * p[:, None, :])
            terms = sparse.csr_matrix((block.ravel(), (rows, cols)), shape=(slot.size, slot.size))
            product = scatter @ terms @ gather
            out += product.toarray() if sparse.issparse(product) else np.asarray(product)
        return out


def fit_tables(tables: Tables, *, average: float = DEFAULT_RATING,
               anchor: tuple[str, float] | None = None, start: np.ndarray | None = None,
               tolerance: float = PRECISE) -> Fit:
    """Plackett–Luce fit of compiled tables."""
    return fit_pools(tables, "pl", PlackettLuceObjective, average=average, anchor=anchor,
                     start=start, tolerance=tolerance)


def plackett_luce(games: Iterable[dict], *, bots: Iterable[str] = (),
                  average: float = DEFAULT_RATING,
                  anchor: tuple[str, float] | None = None) -> Fit:
    """Plackett–Luce maximum-likelihood ratings of games (pool mean `average` or `anchor`)."""
    return fit_tables(compile_games(games, bots), average=average, anchor=anchor)

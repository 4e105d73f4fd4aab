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
(the sets whose log-sum-exp enters the likelihood) are built once and applied to all its tables
as a (terms × seats) index array, so value, gradient and Hessian-vector product are a handful of
numpy operations over every table at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from itertools import combinations
from math import comb

import numpy as np

from arena.ratings.elo import DEFAULT_RATING
from arena.ratings.fitting import Fit, Objective, Tables, compact, compile_games, fit_pools


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


class PlackettLuceObjective(Objective):
    """Negative log-likelihood of the finishing orders of one pool's tables."""

    def __init__(self, tables: Tables):
        sizes = tables.sides_per_table()
        n_sides = len(tables.side_rank)
        by_rank = np.lexsort((tables.side_rank, tables.side_table()))
        # Numerator: every side's own strength once, less the singleton terms (which cancel it).
        coefficient = np.zeros(n_sides)
        width = int(sizes.max()) if len(sizes) else 0
        term_sides, term_weight = [], []
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
                    padded = np.full((len(these), width), n_sides)  # n_sides: a -inf dummy
                    padded[:, :len(positions)] = these[:, list(positions)]
                    term_sides.append(padded)
                    term_weight.append(np.full(len(these), weight))
        self.term_sides = (np.concatenate(term_sides) if term_sides
                           else np.zeros((0, max(width, 1)), dtype=np.int64))
        self.term_weight = np.concatenate(term_weight) if term_weight else np.zeros(0)
        self.coefficient = coefficient
        strength = tables.unit_strength[tables.side_unit]
        self.strength = compact(strength)
        self.strength_t = compact(strength.T)
        self.n_sides = n_sides
        self.n_bots = tables.n_bots
        self.n_tables = tables.n_tables
        self._softmax_at: tuple[bytes, np.ndarray] | None = None

    def _terms(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Side strengths, each term's log-sum-exp and softmax over its sides."""
        x = self.strength @ theta
        values = np.append(x, -np.inf)[self.term_sides]
        top = values.max(axis=1, keepdims=True)
        e = np.exp(values - top)
        total = e.sum(axis=1, keepdims=True)
        self._softmax_at = (theta.tobytes(), e / total)
        return x, (top + np.log(total)).ravel(), self._softmax_at[1]

    def value_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        x, lse, p = self._terms(theta)
        value = self.term_weight @ lse - self.coefficient @ x
        spread = np.bincount(self.term_sides.ravel(), (self.term_weight[:, None] * p).ravel(),
                             minlength=self.n_sides + 1)[:self.n_sides]
        return float(value), self.strength_t @ (spread - self.coefficient)

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        if self._softmax_at is None or self._softmax_at[0] != theta.tobytes():
            self._terms(theta)
        p = self._softmax_at[1]
        vs = np.append(self.strength @ v, 0.0)[self.term_sides]
        centred = vs - np.sum(p * vs, axis=1, keepdims=True)
        hx = np.bincount(self.term_sides.ravel(),
                         (self.term_weight[:, None] * p * centred).ravel(),
                         minlength=self.n_sides + 1)[:self.n_sides]
        return self.strength_t @ hx


def fit_tables(tables: Tables, *, average: float = DEFAULT_RATING,
               anchor: tuple[str, float] | None = None, start: np.ndarray | None = None) -> Fit:
    """Plackett–Luce fit of compiled tables."""
    return fit_pools(tables, "pl", PlackettLuceObjective, average=average, anchor=anchor,
                     start=start)


def plackett_luce(games: Iterable[dict], *, bots: Iterable[str] = (),
                  average: float = DEFAULT_RATING,
                  anchor: tuple[str, float] | None = None) -> Fit:
    """Plackett–Luce maximum-likelihood ratings of games (pool mean `average` or `anchor`)."""
    return fit_tables(compile_games(games, bots), average=average, anchor=anchor)

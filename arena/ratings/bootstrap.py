"""95 % intervals for Bradley–Terry and Plackett–Luce ratings by parametric bootstrap.

One bootstrap sample:

1. Resample the schedule by whole groups: draw as many groups as there are, with replacement, and
   take every table of each drawn group (a group is a duplicate deal's seat rotations, or one game
   when it has no group). Tables and groups are never split into pairs.
2. Simulate every drawn table's whole finishing order from the fitted ratings: side strengths are
   the members' mean, the order is drawn from Plackett–Luce (the Gumbel-max trick; for two sides
   exactly Bradley–Terry).
3. Ties: for tables of n sides, let delta_n be the observed share of neighbouring places that were
   tied. Two neighbours a (ahead) and b of the simulated order are tied with probability
   D / (2 P(a before b)), D = min(delta_n, 2 P(a before b), 2 P(b before a)). For two sides this
   makes draws occur at rate D, about the observed draw rate, while each side's expected score
   stays the model's (a draw counts half), so the refit is centred on the fit.
4. Refit with the same method and anchoring (pool average or named anchor), starting from the fit
   and stopping within about 0.01 Elo of the optimum (far below the intervals' width).

A bot's interval is the 2.5th and 97.5th percentile of its refitted ratings. A bot that drew no
game in a sample (or whose anchor did) has no rating in it and those samples are skipped for it.
The samples are deterministic given the seed: sample i uses a numpy Generator seeded from the
i-th child of SeedSequence(seed), so the result does not depend on how many workers ran them.
Duplicate-deal tables are simulated independently, so the luck a duplicate deal cancels is not
cancelled in the simulation: for duplicate formats the intervals err on the wide side.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import current_process, get_context

import numpy as np
from scipy.special import expit

from arena.errors import ConfigError
from arena.ratings.bradley_terry import fit_tables as fit_bradley_terry
from arena.ratings.defaults import DEFAULT_RATING, DEFAULT_SAMPLES
from arena.ratings.fitting import QUICK, Fit, Tables
from arena.ratings.plackett_luce import fit_tables as fit_plackett_luce

PARALLEL_WORK = 2_000_000  # tables × samples above which a second process pays for its start

REFITS: dict[str, Callable[..., Fit]] = {"bt": fit_bradley_terry, "pl": fit_plackett_luce}


def tie_rates(tables: Tables) -> dict[int, float]:
    """For each number of sides, the observed share of neighbouring places that were tied."""
    rates = {}
    sizes = tables.sides_per_table()
    by_rank = np.lexsort((tables.side_rank, tables.side_table()))
    for n in np.unique(sizes[sizes >= 2]):
        start = tables.side_start[:-1][sizes == n]
        ranks = tables.side_rank[by_rank[start[:, None] + np.arange(n)]]
        rates[int(n)] = float(np.mean(ranks[:, 1:] == ranks[:, :-1]))
    return rates


def resample(tables: Tables, rng: np.random.Generator) -> Tables:
    """The tables of as many groups as there are, drawn with replacement."""
    n_groups = int(tables.table_group.max()) + 1 if tables.n_tables else 0
    drawn = np.bincount(rng.integers(n_groups, size=n_groups), minlength=n_groups)
    return tables.take(np.repeat(np.arange(tables.n_tables), drawn[tables.table_group]))


def simulate(tables: Tables, theta: np.ndarray, rates: dict[int, float],
             rng: np.random.Generator) -> Tables:
    """The same tables with finishing ranks drawn from the model with strengths theta."""
    strength = tables.unit_strength[tables.side_unit] @ theta
    ranks = np.ones(len(strength), dtype=np.int64)
    sizes = tables.sides_per_table()
    for n in np.unique(sizes[sizes >= 2]):
        sides = tables.side_start[:-1][sizes == n][:, None] + np.arange(n)
        x = strength[sides]
        order = np.argsort(-(x + rng.gumbel(size=x.shape)), axis=1)
        placed = np.take_along_axis(sides, order, axis=1)
        ahead = expit(np.take_along_axis(x, order, axis=1)[:, :-1]
                      - np.take_along_axis(x, order, axis=1)[:, 1:])
        tie_share = np.minimum(rates.get(int(n), 0.0), 2 * np.minimum(ahead, 1 - ahead))
        tied = rng.random(ahead.shape) < tie_share / (2 * ahead)
        # A place starts a new rank unless it is tied with the one before it.
        position = np.broadcast_to(np.arange(n), x.shape)
        starts = np.where(np.concatenate([np.zeros((len(x), 1), bool), tied], axis=1), 0, position)
        ranks[placed] = np.maximum.accumulate(starts, axis=1) + 1
    return tables.with_ranks(ranks)


def _samples(job: tuple) -> np.ndarray:
    """Refitted ratings of a batch of bootstrap samples (one row per sample)."""
    tables, fit_method, theta, rates, seeds, average, anchor = job
    refit = REFITS[fit_method]
    out = np.full((len(seeds), tables.n_bots), np.nan)
    for row, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        sample = simulate(resample(tables, rng), theta, rates, rng)
        try:
            fit = refit(sample, average=average, anchor=anchor, start=theta, tolerance=QUICK)
        except ConfigError:  # the anchor drew no game in this sample
            continue
        out[row] = np.where(fit.pool >= 0, fit.ratings, np.nan)
    return out


def bootstrap(tables: Tables, fit: Fit, *, samples: int = DEFAULT_SAMPLES, seed: int = 0,
              average: float = DEFAULT_RATING, anchor: tuple[str, float] | None = None,
              workers: int | None = None) -> np.ndarray:
    """(samples, bots) refitted ratings, NaN where a bot is absent; see the module docstring."""
    if fit.method not in REFITS:
        raise ValueError(f"no bootstrap for method {fit.method!r}")
    seeds = np.random.SeedSequence(seed).spawn(samples)
    rates = tie_rates(tables)
    if workers is None:
        heavy = tables.n_tables * samples >= PARALLEL_WORK
        # A daemonic process (a pool worker) may not start processes of its own.
        can_fork = not current_process().daemon
        workers = min(2, os.cpu_count() or 1) if heavy and can_fork else 1
    workers = max(1, min(workers, samples))
    batches = [seeds[i::workers] for i in range(workers)]
    jobs = [(tables, fit.method, fit.theta, rates, batch, average, anchor) for batch in batches]
    if workers == 1:
        results = [_samples(jobs[0])]
    else:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            results = list(pool.map(_samples, jobs))
    out = np.empty((samples, tables.n_bots))
    for i, result in enumerate(results):
        out[i::workers] = result
    return out


def intervals(samples: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Per bot, the (low, high) percentiles of its bootstrap ratings (NaN when never rated)."""
    tail = 100 * (1 - level) / 2
    if samples.size == 0 or np.all(np.isnan(samples)):
        empty = np.full(samples.shape[1] if samples.ndim == 2 else 0, np.nan)
        return empty, empty.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # bots absent from every sample
        lo, hi = np.nanpercentile(samples, [tail, 100 - tail], axis=0)
    return lo, hi

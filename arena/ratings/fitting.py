"""What the maximum-likelihood fits share: compiled tables, connected pools, the perfect-record
prior, the solver and the anchoring.

Games are compiled once into arrays (`Tables`): every table is a run of sides, every side is a
"unit" (its sorted member list) and a unit's strength is the mean of its members' strengths, so a
partnership shares one strength and every member receives its gradient. Strengths are kept in
natural-log units (theta = rating * ln(10) / 400) while fitting and turned into Elo at the end.

Pools. Bots are joined when they sat at one table (as opponents or partners). Each connected pool
is fitted on its own and centred on the average: ratings of two pools that never met cannot be
compared, so they are reported as separate `groups` rather than fitted as one.

Perfect records. The maximum-likelihood ratings are finite only if, within a pool, every set of
bots has both scored against the rest and conceded to it (a draw counts both ways): the "scored
against" digraph is strongly connected. When it is not, the bots of the strongly connected sets
that never lost to the rest (sources) or those of the sets that never beat it (sinks), whichever
are fewer (both when as many), each get PERFECT_RECORD_DRAWS virtual draws against a virtual
opponent at the pool's mean: a weak prior that makes every rating finite (pinning all sources, or
all sinks, bounds everyone between them) and leaves every well-determined pool untouched. Every
bot with a perfect record is flagged "all wins" / "all losses"; other bots that got the prior,
"no losses vs rest" / "no wins vs rest".

Teams. A side of several members is one observation of their mean, so the members' own strengths
are identified only through the other partnerships they played in: on a small event the
likelihood is flat along some directions (partners always together) and unbounded along others
(a set of partnerships that always beat the rest, which the per-bot digraph above does not see),
and the fit ran off to ratings of ±10,000 with intervals as wide. So every bot of a pool that
has any team side gets the same weak prior, PERFECT_RECORD_DRAWS virtual draws against the pool
mean: the ratings are finite and shrunk a little toward the mean, by about one game's worth, and
a large event is barely moved. Pools without teams are not touched.

Solver. The negative log-likelihood is convex; its value, gradient and Hessian-vector product are
vectorised with numpy and handed to scipy's Newton trust-region solver (`trust-ncg`). The
likelihood does not change when every strength shifts by one amount, so a quadratic penalty on the
pool's sum fixes the mean at zero without moving the optimum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
from scipy import sparse
from scipy.optimize import minimize
from scipy.sparse.csgraph import connected_components
from scipy.special import expit

from arena.errors import ConfigError
from arena.ratings.elo import DEFAULT_RATING

DENSE_CELLS = 250_000  # below this many cells a dense matrix beats scipy.sparse's per-call cost
NATS_PER_ELO = math.log(10) / 400  # 400 Elo points = 10:1 odds
PERFECT_RECORD_DRAWS = 1.0  # virtual draws against the pool mean for a bot with an unbounded MLE
# Gradient norm (per table) at which the solver stops: PRECISE leaves ratings within about 1e-4
# Elo of the optimum; QUICK, within about 0.01 Elo at twice the speed (for bootstrap refits).
PRECISE = 1e-10
QUICK = 1e-8


@dataclass(frozen=True)
class Tables:
    """Games compiled to arrays: tables are runs of sides, sides are units of member bots."""

    bots: tuple[str, ...]
    side_start: np.ndarray  # (n_tables + 1,) offsets: sides of table t start at side_start[t]
    side_rank: np.ndarray  # (n_sides,) finishing rank, 1 = best
    side_unit: np.ndarray  # (n_sides,) row of unit_members
    unit_members: sparse.csr_matrix  # (n_units, n_bots) member counts of each side composition
    table_group: np.ndarray  # (n_tables,) resampling group

    @property
    def n_tables(self) -> int:
        """Number of tables."""
        return len(self.side_start) - 1

    @property
    def n_bots(self) -> int:
        """Number of bots."""
        return len(self.bots)

    def sides_per_table(self) -> np.ndarray:
        """How many sides each table has."""
        return np.diff(self.side_start)

    def side_table(self) -> np.ndarray:
        """The table of each side."""
        return np.repeat(np.arange(self.n_tables), self.sides_per_table())

    @cached_property
    def counts(self) -> sparse.csr_matrix:
        """(n_sides, n_bots) how often each bot sits in each side."""
        return self.unit_members[self.side_unit].tocsr()

    @cached_property
    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every two sides of a table (see `side_pairs`), computed once per set of ranks."""
        return side_pairs(self)

    @cached_property
    def unit_strength(self) -> sparse.csr_matrix:
        """(n_units, n_bots) weights that turn bot strengths into a composition's mean."""
        sizes = np.asarray(self.unit_members.sum(axis=1)).ravel()
        return (sparse.diags(1.0 / np.maximum(sizes, 1)) @ self.unit_members).tocsr()

    def with_ranks(self, ranks: np.ndarray) -> Tables:
        """The same tables with other finishing ranks."""
        return replace(self, side_rank=np.asarray(ranks, dtype=np.int64))

    def take(self, tables: np.ndarray, bots: np.ndarray | None = None) -> Tables:
        """The given tables (repeats allowed), optionally keeping only the given bots' columns."""
        tables = np.asarray(tables, dtype=np.int64)
        sizes = self.sides_per_table()[tables]
        start = np.concatenate(([0], np.cumsum(sizes)))
        sides = np.repeat(self.side_start[tables] - start[:-1], sizes) + np.arange(start[-1])
        members = self.unit_members
        names = self.bots
        if bots is not None:
            members = members[:, bots].tocsr()
            names = tuple(self.bots[i] for i in bots)
        return Tables(names, start, self.side_rank[sides], self.side_unit[sides], members,
                      self.table_group[tables])


def compile_games(games: Iterable[dict], bots: Iterable[str] = ()) -> Tables:
    """Compile games ({seats: [{bot, team, rank}], group?}) into arrays; `bots` are listed first."""
    index: dict[str, int] = {b: i for i, b in enumerate(dict.fromkeys(bots))}
    unit_index: dict[tuple[str, ...], int] = {}
    unit_rows: list[list[int]] = []
    side_unit: list[int] = []
    side_rank: list[int] = []
    side_start = [0]
    group_index: dict[object, int] = {}
    table_group: list[int] = []
    for number, game in enumerate(games):
        teams: dict[int, list[dict]] = {}
        for seat in game["seats"]:
            teams.setdefault(seat["team"], []).append(seat)
        for team in sorted(teams):
            members = teams[team]
            key = tuple(sorted(s["bot"] for s in members))
            unit = unit_index.get(key)
            if unit is None:
                unit = unit_index[key] = len(unit_rows)
                unit_rows.append([index.setdefault(b, len(index)) for b in key])
            side_unit.append(unit)
            side_rank.append(members[0]["rank"])
        side_start.append(len(side_unit))
        group = game.get("group")
        # A game without a group is a group of its own.
        key = ("game", number) if group is None else ("group", group)
        table_group.append(group_index.setdefault(key, len(group_index)))
    rows = np.repeat(np.arange(len(unit_rows)), [len(r) for r in unit_rows])
    cols = np.fromiter((b for r in unit_rows for b in r), dtype=np.int64, count=len(rows))
    members = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)),
                                shape=(len(unit_rows), len(index)))
    return Tables(tuple(index), np.asarray(side_start, dtype=np.int64),
                  np.asarray(side_rank, dtype=np.int64), np.asarray(side_unit, dtype=np.int64),
                  members, np.asarray(table_group, dtype=np.int64))


def side_pairs(tables: Tables) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every two sides of a table: (side a, side b, a's score 1/0.5/0, weight 1/(N-1))."""
    sizes = tables.sides_per_table()
    parts_a, parts_b, parts_w = [], [], []
    for n in np.unique(sizes[sizes >= 2]):
        start = tables.side_start[:-1][sizes == n]
        i, j = np.triu_indices(n, 1)
        parts_a.append((start[:, None] + i).ravel())
        parts_b.append((start[:, None] + j).ravel())
        parts_w.append(np.full(len(start) * len(i), 1.0 / (n - 1)))
    if not parts_a:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0), np.zeros(0)
    a, b = np.concatenate(parts_a), np.concatenate(parts_b)
    ra, rb = tables.side_rank[a], tables.side_rank[b]
    score = np.where(ra < rb, 1.0, np.where(ra == rb, 0.5, 0.0))
    return a, b, score, np.concatenate(parts_w)


@dataclass(frozen=True)
class Records:
    """Per bot: games played and pairwise wins, draws and losses (as `elo()` counts them)."""

    games: np.ndarray
    wins: np.ndarray
    draws: np.ndarray
    losses: np.ndarray


def records(tables: Tables) -> Records:
    """Games and pairwise wins/draws/losses of every bot."""
    counts = tables.counts
    a, b, score, _ = tables.pairs
    n = len(tables.side_rank)

    def per_bot(side_values: np.ndarray) -> np.ndarray:
        """Sum a per-side count over each bot's sides."""
        return np.asarray(counts.T @ side_values).ravel()

    def tally(sides: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """How often each side appears among the masked pair members."""
        return np.bincount(sides[mask], minlength=n).astype(float)

    wins = tally(a, score == 1) + tally(b, score == 0)
    losses = tally(a, score == 0) + tally(b, score == 1)
    draws = tally(a, score == 0.5) + tally(b, score == 0.5)
    return Records(per_bot(np.ones(n)), per_bot(wins), per_bot(draws), per_bot(losses))


def _bot_edges(counts: sparse.csr_matrix, a: np.ndarray, b: np.ndarray) -> sparse.csr_matrix:
    """(n_bots, n_bots) links from every member of side a to every member of side b."""
    return (counts[a].T @ counts[b]).tocsr()


def pools(tables: Tables) -> np.ndarray:
    """Connected pool of every bot (-1 for a bot that never met an opponent)."""
    counts = tables.counts
    a, b, _, _ = tables.pairs
    if len(a) == 0:
        return np.full(tables.n_bots, -1)
    linked = _bot_edges(counts, a, b)
    seated = np.zeros(counts.shape[0], dtype=bool)
    seated[a] = seated[b] = True
    partners = counts[seated]
    _, label = connected_components(linked + linked.T + partners.T @ partners, directed=False)
    met = np.asarray(partners.sum(axis=0)).ravel() > 0
    return _first_seen_order(np.where(met, label, -1))


def _first_seen_order(label: np.ndarray) -> np.ndarray:
    """Relabel pools 0, 1, ... by their first bot, keeping -1."""
    out = np.full(len(label), -1)
    seen: dict[int, int] = {}
    for i, lab in enumerate(label):
        if lab >= 0:
            out[i] = seen.setdefault(int(lab), len(seen))
    return out


def unbounded(tables: Tables, pool: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bots that get the prior: (in a set that never lost to the rest, ... never beat it)."""
    counts = tables.counts
    a, b, score, _ = tables.pairs
    scored = score > 0
    conceded = score < 1
    graph = (_bot_edges(counts, a[scored], b[scored])
             + _bot_edges(counts, b[conceded], a[conceded]))
    _, scc = connected_components(graph, directed=True, connection="strong")
    graph = graph.tocoo()
    cross = scc[graph.row] != scc[graph.col]
    beats_rest = np.zeros(scc.max() + 1 if len(scc) else 0, dtype=bool)
    loses_to_rest = np.zeros_like(beats_rest)
    beats_rest[scc[graph.row[cross]]] = True
    loses_to_rest[scc[graph.col[cross]]] = True
    # A lone strongly connected set (no edge to the rest) is bounded already.
    involved = beats_rest | loses_to_rest
    never_lost = (involved & ~loses_to_rest)[scc]
    never_won = (involved & ~beats_rest)[scc]
    # Pinning either every source set or every sink set to the pool mean bounds the whole pool
    # (every other bot lies between them along the "scored against" edges), so the prior goes on
    # the side with fewer bots, both when equal: it touches as few ratings as it can.
    for p in range(int(pool.max()) + 1 if len(pool) else 0):
        mine = pool == p
        sources, sinks = np.sum(never_lost & mine), np.sum(never_won & mine)
        if sources < sinks:
            never_won &= ~mine
        elif sinks < sources:
            never_lost &= ~mine
    return never_lost, never_won


def in_teams(tables: Tables) -> np.ndarray:
    """Bots that sat in a side of two or more members at least once."""
    sizes = np.asarray(tables.unit_members.sum(axis=1)).ravel()
    used = np.zeros(len(sizes), dtype=bool)
    used[tables.side_unit] = True
    teams = tables.unit_members[np.flatnonzero(used & (sizes >= 2))]
    return np.asarray(teams.sum(axis=0)).ravel() > 0


def compact(matrix: sparse.spmatrix) -> sparse.csr_matrix | np.ndarray:
    """The matrix as a dense array when small, else as CSR: whichever multiplies faster."""
    if matrix.shape[0] * matrix.shape[1] <= DENSE_CELLS:
        return matrix.toarray()
    return matrix.tocsr()


class Objective:
    """A model's negative log-likelihood over one pool, in natural-log strengths."""

    n_bots: int
    n_tables: int

    def value_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Negative log-likelihood and its gradient."""
        raise NotImplementedError

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Hessian of the negative log-likelihood times v."""
        raise NotImplementedError

    def hessian(self, theta: np.ndarray) -> np.ndarray:
        """The Hessian itself (dense), for standard errors."""
        return np.column_stack([self.hessp(theta, e) for e in np.eye(self.n_bots)])


class _Penalised:
    """The model plus the perfect-record prior and the gauge penalty, scaled per table."""

    def __init__(self, model: Objective, prior: np.ndarray):
        self.model = model
        self.prior = np.flatnonzero(prior)
        self.n = model.n_bots
        self.scale = max(model.n_tables, 1)
        # Along the all-ones direction the penalty's curvature is about a bot's own information.
        self.gauge = self.scale / self.n ** 2

    def value_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Penalised negative log-likelihood per table and its gradient."""
        value, grad = self.model.value_grad(theta)
        grad = grad.copy()
        if len(self.prior):
            d = theta[self.prior] - theta.mean()
            value += PERFECT_RECORD_DRAWS * 0.5 * np.sum(np.logaddexp(0, d) + np.logaddexp(0, -d))
            g = PERFECT_RECORD_DRAWS * (expit(d) - 0.5)
            grad[self.prior] += g
            grad -= g.sum() / self.n
        total = theta.sum()
        value += 0.5 * self.gauge * total ** 2
        grad += self.gauge * total
        return value / self.scale, grad / self.scale

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Penalised Hessian per table times v."""
        hv = self.model.hessp(theta, v).copy()
        if len(self.prior):
            d = theta[self.prior] - theta.mean()
            h = PERFECT_RECORD_DRAWS * expit(d) * expit(-d) * (v[self.prior] - v.mean())
            hv[self.prior] += h
            hv -= h.sum() / self.n
        hv += self.gauge * v.sum()
        return hv / self.scale

    def hessian(self, theta: np.ndarray) -> np.ndarray:
        """Penalised Hessian (dense, not per table)."""
        h = np.array(self.model.hessian(theta), dtype=float)
        if len(self.prior):
            d = theta[self.prior] - theta.mean()
            jac = -np.full((len(self.prior), self.n), 1.0 / self.n)
            jac[np.arange(len(self.prior)), self.prior] += 1.0
            h += jac.T @ (PERFECT_RECORD_DRAWS * (expit(d) * expit(-d))[:, None] * jac)
        return h + self.gauge


def solve(model: Objective, prior: np.ndarray, start: np.ndarray | None = None,
          tolerance: float = PRECISE) -> np.ndarray:
    """Maximum-likelihood strengths (natural-log units, mean 0) of one pool."""
    objective = _Penalised(model, prior)
    x0 = np.zeros(model.n_bots) if start is None else start - start.mean()
    result = minimize(objective.value_grad, x0, jac=True, hessp=objective.hessp,
                      method="trust-ncg", options={"gtol": tolerance, "maxiter": 500})
    return result.x - result.x.mean()


@dataclass
class Fit:
    """Maximum-likelihood ratings of every bot, with what is needed to simulate and refit."""

    method: str
    bots: tuple[str, ...]
    ratings: np.ndarray  # Elo, anchored
    theta: np.ndarray  # natural-log strengths, mean 0 within each pool
    pool: np.ndarray  # pool of each bot, -1 when it never met an opponent
    flags: dict[str, str]
    groups: list[list[str]]
    models: list[tuple[np.ndarray, Objective, np.ndarray]] = field(default_factory=list, repr=False)

    def rating_of(self) -> dict[str, float]:
        """Bot → rating."""
        return dict(zip(self.bots, self.ratings.tolist()))


def fit_pools(tables: Tables, method: str, model_of: Callable[[Tables], Objective], *,
              average: float = DEFAULT_RATING, anchor: tuple[str, float] | None = None,
              start: np.ndarray | None = None, tolerance: float = PRECISE) -> Fit:
    """Fit every connected pool separately with `model_of`, then anchor and flag."""
    pool = pools(tables)
    never_lost, never_won = unbounded(tables, pool)
    teamed = in_teams(tables)
    team_pools = np.unique(pool[teamed & (pool >= 0)])
    theta = np.zeros(tables.n_bots)
    models = []
    sizes = tables.sides_per_table()
    first_bot = _first_bot_of_tables(tables)
    n_pools = int(pool.max()) + 1 if len(pool) else 0
    for p in range(n_pools):
        bots = np.flatnonzero(pool == p)
        if n_pools == 1:
            sub = tables
            local_bots = np.arange(tables.n_bots)
            if len(bots) < tables.n_bots:  # bots without opponents stay out of the fit
                sub = tables.take(np.arange(tables.n_tables), bots)
                local_bots = bots
        else:
            mine = np.flatnonzero((sizes >= 2) & (pool[np.maximum(first_bot, 0)] == p)
                                  & (first_bot >= 0))
            sub = tables.take(mine, bots)
            local_bots = bots
        model = model_of(sub)
        prior = (never_lost | never_won | (teamed & np.isin(pool, team_pools)))[local_bots]
        theta[local_bots] = solve(model, prior, None if start is None else start[local_bots],
                                  tolerance)
        models.append((local_bots, model, prior))
    ratings = average + theta / NATS_PER_ELO
    ratings[pool < 0] = average
    if anchor is not None:
        name, value = anchor
        i = tables.bots.index(name) if name in tables.bots else -1
        if i < 0 or pool[i] < 0:
            raise ConfigError(f"anchor bot {name!r} has no rated games")
        ratings[pool == pool[i]] += value - ratings[i]
    recs = records(tables)
    flags = {tables.bots[i]: text
             for i, text in _flags(recs, never_lost, never_won, pool).items()}
    groups = [[tables.bots[i] for i in np.flatnonzero(pool == p)] for p in range(n_pools)]
    return Fit(method, tables.bots, ratings, theta, pool, flags,
               groups if len(groups) > 1 else [], models)


def _first_bot_of_tables(tables: Tables) -> np.ndarray:
    """A member of each table's first side (-1 for an empty table), to find the table's pool."""
    counts = tables.unit_members.tocsr()
    first_of_unit = np.full(counts.shape[0], -1)
    nonempty = np.diff(counts.indptr) > 0
    first_of_unit[nonempty] = counts.indices[counts.indptr[:-1][nonempty]]
    out = np.full(tables.n_tables, -1)
    has_side = tables.sides_per_table() > 0
    out[has_side] = first_of_unit[tables.side_unit[tables.side_start[:-1][has_side]]]
    return out


def _flags(recs: Records, never_lost: np.ndarray, never_won: np.ndarray,
           pool: np.ndarray) -> dict[int, str]:
    """Short notes on ratings that are not plain maximum-likelihood estimates."""
    flags = {}
    for i in range(len(pool)):
        if recs.games[i] == 0:
            flags[i] = "no games"
        elif pool[i] < 0:
            flags[i] = "no opponents"
        elif recs.wins[i] > 0 and recs.draws[i] == 0 and recs.losses[i] == 0:
            flags[i] = "all wins"
        elif recs.losses[i] > 0 and recs.draws[i] == 0 and recs.wins[i] == 0:
            flags[i] = "all losses"
        elif never_lost[i]:
            flags[i] = "no losses vs rest"
        elif never_won[i]:
            flags[i] = "no wins vs rest"
    return flags


def covariance(fit: Fit) -> np.ndarray:
    """Covariance of the fitted ratings (Elo²) from the inverse Hessian; NaN across pools."""
    n = len(fit.bots)
    cov = np.full((n, n), np.nan)
    for bots, model, prior in fit.models:
        inv = np.linalg.pinv(_Penalised(model, prior).hessian(fit.theta[bots]))
        cov[np.ix_(bots, bots)] = inv / NATS_PER_ELO ** 2
    return cov

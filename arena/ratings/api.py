"""`rate()`: the one front door to every rating method, for the store, the CLI and the reports.

Methods:
- "elo": incremental, in ordinal order, with `k` and `initial` (`average`, `anchor`, `samples` and
  `seed` do not apply; no interval, no LOS; `history` is elo()'s per-game history);
- "bt" (Bradley–Terry) and "pl" (Plackett–Luce): maximum likelihood with each pool centred on
  `average`, or the anchor's pool shifted so that `anchor` = (bot, rating) holds; 95 %
  parametric-bootstrap intervals from `samples` resamples seeded by `seed` (0: none; an end the
  data does not bound, e.g. above a bot with all wins, is None: `arena.ratings.bounds`) and a LOS
  matrix from the bootstrap samples (or, when samples=0, from the likelihood's curvature).
Every method reports the pools that never met as `groups` (only when there are two or more), and
every row counts games and pairwise wins/draws/losses as elo() does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from arena.errors import ConfigError
from arena.ratings.bootstrap import DEFAULT_SAMPLES, REFITS, bootstrap, intervals
from arena.ratings.bounds import open_ends
from arena.ratings.elo import DEFAULT_K, DEFAULT_RATING, elo, sides_of
from arena.ratings.fitting import Fit, Records, compile_games, covariance, pools, records
from arena.ratings.stats import los_matrix

METHODS = ("elo", "bt", "pl")


@dataclass(frozen=True)
class RatingResult:
    """A rating table (best first), the pools that never met, Elo's history and the LOS matrix."""

    method: str
    rows: list[dict]
    groups: list[list[str]] = field(default_factory=list)
    history: list[dict] = field(default_factory=list)
    los: dict[str, dict[str, float]] = field(default_factory=dict)


def pool_flags(result: RatingResult) -> RatingResult:
    """Flag the bots outside the largest pool: their ratings compare only within their own pool."""
    if not result.groups:
        return result
    pool_of = {bot: i for i, group in enumerate(result.groups, 1) for bot in group}
    rows = [dict(r) for r in result.rows]
    for r in rows:
        n = pool_of.get(r["bot"], 1)
        if n > 1 and not r["flag"]:
            r["flag"] = f"pool {n}"
    return RatingResult(result.method, rows, result.groups, result.history, result.los)


def default_method(games: Iterable[dict]) -> str:
    """"bt" when every game has two sides, else "pl"."""
    return "bt" if all(len(sides_of(g["seats"])) == 2 for g in games) else "pl"


def rate(games: Iterable[dict], method: str, *, bots: Iterable[str] = (), k: float = DEFAULT_K,
         initial: float = DEFAULT_RATING, average: float = DEFAULT_RATING,
         anchor: tuple[str, float] | None = None, samples: int = DEFAULT_SAMPLES,
         seed: int = 0) -> RatingResult:
    """Rate games with one of METHODS; see the module docstring for what each argument does."""
    if method not in METHODS:
        raise ConfigError(f"unknown rating method {method!r}; choose one of {', '.join(METHODS)}")
    if samples < 0:
        raise ConfigError(f"bootstrap samples must be 0 or more, got {samples}")
    games = list(games)
    bots = list(dict.fromkeys(bots))
    tables = compile_games(games, bots)
    if method == "elo":
        return _elo_result(games, tables, bots, k, initial)
    fit = REFITS[method](tables, average=average, anchor=anchor)
    lo = hi = None
    if samples:
        resampled = bootstrap(tables, fit, samples=samples, seed=seed, average=average,
                              anchor=anchor)
        lo, hi = intervals(resampled)
        los = los_matrix(fit.bots, fit.ratings, samples=resampled, pools=fit.pool)
    else:
        los = los_matrix(fit.bots, fit.ratings, covariance=covariance(fit), pools=fit.pool)
    return RatingResult(method, _rows(fit, records(tables), lo, hi), fit.groups, [], los)


def _elo_result(games: list[dict], tables, bots: list[str], k: float,
                initial: float) -> RatingResult:
    """Elo's table with the common columns (no interval) and its history."""
    table, history = elo(games, k=k, initial=initial, bots=bots)
    rows = [{"bot": r["bot"], "rating": r["rating"], "lo": None, "hi": None, "games": r["games"],
             "wins": r["wins"], "draws": r["draws"], "losses": r["losses"], "points": r["points"],
             "score_pct": r["score_pct"], "flag": "no games" if r["games"] == 0 else None}
            for r in table]
    pool = pools(tables)
    n_pools = int(pool.max()) + 1 if len(pool) else 0
    groups = [[tables.bots[i] for i in np.flatnonzero(pool == p)] for p in range(n_pools)]
    return RatingResult("elo", rows, groups if len(groups) > 1 else [], history, {})


def _rows(fit: Fit, recs: Records, lo: np.ndarray | None, hi: np.ndarray | None) -> list[dict]:
    """One row per bot, best first."""
    rows = []
    for i, bot in enumerate(fit.bots):
        wins, draws, losses = float(recs.wins[i]), float(recs.draws[i]), float(recs.losses[i])
        encounters = wins + draws + losses
        points = wins + draws / 2
        row = {
            "bot": bot, "rating": round(float(fit.ratings[i]), 4),
            "lo": _bound(lo, i), "hi": _bound(hi, i),
            "games": int(recs.games[i]), "wins": wins, "draws": draws, "losses": losses,
            "points": points,
            "score_pct": round(100 * points / encounters, 2) if encounters else 0.0,
            "flag": fit.flags.get(bot),
        }
        # An end the data does not bound is stored as None (see arena.ratings.bounds).
        bounded = open_ends(row)
        row["lo"], row["hi"] = bounded["lo"], bounded["hi"]
        rows.append(row)
    rows.sort(key=lambda r: (-r["rating"], r["bot"]))
    return rows


def _bound(values: np.ndarray | None, i: int) -> float | None:
    """An interval bound, None when there is none."""
    if values is None or np.isnan(values[i]):
        return None
    return round(float(values[i]), 4)

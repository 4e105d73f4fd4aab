"""What the rating commands show: tournament tables, pooled leaderboards, crosstables, head-to-head
records, SPRT over recorded games, and fits of a results file.

The methods themselves are pure functions in `arena.ratings`; this module feeds them a
tournament's read model (`arena.store.views.TournamentView`) or the rows of `arena.store.queries`
and shapes their output for the CLI (and the web app). Only `leaderboard` (from
`arena.leaderboards`) writes (derived tables, recomputed idempotently); everything else only
reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from arena.errors import ConfigError
from arena.games import get_game

# `leaderboard` lives below the drivers (the ladder publishes with it); the rating commands and
# the web app find it here with the other reports.
from arena.leaderboards import leaderboard, rating_columns  # noqa: F401  (re-exported)
from arena.ratings import (
    DEFAULT_RATING,
    METHODS,
    RatingResult,
    default_method,
    elo_diff_pentanomial,
    elo_diff_trinomial,
    los,
    pool_flags,
    rate,
    read_results,
    sprt,
)
from arena.ratings.bounds import open_ends
from arena.ratings.defaults import DEFAULT_SAMPLES
from arena.refs import parse_ref
from arena.reports import stage_history, stage_record, stage_standings, stage_tiebreaks
from arena.scheduling.gauntlet import candidate_pairs
from arena.standings import crosstable
from arena.store import Store
from arena.store.queries import bot_known, pair_deals, pair_ranks
from arena.store.views import ML_METHODS, TournamentView, tournament_row

# -- tournaments --------------------------------------------------------------------------------


def tournament_ratings(view: TournamentView, stage: int, method: str | None = None) -> dict:
    """A stage's rating table for `method` (default: its maximum-likelihood one), with tie-breaks.

    Returns {method, rows, tiebreaks}; each row has rank, bot, version, rating, lo, hi (None at
    an end the data does not bound, with lo_open / hi_open), games, pairwise W/D/L, pair_points,
    score_pct, flag and, for Swiss, the stage's tie-break values. A method not
    stored (a database from before it existed) is computed on the fly, without bootstrap.
    """
    if method is not None and method not in METHODS:
        raise ConfigError(f"--method: unknown method {method!r}; choose one of {', '.join(METHODS)}")
    stage_row = stage_record(view, stage)
    stored = view.rating_methods(stage)
    if method is None:
        method = next((m for m in ML_METHODS if m in stored), None)
        if method is None:
            games = view.stage_games(stage)
            method = default_method(games) if games else "elo"
    if method in stored:
        rows = view.ratings[(stage, method)]
    else:
        games = view.stage_games(stage)
        names = [r["bot"] for r in stage_standings(view, stage)]
        rows = pool_flags(rate(games, method, bots=names, samples=0)).rows
    tiebreaks: tuple[str, ...] = ()
    extra: dict[str, dict] = {}
    if stage_row["format"] == "swiss":
        tiebreaks = ("match_points", *stage_tiebreaks(stage_row))
        extra = {r["bot"]: {t: r[t] for t in tiebreaks} for r in stage_standings(view, stage)}
    out = [{"rank": i, **_pair_points(open_ends(rating_columns(r))),
            "version": view.versions.get(r["bot"], ""), **extra.get(r["bot"], {})}
           for i, r in enumerate(rows, 1)]
    return {"method": method, "rows": out, "tiebreaks": tiebreaks}


def _pair_points(row: dict) -> dict:
    """A rating row with its pairwise points named as such (standings count game points)."""
    out = {k: v for k, v in row.items() if k != "points"}
    out["pair_points"] = row.get("points")
    return out


def los_table(view: TournamentView, stage: int, method: str | None = None, samples: int = 0,
              seed: int = 0) -> dict:
    """Likelihood of superiority between every two bots of a stage: {method, bots, los}.

    From the maximum-likelihood fit (bt or pl): with `samples`, the share of bootstrap samples in
    which the row bot is rated above the column bot; without, from the fit's covariance.
    """
    games = view.stage_games(stage)
    if not games:
        raise ConfigError(f"tournament {view.id} stage {stage} has no games yet")
    method = method or default_method(games)
    if method not in ML_METHODS:
        raise ConfigError(f"--los needs a maximum-likelihood method (bt or pl), not {method!r}")
    result = rate(games, method, samples=samples, seed=seed)
    bots = [r["bot"] for r in result.rows]
    return {"method": method, "bots": bots, "los": result.los}


def crosstable_report(view: TournamentView, stage: int) -> dict:
    """Every bot of a stage against every other: {bots (in standings order), cells}.

    A cell counts pairwise results (`pair_points`: a win over that opponent at any table is 1, a
    shared rank ½), not the game points the standings count: see docs/numbers.md.
    """
    bots = [r["bot"] for r in stage_standings(view, stage)]
    table = crosstable(view.stage_games(stage), bots)
    order = bots + [b for b in table if b not in bots]
    cells = {a: {b: {"wins": c.wins, "draws": c.draws, "losses": c.losses, "pair_points": c.points,
                     "games": c.games} for b, c in row.items()} for a, row in table.items()}
    return {"bots": order, "cells": cells}


# -- head to head -------------------------------------------------------------------------------


@dataclass
class Record:
    """Two bots' results against each other over one set of games, and what those same games say
    about their Elo difference: the score, the Elo, its interval and the LOS all come from them."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    pentanomial: list[int] = field(default_factory=lambda: [0] * 5)

    @property
    def games(self) -> int:
        """Pairwise games between the two."""
        return self.wins + self.draws + self.losses

    @property
    def pairs(self) -> int:
        """Complete duplicate-deal pairs (two games of one deal, seats swapped)."""
        return sum(self.pentanomial)

    def add(self, other: Record) -> None:
        """Count another record's games in this one."""
        self.wins += other.wins
        self.draws += other.draws
        self.losses += other.losses
        self.pentanomial = [x + y for x, y in zip(self.pentanomial, other.pentanomial)]

    def elo(self) -> tuple[str, float, float, float] | None:
        """(basis, Elo difference of a over b, lo, hi) at 95 %: from the deal pairs when every
        game is in one (their luck cancels), else from the W/D/L of every game."""
        if self.pairs >= 2 and 2 * self.pairs == self.games:
            found = ("pentanomial", *elo_diff_pentanomial(self.pentanomial))
        elif self.games >= 2:
            found = ("trinomial", *elo_diff_trinomial(self.wins, self.draws, self.losses))
        else:
            return None
        # A perfect (or null) score has no finite estimate, nor one with a zero-width margin.
        return found if all(math.isfinite(x) for x in found[1:]) and found[2] < found[3] else None

    def los(self) -> float | None:
        """Likelihood that a is the stronger (from wins and losses; draws say nothing)."""
        return los(self.wins, self.losses) if self.wins + self.losses else None

    def figures(self) -> dict:
        """The record's numbers, for JSON output."""
        elo = self.elo()
        superiority = self.los()
        return {"games": self.games, "wins": self.wins, "draws": self.draws,
                "losses": self.losses,
                "score_pct": round(100 * (self.wins + self.draws / 2) / self.games, 2)
                if self.games else None,
                "pentanomial": self.pentanomial,
                "elo": None if elo is None else {"basis": elo[0], "diff": round(elo[1], 2),
                                                 "lo": round(elo[2], 2), "hi": round(elo[3], 2)},
                "los": None if superiority is None else round(superiority, 4)}


@dataclass
class Line(Record):
    """The record over one game at one seat count."""

    game: str = ""
    seats: int = 0


@dataclass
class HeadToHead(Record):
    """Two bots' record against each other: pooled over every game (the inherited figures) and
    one line per game and seat count, each line's figures from its own games only."""

    a: str = ""
    b: str = ""
    lines: list[Line] = field(default_factory=list)
    deals: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        """Everything, for JSON output: the pooled figures, then `lines` and `deals`."""
        return {"a": self.a, "b": self.b, **self.figures(),
                "lines": [{"game": x.game, "seats": x.seats, **x.figures()} for x in self.lines],
                "deals": self.deals}


def head_to_head(store: Store, a: str, b: str, tournament_id: int | None = None,
                 game: str | None = None) -> HeadToHead:
    """A's record against B over every recorded game they both played (optionally one tournament
    or one game), and the per-deal pair scores of their two-bot matches."""
    if parse_ref(a)[0] == parse_ref(b)[0] and a == b:
        raise ConfigError(f"head to head needs two different bots, got {a!r} twice")
    if tournament_id is not None:
        tournament_row(store, tournament_id)  # an unknown id is an error, not "0 games"
    if game is not None:
        get_game(game)
    ranks = pair_ranks(store, a, b, tournament_id, game)
    if not ranks:
        for ref in (a, b):
            if not bot_known(store, ref):
                raise ConfigError(f"no bot {ref!r} in this database")
        return HeadToHead(a=a, b=b)
    return pair_record(a, b, ranks, pair_deals(store, a, b, tournament_id, game))


def pair_record(a: str, b: str, ranks: list[tuple], deals: list[tuple[str, int, float, int]]
                ) -> HeadToHead:
    """A's record against B from their games (the rows of `arena.store.queries.pair_ranks`:
    game id, ranks, game, seats, match, deal) and the deals of their two-bot matches (`pair_deals`,
    listed as they were stored)."""
    lines: dict[tuple[str, int], Line] = {}
    pair_points: dict[tuple[str, int, str, int], list[float]] = {}
    seen = set()
    for game_id, rank_a, rank_b, game, seats, match_id, deal in ranks:
        if game_id in seen:  # a bot twice at one table (not possible today) counts once
            continue
        seen.add(game_id)
        line = lines.setdefault((game, seats), Line(game=game, seats=seats))
        if rank_a < rank_b:
            line.wins += 1
        elif rank_a == rank_b:
            line.draws += 1
        else:
            line.losses += 1
        if seats == 2 and match_id is not None:  # a deal of a two-bot match: half a pair
            score = 1.0 if rank_a < rank_b else 0.5 if rank_a == rank_b else 0.0
            pair_points.setdefault((game, seats, match_id, deal), []).append(score)
    for (game, seats, _, _), scores in pair_points.items():
        if len(scores) == 2:
            lines[(game, seats)].pentanomial[int(round(sum(scores) * 2))] += 1
    h2h = HeadToHead(a=a, b=b, lines=sorted(lines.values(), key=lambda x: (x.game, x.seats)))
    for line in h2h.lines:
        h2h.add(line)
    h2h.deals = [{"match": m, "deal": d, "points": p, "games": n} for m, d, p, n in deals]
    return h2h


def sprt_report(store: Store, a: str, b: str, elo0: float, elo1: float, alpha: float = 0.05,
                beta: float = 0.05, model: str = "logistic", tournament_id: int | None = None,
                game: str | None = None) -> dict:
    """The SPRT of A against B (H1: A is elo1 stronger; H0: elo0) over their recorded games.

    Uses pentanomial counts of duplicate-deal pairs when the two played such deals, else W/D/L.
    """
    h2h = head_to_head(store, a, b, tournament_id, game)
    if h2h.pairs:
        counts, basis = list(h2h.pentanomial), "pentanomial"
    else:
        counts, basis = [h2h.losses, h2h.draws, h2h.wins], "trinomial"
    if not sum(counts):
        raise ConfigError(f"{a} and {b} have no recorded games against each other")
    result = sprt(counts, elo0, elo1, alpha, beta, model)
    return {"a": a, "b": b, "basis": basis, "counts": counts, "elo0": elo0, "elo1": elo1,
            "alpha": alpha, "beta": beta, "model": model, "llr": round(result.llr, 4),
            "lower": round(result.lower, 4), "upper": round(result.upper, 4),
            "decision": result.decision, "h2h": h2h.as_dict()}


def gauntlet_sprt(view: TournamentView, stage: int) -> list[dict]:
    """A gauntlet stage's SPRT stop rule, per candidate: pair counts, LLR, bounds, decision.

    Empty when the stage has no such rule.
    """
    row = stage_record(view, stage)
    rule = (row["config"] or {}).get("sprt")
    if row["format"] != "gauntlet" or not rule:
        return []
    history, names = stage_history(view, stage)
    local = {n: i for i, n in enumerate(names)}
    out = []
    for name in row["config"].get("candidates", []):
        counts = candidate_pairs(local[name], history)
        result = (sprt(counts, rule["elo0"], rule["elo1"], rule["alpha"], rule["beta"],
                       rule["model"]) if sum(counts) else None)
        out.append({"candidate": name, "counts": counts, **rule,
                    "llr": None if result is None else round(result.llr, 4),
                    "lower": None if result is None else round(result.lower, 4),
                    "upper": None if result is None else round(result.upper, 4),
                    "decision": None if result is None else result.decision})
    return out


# -- results files ------------------------------------------------------------------------------


def fit_file(path: Path, method: str | None = None, anchor: str | None = None,
             average: float = DEFAULT_RATING, samples: int = DEFAULT_SAMPLES,
             seed: int = 0) -> RatingResult:
    """Ratings of the results in a JSONL file (`{"players": [...], "ranks": [...]}` per line).

    `anchor` is `NAME=RATING`: that bot is fixed at that rating instead of centring the pool.
    """
    fixed = None
    if anchor is not None:
        name, sep, value = anchor.rpartition("=")
        try:
            fixed = (name, float(value)) if sep and name else None
        except ValueError:
            fixed = None
        if fixed is None:
            raise ConfigError(f"--anchor: expected NAME=RATING, got {anchor!r}")
    games = read_results(path)
    if not games:
        raise ConfigError(f"{path}: no results in the file")
    if fixed is not None and not any(s["bot"] == fixed[0] for g in games for s in g["seats"]):
        raise ConfigError(f"--anchor: no player {fixed[0]!r} in {path}")
    method = method or default_method(games)
    if method not in METHODS:
        raise ConfigError(f"--method: unknown method {method!r}; choose one of {', '.join(METHODS)}")
    return pool_flags(rate(games, method, average=average, anchor=fixed, samples=samples,
                           seed=seed))

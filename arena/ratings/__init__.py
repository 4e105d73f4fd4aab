"""Ratings as pure functions of recorded games.

A game is `{"id", "ordinal", "seats": [{"bot", "team", "rank"}, ...], "group"?}`; seats sharing a
team form one side, rank 1 is best and equal ranks are a tie. Methods, one module each:

- `elo`: incremental Elo in ordinal order (the tournament's live table).
- `bradley_terry`: maximum likelihood over all pairwise results at once (order independent).
- `plackett_luce`: maximum likelihood over whole finishing orders of multi-side tables.
- `fitting`: what both fits share (compiled tables, pools, perfect-record prior, solver, anchor).
- `bootstrap`: parametric-bootstrap intervals for either fit.
- `stats`: likelihood of superiority and head-to-head Elo differences with margins.
- `sprt`: fishtest's generalised sequential probability ratio test.
- `results_file`: games from a JSONL results file.
- `api`: `rate()`, the one front door that the store, CLI and reports call.
"""

from arena.ratings.elo import (DEFAULT_K, DEFAULT_RATING, Side, elo, elo_deltas, expected_score,
                               pairwise_score, sides_of)
from arena.ratings.api import METHODS, RatingResult, default_method, rate
from arena.ratings.results_file import parse_results, read_results
from arena.ratings.sprt import SequentialTest, SprtResult, sprt
from arena.ratings.stats import elo_diff_pentanomial, elo_diff_trinomial, los, los_matrix

__all__ = ["DEFAULT_K", "DEFAULT_RATING", "METHODS", "RatingResult", "SequentialTest",
           "Side", "SprtResult", "default_method", "elo", "elo_deltas", "elo_diff_pentanomial",
           "elo_diff_trinomial", "expected_score", "los", "los_matrix", "pairwise_score",
           "parse_results", "rate", "read_results", "sides_of", "sprt"]

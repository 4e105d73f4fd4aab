"""Ratings as pure functions of recorded games.

A game is `{"id", "ordinal", "seats": [{"bot", "team", "rank"}, ...], "group"?}`; seats sharing a
team form one side, rank 1 is best and equal ranks are a tie. Methods, one module each:

- `elo`: incremental Elo in ordinal order (the tournament's live table).
- `bradley_terry`: maximum likelihood over all pairwise results at once (order independent).
- `plackett_luce`: maximum likelihood over whole finishing orders of multi-side tables.
- `bootstrap`: parametric-bootstrap intervals for either fit.
- `stats`: likelihood of superiority and head-to-head Elo differences with margins.
- `sprt`: fishtest's generalised sequential probability ratio test.
- `results_file`: games from a JSONL results file.
- `api`: `rate()`, the one front door that the store, CLI and reports call.
"""

from arena.ratings.elo import (DEFAULT_K, DEFAULT_RATING, Side, elo, elo_deltas, expected_score,
                               pairwise_score, sides_of)

__all__ = ["DEFAULT_K", "DEFAULT_RATING", "Side", "elo", "elo_deltas", "expected_score",
           "pairwise_score", "sides_of"]

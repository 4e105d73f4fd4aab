"""Ratings as pure functions of recorded games.

A game is `{"id", "ordinal", "seats": [{"bot", "team", "rank"}, ...], "group"?}`; seats sharing a
team form one side, rank 1 is best and equal ranks are a tie. Methods, one module each:

- `elo`: incremental Elo in ordinal order (the tournament's live table).
- `bradley_terry`: maximum likelihood over all pairwise results at once (order independent).
- `plackett_luce`: maximum likelihood over whole finishing orders of multi-side tables.
- `fitting`: what both fits share (compiled tables, pools, perfect-record prior, solver, anchor).
- `bootstrap`: parametric-bootstrap intervals for either fit.
- `stats`: likelihood of superiority and head-to-head Elo differences with margins.
- `sequential`: `sprt`, fishtest's generalised sequential probability ratio test (the module
  is not named `sprt`, so importing it never hides the function of that name).
- `results_file`: games from a JSONL results file.
- `api`: `rate()`, the one front door that the store, CLI and reports call.
"""

from importlib import import_module

from arena.ratings.defaults import DEFAULT_K, DEFAULT_RATING, DEFAULT_SAMPLES
from arena.ratings.elo import Side, elo, elo_deltas, expected_score, pairwise_score, sides_of

# The fits need numpy and scipy (a few hundred ms to import): load them on first use, so a
# command that only reads a config or prints a stored table does not pay for them.
_LAZY = {
    "METHODS": "api", "RatingResult": "api", "default_method": "api", "pool_flags": "api",
    "rate": "api",
    "parse_results": "results_file", "read_results": "results_file",
    "SequentialTest": "sequential", "SprtResult": "sequential", "sprt": "sequential",
    "elo_diff_pentanomial": "stats", "elo_diff_trinomial": "stats", "los": "stats",
    "los_matrix": "stats",
}


def __getattr__(name: str):
    """The lazily imported names of the package (PEP 562)."""
    if name in _LAZY:
        value = getattr(import_module(f"arena.ratings.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'arena.ratings' has no attribute {name!r}")


__all__ = ["DEFAULT_K", "DEFAULT_RATING", "DEFAULT_SAMPLES", "Side", "elo", "elo_deltas",
           "expected_score", "pairwise_score", "sides_of", *_LAZY]

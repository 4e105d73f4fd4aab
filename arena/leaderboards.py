"""Pooled leaderboards: one game's ratings over every recorded game of it (or of one ladder).

Shared by the ladder, which publishes its leaderboards as it plays, and the read side (the rating
commands and the web app), so it sits below both and imports neither.
"""

from __future__ import annotations

from arena.errors import ConfigError
from arena.games import get_game
from arena.ratings import METHODS, default_method, pool_flags, rate
from arena.ratings.defaults import DEFAULT_SAMPLES
from arena.store import Store

# A ladder's boards are found by the ladder's read model too: the store package defines their scope.
from arena.store.views import LADDER_SCOPE, ladder_scope_id

GAME_SCOPE = "game"  # pooled ratings over every recorded game of a game
RATING_COLUMNS = ("bot", "rating", "lo", "hi", "games", "wins", "draws", "losses", "points",
                  "score_pct", "flag")


def rating_columns(row: dict) -> dict:
    """The columns every rating table shows, from a row of `rate()`."""
    return {k: row.get(k) for k in RATING_COLUMNS}


def leaderboard(store: Store, game: str, method: str | None = None, since: str | None = None,
                samples: int = DEFAULT_SAMPLES, seed: int = 0, save: bool = True,
                ladder_id: int | None = None) -> dict:
    """One game's leaderboard over every recorded game of it (or of one ladder), per bot version.

    Returns {game, method, since, rows, groups}; without `since` it is also stored (pooled
    ratings, scope "game", or "ladder" with id "<ladder id>:<game>"), replacing the previous one
    for that method.
    """
    get_game(game)  # an unknown game name is a ConfigError naming the known ones
    if method is not None and method not in METHODS:
        raise ConfigError(f"--method: unknown method {method!r}; choose one of {', '.join(METHODS)}")
    games, versions = store.pooled_games(game, since, tournament_id=ladder_id)
    if not games:
        raise ConfigError(f"no recorded games of {game!r}" + (f" since {since}" if since else "")
                          + (f" in ladder {ladder_id}" if ladder_id is not None else ""))
    method = method or default_method(games)
    result = pool_flags(rate(games, method, samples=samples, seed=seed))
    rows = []
    for i, r in enumerate(result.rows, 1):
        who = versions[r["bot"]]
        rows.append({**rating_columns(r), "rank": i, "bot": who["bot"], "version": who["version"],
                     "bot_id": who["bot_id"], "last_played": who["last_played"]})
    if save and since is None:
        scope = ((GAME_SCOPE, game) if ladder_id is None
                 else (LADDER_SCOPE, ladder_scope_id(ladder_id, game)))
        store.save_pooled_ratings(*scope, method,
                                  [{k: v for k, v in r.items() if k != "rank"} for r in rows])
    return {"game": game, "method": method, "since": since, "rows": rows,
            "groups": result.groups}

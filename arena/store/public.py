"""The read queries of `arena server`'s visibility rules and author page (arena/server): when a
game was recorded and whose bots played it, the versions still waiting for (or failing) their
check, and an author's ladder standings and rating snapshots."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.store.store import Store


def game_recorded_at(store: Store, game_id: str) -> str | None:
    """When game `game_id` was recorded; None when there is no such game."""
    row = store.db.execute("select recorded_at from games where id = ?", [game_id]).fetchone()
    return None if row is None else row[0]


def author_played(store: Store, game_id: str, author_id: int) -> bool:
    """Whether one of the author's bots has a seat in game `game_id`."""
    return store.db.execute(
        "select 1 from game_seats s join bots b on b.id = s.bot_id "
        "where s.game_id = ? and b.author_id = ? limit 1", [game_id, author_id]).fetchone() is not None


def games_after(store: Store, game: str, since: str, unless_author: int | None = None) -> list[str]:
    """The ids of the games of `game` recorded after `since` (by the index on game and
    recorded_at), but those where a bot of author `unless_author` has a seat."""
    mine = ("" if unless_author is None else
            " and id not in (select s.game_id from game_seats s join bots b on b.id = s.bot_id "
            "where b.author_id = ?)")
    args = [game, since] + ([] if unless_author is None else [unless_author])
    return [r[0] for r in store.db.execute(
        f"select id from games where game = ? and recorded_at > ?{mine}", args)]


def authored_versions(store: Store, statuses: tuple[str, ...]) -> list[tuple[str, str, int]]:
    """(name, version, author id) of each version an author submitted whose registry status is
    one of `statuses`."""
    marks = ", ".join("?" for _ in statuses)
    return [tuple(r) for r in store.db.execute(
        "select name, version, author_id from bots where author_id is not null and "
        f"manifest is not null and status in ({marks})", list(statuses))]


def ladder_names(store: Store) -> dict[int, str]:
    """Every ladder's name by its id."""
    return {r[0]: r[1] for r in store.db.execute(
        "select id, name from tournaments where format = 'ladder'")}


def author_ladder_standings(store: Store, author_id: int) -> list[dict]:
    """The author's bots on each stored ladder leaderboard: scope_id, method, name, version,
    rating, lo, hi, games, rank (1 = best, ties in the leaderboard page's order: by bot and
    version) and entrants (how many are on that board)."""
    return [dict(r) for r in store.db.query(
        "select p.scope_id, p.method, b.name, b.version, p.rating, p.lo, p.hi, p.games, "
        "(select count(*) from pooled_ratings o where o.scope_kind = p.scope_kind and "
        " o.scope_id = p.scope_id and o.method = p.method and (o.rating > p.rating or "
        " (o.rating = p.rating and (o.bot < p.bot or (o.bot = p.bot and o.version < p.version)))"
        ")) + 1 rank, "
        "(select count(*) from pooled_ratings o where o.scope_kind = p.scope_kind and "
        " o.scope_id = p.scope_id and o.method = p.method) entrants "
        "from pooled_ratings p join bots b on b.id = p.bot_id "
        "where p.scope_kind = 'ladder' and b.author_id = ? order by p.scope_id, rank",
        [author_id])]


def author_rating_snapshots(store: Store, author_id: int) -> list[dict]:
    """Every published ladder rating of the author's bots, oldest first: scope_id, method,
    name, version, tables, games, rating, lo, hi, computed_at."""
    return [dict(r) for r in store.db.query(
        "select s.scope_id, s.method, b.name, b.version, s.tables, s.games, s.rating, s.lo, "
        "s.hi, s.computed_at from rating_snapshots s join bots b on b.id = s.bot_id "
        "where s.scope_kind = 'ladder' and b.author_id = ? order by s.computed_at, s.tables",
        [author_id])]

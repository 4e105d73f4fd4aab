"""The schema: numbered migrations in a registry, each applied in its own transaction.

A database records the number of the last migration applied in its `meta` table; opening it
applies the later ones in order. A new migration is one more decorated function below with the
next number, and SCHEMA_VERSION raised to it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlite_utils

from arena.errors import StoreError

if TYPE_CHECKING:
    from arena.store.store import Store

SCHEMA_VERSION = 11
_UNWRITABLE = (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM)
MIGRATIONS: dict[int, Callable[[Any], None]] = {}  # number -> function(store), 1 upwards


def migration(number: int) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
    """Register the decorated function as migration `number` (the next one after the last)."""
    def register(function: Callable[[Any], None]) -> Callable[[Any], None]:
        if number != len(MIGRATIONS) + 1:
            raise ValueError(f"migration {number} registered after {len(MIGRATIONS)}: numbers "
                             f"run 1, 2, 3, … without gaps")
        MIGRATIONS[number] = function
        return function
    return register


def migrate(store: Store) -> None:
    """Bring the database of `store` to SCHEMA_VERSION; StoreError for a foreign or newer file."""
    where = f"{store.path}: " if store.path is not None else ""  # the message names the file
    try:
        tables = set(store.db.table_names())
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", None) in _UNWRITABLE:
            # A WAL database is opened by writing its -shm file beside it: a read-only file or
            # folder fails here, and that is no sign of a foreign file.
            raise StoreError(f"cannot open {where}{exc} (the file or its folder is read-only?"
                             f" SQLite writes beside the database)") from None
        raise StoreError(f"not an Arena database: {where}{exc}") from None
    if "meta" in tables:
        try:
            version = int(store.db["meta"].get("schema_version")["value"])
        except (sqlite_utils.db.NotFoundError, TypeError, ValueError, sqlite3.DatabaseError):
            raise StoreError(f"not an Arena database: {where}its meta table has no schema "
                             f"version") from None
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{where}database schema version {version} is newer than this Arena "
                f"({SCHEMA_VERSION})"
            )
    elif tables:
        raise StoreError(f"not an Arena database: {where}it has tables {sorted(tables)[:5]}")
    else:
        version = 0
    # Numbered migrations, each in one transaction with its version bump: a crash mid-way
    # leaves the database at the previous version, never between two.
    for number in range(version + 1, SCHEMA_VERSION + 1):
        with store.transaction():
            MIGRATIONS[number](store)
            store.db.conn.execute(
                "insert or replace into meta (key, value) values ('schema_version', ?)",
                [str(number)])


def check_readonly_version(conn: sqlite3.Connection, path: Path) -> None:
    """StoreError unless the database on `conn` is an Arena database of this schema version."""
    try:
        row = conn.execute("select value from meta where key = 'schema_version'").fetchone()
    except sqlite3.Error as exc:
        raise StoreError(f"not an Arena database: {path}: {exc}") from None
    text = "" if row is None else str(row[0])
    if not (text.isascii() and text.isdigit()):  # '²' passes isdigit alone: int() raised
        raise StoreError(f"not an Arena database: {path}: its meta table has no schema "
                         f"version (found {text[:20]!r})")
    version = int(text)
    if version != SCHEMA_VERSION:
        raise StoreError(f"{path}: database schema version {version}, this Arena reads "
                         f"{SCHEMA_VERSION}; open it once with `arena tournament list --db "
                         f"{path}` to migrate it")


@migration(1)
def _migration_1(store: Store) -> None:
    """The original schema: bots, tournaments, matches, games, seats, moves, logs, ratings."""
    db = store.db
    db.create_table("meta", {"key": str, "value": str}, pk="key")
    db.create_table("bots",
        {"id": int, "name": str, "version": str, "command": str, "workdir": str,
         "language": str, "description": str, "added_at": str},
        pk="id", not_null={"name", "version"},
    )
    db["bots"].create_index(["name", "version"], unique=True)
    db.create_table("tournaments",
        {"id": int, "name": str, "game": str, "format": str, "seats": int, "seed": int,
         "options": str, "config": str, "status": str, "created_at": str,
         "finished_at": str},
        pk="id",
    )
    db.create_table("tournament_bots",
        {"tournament_id": int, "bot_id": int, "entry": int},
        pk=("tournament_id", "bot_id"),
        foreign_keys=[("tournament_id", "tournaments", "id"), ("bot_id", "bots", "id")],
    )
    db.create_table("matches",
        {"id": str, "tournament_id": int, "round": int, "table_no": int, "bots": str,
         "status": str, "duration_ms": float, "finished_at": str},
        pk="id", foreign_keys=[("tournament_id", "tournaments", "id")],
    )
    db["matches"].create_index(["tournament_id"])
    db.create_table("games",
        {"id": str, "match_id": str, "tournament_id": int, "ordinal": int, "game": str,
         "options": str, "num_seats": int, "deal": int, "rotation": int, "seed": int,
         "termination": str, "culprit_seat": int, "culprit_bot": str, "detail": str,
         "evidence": str, "steps": int, "duration_ms": float, "recorded_at": str},
        pk="id",
        foreign_keys=[("match_id", "matches", "id"), ("tournament_id", "tournaments", "id")],
    )
    db["games"].create_index(["tournament_id", "ordinal"])
    db["games"].create_index(["match_id"])
    db.create_table("game_seats",
        {"game_id": str, "seat": int, "bot_id": int, "bot": str, "team": int,
         "score": float, "rank": int},
        pk=("game_id", "seat"),
        foreign_keys=[("game_id", "games", "id"), ("bot_id", "bots", "id")],
    )
    db["game_seats"].create_index(["bot_id"])
    db.create_table("moves",
        {"game_id": str, "ply": int, "step": int, "seat": int, "action": str, "ms": float},
        pk=("game_id", "ply"), foreign_keys=[("game_id", "games", "id")],
    )
    db.create_table("bot_logs",
        {"match_id": str, "bot": str, "stderr": str},
        pk=("match_id", "bot"), foreign_keys=[("match_id", "matches", "id")],
    )
    db.create_table("ratings",
        {"tournament_id": int, "method": str, "bot": str, "rating": float, "games": int,
         "wins": float, "draws": float, "losses": float, "points": float, "score_pct": float,
         "computed_at": str},
        pk=("tournament_id", "method", "bot"),
        foreign_keys=[("tournament_id", "tournaments", "id")],
    )
    db.create_table("rating_history",
        {"tournament_id": int, "method": str, "ordinal": int, "game_id": str, "bot": str,
         "before": float, "after": float},
        pk=("tournament_id", "method", "ordinal", "bot"),
        foreign_keys=[("tournament_id", "tournaments", "id")],
    )


@migration(2)
def _migration_2(store: Store) -> None:
    """Stages, rounds, byes, per-match scores, per-deal scores, runner errors, leases; per-stage ratings."""
    db, sql = store.db, store.db.conn.execute
    sql("alter table bots add column games text not null default '[]'")
    sql("alter table matches add column stage integer not null default 1")
    sql("alter table matches add column attempts integer not null default 1")
    sql("alter table matches add column error text")
    sql("alter table matches add column worker text")
    sql("alter table games add column stage integer not null default 1")
    db.create_table(
        "stages",
        {"tournament_id": int, "stage": int, "name": str, "game": str, "format": str, "seats": int,
         "options": str, "config": str, "entrants": str, "left_out": str, "rounds": int,
         "status": str, "finished_at": str},
        pk=("tournament_id", "stage"), foreign_keys=[("tournament_id", "tournaments", "id")],
    )
    db.create_table(
        "rounds",
        {"tournament_id": int, "stage": int, "round": int, "tables": str, "byes": str,
         "created_at": str},
        pk=("tournament_id", "stage", "round"),
        foreign_keys=[("tournament_id", "tournaments", "id")],
    )
    db.create_table(
        "byes",
        {"tournament_id": int, "stage": int, "round": int, "bot_id": int, "bot": str,
         "points": float},
        pk=("tournament_id", "stage", "round", "bot_id"),
        foreign_keys=[("tournament_id", "tournaments", "id"), ("bot_id", "bots", "id")],
    )
    db.create_table(
        "match_bots",
        {"match_id": str, "position": int, "bot_id": int, "bot": str, "entry": int,
         "game_points": float, "match_points": float, "partners": str},
        pk=("match_id", "position"),
        foreign_keys=[("match_id", "matches", "id"), ("bot_id", "bots", "id")],
    )
    db.create_table(
        "deals",
        {"match_id": str, "deal": int, "bot_id": int, "bot": str, "points": float, "games": int},
        pk=("match_id", "deal", "bot_id"),
        foreign_keys=[("match_id", "matches", "id"), ("bot_id", "bots", "id")],
    )
    db.create_table(
        "match_errors",
        {"match_id": str, "attempt": int, "kind": str, "error": str, "worker": str,
         "recorded_at": str},
        pk=("match_id", "attempt"), foreign_keys=[("match_id", "matches", "id")],
    )
    db.create_table(
        "leases",
        {"tournament_id": int, "token": str, "pid": int, "host": str, "started_at": str,
         "heartbeat_at": str, "heartbeat_ts": float, "cancel_requested": int},
        pk="tournament_id", foreign_keys=[("tournament_id", "tournaments", "id")],
    )
    db["games"].create_index(["stage"])
    db["matches"].create_index(["tournament_id", "stage", "round"])
    # Ratings are kept per stage: rebuild both tables with the stage in the key.
    for table, pk in (("ratings", "tournament_id, stage, method, bot"),
                      ("rating_history", "tournament_id, stage, method, ordinal, bot")):
        cols = [r[1] for r in sql(f"pragma table_info([{table}])")]
        types = {r[1]: r[2] for r in sql(f"pragma table_info([{table}])")}
        defs = ", ".join(f"[{c}] {types[c]}" for c in cols)
        sql(f"alter table [{table}] rename to [{table}_v1]")
        sql(f"create table [{table}] ({defs}, [stage] INTEGER NOT NULL DEFAULT 1, "
            f"primary key ({pk}), foreign key (tournament_id) references tournaments(id))")
        names = ", ".join(f"[{c}]" for c in cols)
        sql(f"insert into [{table}] ({names}, stage) select {names}, 1 from [{table}_v1]")
        sql(f"drop table [{table}_v1]")
    # Stage rows for tournaments recorded before stages existed: each was one stage.
    sql("insert into stages (tournament_id, stage, name, game, format, seats, options, config, "
        "entrants, left_out, rounds, status, finished_at) "
        "select id, 1, game, game, format, seats, options, config, "
        "(select json_group_array(entry) from tournament_bots where tournament_id = t.id), '[]', "
        "(select count(distinct round) from matches where tournament_id = t.id), status, finished_at "
        "from tournaments t")


@migration(3)
def _migration_3(store: Store) -> None:
    """The bot registry: bots gain content_hash (of their snapshot), status and author."""
    sql = store.db.conn.execute
    # A bot first seen in a tournament config has no snapshot: its content_hash stays null.
    sql("alter table bots add column content_hash text")
    sql("alter table bots add column status text not null default 'active'")
    sql("alter table bots add column author text not null default ''")
    sql("alter table bots add column manifest text")  # the manifest's path inside the snapshot
    store.db["bots"].create_index(["content_hash"])


@migration(4)
def _migration_4(store: Store) -> None:
    """Ratings of every method with their 95 % intervals; pooled leaderboards per game."""
    db, sql = store.db, store.db.conn.execute
    for column, kind in (("lo", "real"), ("hi", "real"), ("flag", "text"), ("bot_id", "integer")):
        sql(f"alter table ratings add column {column} {kind}")
    sql("update ratings set bot_id = (select t.bot_id from tournament_bots t join bots b "
        "on b.id = t.bot_id where t.tournament_id = ratings.tournament_id and b.name = ratings.bot)")
    # A leaderboard pools every game of one game (scope_kind "game") or, later, of a ladder.
    db.create_table(
        "pooled_ratings",
        {"scope_kind": str, "scope_id": str, "method": str, "bot_id": int, "bot": str,
         "version": str, "rating": float, "lo": float, "hi": float, "games": int, "wins": float,
         "draws": float, "losses": float, "points": float, "score_pct": float, "flag": str,
         "last_played": str, "computed_at": str},
        pk=("scope_kind", "scope_id", "method", "bot_id"),
        foreign_keys=[("bot_id", "bots", "id")],
    )
    db["games"].create_index(["game", "recorded_at"])


@migration(5)
def _migration_5(store: Store) -> None:
    """Ladders: a tournament row of format "ladder", its entries (join/retire ticks) and tables."""
    db = store.db
    db.create_table(
        "ladder_entries",
        {"tournament_id": int, "bot_id": int, "key": str, "status": str, "reason": str,
         "joined_tick": int, "retired_tick": int, "recorded_at": str},
        pk=("tournament_id", "bot_id"),
        foreign_keys=[("tournament_id", "tournaments", "id"), ("bot_id", "bots", "id")],
    )
    db.create_table(
        "ladder_tables",
        {"tournament_id": int, "number": int, "format": int, "bots": str, "match_id": str,
         "reason": str, "status": str, "chosen_at": str, "finished_at": str},
        pk=("tournament_id", "number"), foreign_keys=[("tournament_id", "tournaments", "id")],
    )
    # Every published ladder rating, kept: a bot's rating trajectory.
    db.create_table(
        "rating_snapshots",
        {"scope_kind": str, "scope_id": str, "method": str, "bot_id": int, "tables": int,
         "games": int, "rating": float, "lo": float, "hi": float, "computed_at": str},
        foreign_keys=[("bot_id", "bots", "id")],
    )
    db["rating_snapshots"].create_index(["bot_id", "computed_at"])


MOVES_TABLE = """create table [moves] (
   [game_id] TEXT NOT NULL REFERENCES [games]([id]),
   [ply] INTEGER NOT NULL,
   [step] INTEGER,
   [seat] INTEGER,
   [action] TEXT,
   [ms] FLOAT,
   PRIMARY KEY ([game_id], [ply])
) WITHOUT ROWID"""


@migration(6)
def _migration_6(store: Store) -> None:
    """Moves in a WITHOUT ROWID table: the primary key is the table, so no separate key index.

    Moves are most of a database; this saves about a quarter of their bytes (bench/storage_bench.py)
    and the file stays readable by any SQLite tool (3.8.2 or newer).
    """
    sql = store.db.conn.execute
    sql(MOVES_TABLE.replace("[moves]", "[moves_v6]", 1))
    sql("insert into moves_v6 (game_id, ply, step, seat, action, ms) "
        "select game_id, ply, step, seat, action, ms from moves order by game_id, ply")
    sql("drop table moves")
    sql("alter table moves_v6 rename to moves")


@migration(7)
def _migration_7(store: Store) -> None:
    """Leases record their driver's process start, so a dead driver's lease is taken at once.

    Leases from before keep a null pid_start and the older rule (pid gone, or a stale heartbeat).
    """
    store.db.conn.execute("alter table leases add column pid_start text")


@migration(8)
def _migration_8(store: Store) -> None:
    """Entrants keep their name in the tournament (a bots row is a program version); matches and
    runner errors gain the node and host that ran them; node events (a node quarantined).

    A null tournament_bots.name (tournaments recorded before) means the bots row's name.
    """
    sql = store.db.conn.execute
    sql("alter table tournament_bots add column name text")
    sql("alter table matches add column node text")
    sql("alter table matches add column host text")
    sql("alter table match_errors add column node text")
    sql("alter table match_errors add column host text")
    # What happened to a node during a run (quarantined: no more work for it).
    store.db.create_table("node_events",
        {"tournament_id": int, "node": str, "host": str, "event": str, "detail": str,
         "recorded_at": str},
        foreign_keys=[("tournament_id", "tournaments", "id")])
    store.db["node_events"].create_index(["tournament_id"])


GAME_LOGS_TABLE = """create table [game_logs] (
   [game_id] TEXT NOT NULL REFERENCES [games]([id]),
   [seat] INTEGER NOT NULL,
   [line_no] INTEGER NOT NULL,
   [ply] INTEGER NOT NULL,
   [text] TEXT NOT NULL,
   PRIMARY KEY ([game_id], [seat], [line_no])
) WITHOUT ROWID"""


@migration(9)
def _migration_9(store: Store) -> None:
    """Bots' stderr per game: each line with the ply it came in (the head and tail of each bot's
    log in each game are kept), and per game and seat how many lines and bytes it wrote and how
    many of them were dropped.

    Games recorded before have no rows here: their bots' stderr is the match's, in bot_logs.
    """
    store.db.conn.execute(GAME_LOGS_TABLE)
    store.db.create_table("game_log_counts",
        {"game_id": str, "seat": int, "bot": str, "lines": int, "bytes": int,
         "dropped_lines": int, "dropped_bytes": int},
        pk=("game_id", "seat"), foreign_keys=[("game_id", "games", "id")])


@migration(10)
def _migration_10(store: Store) -> None:
    """The competition server (`arena server`): authors, their API tokens (sha256 hex only, never
    the token), their submissions with each one's check; a registered version records the author
    who submitted it (null: added on the organiser's machine with `arena bot add`)."""
    db = store.db
    db.create_table("authors",
        {"id": int, "name": str, "email": str, "role": str, "created_at": str,
         "disabled_at": str},
        pk="id", not_null={"name", "role", "created_at"})
    db["authors"].create_index(["name"], unique=True)
    db.create_table("author_tokens",
        {"id": int, "author_id": int, "token_hash": str, "created_at": str, "revoked_at": str,
         "last_used_at": str},
        pk="id", not_null={"author_id", "token_hash", "created_at"},
        foreign_keys=[("author_id", "authors", "id")])
    db["author_tokens"].create_index(["token_hash"], unique=True)
    db["author_tokens"].create_index(["author_id"])
    db.create_table("submissions",
        {"id": int, "author_id": int, "bot_name": str, "version": str, "content_hash": str,
         "archive_bytes": int, "unpacked_bytes": int, "status": str, "report": str,
         "reason": str, "created_at": str, "checked_at": str},
        pk="id", not_null={"author_id", "status", "created_at"},
        foreign_keys=[("author_id", "authors", "id")])
    db["submissions"].create_index(["author_id", "created_at"])
    db["submissions"].create_index(["status"])
    store.db.conn.execute("alter table bots add column author_id integer references authors(id)")


@migration(11)
def _migration_11(store: Store) -> None:
    """Browser sessions of `arena server`, kept in the database so that a restart signs nobody
    out: the sha256 hex of each session id (never the id), its author, the digest of the token it
    was opened with (a revoked or rotated token ends it), when it was opened and last seen, and
    when it expires. The CSRF token is derived from the id, so it is not stored either."""
    db = store.db
    db.create_table("sessions",
        {"id_hash": str, "author_id": int, "token_hash": str, "created_at": str,
         "last_seen_at": str, "expires_at": str},
        pk="id_hash", not_null={"author_id", "token_hash", "created_at", "last_seen_at",
                                "expires_at"},
        foreign_keys=[("author_id", "authors", "id")])
    db["sessions"].create_index(["author_id"])
    db["sessions"].create_index(["expires_at"])

if sorted(MIGRATIONS) != list(range(1, SCHEMA_VERSION + 1)):
    raise RuntimeError(f"SCHEMA_VERSION is {SCHEMA_VERSION} but migrations {sorted(MIGRATIONS)} "
                       f"are registered")

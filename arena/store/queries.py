"""Focused read queries for the reports, the CLI and the web app: each takes a Store and returns
plain rows (dicts or tuples); what they mean for a page or a table is decided by the caller.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.errors import StoreError
from arena.refs import parse_ref
from arena.store.views import LADDER_FORMAT

if TYPE_CHECKING:
    from arena.store import Store

SQL_PARAMETERS = 500  # ids per `in (...)`: SQLite bounds the parameters of one statement


# -- games ----------------------------------------------------------------------------------------


def game_exists(store: Store, game_id: str) -> bool:
    """Whether a game with this id is stored."""
    return store.db.execute("select 1 from games where id = ?", [game_id]).fetchone() is not None


def game_row(store: Store, game_id: str) -> dict:
    """A game's stored row; StoreError when there is none."""
    row = next(store.db.query("select * from games where id = ?", [game_id]), None)
    if row is None:
        raise StoreError(f"no game with id {game_id!r}")
    return row


def game_recording(store: Store, game_id: str) -> dict | None:
    """A stored game's `recorded_at` and whether its recording is `complete` (its match row says
    finished, or it has none); None when no game has this id.

    A game is written with its seats and moves in the transaction that records its finished
    match, so a complete game never changes: the web app caches what it computes from one.
    """
    row = store.db.execute(
        "select g.recorded_at, m.status from games g left join matches m on m.id = g.match_id "
        "where g.id = ?", [game_id]).fetchone()
    if row is None:
        return None
    return {"recorded_at": row[0] or "", "complete": row[0] is not None and row[1] in (None, "finished")}


def game_seats(store: Store, game_id: str) -> list[dict]:
    """A game's seats in order: seat, bot (its name in the tournament), bot_id, team, score,
    rank and the bot's registry name and version."""
    return list(store.db.query(
        "select s.seat, s.bot, s.bot_id, s.team, s.score, s.rank, b.name, b.version "
        "from game_seats s left join bots b on b.id = s.bot_id "
        "where s.game_id = ? order by s.seat", [game_id]))


def move_counts(store: Store, game_id: str) -> dict:
    """A game's number of moves and of steps: {moves, steps}."""
    return next(store.db.query(
        "select count(*) as moves, count(distinct step) as steps from moves where game_id = ?",
        [game_id]))


def seats_by_game(store: Store, game_ids: list[str]) -> dict[str, list[dict]]:
    """Each game's seats in seat order: bot name and version, team, score, rank."""
    out: dict[str, list[dict]] = {}
    for i in range(0, len(game_ids), SQL_PARAMETERS):
        chunk = game_ids[i:i + SQL_PARAMETERS]
        for r in store.db.query(
            "select s.game_id, s.seat, s.bot, b.name, b.version, s.team, s.score, s.rank "
            "from game_seats s join bots b on b.id = s.bot_id "
            f"where s.game_id in ({', '.join('?' for _ in chunk)}) order by s.game_id, s.seat",
            chunk
        ):
            out.setdefault(r["game_id"], []).append(
                {"bot": r["name"], "version": r["version"], "team": r["team"],
                 "score": r["score"], "rank": r["rank"]})
    return out


def recent_games(store: Store, tournament_id: int, limit: int) -> list[dict]:
    """A tournament's (or ladder's) last `limit` games, newest first: id, game, seats, ending."""
    return [dict(r) for r in store.db.query(
        "select id, game, num_seats, termination, recorded_at from games "
        "where tournament_id = ? order by recorded_at desc, ordinal desc limit ?",
        [tournament_id, limit])]


def export_rows(store: Store, tournament_id: int) -> Iterator[tuple[tuple, list, list]]:
    """A tournament's games in ordinal order as (game, seats, moves) tuples, streamed.

    game: id, tournament_id, stage, round, table_no, match_id, game, options, seed, deal,
    rotation, termination, culprit_bot, detail, evidence; seats: game_id, seat, bot, team, score,
    rank; moves: game_id, ply, step, seat, action, ms. Three parallel cursors, so a big
    tournament is never held in memory.
    """
    games = store.db.conn.execute(
        "select g.id, g.tournament_id, g.stage, m.round, m.table_no, g.match_id, g.game, "
        "g.options, g.seed, g.deal, g.rotation, g.termination, g.culprit_bot, g.detail, g.evidence "
        "from games g join matches m on m.id = g.match_id where g.tournament_id = ? "
        "order by g.ordinal, g.id", [tournament_id])
    seats = store.db.conn.execute(
        "select s.game_id, s.seat, s.bot, s.team, s.score, s.rank from game_seats s "
        "join games g on g.id = s.game_id where g.tournament_id = ? "
        "order by g.ordinal, g.id, s.seat", [tournament_id])
    moves = store.db.conn.execute(
        "select v.game_id, v.ply, v.step, v.seat, v.action, v.ms from moves v "
        "join games g on g.id = v.game_id where g.tournament_id = ? "
        "order by g.ordinal, g.id, v.ply", [tournament_id])

    def take(cursor, game_id, pending):
        rows = []
        while True:
            row = pending[0] if pending else cursor.fetchone()
            pending.clear()
            if row is None:
                return rows
            if row[0] != game_id:
                pending.append(row)
                return rows
            rows.append(row)

    seat_pending: list = []
    move_pending: list = []
    for g in games:
        yield g, take(seats, g[0], seat_pending), take(moves, g[0], move_pending)


# -- forfeits and start-up ------------------------------------------------------------------------


def forfeits_with_logs(store: Store, tournament_id: int) -> list[dict]:
    """A tournament's forfeited games in game order, each with the culprit's stderr in that game.

    Rows: game_id, match_id, stage, bot, reason, detail, evidence, stderr. The stderr is the
    game's own (its last GAME_STDERR_LINES lines); for a game recorded before per-game logs, the
    culprit's stderr in the whole match, as it was kept then.
    """
    rows = [dict(r) for r in store.db.query(
        "select g.id game_id, g.match_id, g.stage, g.culprit_bot bot, g.termination reason, "
        "g.detail, g.evidence, g.culprit_seat, l.stderr from games g left join bot_logs l "
        "on l.match_id = g.match_id and l.bot = g.culprit_bot "
        "where g.tournament_id = ? and g.termination != 'normal' order by g.ordinal, g.id",
        [tournament_id])]
    return [{k: v for k, v in r.items() if k != "culprit_seat"} for r in _game_stderr(store, rows)]


GAME_STDERR_LINES = 50  # lines of a forfeit's own stderr read for its tail


def _game_stderr(store: Store, rows: list[dict]) -> list[dict]:
    """Forfeit rows (game_id, match_id, bot, culprit_seat, stderr: the match's) with `stderr`
    made the culprit's own lines in that game, where the match has per-game logs of that bot.

    A match recorded before per-game logs has none of its bot's lines per game: its stderr stays
    the match's. One that has them and none in this game: the bot wrote nothing in it.
    """
    for row in rows:
        logged = store.db.execute(
            "select 1 from game_log_counts c join games g on g.id = c.game_id "
            "where g.match_id = ? and c.bot = ? limit 1", [row["match_id"], row["bot"]]).fetchone()
        if logged is None:
            continue
        lines = store.db.execute(
            "select text from game_logs where game_id = ? and seat = ? order by line_no desc "
            "limit ?", [row["game_id"], row["culprit_seat"], GAME_STDERR_LINES]).fetchall()
        row["stderr"] = "".join(text + "\n" for (text,) in reversed(lines))
    return rows


def bot_starts(store: Store, tournament_id: int) -> list[dict]:
    """Per bot seated in a tournament (by name): what shows whether it ever started.

    Rows: bot, games (it was seated in), startup_failures (it was the culprit of), ran (games
    ended normally, or forfeits only a running bot commits), moved (games it made a move in),
    and the detail and evidence of its first startup failure (None without one).
    """
    # Looked up only for the bots that had a startup failure (the `case`): most never do.
    failed = "sum(g.culprit_bot = s.bot and g.termination = 'startup_failure')"
    first = (f"case when {failed} then (select {{}} from games f "
             "where f.tournament_id = g.tournament_id and f.culprit_bot = s.bot "
             "and f.termination = 'startup_failure' order by f.ordinal, f.id limit 1) end")
    return list(store.db.query(
        "select s.bot, count(*) as games, "
        f"  {failed} as startup_failures, "
        "  sum(g.termination = 'normal' or (g.culprit_bot = s.bot and g.termination not in "
        "      ('startup_failure', 'failure_budget'))) as ran, "
        "  sum(exists(select 1 from moves v where v.game_id = g.id and v.seat = s.seat)) as moved, "
        f"  {first.format('detail')} as detail, {first.format('evidence')} as evidence "
        "from game_seats s join games g on g.id = s.game_id where g.tournament_id = ? "
        "group by s.bot order by s.bot", [tournament_id]))


# -- head to head ---------------------------------------------------------------------------------


def _bot_filter(store: Store, ref: str, alias: str, seat_name: str) -> tuple[str, list]:
    """SQL matching a NAME or NAME@VERSION reference: over `{alias}` = bots (by its id, so one
    version's games only), or — no bot row so named — over `seat_name`, the name a tournament
    gave its entrant (e.g. a registry bot entered under a `name` of its own)."""
    name, version = parse_ref(ref)
    if version is None:
        where, args = f"{alias}.name = ?", [name]
    else:
        where, args = f"{alias}.name = ? and {alias}.version = ?", [name, version]
    if store.db.execute(f"select 1 from bots {alias} where {where} limit 1", args).fetchone():
        return where, args
    return f"{seat_name} = ?", [ref]


def bot_known(store: Store, ref: str) -> bool:
    """Whether a NAME or NAME@VERSION names a bot (or an entrant seated under that name)."""
    where, args = _bot_filter(store, ref, "x", "x.bot")
    table = "bots" if where.startswith("x.name") else "game_seats"
    return store.db.execute(f"select 1 from {table} x where {where}", args).fetchone() is not None


def pair_ranks(store: Store, a: str, b: str, tournament_id: int | None = None,
               game: str | None = None) -> list[tuple[str, int, int, str, int, str, int]]:
    """(game id, rank of a, rank of b, game, seats, match id, deal) of every game a and b played
    on different teams, in order."""
    fa, pa = _bot_filter(store, a, "ba", "sa.bot")
    fb, pb = _bot_filter(store, b, "bb", "sb.bot")
    scope, sargs = "", []
    if tournament_id is not None:
        scope, sargs = " and g.tournament_id = ?", [tournament_id]
    if game is not None:
        scope, sargs = scope + " and g.game = ?", sargs + [game]
    return store.db.execute(
        "select g.id, sa.rank, sb.rank, g.game, g.num_seats, g.match_id, g.deal from games g "
        "join game_seats sa on sa.game_id = g.id join game_seats sb on sb.game_id = g.id "
        "join bots ba on ba.id = sa.bot_id join bots bb on bb.id = sb.bot_id "
        f"where {fa} and {fb} and sa.team != sb.team{scope} order by g.tournament_id, g.ordinal",
        [*pa, *pb, *sargs]).fetchall()


def pair_deals(store: Store, a: str, b: str, tournament_id: int | None = None,
               game: str | None = None) -> list[tuple[str, int, float, int]]:
    """(match, deal, points of a, games) of every deal of the two-bot matches of a against b."""
    fa, pa = _bot_filter(store, a, "ba", "d.bot")
    fb, pb = _bot_filter(store, b, "bb", "xb.bot")
    return store.db.execute(
        "select d.match_id, d.deal, d.points, d.games from deals d "
        "join matches m on m.id = d.match_id "
        "join bots ba on ba.id = d.bot_id "
        "join match_bots xb on xb.match_id = d.match_id and xb.bot_id != d.bot_id "
        "join bots bb on bb.id = xb.bot_id "
        f"where {fa} and {fb} and (select count(*) from match_bots c where c.match_id = m.id) = 2"
        + (" and m.tournament_id = ?" if tournament_id is not None else "")
        + (" and m.id in (select match_id from games where game = ?)" if game is not None else "")
        + " order by m.tournament_id, m.id, d.deal",
        [*pa, *pb, *([tournament_id] if tournament_id is not None else []),
         *([game] if game is not None else [])]).fetchall()


def opponents(store: Store, bot_id: int, limit: int) -> list[tuple[str, str, int]]:
    """(name, version, games) of a version's most frequent opponents, most games first."""
    return store.db.execute(
        "select ob.name, ob.version, count(distinct s.game_id) n from game_seats s "
        "join game_seats o on o.game_id = s.game_id and o.team != s.team "
        "join bots ob on ob.id = o.bot_id where s.bot_id = ? and ob.id != s.bot_id "
        "group by ob.id order by n desc, ob.name limit ?", [bot_id, limit]).fetchall()


# -- leaderboards and ladders ---------------------------------------------------------------------


@dataclass(frozen=True)
class LeaderboardIndex:
    """What the front page lists: games with recorded games, their stored boards, ladder boards."""

    stored: list[tuple[str, str]]  # (game, method) of each stored game leaderboard
    games: list[tuple[str, int, str]]  # (game, games, last recorded), by game
    ladder_boards: list[tuple[str, str]]  # (ladder scope id, ladder name), by scope id

    @classmethod
    def load(cls, store: Store) -> LeaderboardIndex:
        """Load the index of every leaderboard."""
        stored = store.db.execute("select distinct scope_id, method from pooled_ratings "
                                  "where scope_kind = 'game'").fetchall()
        games = store.db.execute("select game, count(*), max(recorded_at) from games "
                                 "group by game order by game").fetchall()
        ladders = store.db.execute(
            "select distinct p.scope_id, t.name from pooled_ratings p "
            "join tournaments t on t.id = cast(substr(p.scope_id, 1, "
            "instr(p.scope_id, ':') - 1) as integer) "
            "where p.scope_kind = 'ladder' order by p.scope_id").fetchall()
        return cls(stored, games, ladders)


def pooled_methods(store: Store, scope_kind: str, scope_id: str) -> set[str]:
    """The methods a pooled leaderboard is stored for."""
    return {r[0] for r in store.db.execute(
        "select distinct method from pooled_ratings where scope_kind = ? and scope_id = ?",
        [scope_kind, scope_id])}


def running_leases(store: Store, ladder_id: int | None = None,
                   game: str | None = None) -> list[tuple]:
    """(pid, host, heartbeat_ts, pid_start) of the leases of running tournaments: of one ladder,
    or of those playing `game`."""
    return store.db.execute(
        "select l.pid, l.host, l.heartbeat_ts, l.pid_start from leases l join tournaments t "
        "on t.id = l.tournament_id where t.status = 'running' and "
        + ("t.id = ?" if ladder_id is not None
           else "(',' || t.game || ',') like ('%,' || ? || ',%')"),
        [ladder_id if ladder_id is not None else game]).fetchall()


def ladder_by_id(store: Store, ladder_id: int) -> dict | None:
    """A ladder's id, name and status, or None when no ladder has this id."""
    row = store.db.execute("select id, name, status from tournaments where id = ? and format = ?",
                           [ladder_id, LADDER_FORMAT]).fetchone()
    return None if row is None else {"id": row[0], "name": row[1], "status": row[2]}


def ladders(store: Store) -> list[dict]:
    """Every ladder, newest first: id, name, game, status, created_at, games, active bots."""
    return [dict(r) for r in store.db.query(
        "select t.id, t.name, t.game, t.status, t.created_at, "
        "(select count(*) from games g where g.tournament_id = t.id) games, "
        "(select count(*) from ladder_entries e where e.tournament_id = t.id "
        " and e.status = 'active') bots from tournaments t where t.format = ? order by t.id desc",
        [LADDER_FORMAT])]


# -- bots -----------------------------------------------------------------------------------------


def bot_names(store: Store) -> list[dict]:
    """Every bot name with its number of versions, newest addition and games played, by name."""
    return [dict(r) for r in store.db.query(
        "select b.name, count(*) versions, max(b.added_at) added_at, "
        "coalesce(sum(n.games), 0) games from bots b left join "
        "(select bot_id, count(*) games from game_seats group by bot_id) n on n.bot_id = b.id "
        "group by b.name order by b.name")]


def bot_versions(store: Store, name: str) -> list[dict]:
    """Every bots row of a name, oldest first."""
    return [dict(r) for r in store.db.query("select * from bots where name = ? order by id",
                                            [name])]


@dataclass(frozen=True)
class VersionActivity:
    """What a bot version did: games per game, tournaments, ratings, forfeits, rating series."""

    per_game: list[dict]
    tournaments: list[dict]
    ratings: list[dict]
    pooled: list[dict]
    failures: list[dict]  # its last 10 forfeits, newest first, with its stderr in that match
    recent: list[dict]  # its last games, newest first
    history: list[dict]  # its tournament rating history, by tournament, stage, method, game
    snapshots: list[dict]  # its published ladder ratings, oldest first

    @classmethod
    def load(cls, store: Store, bot_id: int, name: str, recent: int) -> VersionActivity:
        """Load the activity of the bots row `bot_id` (named `name`), with `recent` last games."""
        per_game = [dict(r) for r in store.db.query(
            "select g.game, count(*) games, sum(s.rank = 1) firsts, max(g.recorded_at) last_played "
            "from game_seats s join games g on g.id = s.game_id where s.bot_id = ? "
            "group by g.game order by g.game", [bot_id])]
        tournaments = [dict(r) for r in store.db.query(
            "select t.id, t.name, t.game, t.format, t.status from tournament_bots tb "
            "join tournaments t on t.id = tb.tournament_id where tb.bot_id = ? order by t.id desc",
            [bot_id])]
        ratings = [dict(r) for r in store.db.query(
            "select r.tournament_id, t.name tournament, r.stage, r.method, r.rating, r.lo, r.hi, "
            "r.games, r.flag from ratings r join tournaments t on t.id = r.tournament_id "
            "where r.bot_id = ? order by r.tournament_id desc, r.stage, r.method", [bot_id])]
        pooled = [dict(r) for r in store.db.query(
            "select scope_kind, scope_id, method, rating, lo, hi, games, score_pct, flag, "
            "computed_at "
            "from pooled_ratings where bot_id = ? order by scope_kind, scope_id, method",
            [bot_id])]
        failures = [{k: v for k, v in r.items() if k not in ("match_id", "bot", "culprit_seat")}
                    for r in _game_stderr(store, [dict(r) for r in store.db.query(
            "select g.id game_id, g.tournament_id, g.termination reason, g.detail, g.evidence, "
            "g.recorded_at, g.match_id, s.bot, g.culprit_seat, l.stderr from games g "
            "join game_seats s on s.game_id = g.id and s.seat = g.culprit_seat "
            "left join bot_logs l on l.match_id = g.match_id and l.bot = s.bot "
            "where s.bot_id = ? and g.termination != 'normal' "
            "order by g.recorded_at desc, g.ordinal desc limit 10", [bot_id])])]
        last = [dict(r) for r in store.db.query(
            "select g.id, g.tournament_id, g.game, g.termination, g.recorded_at, s.seat, s.rank, "
            "s.score from game_seats s join games g on g.id = s.game_id where s.bot_id = ? "
            "order by g.recorded_at desc, g.ordinal desc limit ?", [bot_id, recent])]
        history = [dict(r) for r in store.db.query(
            "select h.tournament_id, t.name, h.stage, h.method, h.ordinal, h.after "
            "from rating_history h join tournaments t on t.id = h.tournament_id "
            "join tournament_bots tb on tb.tournament_id = h.tournament_id and tb.bot_id = ? "
            # The version's name in that tournament (name@version, or a name of the config's own).
            "where h.bot = coalesce(tb.name, ?) "
            "order by h.tournament_id, h.stage, h.method, h.ordinal", [bot_id, name])]
        snapshots = [dict(r) for r in store.db.query(
            "select scope_id, method, tables, rating, lo, hi from rating_snapshots "
            "where bot_id = ? and scope_kind = 'ladder' order by computed_at, tables", [bot_id])]
        return cls(per_game, tournaments, ratings, pooled, failures, last, history, snapshots)


# -- the schema -----------------------------------------------------------------------------------


def check_schema(store: Store) -> None:
    """StoreError naming a table or column of this Arena's schema that the database lacks."""
    # A file whose meta table claims the current version but lacks a table (hand-made, or cut
    # short) would otherwise start, then fail every page that reads the missing part with a 500.
    from arena.store import Store

    reference = Store(":memory:")  # this Arena's schema, from its own migrations
    try:
        for table in reference.db.table_names():
            if table.startswith("sqlite_"):
                continue
            want = [c.name for c in reference.db[table].columns]
            have = {c.name for c in store.db[table].columns}  # none when the table is missing
            if not have:
                raise StoreError(f"not a complete Arena database: {store.path}: it has no "
                                 f"table {table!r}")
            missing = [c for c in want if c not in have]
            if missing:
                raise StoreError(f"not a complete Arena database: {store.path}: table "
                                 f"{table!r} lacks column(s) {', '.join(missing)}")
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"not an Arena database: {store.path}: {exc}") from None
    finally:
        reference.db.conn.close()


# -- bots' logs per game --------------------------------------------------------------------------


def game_log_lines(store: Store, game_id: str) -> list[dict]:
    """A game's bots' stderr lines, in the order they came, each with the ply it came in.

    Rows: seat, bot, ply (the move the bot was asked for; the number of moves for lines after
    the last), line_no (counting dropped lines), text. Empty for a game recorded before per-game
    logs or whose bots wrote nothing to stderr; `game_log_counts` says what was dropped.
    """
    return store.game_logs(game_id)


def game_log_counts(store: Store, game_id: str) -> dict[int, dict]:
    """Per seat that wrote to stderr in a game: bot, lines, bytes, dropped_lines, dropped_bytes."""
    return {row["seat"]: row for row in store.game_log_counts(game_id)}

"""SQLite storage through sqlite-utils: schema, one writer, one transaction per match.

The database reads naturally in any SQLite tool: JSON columns hold options, actions and configs;
every game row has its seed and every move, so any game can be replayed exactly.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import socket
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson
import sqlite_utils

from arena.errors import LeaseError, StoreError

SCHEMA_VERSION = 8
LEASE_STALE_S = 60.0  # a lease whose heartbeat is older than this belongs to a dead driver
ERROR_KEEP = 16 * 1024  # characters of a runner error's traceback kept per attempt
_UNWRITABLE = (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM)


def now() -> str:
    """The current UTC time as ISO 8601, the format of every timestamp column."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def stored_json(text: str, where: str) -> Any:
    """A JSON column's value; StoreError naming `where` (table.column and row) when it is not JSON.

    Arena wrote it as JSON: anything else means the file was edited or damaged, which a read
    reports in one line instead of failing somewhere in a report.
    """
    try:
        return json.loads(text)
    except (ValueError, TypeError) as exc:
        shown = text if len(str(text)) <= 60 else str(text)[:60] + "…"
        raise StoreError(f"the database holds no valid JSON in {where}: {shown!r} ({exc})") from None


def _dumps(value: Any) -> str:
    # orjson: a match's moves are most of what the driver writes, and json.dumps was half its cost.
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode()


_MATCH_COLS = ("tournament_id", "stage", "round", "table_no", "bots", "status", "duration_ms",
               "finished_at", "attempts", "error", "worker", "node", "host")
_GAME_COLS = ("id", "match_id", "tournament_id", "stage", "ordinal", "game", "options", "num_seats",
              "deal", "rotation", "seed", "termination", "culprit_seat", "culprit_bot", "detail",
              "evidence", "steps", "duration_ms", "recorded_at")


def _check_readonly_version(conn: sqlite3.Connection, path: Path) -> None:
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


def refuse_directory(path: str | Path) -> None:
    """StoreError when the database path is a folder (SQLite would only say "unable to open")."""
    if str(path) != ":memory:" and Path(path).is_dir():
        raise StoreError(f"{path} is a directory, not a database file")


class Store:
    """The Arena database. Only the driver process writes to it."""

    def __init__(self, path: str | Path | None = None):
        self.path = None if path is None or str(path) == ":memory:" else Path(path)
        if path is None or str(path) == ":memory:":
            self.db = sqlite_utils.Database(memory=True)
        else:
            refuse_directory(self.path)
            try:
                self.db = sqlite_utils.Database(sqlite3.connect(str(path), timeout=30))
            except sqlite3.Error as exc:
                raise StoreError(f"cannot open database {str(path)!r}: {exc}") from None
        self.db.execute("PRAGMA foreign_keys = ON")
        self._migrate()  # refuses a foreign file before anything below could change it
        if self.path is not None:
            self.db.enable_wal()

    @classmethod
    def open_readonly(cls, path: str | Path) -> Store:
        """The database at `path`, opened read-only (`mode=ro`): never migrated, never written.

        Safe beside a live driver (WAL readers never block it). StoreError when the file is
        missing, not an Arena database, or of another schema version (any `arena` command that
        writes, e.g. `arena tournament list`, migrates an older one).
        """
        path = Path(path)
        if not path.is_file():
            raise StoreError(f"no database at {path}")
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"not an Arena database: {path}: {exc}") from None
        try:
            db = sqlite_utils.Database(conn)
            _check_readonly_version(conn, path)
        except BaseException:
            conn.close()  # a server refusing files per request must not keep them open
            raise
        store = cls.__new__(cls)
        store.path, store.db, store.readonly = path, db, True
        return store

    readonly = False

    @classmethod
    def open_existing(cls, path: str | Path) -> Store:
        """The Arena database already at `path`, for commands that must not create one.

        ConfigError when nothing is there; StoreError for a directory or an empty file (opening an
        empty file would write a fresh schema into it: a read must leave the file as it was).
        """
        from arena.errors import ConfigError

        path = Path(path)
        if not path.exists():
            raise ConfigError(f"no database at {path}")
        if path.is_file() and path.stat().st_size == 0:
            raise StoreError(f"not an Arena database: {path} is an empty file")
        return cls(path)

    def _insert(self, table: str, rows: Iterable[dict]) -> int | None:
        """Insert rows inside the caller's transaction; returns the last rowid.

        sqlite-utils' own insert commits after each chunk, which would split a match's write into
        several transactions; a crash between them would leave a half-recorded match.
        """
        rows = list(rows)
        if not rows:
            return None
        cols = list(rows[0])
        sql = (f"insert into [{table}] ({', '.join(f'[{c}]' for c in cols)}) "
               f"values ({', '.join('?' for _ in cols)})")
        if len(rows) == 1:  # executemany does not report lastrowid
            return self.db.conn.execute(sql, [rows[0][c] for c in cols]).lastrowid
        self.db.conn.executemany(sql, [[r[c] for c in cols] for r in rows])
        return None

    # -- schema ---------------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One explicit transaction (DDL included): everything in it lands, or nothing does."""
        conn = self.db.conn
        if conn.in_transaction:  # an implicit transaction left open must not swallow ours
            conn.commit()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.rollback()
            raise
        conn.commit()

    def _migrate(self) -> None:
        where = f"{self.path}: " if self.path is not None else ""  # the message names the file
        try:
            tables = set(self.db.table_names())
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorcode", None) in _UNWRITABLE:
                # A WAL database is opened by writing its -shm file beside it: a read-only file or
                # folder fails here, and that is no sign of a foreign file.
                raise StoreError(f"cannot open {where}{exc} (the file or its folder is read-only?"
                                 f" SQLite writes beside the database)") from None
            raise StoreError(f"not an Arena database: {where}{exc}") from None
        if "meta" in tables:
            try:
                version = int(self.db["meta"].get("schema_version")["value"])
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
            with self.transaction():
                MIGRATIONS[number](self)
                self.db.conn.execute(
                    "insert or replace into meta (key, value) values ('schema_version', ?)",
                    [str(number)])

    # -- bots and tournaments -------------------------------------------------------------------
    def add_bot(self, name: str, version: str = "", command: Iterable[str] = (), workdir: str = "",
                language: str = "", description: str = "", games: Iterable[str] = (),
                content_hash: str | None = None) -> int:
        """The id of this program's bot row (see record_bot), registering it if new."""
        return self.record_bot(name, version, command, workdir, language, description, games,
                               content_hash).id

    def record_bot(self, name: str, version: str = "", command: Iterable[str] = (),
                   workdir: str = "", language: str = "", description: str = "",
                   games: Iterable[str] = (), content_hash: str | None = None) -> BotRecord:
        """The bots row of one program version, found by identity or registered; see BotRecord.

        A program's identity is (content_hash, command) when its content hash is known, else
        (command, workdir). `name@version` held by another program is never reused: this one is
        recorded as `name@version+<8 hex>` (the registry's convention), so the two programs' games
        never merge.
        """
        command = list(command)
        wanted = program_identity(content_hash, command, workdir)
        rows = self.db.execute(
            "select id, version, command, workdir, content_hash from bots where name = ? "
            "order by id", [name]).fetchall()
        # This version and its `+` variants (LIKE would fold case: filtered here instead).
        taken = {v: (bot_id, stored_json(cmd, f"bots.command of bot {bot_id}"), wd, digest)
                 for bot_id, v, cmd, wd, digest in rows
                 if v == version or v.startswith(version + "+")}
        for v, (bot_id, cmd, wd, digest) in taken.items():
            if program_identity(digest, cmd, wd) == wanted:
                # Found again: under a `+` version when the name@version was another's already.
                differs = "" if v == version else _difference(taken.get(version), content_hash,
                                                              command, workdir)
                return BotRecord(bot_id, name, v, version, differs)
        chosen, differs = version, ""
        if version in taken:
            differs = _difference(taken[version], content_hash, command, workdir)
            chosen = _free_version(version, taken, content_hash, command, workdir)
        with self.transaction():
            bot_id = self._insert("bots", [{
                "name": name, "version": chosen, "command": _dumps(command),
                "workdir": workdir, "language": language, "description": description,
                "games": _dumps(list(games)), "added_at": now(), "content_hash": content_hash,
            }])
        return BotRecord(bot_id, name, chosen, version, differs)

    def create_tournament(self, name: str, game: str, fmt: str, seats: int, seed: int,
                          options: dict, config: dict, bot_ids: list[int],
                          stages: Iterable[dict] = (), lease: Lease | None = None,
                          names: list[str] | None = None) -> int:
        """Record a new tournament, its entrants, its stages and its lease together; returns its id.

        `names` are the entrants' names in this tournament (default: their bots rows' names);
        they differ for `name@version` and for registry bots given a `name` of their own.
        """
        with self.transaction():
            tid = self._insert("tournaments", [{
                "name": name, "game": game, "format": fmt, "seats": seats, "seed": seed,
                "options": _dumps(options), "config": _dumps(config), "status": "running",
                "created_at": now(), "finished_at": None,
            }])
            self._insert("tournament_bots", (
                {"tournament_id": tid, "bot_id": b, "entry": i,
                 "name": names[i] if names is not None else None}
                for i, b in enumerate(bot_ids)
            ))
            self._insert("stages", (
                {"tournament_id": tid, "stage": i + 1, "status": "pending", "finished_at": None,
                 **{k: (_dumps(v) if isinstance(v, (dict, list)) else v) for k, v in st.items()}}
                for i, st in enumerate(stages)
            ))
            if lease is not None:
                self._write_lease(tid, lease)
        return tid

    def set_status(self, tournament_id: int, status: str) -> None:
        """Mark a tournament running, finished, interrupted, error or cancelled."""
        with self.transaction():
            self.db.conn.execute(
                "update tournaments set status = ?, finished_at = ? where id = ?",
                [status, now() if status in ("finished", "cancelled") else None, tournament_id])

    def set_stage_status(self, tournament_id: int, stage: int, status: str) -> None:
        """Mark a stage pending, running, finished or error."""
        with self.transaction():
            self.db.conn.execute(
                "update stages set status = ?, finished_at = ? where tournament_id = ? and stage = ?",
                [status, now() if status == "finished" else None, tournament_id, stage])

    def tournament(self, tournament_id: int | None = None) -> dict:
        """A tournament row (the newest when no id is given); StoreError if there is none."""
        if tournament_id is None:
            rows = list(self.db["tournaments"].rows_where(order_by="id desc", limit=1))
            if not rows:
                raise StoreError("the database holds no tournament yet")
            return rows[0]
        try:
            return self.db["tournaments"].get(tournament_id)
        except sqlite_utils.db.NotFoundError:
            raise StoreError(f"no tournament with id {tournament_id}") from None

    def tournaments(self) -> list[dict]:
        """Every tournament with its progress counts, newest first."""
        return list(self.db.query(
            "select t.id, t.name, t.game, t.format, t.status, t.created_at, t.finished_at, "
            "(select count(*) from tournament_bots b where b.tournament_id = t.id) as bots, "
            "(select count(*) from matches m where m.tournament_id = t.id "
            " and m.status = 'finished') as matches, "
            "(select count(*) from games g where g.tournament_id = t.id) as games "
            "from tournaments t order by t.id desc"))

    def find_tournament(self, name: str) -> dict | None:
        """The newest tournament with this name, if any."""
        rows = list(self.db["tournaments"].rows_where("name = ?", [name], order_by="id desc", limit=1))
        return rows[0] if rows else None

    def stages(self, tournament_id: int) -> list[dict]:
        """A tournament's stages in order, JSON columns decoded."""
        rows = list(self.db["stages"].rows_where("tournament_id = ?", [tournament_id], order_by="stage"))
        for r in rows:
            for key in ("options", "config", "entrants", "left_out"):
                r[key] = (stored_json(r[key], f"stages.{key} of tournament {tournament_id} stage "
                                             f"{r['stage']}") if r[key]
                          else ([] if key in ("entrants", "left_out") else {}))
        return rows

    def bot_ids(self, tournament_id: int) -> dict[str, int]:
        """Entrant name (in this tournament) -> bot id for a tournament."""
        return {r["name"]: r["id"] for r in self.db.query(
            f"select {ENTRANT_NAME} as name, b.id from tournament_bots t "
            "join bots b on b.id = t.bot_id where t.tournament_id = ? order by t.entry",
            [tournament_id])}

    def entrant_rows(self, tournament_id: int) -> list[dict]:
        """A tournament's entrants' bots rows (id, content_hash, command, workdir), in entry order."""
        rows = [dict(r) for r in self.db.query(
            "select b.id, b.content_hash, b.command, b.workdir from tournament_bots t "
            "join bots b on b.id = t.bot_id where t.tournament_id = ? order by t.entry",
            [tournament_id])]
        for r in rows:
            r["command"] = stored_json(r["command"], f"bots.command of bot {r['id']}") or []
        return rows

    def same_config(self, name: str, digest: str) -> list[dict]:
        """Tournaments recorded from the same config (same name and settings digest), newest first."""
        return [t for t in self.db["tournaments"].rows_where("name = ?", [name], order_by="id desc")
                if (stored_json(t["config"], f"tournaments.config of {t['id']}") or {}).get(
                    "digest") == digest]

    def recorded_matches(self, tournament_id: int) -> set[str]:
        """Ids of the finished matches of a tournament (skipped on resume)."""
        return {r["id"] for r in self.db.query(
            "select id from matches where tournament_id = ? and status = 'finished'", [tournament_id])}

    # -- rounds ---------------------------------------------------------------------------------
    def record_round(self, tournament_id: int, stage: int, round_no: int, tables: list[list[str]],
                     byes: list[str], bye_points: float, bot_ids: dict[str, int]) -> None:
        """Record a round's pairings (bots by name, in seat order) and its byes, before it is played."""
        with self.transaction():
            self._insert("rounds", [{
                "tournament_id": tournament_id, "stage": stage, "round": round_no,
                "tables": _dumps(tables), "byes": _dumps(byes), "created_at": now(),
            }])
            self._insert("byes", (
                {"tournament_id": tournament_id, "stage": stage, "round": round_no,
                 "bot_id": bot_ids[name], "bot": name, "points": bye_points}
                for name in byes
            ))

    def rounds(self, tournament_id: int, stage: int) -> list[dict]:
        """A stage's recorded rounds in order: tables (bot names per table) and byes."""
        return [
            {"round": r["round"],
             "tables": stored_json(r["tables"], f"rounds.tables of round {r['round']}"),
             "byes": stored_json(r["byes"], f"rounds.byes of round {r['round']}")}
            for r in self.db.query(
                "select round, tables, byes from rounds where tournament_id = ? and stage = ? "
                "order by round", [tournament_id, stage])
        ]

    def match_scores(self, tournament_id: int, stage: int) -> list[dict]:
        """A stage's finished matches with each bot's entry, game points and match points."""
        matches: dict[str, dict] = {}
        for r in self.db.query(
            "select m.id, m.round, m.table_no, b.position, b.entry, b.bot, b.game_points, "
            "b.match_points, b.partners, (select count(*) from games g where g.match_id = m.id) n "
            "from matches m join match_bots b on b.match_id = m.id "
            "where m.tournament_id = ? and m.stage = ? and m.status = 'finished' "
            "order by m.round, m.table_no, b.position", [tournament_id, stage]
        ):
            m = matches.setdefault(r["id"], {"match_id": r["id"], "round": r["round"],
                                             "table": r["table_no"], "bots": [], "names": [],
                                             "game_points": [], "match_points": [],
                                             "games": r["n"], "partners": stored_json(
                                                 r["partners"], f"matches.partners of {r['id']}")})
            m["bots"].append(r["entry"])
            m["names"].append(r["bot"])
            m["game_points"].append(r["game_points"])
            m["match_points"].append(r["match_points"])
        # Per deal: the games it had and each position's points (MatchScore.deals).
        deals: dict[str, dict[int, list]] = {}
        for r in self.db.query(
            "select d.match_id, d.deal, b.position, d.points, d.games from deals d "
            "join matches m on m.id = d.match_id "
            "join match_bots b on b.match_id = d.match_id and b.bot_id = d.bot_id "
            "where m.tournament_id = ? and m.stage = ? and m.status = 'finished' "
            "order by d.match_id, d.deal", [tournament_id, stage]
        ):
            match = matches.get(r["match_id"])
            if match is None:
                continue
            entry = deals.setdefault(r["match_id"], {}).setdefault(
                r["deal"], [0, [0.0] * len(match["bots"])])
            entry[0] = max(entry[0], r["games"])
            entry[1][r["position"]] = r["points"]
        for match_id, m in matches.items():
            m["deals"] = [entry for _, entry in sorted(deals.get(match_id, {}).items())]
        return list(matches.values())

    # -- results --------------------------------------------------------------------------------
    def record_matches(self, tournament_id: int, items: Iterable[MatchRecord],
                       bot_ids: dict[str, int]) -> None:
        """Write finished matches (each: match, games, seats, moves, logs, scores) in one transaction."""
        with self.transaction():
            self._write_matches(tournament_id, list(items), bot_ids)
            self._heartbeat(tournament_id)

    def record_match(self, tournament_id: int, round_no: int, table_no: int, game: str,
                     options: dict, result, bot_ids: dict[str, int], stage: int = 1) -> None:
        """Write one MatchResult in a single transaction (no per-match scores)."""
        self.record_matches(tournament_id, [MatchRecord(stage, round_no, table_no, game, options,
                                                        result)], bot_ids)

    def _write_match(self, tournament_id: int, item: MatchRecord, bot_ids: dict[str, int]) -> None:
        self._write_matches(tournament_id, [item], bot_ids)

    def _write_matches(self, tournament_id: int, items: list[MatchRecord],
                       bot_ids: dict[str, int]) -> None:
        """Write finished matches inside the caller's transaction: each table's rows of all the
        matches in one executemany, as tuples (the driver's hot path: at thousands of games a
        second, building a dict per move and one statement per match and table cost more than
        SQLite's own work). Match rows go first: the other tables reference them."""
        if not items:
            return
        conn = self.db.conn
        stamp = now()
        dumps, sort = orjson.dumps, orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
        ids = [item.result.match_id for item in items]
        prior: dict[str, int] = {}
        for chunk in range(0, len(ids), 500):  # under SQLite's limit of bound variables
            part = ids[chunk:chunk + 500]
            prior.update(conn.execute(
                f"select id, attempts from matches where status = 'error' and id in "
                f"({', '.join('?' * len(part))})", part).fetchall())
        new_matches, games, seats, moves, logs, match_bots, deals = [], [], [], [], [], [], []
        for item in items:
            result = item.result
            mid = result.match_id
            row = (tournament_id, item.stage, item.round, item.table,
                   _dumps(sorted({n for g in result.games for n in g.seats})), "finished",
                   round(result.duration_ms, 3), stamp, prior.get(mid, 0) + 1, None,
                   getattr(result, "worker", "") or None, getattr(result, "node", "") or None,
                   getattr(result, "host", "") or None)
            if mid in prior:  # earlier attempts failed by runner errors: their evidence stays in match_errors
                conn.execute(f"update matches set {', '.join(f'[{c}] = ?' for c in _MATCH_COLS)} "
                             f"where id = ?", [*row, mid])
            else:
                new_matches.append((mid, *row))
            opts = _dumps(item.options)
            for g in result.games:
                gid = g.game_id
                team_of = {s: t for t, members in enumerate(g.teams) for s in members}
                culprit = g.culprit
                game_moves = g.moves
                games.append((gid, mid, tournament_id, item.stage, g.ordinal, item.game, opts,
                              len(g.seats), g.deal, g.rotation, g.seed, g.termination, culprit,
                              g.seats[culprit] if culprit is not None else None, g.detail,
                              g.evidence, len({m.step for m in game_moves}),
                              round(g.duration_ms, 3), stamp))
                scores, ranks = g.scores, g.ranks
                for seat, name in enumerate(g.seats):
                    seats.append((gid, seat, bot_ids[name], name, team_of[seat], scores[seat],
                                  ranks[seat]))
                moves.extend((gid, ply, m.step, m.seat, dumps(m.action, option=sort).decode(),
                              m.ms) for ply, m in enumerate(game_moves))
            logs.extend((mid, bot, text) for bot, text in result.logs.items())
            if item.score is not None:
                score, names = item.score, item.names
                partners = _dumps([list(p) for p in sorted(score.partners)])
                match_bots.extend(
                    (mid, i, bot_ids[names[i]], names[i], score.bots[i], score.game_points[i],
                     score.match_points[i], partners) for i in range(len(score.bots)))
            deals.extend((mid, d["deal"], bot_ids[d["bot"]], d["bot"], d["points"], d["games"])
                         for d in item.deals)
        for table, cols, rows in (
                ("matches", ("id", *_MATCH_COLS), new_matches),
                ("games", _GAME_COLS, games),
                ("game_seats", ("game_id", "seat", "bot_id", "bot", "team", "score", "rank"), seats),
                ("moves", ("game_id", "ply", "step", "seat", "action", "ms"), moves),
                ("bot_logs", ("match_id", "bot", "stderr"), logs),
                ("match_bots", ("match_id", "position", "bot_id", "bot", "entry", "game_points",
                                "match_points", "partners"), match_bots),
                ("deals", ("match_id", "deal", "bot_id", "bot", "points", "games"), deals)):
            if rows:
                conn.executemany(f"insert into [{table}] ({', '.join(f'[{c}]' for c in cols)}) "
                                 f"values ({', '.join('?' * len(cols))})", rows)

    def record_match_error(self, tournament_id: int, item: MatchRecord, kind: str, error: str,
                           worker: str = "", node: str = "", host: str = "") -> int:
        """Record a failed attempt of a match (a runner error, not a bot's) and where it ran;
        returns the attempts so far."""
        stamp = now()
        text = error if len(error) <= ERROR_KEEP else (
            error[: ERROR_KEEP // 2] + "\n[… cut …]\n" + error[-ERROR_KEEP // 2:])
        match_id = item.match_id
        with self.transaction():
            row = self.db.conn.execute("select attempts, status from matches where id = ?",
                                       [match_id]).fetchone()
            if row and row[1] == "finished":
                raise StoreError(f"match {match_id} is already recorded as finished")
            attempts = (row[0] + 1) if row else 1
            if row:
                self.db.conn.execute(
                    "update matches set attempts = ?, error = ?, worker = ?, node = ?, host = ?, "
                    "finished_at = ? where id = ?",
                    [attempts, kind, worker or None, node or None, host or None, stamp, match_id])
            else:
                self._insert("matches", [{
                    "id": match_id, "tournament_id": tournament_id, "stage": item.stage,
                    "round": item.round, "table_no": item.table, "bots": _dumps(sorted(item.names)),
                    "status": "error", "duration_ms": None, "finished_at": stamp,
                    "attempts": attempts, "error": kind, "worker": worker or None,
                    "node": node or None, "host": host or None,
                }])
            self._insert("match_errors", [{
                "match_id": match_id, "attempt": attempts, "kind": kind, "error": text,
                "worker": worker or None, "recorded_at": stamp, "node": node or None,
                "host": host or None,
            }])
            self._heartbeat(tournament_id)
        return attempts

    def record_node_event(self, tournament_id: int, node: str, host: str, event: str,
                          detail: str) -> None:
        """Record what happened to a node during a run (event `quarantined`, and why)."""
        with self.transaction():
            self._insert("node_events", [{
                "tournament_id": tournament_id, "node": node, "host": host, "event": event,
                "detail": detail, "recorded_at": now()}])

    def node_events(self, tournament_id: int) -> list[dict]:
        """A tournament's node events, oldest first."""
        return list(self.db.query("select node, host, event, detail, recorded_at from node_events "
                                  "where tournament_id = ? order by rowid", [tournament_id]))

    def game_results(self, tournament_id: int, stage: int | None = None) -> list[dict]:
        """Every game of a tournament (or stage) in ordinal order, with its seats (bot, team, score,
        rank) and its rating group (match, deal)."""
        games: dict[str, dict] = {}
        where, args = "g.tournament_id = ?", [tournament_id]
        if stage is not None:
            where, args = where + " and g.stage = ?", args + [stage]
        for row in self.db.query(
            "select g.id, g.ordinal, g.deal, g.match_id, g.termination, s.seat, s.bot, s.team, "
            f"s.score, s.rank from games g join game_seats s on s.game_id = g.id where {where} "
            "order by g.ordinal, s.seat", args
        ):
            game = games.setdefault(row["id"], {
                "id": row["id"], "ordinal": row["ordinal"], "termination": row["termination"],
                "deal": row["deal"], "match_id": row["match_id"], "seats": [],
                # A duplicate deal's rotations are resampled together by the bootstrap.
                "group": (row["match_id"], row["deal"]),
            })
            game["seats"].append({k: row[k] for k in ("bot", "team", "score", "rank")})
        return list(games.values())

    def load_game(self, game_id: str) -> dict:
        """A stored game with its seats and moves, ready to replay."""
        try:
            game = self.db["games"].get(game_id)
        except sqlite_utils.db.NotFoundError:
            raise StoreError(f"no game with id {game_id!r}") from None
        game["options"] = stored_json(game["options"], f"games.options of {game_id}")
        game["seats"] = list(self.db["game_seats"].rows_where("game_id = ?", [game_id], order_by="seat"))
        game["moves"] = [
            {**m, "action": stored_json(m["action"], f"moves.action of {game_id} ply {m['ply']}")}
            for m in self.db["moves"].rows_where("game_id = ?", [game_id], order_by="ply")
        ]
        return game

    # -- ratings --------------------------------------------------------------------------------
    def save_ratings(self, tournament_id: int, method: str, table: list[dict],
                     history: list[dict], stage: int = 1) -> None:
        """Replace a stage's ratings and rating history for one method."""
        stamp = now()
        with self.transaction():
            for name in ("ratings", "rating_history"):
                self.db.conn.execute(
                    f"delete from {name} where tournament_id = ? and stage = ? and method = ?",
                    [tournament_id, stage, method])
            self._insert("ratings", (
                {"tournament_id": tournament_id, "stage": stage, "method": method,
                 "computed_at": stamp, **row}
                for row in table
            ))
            self._insert("rating_history", (
                {"tournament_id": tournament_id, "stage": stage, "method": method, **row}
                for row in history
            ))

    def ratings(self, tournament_id: int, method: str = "elo", stage: int = 1) -> list[dict]:
        """The stored rating table of a tournament's stage, best first."""
        return list(self.db["ratings"].rows_where(
            "tournament_id = ? and stage = ? and method = ?", [tournament_id, stage, method],
            order_by="rating desc, bot"))

    def rating_methods(self, tournament_id: int, stage: int = 1) -> list[str]:
        """The methods a stage has stored ratings for."""
        return [r[0] for r in self.db.execute(
            "select distinct method from ratings where tournament_id = ? and stage = ? "
            "order by method", [tournament_id, stage])]

    def save_pooled_ratings(self, scope_kind: str, scope_id: str, method: str,
                            rows: list[dict]) -> None:
        """Replace one pooled leaderboard (e.g. every game of a game) for one method."""
        stamp = now()
        with self.transaction():
            self.db.conn.execute(
                "delete from pooled_ratings where scope_kind = ? and scope_id = ? and method = ?",
                [scope_kind, scope_id, method])
            self._insert("pooled_ratings", (
                {"scope_kind": scope_kind, "scope_id": scope_id, "method": method,
                 "computed_at": stamp, **row} for row in rows))

    def save_rating_snapshot(self, scope_kind: str, scope_id: str, method: str, tables: int,
                             rows: list[dict]) -> None:
        """Append a published table's ratings (each row: bot_id, games, rating, lo, hi)."""
        stamp = now()
        with self.transaction():
            self._insert("rating_snapshots", (
                {"scope_kind": scope_kind, "scope_id": scope_id, "method": method,
                 "bot_id": r["bot_id"], "tables": tables, "games": r["games"],
                 "rating": r["rating"], "lo": r["lo"], "hi": r["hi"], "computed_at": stamp}
                for r in rows))

    def pooled_ratings(self, scope_kind: str, scope_id: str, method: str) -> list[dict]:
        """A stored pooled leaderboard, best first."""
        return list(self.db["pooled_ratings"].rows_where(
            "scope_kind = ? and scope_id = ? and method = ?", [scope_kind, scope_id, method],
            order_by="rating desc, bot, version"))

    def pooled_games(self, game: str, since: str | None = None,
                     tournament_id: int | None = None) -> tuple[list[dict], dict[str, dict]]:
        """Every finished game of `game` across tournaments (or of one), seats keyed by bot version.

        Returns (games, versions): each seat's `bot` is a version key (`name@version`, or the
        name when the version is empty) and versions maps each key to its bot row (id, name,
        version) plus `last_played`. Games of error matches are never stored, so none is counted.
        """
        where, args = "g.game = ?", [game]
        if tournament_id is not None:
            where, args = where + " and g.tournament_id = ?", args + [tournament_id]
        if since is not None:
            where, args = where + " and g.recorded_at >= ?", args + [since]
        games: dict[str, dict] = {}
        versions: dict[str, dict] = {}
        keys: dict[int, str] = {}  # one key per bots row: two rows never share a line
        for row in self.db.query(
            "select g.id, g.tournament_id, g.ordinal, g.match_id, g.deal, g.recorded_at, s.bot, "
            "s.team, s.rank, b.id as bot_id, b.name, b.version from games g "
            "join game_seats s on s.game_id = g.id join bots b on b.id = s.bot_id "
            f"where {where} order by g.tournament_id, g.ordinal, s.seat", args
        ):
            key = keys.get(row["bot_id"])
            if key is None:
                key = f"{row['name']}@{row['version']}" if row["version"] else row["name"]
                if key in versions:  # an old row named `x@1` beside bot x version 1: keep apart
                    key = f"{key}#{row['bot_id']}"
                keys[row["bot_id"]] = key
            seen = versions.setdefault(key, {"bot_id": row["bot_id"], "bot": row["name"],
                                             "version": row["version"], "last_played": ""})
            seen["last_played"] = max(seen["last_played"], row["recorded_at"] or "")
            game_row = games.setdefault(row["id"], {
                "id": row["id"], "ordinal": len(games), "seats": [],
                "group": (row["match_id"], row["deal"]),
            })
            game_row["seats"].append({"bot": key, "team": row["team"], "rank": row["rank"]})
        return list(games.values()), versions

    def failures(self, tournament_id: int) -> list[dict]:
        """The forfeited games of a tournament, with reason and evidence."""
        return list(self.db.query(
            "select id, culprit_bot, termination, detail, evidence from games "
            "where tournament_id = ? and termination != 'normal' order by ordinal", [tournament_id]))

    def match_errors(self, tournament_id: int) -> list[dict]:
        """Every runner error of a tournament's matches (attempts that were not a bot's fault)."""
        return list(self.db.query(
            "select e.match_id, e.attempt, e.kind, e.error, e.worker, e.recorded_at, m.status "
            "from match_errors e join matches m on m.id = e.match_id "
            "where m.tournament_id = ? order by e.recorded_at, e.match_id", [tournament_id]))

    # -- ladders --------------------------------------------------------------------------------
    def ladder_entry(self, tournament_id: int, bot_id: int, key: str, status: str, reason: str,
                     tick: int) -> None:
        """Record a version's entry (active, or rejected with the reason) at table `tick`.

        An active entrant also becomes an entrant of the ladder's tournament row.
        """
        with self.transaction():
            self.db.conn.execute(
                "insert or replace into ladder_entries (tournament_id, bot_id, key, status, reason, "
                "joined_tick, retired_tick, recorded_at) values (?, ?, ?, ?, ?, ?, null, ?)",
                [tournament_id, bot_id, key, status, reason, tick, now()])
            known = self.db.conn.execute(
                "select 1 from tournament_bots where tournament_id = ? and bot_id = ?",
                [tournament_id, bot_id]).fetchone()
            if status == "active" and not known:
                entry = self.db.conn.execute(
                    "select count(*) from tournament_bots where tournament_id = ?",
                    [tournament_id]).fetchone()[0]
                # Named by its key (`name@version`): two versions of one bot are two entrants.
                self._insert("tournament_bots", [{"tournament_id": tournament_id,
                                                  "bot_id": bot_id, "entry": entry, "name": key}])

    def ladder_retire(self, tournament_id: int, bot_id: int, tick: int) -> None:
        """A version stops getting tables from table `tick` on; its games and ratings stay."""
        with self.transaction():
            self.db.conn.execute(
                "update ladder_entries set status = 'retired', retired_tick = ? "
                "where tournament_id = ? and bot_id = ? and status = 'active'",
                [tick, tournament_id, bot_id])

    def ladder_entries(self, tournament_id: int) -> list[dict]:
        """Every version a ladder has seen, in the order they joined."""
        return list(self.db.query(
            "select * from ladder_entries where tournament_id = ? order by joined_tick, recorded_at, "
            "bot_id", [tournament_id]))

    def ladder_choose(self, tournament_id: int, number: int, fmt: int, bots: list[str],
                      match_id: str, reason: str) -> None:
        """Record table `number` as chosen (pending) before it is played."""
        with self.transaction():
            self._insert("ladder_tables", [{
                "tournament_id": tournament_id, "number": number, "format": fmt,
                "bots": _dumps(list(bots)), "match_id": match_id, "reason": reason,
                "status": "pending", "chosen_at": now(), "finished_at": None}])

    def ladder_tables(self, tournament_id: int) -> list[dict]:
        """A ladder's tables in order, each with its bots (keys in seat order) and status."""
        rows = list(self.db.query("select * from ladder_tables where tournament_id = ? "
                                  "order by number", [tournament_id]))
        for r in rows:
            r["bots"] = stored_json(r["bots"], f"ladder_tables.bots of table {r['number']}")
        return rows

    def record_ladder_matches(self, tournament_id: int, items: Iterable[tuple[int, MatchRecord]],
                              bot_ids: dict[str, int], chosen: Iterable[dict] = ()) -> None:
        """Write finished ladder tables (number, record) and mark them finished, in one transaction.

        `chosen`: tables chosen since the last write (number, format, bots, match_id, reason,
        chosen_at), recorded first as pending, so a table's choice never lands after its result.
        """
        stamp = now()
        with self.transaction():
            self._insert("ladder_tables", (
                {"tournament_id": tournament_id, "number": c["number"], "format": c["format"],
                 "bots": _dumps(list(c["bots"])), "match_id": c["match_id"], "reason": c["reason"],
                 "status": "pending", "chosen_at": c["chosen_at"], "finished_at": None}
                for c in chosen))
            items = list(items)
            self._write_matches(tournament_id, [item for _, item in items], bot_ids)
            self.db.conn.executemany(
                "update ladder_tables set status = 'finished', finished_at = ? "
                "where tournament_id = ? and number = ?",
                [(stamp, tournament_id, number) for number, _ in items])
            self._heartbeat(tournament_id)

    def ladder_results(self, tournament_id: int) -> dict[int, list[list[int]]]:
        """Per finished table number: each game's ranks by table position (the chosen seat order)."""
        out: dict[int, dict[str, list]] = {}
        positions = {r["number"]: r["bots"] for r in self.ladder_tables(tournament_id)}
        for row in self.db.query(
            "select t.number, g.id, s.bot, s.rank from ladder_tables t "
            "join games g on g.match_id = t.match_id join game_seats s on s.game_id = g.id "
            "where t.tournament_id = ? and t.status = 'finished' order by t.number, g.ordinal",
            [tournament_id]
        ):
            game = out.setdefault(row["number"], {}).setdefault(
                row["id"], [0] * len(positions[row["number"]]))
            game[positions[row["number"]].index(row["bot"])] = row["rank"]
        return {n: list(games.values()) for n, games in out.items()}

    # -- leases ---------------------------------------------------------------------------------
    def acquire_lease(self, tournament_id: int, lease: Lease, take_stale: bool) -> None:
        """Hold a tournament for this driver; LeaseError names a live holder (or a stale one)."""
        with self.transaction():
            row = self.db.conn.execute(
                "select token, pid, host, heartbeat_at, heartbeat_ts, pid_start from leases "
                "where tournament_id = ?", [tournament_id]).fetchone()
            if row and row[0] != lease.token:
                holder = f"pid {row[1]} on {row[2]} (last heartbeat {row[3]})"
                if lease_alive(row[1], row[2], row[4], row[5]):
                    raise LeaseError(f"tournament {tournament_id} is being run by {holder}")
                if not take_stale:
                    raise LeaseError(
                        f"tournament {tournament_id} has a stale lease of {holder}; "
                        f"take it over with --resume")
            self.db.conn.execute("delete from leases where tournament_id = ?", [tournament_id])
            self._write_lease(tournament_id, lease)

    def _write_lease(self, tournament_id: int, lease: Lease) -> None:
        stamp = now()
        self._insert("leases", [{
            "tournament_id": tournament_id, "token": lease.token, "pid": lease.pid,
            "host": lease.host, "started_at": stamp, "heartbeat_at": stamp,
            "heartbeat_ts": time.time(), "cancel_requested": 0, "pid_start": lease.started,
        }])

    def _heartbeat(self, tournament_id: int) -> None:
        self.db.conn.execute(
            "update leases set heartbeat_at = ?, heartbeat_ts = ? where tournament_id = ?",
            [now(), time.time(), tournament_id])

    def heartbeat(self, tournament_id: int, token: str) -> bool:
        """Refresh this driver's lease; True when a cancel was requested (or the lease was lost)."""
        with self.transaction():
            self.db.conn.execute(
                "update leases set heartbeat_at = ?, heartbeat_ts = ? "
                "where tournament_id = ? and token = ?", [now(), time.time(), tournament_id, token])
            row = self.db.conn.execute(
                "select cancel_requested from leases where tournament_id = ? and token = ?",
                [tournament_id, token]).fetchone()
        return row is None or bool(row[0])

    def release_lease(self, tournament_id: int, token: str) -> None:
        """Drop this driver's lease (a no-op when it holds none)."""
        with self.transaction():
            self.db.conn.execute("delete from leases where tournament_id = ? and token = ?",
                                 [tournament_id, token])

    def lease(self, tournament_id: int) -> dict | None:
        """The lease row of a tournament, with `alive` computed, or None."""
        rows = list(self.db["leases"].rows_where("tournament_id = ?", [tournament_id]))
        if not rows:
            return None
        row = rows[0]
        row["alive"] = lease_alive(row["pid"], row["host"], row["heartbeat_ts"], row.get("pid_start"))
        return row

    def request_stop(self, tournament_id: int) -> bool:
        """Ask the running driver to stop (resumable); False when no live driver holds it."""
        with self.transaction():
            lease = self.lease(tournament_id)
            if not (lease and lease["alive"]):
                return False
            self.db.conn.execute("update leases set cancel_requested = 1 where tournament_id = ?",
                                 [tournament_id])
        return True

    def request_cancel(self, tournament_id: int) -> str:
        """Ask the running driver to stop, or cancel a stopped tournament; returns what happened."""
        t = self.tournament(tournament_id)
        if t["status"] in ("finished", "cancelled"):
            raise StoreError(f"tournament {tournament_id} is already {t['status']}")
        with self.transaction():
            lease = self.lease(tournament_id)
            if lease and lease["alive"]:
                self.db.conn.execute("update leases set cancel_requested = 1 where tournament_id = ?",
                                     [tournament_id])
                return "requested"
            self.db.conn.execute("delete from leases where tournament_id = ?", [tournament_id])
            self.db.conn.execute(
                "update tournaments set status = 'cancelled', finished_at = ? where id = ?",
                [now(), tournament_id])
        return "cancelled"


@dataclass(frozen=True)
class Lease:
    """Who runs a tournament: a random token, the driver's pid, host and process start."""

    token: str
    pid: int
    host: str
    started: str = ""  # process_start(pid) when the lease was taken ("" where unknown)

    @classmethod
    def mine(cls) -> Lease:
        """A new lease for this process."""
        pid = os.getpid()
        return cls(os.urandom(8).hex(), pid, socket.gethostname(), process_start(pid) or "")


def _read_small(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(4096).decode("ascii", "replace").strip()
    except FileNotFoundError:
        return ""
    except OSError:
        return None


def process_start(pid: int) -> str | None:
    """Who a pid is: `<pid namespace>/<boot id>/<start tick>`; "" when no live process has it.

    None when this cannot be told (no /proc, or /proc hides other users' processes). A pid number
    can be reused, by a later process or by one in another PID namespace: two processes are the
    same only when all three parts agree.
    """
    stat_line = _read_small(f"/proc/{pid}/stat")
    if stat_line is None:
        return None
    if not stat_line:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return ""
        except OSError:
            pass
        return None  # alive but not shown to us
    fields = stat_line[stat_line.rindex(")") + 2:].split() if ")" in stat_line else []
    if len(fields) < 20:
        return None
    if fields[0] in ("Z", "X"):
        return ""  # a zombie is dead already: only its parent has not reaped it
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    boot = _read_small("/proc/sys/kernel/random/boot_id")
    return f"{namespace}/{boot}/{fields[19]}" if boot else None


def lease_alive(pid: int, host: str, heartbeat_ts: float | None, started: str | None = None) -> bool:
    """Whether a lease's driver still runs: on this host that very process, elsewhere a recent heartbeat.

    `started` (process_start when the lease was taken; None or "" in leases from before it was
    recorded) tells a dead holder from a later process with its pid at once, where the 60 s
    heartbeat rule would keep a crashed driver's tournament locked.
    """
    recent = heartbeat_ts is not None and time.time() - heartbeat_ts < LEASE_STALE_S
    if host == socket.gethostname():
        mine = process_start(os.getpid()) if started else None
        if mine:
            namespace, boot, _ = started.split("/", 2) if started.count("/") >= 2 else ("", "", "")
            my_namespace, my_boot, _ = mine.split("/", 2)
            if boot and boot != my_boot:
                return False  # taken before this machine last booted
            if namespace == my_namespace and (now := process_start(pid)) is not None:
                # A holder that stopped beating (frozen) is given up after 60 s, as before.
                return now == started and recent
            # Another PID namespace (its pid names another process here) or a hidden /proc:
            # only the heartbeat can tell.
            return recent
        if process_start(pid) == "":
            return False  # gone, or a zombie its parent has not reaped yet
        # A pid can be reused: an old heartbeat still marks the holder dead.
    return recent


# The keys of a config's bot row that record_bot takes (rows carry more, e.g. manifest_ref).
BOT_FIELDS = ("name", "version", "command", "workdir", "language", "description", "games",
              "content_hash")
# A tournament entrant's name: its own (tournament_bots.name, set since schema 8: `name@version`,
# a registry bot's `name` in the config) or, in tournaments recorded before, its bots row's name.
ENTRANT_NAME = "coalesce(t.name, b.name)"


@dataclass(frozen=True)
class BotRecord:
    """A program's bots row: its id, name and version, the version asked for, and — when that
    name@version belonged to another program — how the two differ (else "")."""

    id: int
    name: str
    version: str
    asked: str
    differs: str = ""

    @property
    def ref(self) -> str:
        """`name@version` as recorded (the name alone for an empty version)."""
        return f"{self.name}@{self.version}" if self.version else self.name

    @property
    def asked_ref(self) -> str:
        """`name@version` as the config asked for it."""
        return f"{self.name}@{self.asked}" if self.asked else self.name


def program_identity(content_hash: str | None, command: list, workdir: str) -> tuple:
    """What makes two bots rows one program: (hash, command) when the content is known, else
    (command, working directory); a known hash never equals an unknown one."""
    if content_hash:
        return ("hash", content_hash, list(command))
    return ("path", list(command), workdir)


def _difference(old: tuple | None, content_hash: str | None, command: list, workdir: str) -> str:
    """How a program differs from the recorded (id, command, workdir, hash), in a few words."""
    if old is None:
        return "another program"
    _, cmd, wd, digest = old
    parts = []
    if (digest or None) != (content_hash or None):
        parts.append(f"content {(content_hash or 'unknown')[:8]}, recorded "
                     f"{(digest or 'unknown')[:8]}")
    if list(cmd) != list(command):
        parts.append(f"command {shlex.join(map(str, command))!r}, recorded "
                     f"{shlex.join(map(str, cmd))!r}")
    if not content_hash and wd != workdir:
        parts.append(f"folder {workdir}, recorded {wd}")
    return "; ".join(parts) or "another program"


def _free_version(version: str, taken: dict, content_hash: str | None, command: list,
                  workdir: str) -> str:
    """`version+<8 hex>` not yet taken: the content hash's head, else a digest of the identity."""
    ident = orjson.dumps(program_identity(content_hash, command, workdir)).decode()
    heads = [content_hash[:8]] if content_hash else []
    heads.append(hashlib.sha256(ident.encode()).hexdigest()[:8])
    for head in heads:
        if f"{version}+{head}" not in taken:
            return f"{version}+{head}"
    n = 2
    while f"{version}+{heads[-1]}-{n}" in taken:
        n += 1
    return f"{version}+{heads[-1]}-{n}"


@dataclass
class MatchRecord:
    """What the driver records for one match: where it sits, its result, scores and deal scores."""

    stage: int
    round: int
    table: int
    game: str
    options: dict
    result: Any = None
    score: Any = None  # a scheduling.MatchScore
    names: list[str] = field(default_factory=list)  # the table's bots by name, in seat order
    deals: list[dict] = field(default_factory=list)  # {deal, bot, points, games}
    match_id: str = ""
    bots: tuple[int, ...] = ()  # the table's bots as stage-local entries, in seat order


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


def _migration_3(store: Store) -> None:
    """The bot registry: bots gain content_hash (of their snapshot), status and author."""
    sql = store.db.conn.execute
    # A bot first seen in a tournament config has no snapshot: its content_hash stays null.
    sql("alter table bots add column content_hash text")
    sql("alter table bots add column status text not null default 'active'")
    sql("alter table bots add column author text not null default ''")
    sql("alter table bots add column manifest text")  # the manifest's path inside the snapshot
    store.db["bots"].create_index(["content_hash"])


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


def _migration_7(store: Store) -> None:
    """Leases record their driver's process start, so a dead driver's lease is taken at once.

    Leases from before keep a null pid_start and the older rule (pid gone, or a stale heartbeat).
    """
    store.db.conn.execute("alter table leases add column pid_start text")


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


MIGRATIONS = {1: _migration_1, 2: _migration_2, 3: _migration_3, 4: _migration_4, 5: _migration_5,
              6: _migration_6, 7: _migration_7, 8: _migration_8}

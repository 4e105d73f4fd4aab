"""Opening an Arena database: the connection, its transactions, and the helpers every table uses.

The database reads naturally in any SQLite tool: JSON columns hold options, actions and configs;
every game row has its seed and every move, so any game can be replayed exactly.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import sqlite_utils

from arena.errors import StoreError
from arena.store.schema import check_readonly_version, migrate

if TYPE_CHECKING:
    from arena.store.store import Store


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


def dump_json(value: Any) -> str:
    """`value` as the JSON text a JSON column holds (sorted keys, so equal values store equal)."""
    # orjson: a match's moves are most of what the driver writes, and json.dumps was half its cost.
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode()


def refuse_directory(path: str | Path) -> None:
    """StoreError when the database path is a folder (SQLite would only say "unable to open")."""
    if str(path) != ":memory:" and Path(path).is_dir():
        raise StoreError(f"{path} is a directory, not a database file")


class StoreBase:
    """The open database of a Store: its connection, transactions and inserts; no table's rows."""

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
        migrate(self)  # refuses a foreign file before anything below could change it
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
            check_readonly_version(conn, path)
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

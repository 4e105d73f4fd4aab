"""A value that changes whenever a database file may have: the web app's page cache keys pages by
it (arena/web/page_cache.py). SQL lives in the store package; this is its one pragma."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path


class DatabaseMarker:
    """A value that changes whenever the database at `path` may have: (connection generation,
    `PRAGMA data_version`) on one kept read-only connection, reopened when the file is replaced."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None
        self._generation = 0  # data_version restarts with each connection: tell them apart
        self._lock = threading.Lock()

    def read(self) -> tuple[int, int] | None:
        """The current marker; None when the file cannot be read (callers then build afresh)."""
        with self._lock:
            try:
                st = os.stat(self.path)
                if self._conn is None or self._file != (st.st_dev, st.st_ino):
                    self._reopen((st.st_dev, st.st_ino))
                return self._generation, self._conn.execute("pragma data_version").fetchone()[0]
            except (OSError, sqlite3.Error):
                self.close()
                return None

    def _reopen(self, file: tuple[int, int]) -> None:
        self.close()
        self._conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                     timeout=1, check_same_thread=False, isolation_level=None)
        self._file = file
        self._generation += 1

    def close(self) -> None:
        """Close the kept connection (the next read opens another)."""
        if self._conn is not None:
            self._conn.close()
        self._conn = None

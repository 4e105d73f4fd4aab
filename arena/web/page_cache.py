"""The web app's pages kept in memory while the database does not change.

A public page (a leaderboard, the index, the ladders, the bots) is the same for every reader until
something is recorded, yet each request rebuilt it: /leaderboard/{game} refits the game's ratings
over every recorded game, about 12 ms of CPU at 160 games and growing with them, so 50 concurrent
readers queued for half a second behind the GIL. Here a page's data (and, where it is the same for
every reader, its encoded bytes) is computed once and served from memory until either

- the database changes: SQLite's `PRAGMA data_version` on one kept read-only connection changes
  whenever any other connection, in any process, commits (a game recorded, ratings refitted, a
  lease's heartbeat), and a file replaced under the server is another file (its inode); or
- the entry is `max_age` seconds old: a page also depends on the clock (a ladder whose driver
  died without a word stops being live; a game passes the public delay), so it is rebuilt.

The marker is read before the page is built, so a page is never older than the marker it is kept
under. The reader that finds a page out of date rebuilds it and waits; readers that come during
that rebuild are served the previous build (if younger than twice `max_age`) rather than queue
behind a refit that grows with the games recorded. What may differ between viewers is never
decided here: callers key the bytes they share.

The environment variable `ARENA_PAGE_CACHE_S` sets `max_age` (default 2 s); `0` turns it off.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool

from arena.store.changes import DatabaseMarker
from arena.web.flights import build_once
from arena.web.replay_cache import number_from_env

DEFAULT_MAX_AGE_S = 2.0
MAX_AGE_ENV = "ARENA_PAGE_CACHE_S"
MAX_ENTRIES = 256  # pages × query strings × encodings; a flood of distinct URLs evicts the oldest


def max_age_from_env() -> float:
    """The cache's `max_age` in seconds from ARENA_PAGE_CACHE_S (default 2; 0 disables it)."""
    return number_from_env(MAX_AGE_ENV, DEFAULT_MAX_AGE_S)


PINNED = "pinned"  # the marker of an entry whose key names its content (see `fetch`)


class PageCache:
    """Values kept while the database marker is unchanged and they are younger than `max_age`
    (LRU past `max_entries`). Concurrent misses build once; while a value is being rebuilt, the
    other readers are served its previous build (if younger than twice `max_age`) instead of
    waiting: only the reader that started the rebuild waits for it."""

    def __init__(self, db_path: str | Path, max_age: float = DEFAULT_MAX_AGE_S,
                 max_entries: int = MAX_ENTRIES, clock: Callable[[], float] = time.monotonic):
        self.max_age = max_age
        self.clock = clock
        self.max_entries = max_entries
        self.marker = DatabaseMarker(db_path)
        self.hits = 0
        self.misses = 0
        self.stand_ins = 0  # previous builds served while their rebuild ran
        self._latest: Hashable = None  # the newest marker read
        self._entries: OrderedDict[Hashable, tuple[Any, float, Hashable]] = OrderedDict()
        self._lock = threading.Lock()
        self._filling: dict[Hashable, asyncio.Future] = {}

    @property
    def enabled(self) -> bool:
        """Whether anything is kept (a max age of 0 turns the cache off)."""
        return self.max_age > 0

    def __len__(self) -> int:
        return len(self._entries)

    def _look(self, marker: Hashable, key: Hashable) -> tuple[Any | None, Any | None]:
        """(the current value or None, and when there is none the previous build young enough
        to stand in for it during a rebuild, or None)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None, None
            self._entries.move_to_end(key)
            value, born, kept_under = entry
            if kept_under == PINNED:
                return value, None
            age = self.clock() - born
            if kept_under == marker and age < self.max_age:
                return value, None
            return None, value if age < 2 * self.max_age else None

    def _put(self, marker: Hashable, key: Hashable, value: Any, born: float) -> None:
        with self._lock:
            if marker != PINNED and marker != self._latest:
                return  # the database changed while it was built: the next reader builds anew
            self._entries[key] = (value, born, marker)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    async def fetch(self, key: Hashable, compute: Callable[[], Any], pinned: bool = False) -> Any:
        """The value under `key`, built by `compute` in a worker thread when none is current.

        A reader that finds none builds it; readers that come while it is being built get the
        previous build when there is one young enough, else they wait for that one build (on
        the event loop, holding no thread). A failure reaches every waiter and nothing is kept.
        `pinned`: the key names its content (e.g. the bytes of one build of a page), so the
        value stays right whatever the database does and is kept until evicted.
        """
        if not self.enabled:
            return await run_in_threadpool(compute)
        if pinned:
            marker: Hashable = PINNED
        else:
            marker = self.marker.read()
            if marker is None:
                return await run_in_threadpool(compute)
            self._latest = marker
        value, previous = self._look(marker, key)
        if value is not None:
            self.hits += 1
            return value
        flight = (marker, key)
        pending = self._filling.get(flight)
        if pending is not None:
            if previous is not None:
                self.stand_ins += 1
                return previous
            self.hits += 1
            return await asyncio.shield(pending)
        self.misses += 1
        born = self.clock()  # before the build: its age counts from what it could read
        value = await build_once(self._filling, flight, compute)
        self._put(marker, key, value, born)  # before any waiter resumes: they find it kept
        return value

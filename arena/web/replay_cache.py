"""A bounded in-memory cache of what the web app computes from a finished game (its replay JSON,
its facts, its move list).

A recorded game never changes, so rebuilding its replay on every request only burns CPU: under
200 concurrent requests a 1.7 MB replay took 14 s at the median. Entries are keyed by the
database, the game id and its `recorded_at` (a database replaced under the server does not serve
another file's game), and evicted least-recently-used once their bytes pass the budget.
Concurrent first requests for one key compute it once: the others wait for that result.
The environment variable `ARENA_REPLAY_CACHE_MB` sets the budget; `0` turns the cache off.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import math
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from arena.web.flights import build_once

DEFAULT_BUDGET_MB = 256
BUDGET_ENV = "ARENA_REPLAY_CACHE_MB"
GZIP_LEVEL = 6  # compressed once per entry; 9 costs twice the time for ~2% less


@dataclass(frozen=True)
class Encoded:
    """A JSON body ready to send: its bytes, their gzip form and an ETag naming the content."""

    body: bytes
    gzipped: bytes
    etag: str

    @property
    def size(self) -> int:
        """The bytes this entry holds."""
        return len(self.body) + len(self.gzipped)


def encode(body: bytes) -> Encoded:
    """A body with its gzip form and a (weak: the two encodings differ) ETag of its digest."""
    digest = hashlib.blake2b(body, digest_size=16).hexdigest()
    return Encoded(body, gzip.compress(body, GZIP_LEVEL, mtime=0), f'W/"{digest}"')


def number_from_env(name: str, default: float) -> float:
    """A web cache's setting from the environment variable `name`: a number ≥ 0 (a negative one
    is 0, which turns the cache off); `default` when unset, not a number, or NaN."""
    text = os.environ.get(name, "").strip()
    try:
        value = float(text) if text else default
    except ValueError:
        return default
    return max(0.0, value) if value == value else default  # NaN != NaN


def budget_from_env() -> int:
    """The cache's budget in bytes from ARENA_REPLAY_CACHE_MB (default 256 MB; 0 disables it)."""
    mb = number_from_env(BUDGET_ENV, DEFAULT_BUDGET_MB)
    return int(mb * 1024 * 1024) if math.isfinite(mb) else sys.maxsize  # "inf": no bound


class ReplayCache:
    """An LRU of computed values bounded by their total size in bytes, with single-flight fills."""

    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.used = 0
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()  # the LRU is also touched from worker threads
        self._filling: dict[Hashable, asyncio.Future] = {}

    @property
    def enabled(self) -> bool:
        """Whether anything is kept at all (a budget of 0 turns the cache off)."""
        return self.budget > 0

    def get(self, key: Hashable) -> Any | None:
        """The value cached under `key` (now the most recently used), or None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        """Keep `value` (of `size` bytes), evicting the least recently used past the budget; a
        value larger than the whole budget is not kept."""
        if size > self.budget:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.used -= old[1]
            self._entries[key] = (value, size)
            self.used += size
            while self.used > self.budget:
                _, (_, dropped) = self._entries.popitem(last=False)
                self.used -= dropped

    def __len__(self) -> int:
        return len(self._entries)

    async def fetch(self, key: Hashable, compute: Callable[[], Any],
                    size_of: Callable[[Any], int]) -> Any:
        """The value under `key`, computing it with `compute` in a worker thread when missing.

        Requests that arrive while it is being computed wait for that one computation (on the
        event loop, holding no thread) instead of starting their own; a failure reaches every
        waiter and nothing is kept.
        """
        value = self.get(key)
        if value is not None:
            self.hits += 1
            return value
        pending = self._filling.get(key)
        if pending is not None:
            self.hits += 1
            return await asyncio.shield(pending)
        self.misses += 1
        value = await build_once(self._filling, key, compute)
        self.put(key, value, size_of(value))  # before any waiter resumes: they find it kept
        return value

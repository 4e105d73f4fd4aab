"""The drivers' side of the store: finished matches held back and written together, and the few
questions a driver asks of what it has recorded so far.

A driver session owns one writer. Finished matches (and, on a ladder, the tables chosen) are
buffered and land in one transaction: one commit per match was most of a fast run's time. They
are never held longer than a few seconds, and a driver stopped at any moment flushes what it
holds on the way out, so every finished match is kept; what a failing flush loses is played
again on resume (its seeds are fixed).
"""

from __future__ import annotations

import time

from arena.store import MatchRecord, Store


class MatchWriter:
    """A tournament's finished matches, buffered and written by Store.record_matches in one go."""

    def __init__(self, store: Store, tournament_id: int, bot_ids: dict[str, int], *,
                 max_matches: int, max_seconds: float, flush_before_wait: bool):
        self.store = store
        self.tournament_id = tournament_id
        self.bot_ids = bot_ids  # shared with the driver: a ladder adds bots as they join
        self.max_matches = max_matches
        self.max_seconds = max_seconds
        # Whether a driver about to wait for a match writes what it holds first (a tournament:
        # its standings are read while it runs) or keeps batching (a ladder: throughput).
        self.flush_before_wait = flush_before_wait
        self.records: list = []
        self.held_since = 0.0

    @property
    def pending(self) -> bool:
        """Whether anything is held that is not written yet."""
        return bool(self.records)

    def add(self, record: MatchRecord) -> None:
        """Hold a finished match until the next flush."""
        self._hold()
        self.records.append(record)

    def due(self) -> bool:
        """Whether what is held should be written now (enough matches, or held long enough)."""
        return self.pending and (len(self.records) >= self.max_matches
                                 or time.monotonic() - self.held_since >= self.max_seconds)

    def flush(self, quiet: bool = False) -> None:
        """Write what is held in one transaction; `quiet` (on the way out of a failing run) drops it
        on a write error instead of raising, since the error that ends the run matters more."""
        if not self.pending:
            return
        try:
            self._write()
        except Exception:
            if not quiet:
                raise
            self._drop()

    def _hold(self) -> None:
        if not self.pending:
            self.held_since = time.monotonic()

    def _write(self) -> None:
        records, self.records = self.records, []  # taken first: a failed write is not retried
        self.store.record_matches(self.tournament_id, records, self.bot_ids)

    def _drop(self) -> None:
        self.records = []


class LadderWriter(MatchWriter):
    """A ladder's finished tables `(number, record)` and the tables chosen, written together.

    A choice lands in the transaction of every result buffered by then, which includes those it
    rests on: it never lands before them, or a crash in between would leave a history that a
    resume cannot replay.
    """

    def __init__(self, store: Store, tournament_id: int, bot_ids: dict[str, int], *,
                 max_matches: int, max_seconds: float, flush_before_wait: bool = False):
        super().__init__(store, tournament_id, bot_ids, max_matches=max_matches,
                         max_seconds=max_seconds, flush_before_wait=flush_before_wait)
        self.chosen: list[dict] = []

    @property
    def pending(self) -> bool:
        """Whether a table result or a choice is held."""
        return bool(self.records or self.chosen)

    def choose(self, row: dict) -> None:
        """Hold a chosen table's row (with its `chosen_at`) until the next flush."""
        self._hold()
        self.chosen.append(row)

    def _write(self) -> None:
        records, self.records = self.records, []
        chosen, self.chosen = self.chosen, []
        self.store.record_ladder_matches(self.tournament_id, records, self.bot_ids, chosen)

    def _drop(self) -> None:
        self.records, self.chosen = [], []


def games_recorded(store: Store, tournament_id: int) -> int:
    """How many games a tournament has recorded (a resume starts its progress there)."""
    return store.db.execute("select count(*) from games where tournament_id = ?",
                            [tournament_id]).fetchone()[0]


def stage_finished(store: Store, tournament_id: int, stage: int) -> bool:
    """Whether a stage is recorded as finished (a resume skips it)."""
    row = store.db.execute("select status from stages where tournament_id = ? and stage = ?",
                           [tournament_id, stage]).fetchone()
    return bool(row) and row[0] == "finished"


def finished_tables(store: Store, tournament_id: int) -> int:
    """How many of a ladder's tables are finished."""
    return store.db.execute("select count(*) from ladder_tables where tournament_id = ? "
                            "and status = 'finished'", [tournament_id]).fetchone()[0]


def played_game(store: Store, tournament_id: int, game: str) -> bool:
    """Whether a tournament (or ladder) has recorded a game of `game`."""
    return store.db.execute("select 1 from games where tournament_id = ? and game = ? limit 1",
                            [tournament_id, game]).fetchone() is not None


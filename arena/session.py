"""One driver session: what the tournament driver and the ladder share while they run.

A session holds a tournament row (a tournament or a ladder) for one driver process: it takes the
row's lease (refused while another live driver holds it, taken over when that driver is gone),
keeps it fresh with a heartbeat thread that also notices `arena … stop|cancel`, turns SIGTERM and
Ctrl-C into a clean stop, keeps the executor full with the matches its policy hands it, writes
finished matches through one buffered writer (flushed on every way out), and records the final
status before it lets the lease go.

The drivers are policies over it (DriverPolicy): `arena.tournament.Driver` pairs rounds stage by
stage, `arena.ladder.Ladder` asks its matchmaker for the next table. Each says what to submit
next and what an outcome does; neither deals with leases, signals, flushing or statuses.
"""

from __future__ import annotations

import os
import signal
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.errors import ConfigError, MatchErrorLimit, StoreError
from arena.executors import Executor, choose_executor, make_executor
from arena.match import MatchFailure, MatchResult, MatchSpec
from arena.store import Lease, MatchRecord, Store
from arena.store.writer import MatchWriter

if TYPE_CHECKING:
    from arena.events import StagePlan

HEARTBEAT_SECONDS = 5.0


class Listener:
    """Callbacks a front end receives while a driver runs (the CLI's progress bar, the ladder's
    printer); every hook does nothing by default."""

    def executor(self, name: str, reason: str, sandbox: str = "", sandbox_reason: str = "",
                 enforced: str = "") -> None:
        """Which executor runs the matches, which sandbox holds the bots and why, and what
        bounds each bot here (`enforced`)."""

    def started(self, tournament_id: int, planned_games: int, done_games: int) -> None:
        """The tournament is created (or resumed) and holds its lease."""

    def ladder_started(self, tournament_id: int, resumed: bool, tables: int) -> None:
        """The ladder is open (tables recorded so far)."""

    def round_started(self, stage: StagePlan, round_no: int) -> None:
        """A round's pairings are recorded and its matches are about to run."""

    def match_done(self, result: MatchResult) -> None:
        """A tournament match finished and is (about to be) recorded."""

    def table_done(self, number: int, result: MatchResult) -> None:
        """A ladder table finished and is (about to be) recorded."""

    def match_failed(self, failure: MatchFailure, attempt: int) -> None:
        """A match attempt failed by a runner error."""

    def entered(self, key: str, status: str, reason: str) -> None:
        """A version was validated for a ladder: entered ("active") or "rejected"."""

    def notice(self, message: str) -> None:
        """One line the organiser should read (a bot recorded as a new version, a `ready` that
        names another bot or version, a node quarantined); the CLI prints it above the bar."""


# -- stopping -------------------------------------------------------------------------------------

class StopRequested(KeyboardInterrupt):
    """Raised in the main thread by SIGTERM (like Ctrl-C) so the driver stops cleanly.

    A KeyboardInterrupt because asyncio re-raises only those (and SystemExit) from callbacks and
    tasks: any other exception raised by the handler inside the event loop would be logged and lost.
    """


def install_stop_signals(requested: threading.Event) -> Callable[[], None]:
    """SIGTERM and Ctrl-C (SIGINT) stop a driver cleanly (matches in flight end, the rest is
    resumable); undo with the result.

    The handlers also set `requested`, which the driver checks between matches: an exception
    raised by a signal handler is lost when it lands in a finalizer (Python prints "Exception
    ignored" and goes on), and the stop must not be lost with it. Ctrl-C needs its own handler
    for the same reason: under the default one, `asyncio.run` turns the first Ctrl-C into a
    cancellation of its task, and a task that ends normally all the same (a validation game
    finishing its cleanup) swallows the Ctrl-C: a ladder went on playing for minutes after it.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def on_sigterm(signum, frame):
        requested.set()
        raise StopRequested()

    def on_sigint(signum, frame):
        requested.set()
        raise KeyboardInterrupt()

    previous = {sig: signal.signal(sig, handler)
                for sig, handler in ((signal.SIGTERM, on_sigterm), (signal.SIGINT, on_sigint))}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return restore


def start_heartbeat(store: Store, tid: int, token: str,
                    cancel_requested: threading.Event) -> threading.Event | None:
    """A thread that refreshes a driver's lease and notices a requested cancel (or stop).

    On a cancel it sets `cancel_requested` and, in the main thread's process, sends SIGTERM to
    itself so a driver blocked on a match stops too. Set the returned event to end the thread.
    """
    if store.path is None:
        return None  # an in-memory database has no second reader to tell about us
    stop = threading.Event()
    path = store.path
    main_thread = threading.main_thread() is threading.current_thread()

    def beat() -> None:
        try:
            own = Store(path)
        except StoreError:
            return
        while not stop.wait(HEARTBEAT_SECONDS):
            try:
                cancel = own.heartbeat(tid, token)
            except Exception:  # a busy database: try again next beat
                continue
            # A beat that ran as the driver finished finds the lease released: not a cancel.
            if cancel and not stop.is_set() and not cancel_requested.is_set():
                cancel_requested.set()
                if main_thread:
                    os.kill(os.getpid(), signal.SIGTERM)
        own.db.conn.close()

    threading.Thread(target=beat, name="arena-lease", daemon=True).start()
    return stop


# -- before the store is touched: sandbox and executor ----------------------------------------------

@dataclass(frozen=True)
class Isolation:
    """The sandbox a run's bots get and why, and what bounds each bot (one line each)."""

    sandbox: str
    sandbox_reason: str
    enforced: str


def sandbox_choice(setting: str) -> tuple[str, str]:
    """The sandbox the bots get and why; ConfigError when `bwrap` is asked for and cannot run here."""
    from arena.players.launch import sandbox_status

    if setting == "none":
        return "none", "config"
    mode, why = sandbox_status()
    if setting == "bwrap" and mode != "bwrap":
        raise ConfigError(f"sandbox = \"bwrap\" but it cannot run here: {why}")
    return mode, f"{'auto: ' if setting == 'auto' else ''}{why}"


def isolation_check(sandbox: str, bot_user: str, allow_unconfined: bool,
                    subprocess_bots: bool = True) -> str:
    """What bounds each bot here (one line for the run's start); ConfigError when the runner is
    root in plain mode and nothing bounds the bots, unless the config allows it explicitly."""
    from arena.players.launch import enforcement, unenforceable

    if not subprocess_bots:
        return "in-process bots only"
    mode = "bwrap" if sandbox == "bwrap" else "plain"
    why = unenforceable(mode, bot_user)
    if why is not None and not allow_unconfined:
        raise ConfigError(f"sandbox = \"none\" as root here: {why}; use sandbox = \"bwrap\", or "
                          f"set allow_unconfined = true to run them so anyway")
    return enforcement(mode, bot_user)


def bot_isolation(sandbox: str, bot_user: str, allow_unconfined: bool,
                  subprocess_bots: bool = True) -> Isolation:
    """The sandbox (config setting `sandbox`) and bounds of a run's bots; ConfigError when they
    cannot be had here (refused before the store is touched)."""
    mode, why = sandbox_choice(sandbox)
    return Isolation(mode, why, isolation_check(mode, bot_user, allow_unconfined, subprocess_bots))


@contextmanager
def open_executor(kind: str, planned_games: int, listener: Listener, isolation: Isolation, *,
                  ray_address: str | None = None, workers: int | None = None,
                  pin: bool = True) -> Iterator[tuple[Executor, str, str]]:
    """The executor a run uses (told to the listener with the sandbox), its name and why; closed
    on the way out."""
    name, reason = choose_executor(kind, planned_games, workers, ray_address)
    listener.executor(name, reason, isolation.sandbox, isolation.sandbox_reason,
                      isolation.enforced)
    with make_executor(name, ray_address, workers, pin=pin) as executor:
        yield executor, name, reason


# -- the session ------------------------------------------------------------------------------------

class DriverPolicy(ABC):
    """What a driver decides over its session: what to submit next and what an outcome does."""

    @abstractmethod
    def capacity(self) -> int:
        """How many matches may be in flight at once."""

    def prepare(self) -> None:  # noqa: B027 (optional: only the ladder looks around first)
        """Called before each round of submissions (a ladder looks at its registry here)."""

    @abstractmethod
    def next_match(self) -> MatchSpec | None:
        """The next match to submit, or None when there is none to submit now."""

    @abstractmethod
    def outcome(self, outcome: MatchResult | MatchFailure) -> None:
        """What a finished (or failed) match does: scored, buffered, retried."""

    @abstractmethod
    def idle(self) -> str | None:
        """Nothing in flight and nothing to submit: the status to end with, or None to go on."""


class DriverSession:
    """One driver's hold on a tournament row: lease, heartbeat, stop signals, the executor loop,
    the buffered writer and the final status."""

    def __init__(self, store: Store, executor: Executor, listener: Listener):
        self.store = store
        self.executor = executor
        self.listener = listener
        self.lease = Lease.mine()
        self.cancel_requested = threading.Event()  # `arena … stop|cancel`, seen by the heartbeat
        self.stop_requested = threading.Event()  # SIGTERM or Ctrl-C
        self.tid = 0
        self.writer: MatchWriter | None = None

    def hold(self, tournament_id: int, writer: MatchWriter, created: bool) -> None:
        """Hold `tournament_id` with `writer`; a row not just `created` with this session's lease
        is taken over (LeaseError while another live driver holds it) and marked running."""
        if not created:
            self.store.acquire_lease(tournament_id, self.lease, take_stale=True)
            self.store.set_status(tournament_id, "running")
        self.tid = tournament_id
        self.writer = writer

    def run(self, play: Callable[[], str], *, cancelled: str,
            close: Callable[[str], None] | None = None) -> str:
        """Run `play` (its result: the status to end with) under the lease, with the heartbeat and
        SIGTERM installed; the status recorded.

        A stop asked for by `arena … stop|cancel` ends with `cancelled`, Ctrl-C or SIGTERM with
        "interrupted" (then KeyboardInterrupt is raised), a match out of attempts with "error".
        What the writer holds is written on every way out; `close(status)` runs before the status
        is recorded and the lease released, whatever happened.
        """
        restore = install_stop_signals(self.stop_requested)
        beat = start_heartbeat(self.store, self.tid, self.lease.token, self.cancel_requested)
        status = "interrupted"
        try:
            status = play()
            self.writer.flush()
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM (StopRequested) or a requested stop
            self.writer.flush(quiet=True)
            status = cancelled if self.cancel_requested.is_set() else "interrupted"
        except MatchErrorLimit:
            self.writer.flush(quiet=True)
            status = "error"
            raise
        except BaseException:
            self.writer.flush(quiet=True)
            raise
        finally:
            if beat is not None:
                beat.set()
            restore()
            try:
                if close is not None:
                    close(status)
            finally:
                self.store.set_status(self.tid, status)
                self.store.release_lease(self.tid, self.lease.token)
        if status == "interrupted":
            raise KeyboardInterrupt
        return status

    def check_stop(self) -> None:
        """StopRequested when a stop was asked for (SIGTERM, or `arena … stop|cancel`).

        Checked between matches: a signal handler's exception can be lost in a finalizer.
        """
        if self.stop_requested.is_set() or self.cancel_requested.is_set():
            raise StopRequested()

    def pump(self, policy: DriverPolicy) -> str:
        """Keep the executor full with the policy's matches and hand it every outcome, until the
        policy, idle, names the status to end with."""
        ex = self.executor
        while True:
            self.check_stop()
            policy.prepare()
            while ex.in_flight() < policy.capacity():
                spec = policy.next_match()
                if spec is None:
                    break
                ex.submit(spec)
            if not ex.in_flight():
                end = policy.idle()
                if end is not None:
                    return end
                continue
            if self.writer.flush_before_wait and self.writer.pending and not ex.ready():
                self.writer.flush()  # about to wait: what is finished lands now, not after it
            outcome = ex.next_outcome()
            self.tell_notices()
            policy.outcome(outcome)
            if self.writer.due():
                self.writer.flush()

    def tell_notices(self) -> None:
        """Say what happened to the executor (a node quarantined) and record it."""
        for notice in self.executor.notices():
            self.listener.notice(notice.text)
            if notice.event:
                self.store.record_node_event(self.tid, notice.node, notice.host, notice.event,
                                             notice.detail)

    def record_failure(self, record: MatchRecord, failure: MatchFailure) -> int:
        """Record a runner error (after what is buffered, so errors follow results); its attempt number."""
        self.writer.flush()
        attempts = self.store.record_match_error(self.tid, record, failure.kind, failure.error,
                                                 failure.worker, failure.node, failure.host)
        self.listener.match_failed(failure, attempts)
        return attempts

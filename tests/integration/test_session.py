"""The driver session both drivers run under: lease, heartbeat, stops, the buffered writer, the
executor choice (arena.session, arena.store.writer)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arena import session as session_module
from arena import tournament
from arena.config import load_config
from arena.errors import LeaseError
from arena.executors import SerialExecutor, choose_executor
from arena.session import (
    DriverSession,
    Isolation,
    Listener,
    open_executor,
)
from arena.store import Lease, Store
from arena.store.writer import MatchWriter
from arena.tournament import run_config, run_tournament

ROUND_ROBIN = """
name = "rr"
game = "xeri"
format = "round_robin"
seed = 3
deals = 1
""" + "".join(f'\n[[bots]]\nname = "b{i}"\npython = "tests.support.bots:{kind}"\n'
              for i, kind in enumerate(["FirstLegal", "SeededRandom", "FirstLegal", "SeededRandom"]))


def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "rr.toml"
    path.write_text(textwrap.dedent(ROUND_ROBIN))
    return path


def new_tournament(store: Store, lease: Lease) -> int:
    return store.create_tournament("t", "xeri", "round_robin", 2, 0, {}, {}, [], lease=lease)


def writer_for(store: Store, tid: int) -> MatchWriter:
    return MatchWriter(store, tid, {}, max_matches=64, max_seconds=0.25, flush_before_wait=True)


def dead_pid() -> int:
    """A pid no process has now (one that just ended)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def finished_matches(store: Store, tid: int) -> int:
    return store.db.execute("select count(*) from matches where tournament_id = ? and "
                            "status = 'finished'", [tid]).fetchone()[0]


class AlwaysReady(SerialExecutor):
    """A serial executor that says an outcome is ready: the session never flushes before a wait,
    so finished matches stay buffered until the thresholds (or the way out) write them."""

    def ready(self) -> bool:
        return True


def hold_everything(monkeypatch) -> None:
    """Nothing is written before the driver ends, however many matches finish."""
    monkeypatch.setattr(tournament, "FLUSH_MATCHES", 10_000)
    monkeypatch.setattr(tournament, "FLUSH_SECONDS", 10_000.0)


def test_a_lease_is_refused_while_another_live_driver_holds_it(tmp_path):
    store = Store(tmp_path / "a.db")
    tid = new_tournament(store, Lease.mine())  # this very process: alive
    second = DriverSession(store, SerialExecutor(pin=False), Listener())
    with pytest.raises(LeaseError, match=f"is being run by pid {os.getpid()}"):
        second.hold(tid, writer_for(store, tid), created=False)
    assert store.lease(tid)["token"] != second.lease.token


def test_a_stale_lease_is_taken_over_and_released_at_the_end(tmp_path):
    store = Store(tmp_path / "a.db")
    tid = new_tournament(store, Lease("gone", dead_pid(), socket.gethostname()))
    store.set_status(tid, "interrupted")
    driver = DriverSession(store, SerialExecutor(pin=False), Listener())
    driver.hold(tid, writer_for(store, tid), created=False)
    assert store.lease(tid)["token"] == driver.lease.token
    assert store.tournament(tid)["status"] == "running"
    assert driver.run(lambda: "finished", cancelled="cancelled") == "finished"
    assert store.tournament(tid)["status"] == "finished"
    assert store.lease(tid) is None


def test_the_heartbeat_advances_while_the_driver_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(session_module, "HEARTBEAT_SECONDS", 0.05)
    store = Store(tmp_path / "a.db")
    driver = DriverSession(store, SerialExecutor(pin=False), Listener())
    tid = new_tournament(store, driver.lease)
    driver.hold(tid, writer_for(store, tid), created=True)
    reader = Store(tmp_path / "a.db")
    first = reader.lease(tid)["heartbeat_ts"]
    beats = []

    def play() -> str:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            now = reader.lease(tid)["heartbeat_ts"]
            if now > first:
                beats.append(now)
                return "finished"
            time.sleep(0.02)
        return "timed out"

    assert driver.run(play, cancelled="cancelled") == "finished"
    assert beats and reader.lease(tid) is None


def test_a_requested_stop_ends_the_run_with_the_drivers_cancelled_status(tmp_path, monkeypatch):
    """`arena ladder stop` / `arena cancel`: the heartbeat sees it and the driver stops cleanly."""
    monkeypatch.setattr(session_module, "HEARTBEAT_SECONDS", 0.05)
    store = Store(tmp_path / "a.db")
    driver = DriverSession(store, SerialExecutor(pin=False), Listener())
    tid = new_tournament(store, driver.lease)
    driver.hold(tid, writer_for(store, tid), created=True)
    previous = signal.getsignal(signal.SIGTERM)

    def play() -> str:
        assert Store(tmp_path / "a.db").request_stop(tid)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            driver.check_stop()  # where a driver looks between matches
            time.sleep(0.01)
        return "not stopped"

    assert driver.run(play, cancelled="stopped") == "stopped"
    assert store.tournament(tid)["status"] == "stopped"
    assert store.lease(tid) is None
    assert signal.getsignal(signal.SIGTERM) is previous


def test_sigterm_mid_run_stops_it_as_interrupted_with_every_finished_match_written(
        tmp_path, monkeypatch):
    hold_everything(monkeypatch)

    class TermAfter(Listener):
        done = 0

        def match_done(self, result):
            self.done += 1
            if self.done == 3:
                os.kill(os.getpid(), signal.SIGTERM)  # lands here: the driver stops now

    config, bots, rows = load_config(config_file(tmp_path))
    store = Store(tmp_path / "a.db")
    told = TermAfter()
    with pytest.raises(KeyboardInterrupt):
        run_tournament(config, bots, rows, store, AlwaysReady(pin=False), listener=told)
    tid = store.tournaments()[0]["id"]
    assert store.tournament(tid)["status"] == "interrupted"
    assert told.done == 3 and finished_matches(store, tid) == 3  # none held back, none lost
    assert store.lease(tid) is None
    run = run_tournament(config, bots, rows, store, SerialExecutor(pin=False), resume=True)
    assert run.matches_skipped == 3 and run.matches_played == 3  # 6 planned


def test_the_writer_flushes_what_it_holds_when_the_run_fails(tmp_path, monkeypatch):
    hold_everything(monkeypatch)

    class Failing(Listener):
        done = 0

        def match_done(self, result):
            self.done += 1
            if self.done == 2:
                raise RuntimeError("the front end broke")

    config, bots, rows = load_config(config_file(tmp_path))
    store = Store(tmp_path / "a.db")
    with pytest.raises(RuntimeError, match="front end broke"):
        run_tournament(config, bots, rows, store, AlwaysReady(pin=False), listener=Failing())
    tid = store.tournaments()[0]["id"]
    assert store.tournament(tid)["status"] == "interrupted"
    assert finished_matches(store, tid) == 2
    assert store.lease(tid) is None


def test_a_flush_on_the_way_out_is_quiet_and_one_during_the_run_is_not(tmp_path):
    class Broken(Store):
        def record_matches(self, tournament_id, items, bot_ids):
            raise OSError("disk full")

    writer = MatchWriter(Broken(":memory:"), 1, {}, max_matches=2, max_seconds=60,
                         flush_before_wait=True)
    writer.add(object())
    assert writer.pending and not writer.due()
    writer.add(object())
    assert writer.due()
    with pytest.raises(OSError, match="disk full"):
        writer.flush()
    assert not writer.pending  # taken before the write: not retried by the flush on the way out
    writer.add(object())
    writer.flush(quiet=True)
    assert not writer.pending


def test_the_executor_choice_and_its_reason():
    assert choose_executor("auto", 10, ray_address="ray://head:10001") == \
        ("ray", "--ray-address ray://head:10001")
    assert choose_executor("serial", 10, ray_address="ray://head:10001") == ("serial", "requested")
    assert choose_executor("auto", 24, cpus=2) == ("serial", "auto: 24 games planned, below 500")
    assert choose_executor("auto", 10**6, cpus=1) == ("serial", "auto: 1 CPU")
    assert choose_executor("ray", 1) == ("ray", "requested")


def test_the_listener_is_told_the_executor_and_sandbox_before_the_run(tmp_path):
    told = []

    class Told(Listener):
        def executor(self, name, reason, sandbox="", sandbox_reason="", enforced=""):
            told.append((name, reason, sandbox, sandbox_reason, enforced))

    isolation = Isolation("none", "config", "in-process bots only")
    with open_executor("serial", 5, Told(), isolation, pin=False) as (ex, name, reason):
        assert isinstance(ex, SerialExecutor) and (name, reason) == ("serial", "requested")
    assert told == [("serial", "requested", "none", "config", "in-process bots only")]

    told.clear()
    run = run_config(config_file(tmp_path), tmp_path / "b.db", executor="serial", pin=False,
                     listener=Told())
    assert (run.executor, run.executor_reason) == ("serial", "requested")
    assert told and told[0][:2] == ("serial", "requested") and told[0][4] == "in-process bots only"


def test_a_stop_asked_for_during_a_burst_of_validations_is_honoured_between_two(tmp_path, monkeypatch):
    """Forty new versions validate one game each: `arena ladder stop` must not wait for them all."""
    from arena.config import load_ladder_config
    from arena.ladder import Ladder
    from arena.registry import Registry
    from tests.support.botfolders import make_bot

    db = tmp_path / "a.db"
    registry = Registry(db)
    for i in range(4):
        registry.add(make_bot(tmp_path / f"b{i}", f"b{i}"))
    path = tmp_path / "ladder.toml"
    path.write_text('name = "burst"\nseed = 1\ndeals = 1\n[[formats]]\ngame = "xeri"\nseats = 2\n'
                    'options = { rounds = 1 }\n')
    validated = []
    with SerialExecutor(pin=False) as ex:
        ladder = Ladder(load_ladder_config(path), Store(db), Registry(db), ex)

        def validate(version):
            validated.append(version.ref)
            ladder.session.cancel_requested.set()  # `arena ladder stop` arrives during the first
            return "active", ""

        monkeypatch.setattr(ladder, "_validate", validate)
        assert ladder.run(False).status == "stopped"
    assert len(validated) == 1


def test_ctrl_c_stops_the_run_even_when_a_game_in_flight_swallows_it(tmp_path):
    """Under the default handler asyncio.run turns the first Ctrl-C into a cancellation, which a
    task that ends normally all the same would swallow; the session's handler keeps it."""
    import asyncio

    store = Store(tmp_path / "a.db")
    driver = DriverSession(store, SerialExecutor(pin=False), Listener())
    tid = new_tournament(store, driver.lease)
    driver.hold(tid, writer_for(store, tid), created=True)
    previous = signal.getsignal(signal.SIGINT)
    finished_games = []

    async def game_that_finishes_anyway() -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the game runs
            await asyncio.sleep(0.5)
        except asyncio.CancelledError:
            pass  # its cleanup ends the game normally
        except KeyboardInterrupt:
            raise
        finished_games.append(1)

    def play() -> str:
        for _ in range(3):
            try:
                asyncio.run(game_that_finishes_anyway())
            except KeyboardInterrupt:
                pass  # the game's own handling; the stop must still be seen between games
            driver.check_stop()
        return "not stopped"

    with pytest.raises(KeyboardInterrupt):
        driver.run(play, cancelled="stopped")
    assert store.tournament(tid)["status"] == "interrupted"
    assert len(finished_games) <= 1  # stopped before the next game
    assert signal.getsignal(signal.SIGINT) is previous

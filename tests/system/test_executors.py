"""Executors: same outcomes serially and on Ray, failures as MatchFailure, dead workers replaced, pinning."""

from __future__ import annotations

import ast
import os
import signal
import sys
import threading
import time
from dataclasses import replace
from functools import partial

import pytest

from arena import executors
from arena.cards import derive_seed
from arena.errors import ConfigError
from arena.executors import (
    ERROR_LIMIT,
    RayExecutor,
    SerialExecutor,
    bounded,
    choose_executor,
    make_executor,
)
from arena.match import GamePlan, MatchFailure, MatchResult, MatchSpec, TimeControl
from arena.players.base import BotSpec, random_bot
from tests.support.bots import FAST, FirstLegal, SeededRandom
from tests.support.paths import BOTS

MULTICORE = len(executors.allowed_cpus()) > 1
PATIENT = TimeControl(startup_ms=60_000, move_ms=30_000)

# A subprocess bot that logs the CPUs it may run on, then plays the first legal action.
AFFINITY_CODE = (
    "import os\n"
    "from arenabot import log, run\n"
    "log('cpus', sorted(os.sched_getaffinity(0)))\n"
    "run(lambda obs, legal: legal[0], name='affinity')\n"
)


def spec(bots, match_id="m", deals=1, game="xeri", clock: TimeControl = FAST) -> MatchSpec:
    """A match of `bots` over duplicate deals: each deal once per seat rotation."""
    n = len(bots)
    rotations = [(d, r, tuple((s + r) % n for s in range(n))) for d in range(deals) for r in range(n)]
    plans = tuple(
        GamePlan(f"{match_id}-d{d}-s{r}", i, d, r, derive_seed("exec", match_id, d), seating)
        for i, (d, r, seating) in enumerate(rotations)
    )
    return MatchSpec(match_id, game, {"rounds": 1}, tuple(bots), plans, clock, 3)


def mixed_specs(n: int = 4, clock: TimeControl = FAST) -> list[MatchSpec]:
    """Matches between subprocess and in-process bots."""
    out = []
    for i in range(n):
        bots = [random_bot("r", i + 1), BotSpec("s", factory=partial(SeededRandom, i)),
                BotSpec("f", factory=FirstLegal)]
        out.append(spec([bots[i % 3], bots[(i + 1) % 3]], f"m{i}", deals=2, clock=clock))
    return out


def affinity_spec(match_id: str = "aff") -> MatchSpec:
    """A one-deal match whose first bot logs its CPU affinity."""
    bot = BotSpec("affinity", command=(sys.executable, "-c", AFFINITY_CODE), workdir=str(BOTS))
    return spec([bot, BotSpec("f", factory=FirstLegal)], match_id)


def logged_cpus(result: MatchResult) -> set[int]:
    """The CPU set the affinity bot reported (first line of its log)."""
    line = next(ln for ln in result.logs["affinity"].splitlines() if ln.startswith("cpus"))
    return set(ast.literal_eval(line.split(" ", 1)[1]))


def fingerprint(result: MatchResult) -> list:
    """A result without timings: what must not depend on where a match ran."""
    return [(g.game_id, g.seats, g.scores, g.ranks, g.termination, g.culprit,
             [(m.step, m.seat, m.action) for m in g.moves]) for g in result.games]


class KillOnce:
    """In-process bot (so it runs inside the worker): SIGKILLs its process the first time only."""

    def __init__(self, marker: str):
        self.marker = marker

    def choose(self, observation, legal_actions):
        if not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return legal_actions[0]


class Interrupt:
    """In-process bot that raises KeyboardInterrupt, as Ctrl-C would during a match."""

    def choose(self, observation, legal_actions):
        raise KeyboardInterrupt


@pytest.fixture(scope="module")
def ray_instance():
    """One local Ray instance for the module: 3 CPUs, room for a pinned pool of 2 and one more."""
    ray = pytest.importorskip("ray")
    owned = not ray.is_initialized()
    if owned:
        executors._init_ray(ray, None, 3)
    yield ray
    if owned:
        executors._fast_shutdown(ray)


@pytest.fixture(scope="module")
def ray_ex(ray_instance):
    """A pinned pool of two actors on the module's Ray instance."""
    ex = RayExecutor(workers=2)
    yield ex
    ex.close()


def test_serial_and_ray_give_identical_results(ray_ex):
    # A slow clock: the claim is about where a match runs, and a move that a loaded CI machine
    # delayed past FAST's 3 s would end one run's game as a timeout and not the other's.
    specs = mixed_specs(clock=PATIENT)
    with SerialExecutor() as serial:
        a = {o.match_id: o for o in serial.run(specs)}
    b = {o.match_id: o for o in ray_ex.run(specs)}
    assert set(a) == set(b) == {s.match_id for s in specs}
    assert all(isinstance(o, MatchResult) for o in [*a.values(), *b.values()])
    endings = {k: [(g.game_id, g.termination, g.culprit) for g in a[k].games] for k in a}
    unusual = [(side, g.game_id, g.termination, g.detail, g.evidence[-2000:])
               for side, run in (("serial", a), ("ray", b)) for o in run.values() for g in o.games
               if g.termination != "normal"]  # what went wrong, should a game end differently
    assert endings == {k: [(g.game_id, g.termination, g.culprit) for g in b[k].games]
                       for k in a}, unusual
    assert {k: fingerprint(a[k]) for k in a} == {k: fingerprint(b[k]) for k in a}
    assert all(g.moves for o in a.values() for g in o.games)
    host = executors.socket.gethostname()
    assert {o.worker for o in a.values()} == {f"{host}:{os.getpid()}"}
    assert {o.worker for o in b.values()} <= set(ray_ex.nodes)  # node ip:pid of an actor


def test_next_outcome_without_anything_in_flight_is_an_error(ray_ex):
    serial = SerialExecutor()
    serial.submit(mixed_specs(1)[0])
    assert not serial.ready()  # the match runs inside next_outcome
    assert isinstance(serial.next_outcome(), MatchResult)
    for ex in (serial, ray_ex):
        assert ex.in_flight() == 0
        with pytest.raises(RuntimeError, match="no match in flight"):
            ex.next_outcome()


def test_submit_and_next_outcome_return_one_outcome_per_spec(ray_ex):
    specs = mixed_specs(3)
    assert ray_ex.capacity() >= 2
    assert not ray_ex.ready()
    for s in specs:
        ray_ex.submit(s)
    assert ray_ex.in_flight() == 3
    deadline = time.monotonic() + 30
    while not ray_ex.ready() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ray_ex.ready() and ray_ex.in_flight() == 3  # ready() waits for nothing, returns nothing
    got = [ray_ex.next_outcome().match_id for _ in specs]
    assert sorted(got) == sorted(s.match_id for s in specs) and ray_ex.in_flight() == 0


def bogus(match_id: str = "bogus") -> MatchSpec:
    """A spec the runner itself cannot play: its game does not exist (no bot is at fault)."""
    return replace(spec([random_bot(), random_bot("b", 2)], match_id), game="no_such_game")


def test_a_runner_exception_is_a_failure_with_its_traceback(ray_ex):
    for ex in (SerialExecutor(), ray_ex):
        (out,) = list(ex.run([bogus()]))
        assert isinstance(out, MatchFailure) and out.kind == "error" and out.match_id == "bogus"
        assert "Traceback" in out.error and "UnknownGameError" in out.error
        assert "no_such_game" in out.error and out.worker
    # The executor is unharmed: the next match plays normally.
    (ok,) = list(ray_ex.run(mixed_specs(1)))
    assert isinstance(ok, MatchResult)


def test_a_spec_that_cannot_be_sent_to_ray_fails_alone(ray_ex):
    unpicklable = spec([BotSpec("x", factory=partial(SeededRandom, threading.Lock())),
                        BotSpec("f", factory=FirstLegal)], "nopickle")
    outs = {o.match_id: o for o in ray_ex.run([unpicklable, *mixed_specs(1)])}
    assert outs["nopickle"].kind == "error" and "lock" in outs["nopickle"].error
    assert isinstance(outs["m0"], MatchResult)


def test_long_tracebacks_keep_head_and_tail():
    out = list(SerialExecutor().run([replace(bogus(), game="x" * 40_000 + "END")]))[0]
    assert len(out.error.encode()) <= ERROR_LIMIT and "bytes dropped" in out.error
    assert out.error.startswith("Traceback") and "END" in out.error[-ERROR_LIMIT // 2:]
    assert bounded("short") == "short"
    assert len(bounded("é" * 20_000).encode()) <= ERROR_LIMIT


def test_keyboard_interrupt_propagates_and_the_affinity_is_restored():
    before = os.sched_getaffinity(0)
    ex = SerialExecutor()
    with pytest.raises(KeyboardInterrupt):
        list(ex.run([spec([BotSpec("i", factory=Interrupt), BotSpec("f", factory=FirstLegal)])]))
    assert os.sched_getaffinity(0) == before


def tiny(n: int, prefix: str = "t") -> list[MatchSpec]:
    """Matches of a few milliseconds: in-process bots, one deal."""
    return [spec([BotSpec("f", factory=FirstLegal), BotSpec("s", factory=partial(SeededRandom, i))],
                 f"{prefix}{i}") for i in range(n)]


def test_short_matches_are_batched_and_come_back_one_by_one(ray_ex):
    outs = list(ray_ex.run(tiny(60)))
    assert sorted(o.match_id for o in outs) == sorted(f"t{i}" for i in range(60))
    assert all(isinstance(o, MatchResult) for o in outs)
    assert ray_ex._batch_size() > 1  # sized from the measured match durations
    assert ray_ex.capacity() == 3 * 2 * ray_ex._batch_size()


def test_a_killed_worker_fails_only_its_match_and_is_replaced(ray_ex, tmp_path):
    marker = tmp_path / "killed"
    killer = spec([BotSpec("k", factory=partial(KillOnce, str(marker))),
                   BotSpec("f", factory=FirstLegal)], "killer")
    before = set(ray_ex.nodes)
    # Two longer matches keep both actors busy while the rest queues up, so the killer is batched
    # amid short ones: those that had not started when it died run elsewhere, not as failures.
    specs = [*mixed_specs(2), *tiny(6, "before"), killer, *tiny(10, "after")]
    outs = {o.match_id: o for o in ray_ex.run(specs)}
    assert marker.exists() and set(outs) == {s.match_id for s in specs}
    # Exactly one match pays: the one the actor was running, or, when the results of matches it
    # had just finished were still in transit, the first of those unreturned (the killer then runs
    # again elsewhere, where the marker stops it from killing).
    failed = [o for o in outs.values() if isinstance(o, MatchFailure)]
    assert len(failed) == 1 and failed[0].kind == "worker_died" and "died" in failed[0].error.lower()
    assert all(isinstance(o, MatchResult) for o in outs.values() if o is not failed[0])
    # The same spec again: the replacement actor plays it normally.
    (again,) = list(ray_ex.run([killer]))
    assert isinstance(again, MatchResult) and again.match_id == "killer"
    deadline = time.monotonic() + 30
    while not set(ray_ex.nodes) - before and time.monotonic() < deadline:
        assert all(isinstance(o, MatchResult) for o in ray_ex.run(mixed_specs(2)))
    assert set(ray_ex.nodes) - before  # a new actor process took the dead one's place


@pytest.mark.skipif(not MULTICORE, reason="pinning needs more than one CPU")
def test_pinned_serial_runs_bots_on_one_core_and_restores_the_driver():
    before = os.sched_getaffinity(0)
    with SerialExecutor(pin=True) as ex:
        (pinned,) = list(ex.run([affinity_spec()]))
        assert os.sched_getaffinity(0) == before  # restored after the match, not only on close
    with SerialExecutor(pin=False) as ex:
        (free,) = list(ex.run([affinity_spec()]))
    assert len(logged_cpus(pinned)) == 1 and logged_cpus(pinned) <= before
    assert logged_cpus(free) == before
    assert os.sched_getaffinity(0) == before


@pytest.mark.skipif(not MULTICORE, reason="pinning needs more than one CPU")
def test_ray_actors_pin_their_bots_to_distinct_cores_unless_told_not_to(ray_ex):
    outs = list(ray_ex.run([affinity_spec(f"aff{i}") for i in range(4)]))
    cores: dict[str, set] = {}
    for o in outs:
        assert len(logged_cpus(o)) == 1
        cores.setdefault(o.worker, set()).update(logged_cpus(o))
    assert all(len(c) == 1 for c in cores.values())  # each actor stays on its core
    if len(cores) == 2:  # both actors of this node played: on different cores
        a, b = cores.values()
        assert a != b
    with make_executor("ray", workers=1, pin=False) as free:
        (o,) = list(free.run([affinity_spec()]))
    assert logged_cpus(o) == set(executors.allowed_cpus())


def test_make_executor_and_choose_executor():
    assert isinstance(make_executor("serial"), SerialExecutor)
    assert make_executor("serial", pin=False).pin is False
    with pytest.raises(ConfigError, match="unknown executor"):
        make_executor("auto")
    assert choose_executor("auto", 24, cpus=2) == ("serial", "auto: 24 games planned, below 500")
    assert choose_executor("auto", 100_000, cpus=1) == ("serial", "auto: 1 CPU")
    kind, reason = choose_executor("auto", 5000, cpus=4)
    assert kind == "ray" and reason.startswith("auto: 5000 games")
    assert choose_executor("ray", 1) == ("ray", "requested")
    assert choose_executor("serial", 10**6, cpus=64) == ("serial", "requested")
    assert choose_executor("auto", 10**6)[0] == ("ray" if MULTICORE else "serial")
    with pytest.raises(ConfigError, match="unknown executor"):
        choose_executor("fast", 10)


def test_ray_results_carry_each_games_bot_logs(ray_ex):
    # The lines travel back in the match's result (no shared file): as serially, ply for ply.
    from tests.support.matches import spec_for
    from tests.support.paths import FAKES

    chatty = BotSpec(name="chatty", command=(sys.executable, str(FAKES / "chatty_bot.py")),
                     workdir=str(FAKES))
    spec = spec_for([chatty, random_bot("r", 1)])
    [result] = list(ray_ex.run([spec]))
    assert isinstance(result, MatchResult) and result.worker in ray_ex.nodes
    with SerialExecutor() as serial:
        [local] = list(serial.run([spec]))

    def moves(outcome):
        return [[(seat, ply, text) for seat, ply, _, text in g.logs if " move " in text]
                for g in outcome.games]

    assert moves(result) == moves(local) and all(moves(result))
    assert all(g.log_counts and g.log_counts[0][3] == 0 for g in result.games)  # none dropped

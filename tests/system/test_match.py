"""The match runner: real subprocess bots, forfeits with recorded reasons, restarts, cleanup."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import pytest

from arena.errors import HostFault
from arena.executors import execute
from arena.match import MatchFailure, run_match
from arena.players.base import BotSpec, random_bot
from arena.protocol import TimeControl
from tests.support.bots import FAST, FirstLegal, SeededRandom, misbehaving
from tests.support.matches import spec_for
from tests.support.paths import FAKES


def test_subprocess_bots_play_duplicate_deals():
    result = run_match(spec_for([random_bot("a", 1), random_bot("b", 2)], deals=2))
    assert [g.termination for g in result.games] == ["normal"] * 4
    # Each deal is played twice with the seats swapped, from the same seed.
    assert result.games[0].seed == result.games[1].seed != result.games[2].seed
    assert result.games[0].seats == ["a", "b"] and result.games[1].seats == ["b", "a"]
    for g in result.games:
        assert sorted(g.ranks) in ([1, 2], [1, 1])
        assert len(g.moves) == 96  # Xeri, 2 rounds: every one of 48 hand cards per round is played


def test_in_process_bots_are_deterministic():
    bots = [BotSpec("x", factory=partial(SeededRandom, 5)), BotSpec("y", factory=FirstLegal)]
    a, b = run_match(spec_for(bots, deals=2)), run_match(spec_for(bots, deals=2))
    assert [g.scores for g in a.games] == [g.scores for g in b.games]
    assert [[m.action for m in g.moves] for g in a.games] == [[m.action for m in g.moves] for g in b.games]


@pytest.mark.parametrize("mode, reason", [
    ("crash", "crash"),
    ("garbage", "bad_message"),
    ("illegal", "illegal_action"),
    ("wrong_type", "bad_message"),
])
def test_failures_forfeit_the_game_and_the_match_goes_on(mode, reason):
    result = run_match(spec_for([misbehaving(mode, when=3), random_bot()], deals=1))
    first, second = result.games
    assert first.termination == reason and first.culprit == 0
    assert first.ranks == [2, 1] and first.evidence
    # The culprit is restarted for the next game, where it sits in seat 1 and fails again.
    assert second.termination == reason and second.culprit == 1 and second.ranks == [1, 2]


def test_timeout_is_a_forfeit_with_the_limit_as_evidence():
    tc = TimeControl(startup_ms=10_000, move_ms=300)
    result = run_match(spec_for([random_bot(), misbehaving("sleep", when=2)], deals=1, time=tc,
                                max_failures=1))
    first, second = result.games
    assert first.termination == "timeout" and first.culprit == 1
    assert "300 ms" in first.detail
    # After one failure the budget (1) is spent: it forfeits the rest without being started.
    assert second.termination == "failure_budget" and second.culprit == 0


def test_startup_failure():
    tc = TimeControl(startup_ms=300, move_ms=1000)
    result = run_match(spec_for([misbehaving("no_ready"), random_bot()], time=tc, max_failures=1))
    assert result.games[0].termination == "startup_failure"
    assert result.games[0].culprit == 0 and result.games[0].moves == []


def test_a_missing_file_of_the_bots_own_folder_is_its_startup_failure(tmp_path):
    bad = BotSpec("ghost", command=("./bot",), workdir=str(tmp_path))
    result = run_match(spec_for([bad, random_bot()], max_failures=5))
    assert {g.termination for g in result.games} == {"startup_failure"}
    assert "./bot" in result.games[0].detail


@pytest.mark.parametrize("command, says", [
    (("/nonexistent/bot",), "/nonexistent/bot is not installed on host"),
    (("no-such-runtime-here", "bot.pl"), "no-such-runtime-here is not installed on host"),
    (("./script",), "needs /nonexistent/perl, which is not installed on host"),
])
def test_a_program_missing_on_the_host_is_a_host_fault_not_a_forfeit(tmp_path, command, says):
    # Not the bot's doing: the match is a runner error (replayed elsewhere), nobody's forfeit.
    (tmp_path / "script").write_text("#!/nonexistent/perl\nprint 1;\n")
    (tmp_path / "script").chmod(0o755)
    spec = spec_for([BotSpec("ghost", command=command, workdir=str(tmp_path)), random_bot()])
    with pytest.raises(HostFault, match=says):
        run_match(spec)
    failure = execute(spec)
    assert isinstance(failure, MatchFailure) and failure.kind == "host" and says in failure.error


def test_a_missing_working_folder_is_a_host_fault(tmp_path):
    spec = spec_for([BotSpec("ghost", command=("python3", "x.py"), workdir=str(tmp_path / "gone")),
                     random_bot()])
    failure = execute(spec)
    assert failure.kind == "host" and "working folder" in failure.error


def test_stale_answers_are_discarded_not_applied():
    result = run_match(spec_for([misbehaving("stale_then_ok", when=2), random_bot()]))
    assert [g.termination for g in result.games] == ["normal", "normal"]


def test_children_of_a_bot_do_not_outlive_the_match(tmp_path, monkeypatch):
    # A folder the bot may write to whatever uid it runs as (as root: a uid of its own).
    shared = Path(tempfile.mkdtemp(prefix="arena-pids-"))
    shared.chmod(0o777)
    pidfile = shared / "pids"
    monkeypatch.setenv("ARENA_TEST_PIDFILE", str(pidfile))
    spawner = BotSpec("spawner", command=misbehaving("spawn").command, workdir=misbehaving("spawn").workdir,
                      env=(("ARENA_TEST_PIDFILE", str(pidfile)),))
    result = run_match(spec_for([spawner, random_bot()]))
    assert [g.termination for g in result.games] == ["normal", "normal"]
    pids = [int(p) for p in pidfile.read_text().split()]
    assert pids
    deadline = time.time() + 5
    while time.time() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)
    shutil.rmtree(shared)


def test_stderr_is_kept_bounded():
    result = run_match(spec_for([misbehaving("stderr"), random_bot()]))
    log = result.logs["bad-stderr"]
    assert "bytes dropped" in log and len(log) < 100_000


def test_in_process_bot_exception_is_a_crash():
    class Boom:
        def choose(self, observation, legal_actions):
            raise RuntimeError("kaboom")

    result = run_match(spec_for([BotSpec("boom", factory=Boom), BotSpec("ok", factory=FirstLegal)]))
    assert result.games[0].termination == "crash" and "kaboom" in result.games[0].detail


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose; it only waits for its parent to reap it.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


# -- the hot path: requests out together, answers read in select() (players.process.exchange) ----

SLOW_READER = (
    "import orjson, sys, time\n"
    "r, w = sys.stdin.buffer, sys.stdout.buffer\n"
    "for line in r:\n"
    "    m = orjson.loads(line)\n"
    "    if m['type'] == 'hello':\n"
    "        w.write(b'{\"type\":\"ready\"}\\n'); w.flush()\n"
    "    elif m['type'] == 'act':\n"
    "        w.write(orjson.dumps({'type': 'action', 'request_id': m['request_id'],\n"
    "                              'action': len(m['observation']['pad'])}) + b'\\n'); w.flush()\n"
    "    elif m['type'] == 'bye':\n"
    "        break\n"
)


def test_an_act_line_larger_than_the_pipe_is_finished_by_the_event_loop():
    # 1 MiB does not fit a 64 KiB pipe: the non-blocking write stops midway, and act() must send
    # the rest (not the whole line again) while the bot reads, then read the answer.
    import asyncio

    import orjson

    from arena.players.base import UNFINISHED
    from arena.players.process import ProcessPlayer, exchange
    from arena.protocol import ActRequest

    async def run():
        player = ProcessPlayer(BotSpec("big", command=(sys.executable, "-c", SLOW_READER)), FAST)
        await player.start()
        try:
            pad = "x" * (1 << 20)
            request = ActRequest("g", 1, orjson.dumps({"pad": pad}), [len(pad)], 3000)
            started = time.perf_counter()
            results = exchange([player], [request], [3.0], started)
            assert results == [UNFINISHED] and 0 < request.skip < len(request.line())
            return await player.act(request, 3.0)
        finally:
            await player.close()

    assert asyncio.run(run()) == 1 << 20


def test_simultaneous_seats_are_timed_apart():
    # Crossfire's seats act together: a fast bot's time must not include a slow one's.
    slow = BotSpec("slow", command=(sys.executable, "slow_random.py", "1", "300"),
                   workdir=str(FAKES))
    result = run_match(spec_for([slow, random_bot("fast", 2)], game="crossfire"))
    for game in result.games:
        assert game.termination == "normal"
        by_seat = {}
        for move in game.moves:
            by_seat.setdefault(game.seats[move.seat], []).append(move.ms)
        assert min(by_seat["slow"]) >= 290
        assert max(by_seat["fast"]) < min(by_seat["slow"]) / 2


def test_a_bot_flooding_stderr_while_it_thinks_is_not_blocked():
    # 50 KB of stderr per move fills the stderr pipe within two moves; the runner must keep
    # draining it while it waits for the answer, or the bot blocks and times out.
    result = run_match(spec_for([misbehaving("stderr"), random_bot()],
                                time=TimeControl(startup_ms=10_000, move_ms=1_000)))
    assert [g.termination for g in result.games] == ["normal", "normal"]
    assert "x" * 1000 in result.logs["bad-stderr"]


class _Unjudgeable:
    """A value whose comparison and repr both raise, as a hostile in-process bot might return."""

    def __eq__(self, other):
        raise RuntimeError("no comparing me")

    __hash__ = None

    def __repr__(self):
        raise RecursionError("no printing me")


@pytest.mark.parametrize("make, shown", [
    (lambda: _Unjudgeable(), "<_Unjudgeable: repr raised RecursionError>"),
    (lambda: 10 ** 10_000, "<int of 33,220 bits>"),  # str() refuses over 4,300 digits
    (lambda: (lambda a: a.append(a) or a)([]), "[[[[[[[[[[[[[…]]]]]]]]]]]]]"),  # itself inside
])
def test_an_answer_the_runner_cannot_judge_is_the_bots_illegal_action(make, shown):
    class Hostile:
        def choose(self, observation, legal_actions):
            return make()

    result = run_match(spec_for([BotSpec("h", factory=Hostile), BotSpec("ok", factory=FirstLegal)]))
    game = result.games[0]
    assert game.termination == "illegal_action" and game.culprit == 0, game.detail
    assert game.detail == f"illegal action {shown}" and len(game.evidence) <= 201

"""Time controls: a per-game bank, time_left_ms as the bot really has it, the runner's grace margin.

The bots are real subprocesses (fakebots/timed_bot.py) that take a set time over each move.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from arena.match import MatchSpec, run_match
from arena.players.base import BotSpec, random_bot
from arena.protocol import GameEnd, TimeControl, encode
from tests.support.matches import spec_for
from tests.support.paths import FAKES, ROOT


def timed(ms: float, name: str | None = None, start_at: int = 1) -> BotSpec:
    """A subprocess bot that answers every move (from its `start_at`-th) after `ms` milliseconds."""
    return BotSpec(name=name or f"timed-{ms:g}",
                   command=(sys.executable, str(FAKES / "timed_bot.py"), str(ms), str(start_at)),
                   workdir=str(FAKES))


def told(log: str) -> list[int]:
    """The time_left_ms values a timed bot logged, in order."""
    return [int(v) for v in re.findall(r"time_left_ms=(\d+)", log)]


@pytest.mark.exclusive  # measures times: no other test's load
def test_the_bank_pays_for_slow_moves_until_it_is_empty():
    # 500 ms answers against a 300 ms limit: each move costs the bank ~200 ms, so a 1000 ms bank
    # lasts five moves and the sixth (300 ms + empty bank + 100 ms grace = 400 ms) times out.
    tc = TimeControl(startup_ms=10_000, move_ms=300, bank_ms=1000, grace_ms=100)
    result = run_match(spec_for([timed(500, "slow"), random_bot()], deals=1, time=tc, max_failures=2))
    first, second = result.games
    assert first.termination == "timeout" and first.culprit == 0
    assert len([m for m in first.moves if m.seat == 0]) == 5
    assert "limit 300 ms + bank 0 ms + grace 100 ms" in first.evidence
    elapsed = int(re.search(r"no answer in (\d+) ms", first.evidence).group(1))
    assert 400 <= elapsed < 500
    left = told(result.logs["slow"])
    # What the bot is told is the move limit plus what is left of its bank, falling move by move.
    assert left[0] == 1300 and left[5] == 300
    assert all(a > b for a, b in zip(left[:6], left[1:6]))
    assert all(195 <= a - b <= 260 for a, b in zip(left[:5], left[1:5]))
    # The bank is per game: the restarted bot starts the next game with a full one.
    assert second.termination == "timeout" and second.culprit == 1
    assert left[6] == 1300


@pytest.mark.exclusive  # measures times: no other test's load
def test_without_a_bank_time_left_is_the_move_limit():
    tc = TimeControl(startup_ms=10_000, move_ms=2000)
    result = run_match(spec_for([timed(0, "quick"), random_bot()], deals=1, time=tc))
    assert [g.termination for g in result.games] == ["normal", "normal"]
    assert set(told(result.logs["quick"])) == {2000}


def _busy_loops(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def _pinned(cpu: int):
    """run_match with this thread (and so the bots it starts, which inherit it) on one CPU."""
    def run(spec):
        os.sched_setaffinity(0, {cpu})  # Linux: the calling thread only
        return run_match(spec)
    return run


def _run(task):
    fn, spec = task
    return fn(spec)


@pytest.mark.exclusive  # measures times: no other test's load
def test_under_full_cpu_load_0_9x_is_never_timed_out_and_1_5x_always_is():
    # Four busy loops on two cores (load ≥ 4), and the matches themselves on top of it: three
    # Crossfire matches of two bots that answer in 900 ms against a 1000 ms limit (90 moves,
    # two at once in each match), beside a match whose bot answers in 1500 ms. Where affinity
    # is supported, one match runs pinned (as `pin_cpu` does) to the core two busy loops hold.
    tc = TimeControl(startup_ms=20_000, move_ms=1000)
    load = _busy_loops(4)
    pin = hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) > 1
    if pin:
        cpu = min(os.sched_getaffinity(0))
        for p in load[:2]:
            os.sched_setaffinity(p.pid, {cpu})
    try:
        specs = [spec_for([timed(900, f"a{i}"), timed(900, f"b{i}")], deals=1, time=tc,
                          game="crossfire") for i in range(3)]
        specs = [MatchSpec(f"m{i}", s.game, s.options, s.bots, s.games[:1], s.time, s.max_failures)
                 for i, s in enumerate(specs)]
        late = spec_for([timed(1500, "late"), random_bot()], deals=1, time=tc, max_failures=1)
        fns = [_pinned(cpu) if pin else run_match, run_match, run_match, run_match]
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(_run, zip(fns, [*specs, late])))
    finally:
        for p in load:
            p.kill()
            p.wait()
    moves = [m for r in results[:3] for g in r.games for m in g.moves]
    worst = max(m.ms for m in moves)
    print(f"\n{len(moves)} moves at 0.9x under load: worst {worst:.0f} ms "
          f"(limit {tc.move_ms} + grace {tc.grace_ms})")
    assert [g.termination for r in results[:3] for g in r.games] == ["normal"] * 3
    assert len(moves) == 90
    first = results[3].games[0]
    assert first.termination == "timeout" and first.culprit == 0
    assert "(limit 1000 ms + bank 0 ms + grace 100 ms)" in first.evidence
    elapsed = int(re.search(r"no answer in (\d+) ms", first.evidence).group(1))
    assert 1100 <= elapsed < 1500


def test_an_in_process_bot_over_the_deadline_gets_the_same_evidence():
    class Sleepy:
        def choose(self, observation, legal_actions):
            time.sleep(0.25)
            return legal_actions[0]

    tc = TimeControl(startup_ms=10_000, move_ms=100, grace_ms=50)
    result = run_match(spec_for([BotSpec("sleepy", factory=Sleepy), random_bot()], deals=1,
                                time=tc, max_failures=1))
    first = result.games[0]
    assert first.termination == "timeout" and first.culprit == 0
    assert re.search(r"no answer in 2\d\d ms \(limit 100 ms \+ bank 0 ms \+ grace 50 ms\)",
                     first.evidence)


def test_integral_scores_go_out_as_integers():
    line = encode(GameEnd(game_id="g", scores=[24.0, 2.5, 0.0], ranks=[1, 2, 3], termination="normal"))
    assert b'"scores":[24,2.5,0]' in line
    assert [type(s) for s in json.loads(line)["scores"]] == [int, float, int]


def test_sample_transcripts_state_every_time_field():
    folder = ROOT / "protocol" / "transcripts"
    for path in folder.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            message = json.loads(line).get("message", {})
            if message.get("type") == "hello":
                assert set(message["time"]) == set(TimeControl.model_fields), path.name
            if message.get("type") == "game_end":
                assert all(not isinstance(s, float) or not s.is_integer() for s in message["scores"])

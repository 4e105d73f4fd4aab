"""arena/2 between the runner and a bot, without a process: `ProcessPlayer` against a scripted
bot on pipes (tests/support/transport.py). Handshake, moves, stale and early answers, garbage,
crashes, line and input limits, timeouts, shutdown, and an illegal action through a match."""

from __future__ import annotations

import asyncio
import time

import pytest

from arena.cards import derive_seed
from arena.errors import (
    BadMessage,
    BotCrashed,
    BotInputStalled,
    BotResourceLimit,
    BotStartupError,
    BotTimeout,
)
from arena.match import GamePlan, MatchSpec, run_match
from arena.players.base import BotSpec, exchange
from arena.players.limits import Limits
from arena.players.process import STALE_NOTE
from arena.protocol import ActRequest, GameEnd, GameStart, TimeControl
from arena.scheduling import seatings
from tests.support.bots import FirstLegal
from tests.support.transport import Script, ScriptedPlayer, answer, first_legal

LEGAL = [{"type": "play", "card": "AS"}, {"type": "play", "card": "2H"}]


def request(request_id: int = 1, observation: bytes = b'{"hand":["AS","2H"]}') -> ActRequest:
    return ActRequest("g1", request_id, observation, LEGAL, 1000)


def run(coro):
    return asyncio.run(coro)


async def started(script: Script, **kw) -> ScriptedPlayer:
    player = ScriptedPlayer(script, **kw)
    await player.start()
    return player


# -- the handshake ---------------------------------------------------------------------------------
def test_handshake_sends_hello_and_takes_ready():
    script = Script().handshake()

    async def go():
        player = await started(script, name="alice")
        assert (player.ready.name, player.ready.version) == ("scripted", "1")
        await player.close()

    run(go())
    script.assert_done()
    hello = script.received[0]
    assert hello["type"] == "hello" and hello["protocol"] == "arena/2" and hello["bot"] == "alice"
    assert hello["time"]["startup_ms"] == 2000 and hello["time"]["move_ms"] == 1000
    assert script.types == ["hello", "bye"]


@pytest.mark.parametrize("reply, words", [
    ({"type": "action", "request_id": 1, "action": 0}, "expected ready, got action"),
    (b"hello yourself\n", "handshake failed"),
    (b'{"type": "ready", "name": 7}\n', "handshake failed"),
])
def test_a_wrong_answer_to_hello_is_a_startup_failure(reply, words):
    script = Script().expect("hello", reply)

    async def go():
        player = ScriptedPlayer(script)
        try:
            with pytest.raises(BotStartupError, match=words) as info:
                await player.start()
            assert info.value.evidence
        finally:
            await player.close()

    run(go())


def test_no_ready_within_startup_ms():
    script = Script().expect("hello").stall()

    async def go():
        player = ScriptedPlayer(script, time=TimeControl(startup_ms=50, move_ms=100))
        t0 = time.perf_counter()
        with pytest.raises(BotStartupError, match="no ready within 50 ms"):
            await player.start()
        assert time.perf_counter() - t0 < 1.0
        await player.close()

    run(go())
    script.assert_done()


def test_exiting_before_ready_gives_its_exit_code():
    script = Script().expect("hello").log("cannot load model\n").exit(3)

    async def go():
        player = ScriptedPlayer(script)
        with pytest.raises(BotStartupError) as info:
            await player.start()
        assert "exit code 3" in info.value.evidence
        assert "cannot load model" in player.log()
        await player.close()

    run(go())


# -- moves -----------------------------------------------------------------------------------------
def test_game_start_act_and_game_end_round_trip():
    script = (Script().handshake().expect("game_start").expect("act", first_legal)
              .expect("act", answer(LEGAL[1])).expect("game_end"))

    async def go():
        player = await started(script)
        await player.game_start(GameStart(game_id="g1", game="xeri", options={}, seat=0,
                                          players=["scripted", "other"]))
        assert await player.act(request(1), 1.0) == LEGAL[0]
        assert await player.act(request(2), 1.0) == LEGAL[1]
        await player.game_end(GameEnd(game_id="g1", scores=[3, 1], ranks=[1, 2],
                                      termination="normal"))
        await player.close()

    run(go())
    script.assert_done()
    assert script.types == ["hello", "game_start", "act", "act", "game_end", "bye"]
    act = script.received[2]
    assert act["observation"] == {"hand": ["AS", "2H"]} and act["legal_actions"] == LEGAL
    assert script.received[5] == {"type": "bye"}


def test_the_hot_path_exchange_reads_the_answer_in_select():
    script = Script().handshake().expect("act", first_legal, delay=0.01)

    async def go():
        player = await started(script)
        [result] = exchange([player], [request(1)], [1.0], time.perf_counter())
        await player.close()
        return result

    action, when = run(go())
    assert action == LEGAL[0] and when > 0
    script.assert_done()


def test_a_late_answer_to_an_earlier_request_is_ignored_and_logged():
    script = Script().handshake().expect("act", {"type": "action", "request_id": 1, "action": 0},
                                         answer(LEGAL[1]))

    async def go():
        player = await started(script)
        player._sent = 1  # request 1 was asked (and timed out) earlier in the game
        got = await player.act(request(2), 1.0)
        await player.close()
        return got, player.log()

    got, log = run(go())
    assert got == LEGAL[1]
    assert f"{STALE_NOTE} 1 while waiting for 2" in log


def test_an_answer_to_a_request_never_sent_is_a_bad_message():
    script = Script().handshake().expect("act", {"type": "action", "request_id": 9, "action": 0})

    async def go():
        player = await started(script)
        try:
            with pytest.raises(BadMessage, match="answer to request 9, which was never sent"):
                await player.act(request(1), 1.0)
        finally:
            await player.close()

    run(go())


def test_an_answer_sent_before_its_request_is_a_bad_message():
    # The bot guesses request 1's answer while the runner still sends game_start.
    script = (Script().handshake()
              .expect("game_start", {"type": "action", "request_id": 1, "action": LEGAL[0]})
              .expect("act"))

    async def go():
        player = await started(script)
        await player.game_start(GameStart(game_id="g1", game="xeri", options={}, seat=0,
                                          players=["a", "b"]))
        await asyncio.sleep(0.05)  # the guess is in the pipe before the request goes out
        try:
            with pytest.raises(BadMessage, match="sent before the request"):
                await player.act(request(1), 1.0)
        finally:
            await player.close()

    run(go())


@pytest.mark.parametrize("reply, words", [
    (b"not json\n", "not valid JSON"),
    (b"[1, 2]\n", "JSON object"),
    (b'{"type": "ready"}\n', "expected action, got ready"),
])
def test_garbage_instead_of_an_action_is_a_bad_message_with_evidence(reply, words):
    script = Script().handshake().expect("act", reply)

    async def go():
        player = await started(script)
        try:
            with pytest.raises(BadMessage, match=words) as info:
                await player.act(request(1), 1.0)
            assert info.value.evidence
        finally:
            await player.close()

    run(go())


def test_no_action_in_time_is_a_timeout():
    script = Script().handshake().expect("act", first_legal, delay=0.3)

    async def go():
        player = await started(script)
        t0 = time.perf_counter()
        try:
            with pytest.raises(BotTimeout, match="no action within 50 ms") as info:
                await player.act(request(1), 0.05)
            assert info.value.evidence == "request_id 1"
            assert time.perf_counter() - t0 < 0.25
        finally:
            await player.close()

    run(go())


def test_the_hot_path_times_out_too():
    script = Script().handshake().expect("act", first_legal, delay=0.3)

    async def go():
        player = await started(script)
        t0 = time.perf_counter()
        [result] = exchange([player], [request(1)], [0.05], t0)
        assert isinstance(result, BotTimeout) and "50 ms" in str(result)
        await player.close()

    run(go())


def test_a_crash_mid_game_is_a_crash_with_its_exit_status_and_last_words():
    script = Script().handshake().expect("act").log("Traceback: boom\n").exit(1)

    async def go():
        player = await started(script)
        try:
            with pytest.raises(BotCrashed, match="closed its output") as info:
                await player.act(request(1), 1.0)
            assert info.value.evidence == "exit code 1"
            assert "Traceback: boom" in player.log()
        finally:
            await player.close()

    run(go())


def test_a_crash_saying_memory_error_is_a_resource_limit():
    script = Script().handshake().expect("act").log("MemoryError\n").exit(1)

    async def go():
        player = await started(script)
        try:
            with pytest.raises(BotResourceLimit, match="memory"):
                await player.act(request(1), 1.0)
        finally:
            await player.close()

    run(go())


def test_a_line_over_the_limit_is_a_resource_limit():
    spec = BotSpec(name="long", command=("scripted",), workdir="/",
                   limits=Limits(line_bytes=1024))
    script = Script().handshake().expect("act", b"x" * 5000)

    async def go():
        player = await started(script, spec=spec)
        try:
            with pytest.raises(BotResourceLimit, match="stdout line over 1024 bytes") as info:
                await player.act(request(1), 1.0)
            assert "line over 1024 bytes" in info.value.evidence
        finally:
            await player.close()

    run(go())


def test_a_bot_that_stops_reading_its_input_stalls_as_a_timeout():
    script = Script().handshake().stall()
    big = b'{"blob":"' + b"x" * 300_000 + b'"}'  # more than a pipe holds

    async def go():
        player = await started(script)
        t0 = time.perf_counter()
        try:
            with pytest.raises(BotInputStalled, match="did not read act within 100 ms"):
                await player.act(request(1, big), 0.1)
            assert time.perf_counter() - t0 < 1.0
            assert "did not read its input" in player.log()
        finally:
            await player.close()

    run(go())
    script.assert_done()


def test_writing_to_a_bot_that_exited_is_a_crash():
    script = Script().handshake().sleep(0.02).exit(0)

    async def go():
        player = await started(script)
        await asyncio.sleep(0.1)
        try:
            with pytest.raises(BotCrashed):
                await player.act(request(1), 1.0)
        finally:
            await player.close()

    run(go())


def test_an_answer_written_just_before_exiting_still_counts():
    script = Script().handshake().expect("act", first_legal).exit(0)

    async def go():
        player = await started(script)
        try:
            return await player.act(request(1), 1.0)
        finally:
            await player.close()

    assert run(go()) == LEGAL[0]


# -- shutdown --------------------------------------------------------------------------------------
def test_close_says_bye_and_is_safe_twice():
    script = Script().handshake()

    async def go():
        player = await started(script)
        t0 = time.perf_counter()
        await player.close()
        await player.close()
        return time.perf_counter() - t0

    assert run(go()) < 0.5  # the bot left at bye: no SIGTERM round
    script.assert_done()
    assert script.types[-1] == "bye"


# -- through a match: the runner judges the action --------------------------------------------------
def test_an_illegal_action_forfeits_the_game_through_the_match_runner(monkeypatch):
    import arena.match

    scripts = []

    def make_player(spec, time):
        if spec.name != "scripted":
            return real(spec, time)
        script = (Script().handshake().expect("game_start")
                  .expect("act", answer({"type": "play", "card": "ZZ"})))
        scripts.append(script)
        return ScriptedPlayer(script, time=time, spec=spec)

    real = arena.match.make_player
    monkeypatch.setattr(arena.match, "make_player", make_player)
    bots = (BotSpec("scripted", command=("scripted",), workdir="/"),
            BotSpec("first", factory=FirstLegal))
    plans = tuple(GamePlan(f"m-d{d}-s{r}", i, d, r, derive_seed("test", d), seating)
                  for i, (d, r, seating) in enumerate(seatings(2, 1, True)))
    result = run_match(MatchSpec("m", "xeri", {}, bots, plans,
                                 TimeControl(startup_ms=2000, move_ms=1000), 1))
    first, second = result.games
    assert first.termination == "illegal_action" and first.seats[first.culprit] == "scripted"
    assert "ZZ" in first.evidence
    assert second.termination == "failure_budget"
    assert scripts and all(s.received[0]["type"] == "hello" for s in scripts)

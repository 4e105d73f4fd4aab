"""`arena bot check`: a clean bot passes (exit 0); each misbehaviour is named in plain words."""

from __future__ import annotations

import json
import re
import sys

import pytest
from typer.testing import CliRunner

from arena.checker import check_bot, combinations
from arena.cli import app
from arena.errors import ConfigError
from arena.players.base import BotSpec
from arena.protocol import TimeControl
from arena.registry import Registry
from tests.support.botfolders import make_bot
from tests.support.paths import BOTS, FAKES

runner = CliRunner()
FAST = TimeControl(startup_ms=2000, move_ms=300)


def test_a_clean_bot_passes_every_claimed_game_seat_count_and_option_set():
    # Its duration is a figure of bench/check_bench.py, not an assertion (load makes it vary).
    out = runner.invoke(app, ["bot", "check", str(BOTS / "random.toml")])
    assert out.exit_code == 0, out.output
    for game in ("xeri", "crossfire", "crosswalk", "battlefield_cribbage"):
        assert f"ok  {game} with 2 seats" in out.output
    assert "crosswalk with 4 seats" in out.output and "battlefield_cribbage with 3 seats" in out.output
    assert "move time: median" in out.output and "worst" in out.output
    assert "random: clean" in out.output
    assert "crossfire with 2 seats, open_rows=true" in out.output
    assert "battlefield_cribbage with 4 seats, team_mode=true" in out.output
    assert "none timed out" in out.output and "stderr: empty" in out.output


def test_combinations_follow_the_manifest_and_the_game_option():
    assert combinations(["xeri"]) == [("xeri", 2, {}), ("xeri", 4, {})]
    assert combinations([], "crosswalk") == [("crosswalk", 2, {}), ("crosswalk", 3, {}),
                                             ("crosswalk", 4, {})]
    # The options that change what a bot is sent: open rows; teams only where 4 seats allow them.
    assert combinations(["crossfire"]) == [("crossfire", 2, {}), ("crossfire", 2, {"open_rows": True})]
    assert ("battlefield_cribbage", 4, {"team_mode": True}) in combinations(["battlefield_cribbage"])
    assert ("battlefield_cribbage", 3, {"team_mode": True}) not in combinations([])
    with pytest.raises(ConfigError, match="does not list crossfire"):
        combinations(["xeri"], "crossfire")
    with pytest.raises(ConfigError, match="unknown game"):
        combinations([], "poker")


def _bad(mode: str, when: int = 3) -> BotSpec:
    return BotSpec(name="bad", command=(sys.executable, str(FAKES / "misbehaving_bot.py"), mode,
                                        str(when)), workdir=str(FAKES))


@pytest.mark.parametrize("mode, reason, words", [
    ("crash", "crash", "crash: the bot exited"),
    ("garbage", "bad_message", "bad message"),
    ("wrong_type", "bad_message", "expected action, got ready"),
    ("illegal", "illegal_action", "illegal action"),
    ("no_ready", "startup_failure", "handshake failed"),
    ("sleep", "timeout", "timeout: no `action` within the move time of 300 ms"),
])
def test_each_misbehaviour_is_a_problem_in_plain_words(mode, reason, words):
    report = check_bot(_bad(mode), ["xeri"], time=FAST, deals=1)
    assert not report.clean
    # Xeri is played by 2 seats and by 4 (partnerships): one problem at each.
    assert [p.reason for p in report.problems] == [reason, reason]
    problem = report.problems[0]
    assert words in f"{problem.words} {problem.detail}"


def test_the_cli_exits_1_with_the_problem_evidence_and_stderr_tail(tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "misbehaving_bot.py").write_text((FAKES / "misbehaving_bot.py").read_text())
    (folder / "bot.toml").write_text(
        'name = "bad"\nversion = "1"\ncommand = ["python3", "misbehaving_bot.py", "illegal", "2"]\n'
        'games = ["xeri"]\n')
    out = runner.invoke(app, ["bot", "check", str(folder), "--move-ms", "500"])
    assert out.exit_code == 1, out.output
    assert "illegal action" in out.output and "no_such_move" in out.output
    assert "PROBLEM  xeri with 2 seats" in out.output and "PROBLEM  xeri with 4 seats" in out.output
    assert "bad: 2 problem(s)" in out.output


def test_stderr_tail_is_reported_with_a_crash(tmp_path):
    folder = tmp_path / "crashy"
    folder.mkdir()
    (folder / "bot.py").write_text(
        "import sys, json\nfor line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'hello':\n"
        "        print(json.dumps({'type': 'ready', 'name': 'c', 'version': '1'}), flush=True)\n"
        "    elif m['type'] == 'act':\n"
        "        raise RuntimeError('my strategy broke [bold]here')\n")
    (folder / "bot.toml").write_text('name = "crashy"\ncommand = ["python3", "bot.py"]\n'
                                     'games = ["crossfire"]\n')
    out = runner.invoke(app, ["bot", "check", str(folder)])
    assert out.exit_code == 1
    assert "crash" in out.output and "RuntimeError: my strategy broke [bold]here" in out.output


def test_check_by_registry_name(tmp_path):
    db = tmp_path / "a.db"
    Registry(db).add(make_bot(tmp_path / "rb"))
    out = runner.invoke(app, ["bot", "check", "rb@1", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert "xeri with 2 seats" in out.output and "crossfire" not in out.output
    out = runner.invoke(app, ["bot", "check", "nobody", "--db", str(db)])
    assert out.exit_code == 2 and "no bot named" in out.output


def test_json_output_and_a_slow_move_warning():
    # 40 ms per move against a 70 ms limit: clean, but too close for comfort.
    slow = BotSpec(name="slow", command=(sys.executable, str(FAKES / "slow_random.py"), "1", "40",
                                         str(BOTS)), workdir=str(FAKES))
    report = check_bot(slow, ["crossfire"], time=TimeControl(startup_ms=5000, move_ms=70), deals=1)
    assert report.clean, report.problems
    assert report.warnings and "over 50% of the 70 ms limit" in report.warnings[0]
    out = runner.invoke(app, ["bot", "check", str(BOTS / "random.toml"), "--game", "xeri", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["clean"] is True and data["combos"][0]["game"] == "xeri" and data["moves"] > 0


def test_late_answers_to_old_requests_are_reported_though_no_game_is_lost():
    report = check_bot(_bad("stale_then_ok", when=1), ["xeri"], time=FAST, deals=1)
    assert not report.clean and report.problems
    assert {p.reason for p in report.problems} == {"stale_answer"}
    assert all(c.clean_games == c.games for c in report.combos)  # each stale answer was dropped
    assert "late answers" in report.problems[0].words


# -- option sets, hints, stderr, timeouts (issue 25) ----------------------------------------------


def _picky(mode: str) -> BotSpec:
    return BotSpec(name="picky", command=(sys.executable, str(FAKES / "picky_bot.py"), mode),
                   workdir=str(FAKES))


def _picky_folder(tmp_path, mode: str, games: str = '"crossfire"'):
    folder = tmp_path / mode
    folder.mkdir()
    (folder / "picky_bot.py").write_text((FAKES / "picky_bot.py").read_text())
    (folder / "bot.toml").write_text(
        f'name = "picky"\nversion = "1"\nlanguage = "python"\n'
        f'command = ["python3", "picky_bot.py", "{mode}"]\ngames = [{games}]\n')
    return folder


@pytest.mark.parametrize("mode, game, failing", [
    ("open_rows", "crossfire", ("crossfire", 2, {"open_rows": True})),
    ("teams", "battlefield_cribbage", ("battlefield_cribbage", 4, {"team_mode": True})),
    ("three_seats", "crosswalk", ("crosswalk", 3, {})),
])
def test_a_bot_failing_only_one_option_set_or_seat_count_fails_that_set(mode, game, failing):
    report = check_bot(_picky(mode), [game], time=FAST, deals=1)
    assert not report.clean
    assert [(p.game, p.seats, p.options, p.reason) for p in report.problems] == [(*failing, "crash")]
    for c in report.combos:
        broken = (c.game, c.seats, c.options) == failing
        assert (c.clean_games < c.games) == broken, c
    # The rest of the failing set's games were not played: the report counts them.
    assert report.not_played == next(c.games - 1 for c in report.combos
                                     if (c.game, c.seats, c.options) == failing)


def test_o_checks_one_option_set_and_a_bad_o_is_one_line(tmp_path):
    folder = _picky_folder(tmp_path, "open_rows")
    out = runner.invoke(app, ["bot", "check", str(folder), "-o", "open_rows=false"])
    assert out.exit_code == 0, out.output
    assert "ok  crossfire with 2 seats, open_rows=false: 4/4 games clean" in out.output
    assert "open_rows=true" not in out.output
    out = runner.invoke(app, ["bot", "check", str(folder), "-o", "open_rows=true"])
    assert out.exit_code == 1, out.output
    assert "PROBLEM  crossfire with 2 seats, open_rows=true" in out.output
    assert "crossfire with 2 seats:" not in out.output  # the defaults were not checked
    assert "games not played: 3, because the failure budget ran out" in out.output
    for bad, words in [("open_rows", "expected key=value"), ("no_such=1", "no game checked here"),
                       ("open_rows=maybe", "open_rows='maybe' is invalid")]:
        out = runner.invoke(app, ["bot", "check", str(folder), "-o", bad])
        assert out.exit_code == 2, out.output
        assert len(out.output.strip().splitlines()) == 1 and words in out.output, out.output


def test_a_clean_bot_writing_warnings_to_stderr_shows_them(tmp_path):
    out = runner.invoke(app, ["bot", "check", str(_picky_folder(tmp_path, "warnings", '"xeri"'))])
    assert out.exit_code == 0, out.output
    moves = int(re.search(r"over ([\d,]+) moves", out.output).group(1).replace(",", ""))
    # Every move logged the warning: counted, shown once, in the verdict too.
    assert f"{moves:,} line(s) look like warnings or errors" in out.output
    assert f"{moves:>5,}× Use of uninitialized value $best" in out.output
    assert re.search(r"stderr: [\d.,]+ KiB", out.output)
    assert "| chose {" in out.output  # its last lines
    assert f"picky: clean, {moves:,} warning line(s) in its stderr" in out.output


@pytest.mark.parametrize("mode, hint", [
    ("unflushed", "is stdout flushed after each line? A bot whose output sits in a buffer never "
                  "answers. Python: print(line, flush=True)"),
    ("stdout_log", "hint: stdout is for the protocol: log to stderr"),
    ("string_int", 'the nearest legal action is {"type": "play_slot", "slot": 0}: at action.slot: '
                   '"0" the string where the legal action has 0 the integer'),
])
def test_each_usual_mistake_gets_its_hint(tmp_path, mode, hint):
    out = runner.invoke(app, ["bot", "check", str(_picky_folder(tmp_path, mode)), "-o",
                              "open_rows=false", "--startup-ms", "1500"])
    assert out.exit_code == 1, out.output
    assert hint in out.output


def test_a_timed_out_move_counts_in_the_move_times(tmp_path):
    report = check_bot(_bad("sleep", when=2), ["xeri"], time=FAST, deals=1)
    # One timeout per seat count; the games after it in each match were not played.
    assert report.timeouts == 2
    assert report.not_played == sum(c.games - 1 for c in report.combos) > 0
    assert report.worst_ms >= FAST.move_ms
    folder = tmp_path / "sleepy"
    folder.mkdir()
    (folder / "misbehaving_bot.py").write_text((FAKES / "misbehaving_bot.py").read_text())
    (folder / "bot.toml").write_text(
        'name = "sleepy"\nversion = "1"\ncommand = ["python3", "misbehaving_bot.py", "sleep", "2"]\n'
        'games = ["crossfire"]\n')
    out = runner.invoke(app, ["bot", "check", str(folder), "--move-ms", "300", "-o", "open_rows=false"])
    assert out.exit_code == 1, out.output
    worst = float(re.search(r"worst ([\d,.]+) ms", out.output).group(1).replace(",", ""))
    assert worst >= 300 and "1 timed out" in out.output
    assert "no answer before the deadline" in out.output  # its hint

"""Hostile bots against real tournaments, `arena bot check` and a ladder, each in its own PID namespace.

A bot that stops reading its stdin, and answers built to break the runner while it judges them
(JSON nested 990 levels deep, huge numbers, bad UTF-8, NUL bytes, lone surrogates, answers sent
twice, early or split across the deadline). Each case: the run finishes, the bot's own failure is
recorded with its reason and evidence, the other games are normal, no bot process is left, and
the database passes its integrity check. See tests/support/hostile.py for the isolation.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.errors import BotInputStalled
from arena.players.base import UNFINISHED, BotSpec
from arena.players.process import ProcessPlayer, exchange
from arena.protocol import ActRequest, TimeControl
from tests.support.config import ladder_toml
from tests.support.hostile import ISOLATION, check_database, run_isolated
from tests.support.paths import FAKES

pytestmark = pytest.mark.skipif(bool(ISOLATION), reason=f"no PID namespace here: {ISOLATION}")

CONFIG = """
name = "hostile"
game = "xeri"
seed = 3
deals = 1
sandbox = "none"
{user}
[options]
rounds = 1
[time]
move_ms = {move_ms}
startup_ms = 10000
[[bots]]
name = "bad"
command = ["python", "{fakes}/hostile_bot.py", "{mode}", "{when}", "{mark}"]
workdir = "{fakes}"
[[bots]]
manifest = "{bots}/random.toml"
args = ["1"]
[[bots]]
manifest = "{bots}/random.toml"
name = "random-b"
args = ["2"]
"""
BOTS = FAKES.parent.parent / "bots"
runner = CliRunner()


# Bots run as the runner's own user: what every bot of a non-root runner gets, and the one case in
# which a bot may reopen the runner's end of its stdin pipe (a root runner's default, a uid per
# seat, refuses that: see test_a_bot_of_its_own_uid_cannot_fill_its_stdin).
AS_RUNNER = 'bot_user = "runner"\nallow_unconfined = true'
ROOT = os.geteuid() == 0


def tournament(tmp_path: Path, mode: str, when: int = 2, move_ms: int = 500, user: str = ""):
    """Run the round robin of `bad` and two random bots in a PID namespace; (games, bad's log, db)."""
    config = tmp_path / "t.toml"
    config.write_text(CONFIG.format(move_ms=move_ms, fakes=FAKES, bots=BOTS, mode=mode, when=when,
                                    user=user,
                                    mark=f"mark-{uuid.uuid4().hex}"))
    db = tmp_path / "arena.db"
    result = run_isolated(["run", str(config), "--db", str(db), "--executor", "serial", "-q"],
                          timeout=40, cwd=tmp_path)
    assert result.returncode == 0, result.output
    assert result.leftovers == [], result.leftovers
    conn = check_database(db)
    assert conn.execute("select status from tournaments").fetchone()[0] == "finished"
    cols = ("id", "termination", "culprit_bot", "detail", "evidence", "bots")
    games = [dict(zip(cols, r)) for r in conn.execute(
        "select g.id, g.termination, g.culprit_bot, g.detail, g.evidence, group_concat(s.bot) "
        "from games g join game_seats s on s.game_id = g.id group by g.id order by g.ordinal")]
    assert len(games) == 6  # every game of the round robin recorded
    others = [g for g in games if "bad" not in g["bots"].split(",")]
    assert others and all(g["termination"] == "normal" for g in others)
    log = "".join(r[0] for r in conn.execute("select stderr from bot_logs where bot = 'bad'"))
    conn.close()
    return [g for g in games if "bad" in g["bots"].split(",")], log, db


def assert_failures(bad: list[dict], reason: str, evidence: str | None = None,
                    detail: str | None = None) -> None:
    """Every game of the bad bot is its own forfeit for `reason`, evidence and detail matching."""
    assert len(bad) == 4
    for g in bad:
        assert g["termination"] == reason and g["culprit_bot"] == "bad", g
        assert len(g["evidence"]) < 400 and len(g["detail"]) < 400
        if evidence:
            assert re.search(evidence, g["evidence"]), g["evidence"]
        if detail:
            assert re.search(detail, g["detail"]), g["detail"]


def assert_cli_renders(db: Path, bad: list[dict]) -> None:
    """The commands that show a bot's failures and games print them, not a traceback."""
    for args in (["failures"], ["tournament", "show"], ["tournament", "export", "1"],
                 ["tournament", "export", "1", "-f", "csv"], ["replay", bad[0]["id"]]):
        out = runner.invoke(app, [*args, "--db", str(db)])
        assert out.exit_code == 0 and out.exception is None, (args, out.output)


# -- item 3: a bot that stops reading its stdin -----------------------------------------------------

STALLED = r"^did not read its input: [\d,]+ of [\d,]+ bytes of {what} taken in [\d,]+ ms$"


@pytest.mark.parametrize("mode, what", [
    ("fill_ready", "game_start"),  # full before its first game: game_start cannot be written
    ("fill_act", r"act \(request_id \d+\)"),  # full after its second answer: the next act
])
def test_a_bot_that_stops_reading_is_a_timeout(tmp_path, mode, what):
    bad, log, db = tournament(tmp_path, mode, user=AS_RUNNER)
    assert_failures(bad, "timeout", STALLED.format(what=what), r"did not read")
    assert "arena: did not read its input" in log  # the author sees it in the bot's log too
    assert "cannot reopen stdin" not in log
    assert_cli_renders(db, bad)


@pytest.mark.skipif(not ROOT, reason="a bot runs as a uid of its own only under a root runner")
def test_a_bot_of_its_own_uid_cannot_fill_its_stdin(tmp_path):
    # The pipe belongs to the runner's uid (mode 0600): the bot's reopen of /proc/self/fd/0 is
    # refused, so all it can do is stall, which is an ordinary move timeout.
    bad, log, db = tournament(tmp_path, "fill_act")
    assert "hostile: cannot reopen stdin for writing: [Errno 13] Permission denied" in log, log
    assert "hostile: stdin filled" not in log
    assert_failures(bad, "timeout", detail=r"^(?!did not read)")
    assert_cli_renders(db, bad)


def test_a_bot_that_stops_reading_before_game_end_only_fails_itself(tmp_path):
    # game_end cannot be written: the game stands as played, the bot is restarted for its next.
    bad, log, _ = tournament(tmp_path, "fill_last", user=AS_RUNNER)
    assert all(g["termination"] == "normal" for g in bad), bad
    assert re.search(STALLED.format(what="game_end").strip("^$"), log), log[-2000:]


def as_other_user(tmp_path: Path) -> int | None:
    """Under a root runner, the uid to run `bot check` as so that its bot shares the checker's
    user and may fill its stdin (tmp_path opened to it); None otherwise."""
    if not ROOT:
        return None
    for path in (tmp_path, *tmp_path.rglob("*")):
        path.chmod(0o777 if path.is_dir() else 0o666)
    return 65534


def hostile_folder(root: Path, mode: str, when: int = 2, *extra: str) -> Path:
    """A bot folder (manifest and script) of hostile_bot.py in `mode`."""
    folder = root / f"hostile-{mode}"
    folder.mkdir()
    shutil.copy(FAKES / "hostile_bot.py", folder / "hostile_bot.py")
    args = "".join(f', "{a}"' for a in (mode, str(when), *extra))
    (folder / "bot.toml").write_text(textwrap.dedent(f"""\
        name = "hostile"
        version = "1"
        command = ["python3", "hostile_bot.py"{args}]
        games = ["xeri"]
        """))
    return folder


def test_bot_check_reports_a_bot_that_stops_reading(tmp_path):
    folder = hostile_folder(tmp_path, "fill_act")
    result = run_isolated(["bot", "check", str(folder), "--sandbox", "none", "--move-ms", "500",
                           "--deals", "1"], timeout=30, cwd=tmp_path, as_uid=as_other_user(tmp_path))
    assert result.returncode == 1, result.output
    assert "did not read its input" in result.stdout and "Traceback" not in result.output
    assert result.leftovers == []


def test_bot_check_stops_promptly_on_sigterm(tmp_path):
    # A 60 s move time: the stalled write would hold the check for a minute per game. As pid 1
    # of its namespace (a container without an init) a process without a handler never sees
    # SIGTERM at all: the check ran on. It must stop its bots and exit at once, in one line.
    folder = hostile_folder(tmp_path, "fill_act", 1)
    result = run_isolated(["bot", "check", str(folder), "--sandbox", "none", "--move-ms", "60000",
                           "--deals", "1"], timeout=25, cwd=tmp_path,
                          signal_after=(3.0, signal.SIGTERM), as_uid=as_other_user(tmp_path))
    assert result.returncode == 128 + signal.SIGTERM, result.output
    assert result.seconds - result.signalled_at < 5
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "stopped by SIGTERM" in lines[0], result.stderr
    assert result.leftovers == []


def ladder_text(as_runner: bool) -> str:
    """The hostile ladder's config; `as_runner`: its bots run as the runner (AS_RUNNER's keys)."""
    user = {"bot_user": "runner", "allow_unconfined": True} if as_runner else {}
    return ladder_toml(in_flight=1, sandbox="none", **user,
                       time={"move_ms": 500, "startup_ms": 10000}, matchmaking={"placement_games": 2})


@pytest.mark.parametrize("mode, why", [
    ("fill_act", "did not read its input"),
    ("deep", "nested 991 levels deep"),
])
def test_a_ladder_rejects_the_version_and_goes_on(tmp_path, mode, why):
    db = tmp_path / "arena.db"
    for name, seed in (("r1", "1"), ("r2", "2")):
        folder = tmp_path / name
        folder.mkdir()
        for script in ("random_bot.py", "arenabot.py"):
            shutil.copy(BOTS / script, folder / script)
        (folder / "bot.toml").write_text(
            f'name = "{name}"\nversion = "1"\ncommand = ["python3", "random_bot.py", "{seed}"]\n'
            'games = ["xeri"]\n')
        assert runner.invoke(app, ["bot", "add", str(folder), "--db", str(db)]).exit_code == 0
    out = runner.invoke(app, ["bot", "add", str(hostile_folder(tmp_path, mode)), "--db", str(db)])
    assert out.exit_code == 0, out.output
    config = tmp_path / "ladder.toml"
    config.write_text(ladder_text(as_runner=mode.startswith("fill")))
    result = run_isolated(["ladder", "start", str(config), "--db", str(db), "--executor", "serial",
                           "--games", "4", "-q"], timeout=40, cwd=tmp_path)
    assert result.returncode == 0, result.output
    assert result.leftovers == []
    conn = check_database(db)
    entries = dict(conn.execute(
        "select key, status || ': ' || coalesce(reason, '') from ladder_entries"))
    conn.close()
    assert entries["hostile@1"].startswith("rejected") and why in entries["hostile@1"], entries
    assert all(v.startswith("active") for k, v in entries.items() if k != "hostile@1"), entries


# -- item 4: answers built to break the runner while it judges them ---------------------------------

@pytest.mark.parametrize("mode, reason, evidence, detail", [
    ("deep", "bad_message", r"^nested 991 levels deep: \{", r"nested 991 levels deep \(at most 64\)"),
    ("deep_object", "bad_message", r"^nested 991 levels deep: ", r"nested 991 levels deep"),
    # Under the bound: an illegal action, its detail cut to a few levels ("…"), not a deep repr.
    ("nested30", "illegal_action", r'"action": \[\[\[', r"^illegal action \[{13}…\]{13}$"),
    ("early", "bad_message", r'"request_id": \d+', r"sent before the request"),
])
def test_a_hostile_answer_is_the_bots_own_failure(tmp_path, mode, reason, evidence, detail):
    bad, _, db = tournament(tmp_path, mode)
    assert_failures(bad, reason, evidence, detail)
    assert_cli_renders(db, bad)


# These held before the deadline and depth work too (orjson refuses them, or they are plainly
# illegal or late): kept as guards, since each once sat next to a runner error.
@pytest.mark.parametrize("mode, reason, evidence, detail", [
    ("bigint", "bad_message", r"^\{\"type\": \"action\".*99999… \(\d+ chars\)$", r"not valid JSON"),
    ("int25", "illegal_action", r"9{25}", r"1e\+25"),
    ("inf", "bad_message", r"1e999", r"not valid JSON"),
    ("nan", "bad_message", r"NaN", r"not valid JSON"),
    ("bad_utf8", "bad_message", "\ufffd", r"not valid JSON.*UTF-8"),
    ("nul", "bad_message", "\x00", r"not valid JSON"),
    ("nul_escaped", "illegal_action", r"\\u0000", r"'\\x00'"),
    ("surrogate", "bad_message", r"\\ud800", r"not valid JSON.*surrogate"),
    ("split", "timeout", r"^no answer in \d+ ms", r"no action within the move time"),
])
def test_hostile_json_and_timing_stay_the_bots_own_failure(tmp_path, mode, reason, evidence,
                                                          detail):
    bad, _, db = tournament(tmp_path, mode)
    assert_failures(bad, reason, evidence, detail)
    assert_cli_renders(db, bad)


def test_an_answer_sent_twice_is_ignored_the_second_time(tmp_path):
    bad, log, _ = tournament(tmp_path, "twice")
    assert all(g["termination"] == "normal" for g in bad), bad
    assert "arena: ignored an answer to request" in log


def test_the_web_pages_render_a_hostile_bots_failures(tmp_path):
    bad, _, db = tournament(tmp_path, "nul")
    from starlette.testclient import TestClient

    from arena.web import create_app

    with TestClient(create_app(db), raise_server_exceptions=False) as client:
        for url in ("/tournaments/1", "/api/tournaments/1", f"/games/{bad[0]['id']}",
                    f"/api/games/{bad[0]['id']}", f"/api/games/{bad[0]['id']}/replay", "/bots/bad",
                    "/api/bots/bad"):
            assert client.get(url).status_code == 200, url


@pytest.mark.exclusive  # a move-time bound: no other test's load
def test_the_rest_of_a_long_act_line_is_bounded_by_the_move_time():
    # A bot that answers hello, then never reads: a 200 KB act line fills its pipe midway, and
    # the rest of the line counts against the move's time. (Harmless: no namespace needed.)
    script = ("import sys, time; sys.stdin.readline(); "
              "print('{\"type\": \"ready\"}', flush=True); time.sleep(60)")
    spec = BotSpec(name="deaf", command=(sys.executable, "-c", script), workdir=".")

    async def play():
        player = ProcessPlayer(spec, TimeControl(startup_ms=10_000, move_ms=300))
        await player.start()
        try:
            request = ActRequest("g", 1, b'{"pad": "' + b"x" * 200_000 + b'"}', [1], 300)
            started = time.perf_counter()
            assert exchange([player], [request], [0.4], started) == [UNFINISHED]
            assert 0 < request.skip < len(request.line())  # the pipe took part of the line
            with pytest.raises(BotInputStalled) as caught:
                await player.act(request, max(0.0, started + 0.4 - time.perf_counter()))
            assert time.perf_counter() - started < 1.0
            return caught.value
        finally:
            await player.close()

    error = asyncio.run(play())
    assert re.fullmatch(r"did not read its input: [\d,]+ of 200,\d{3} bytes of act \(request_id 1\) "
                        r"taken in \d+ ms", error.evidence), error.evidence
    taken = int(error.evidence.split()[5].replace(",", ""))
    assert 0 < taken < 200_000 and error.reason == "timeout"


"""The command line: commands call the library and turn domain errors into one-line exits."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from arena.cli import app
from tests.support.config import write_config
from tests.support.paths import ROOT

runner = CliRunner()


def test_run_then_ratings_and_failures(tmp_path):
    db = tmp_path / "a.db"
    config = write_config(tmp_path)
    out = runner.invoke(app, ["run", str(config), "--db", str(db), "--executor", "serial", "-q"])
    assert out.exit_code == 0, out.output
    assert "xeri_heuristic" in out.output and "12 games in 3 matches" in out.output
    out = runner.invoke(app, ["ratings", "--db", str(db), "--format", "json"])
    table = json.loads(out.output)
    rows = table["rows"]
    assert table["method"] == "bt" and [r["rank"] for r in rows] == [1, 2, 3]
    assert sum(r["games"] for r in rows) == 2 * 12
    out = runner.invoke(app, ["ratings", "--db", str(db), "--format", "csv"])
    assert out.output.splitlines()[0] == (
        "rank,bot,version,rating,lo,hi,minus,plus,lo_open,hi_open,games,wins,draws,losses,"
        "pair_points,score_pct,flag")
    out = runner.invoke(app, ["replay", "t1-st1-r1-m1-d0-s0", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert "48 moves" in out.output  # one Xeri round: 48 hand cards
    out = runner.invoke(app, ["replay", "no-such-game", "--db", str(db)])
    assert out.exit_code == 1 and "no game with id 'no-such-game'" in out.output


def test_bad_config_is_a_one_line_error_with_exit_code_2(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text('game = "xeri"\nseats = 9\n')
    out = runner.invoke(app, ["run", str(config), "--db", str(tmp_path / "a.db"), "--executor", "serial"])
    assert out.exit_code == 2
    assert "seats" in out.output and "9" in out.output


def test_missing_database_and_tournament(tmp_path):
    out = runner.invoke(app, ["ratings", "--db", str(tmp_path / "none.db")])
    assert out.exit_code == 2 and "no database" in out.output


def test_games_lists_every_game_with_options():
    out = runner.invoke(app, ["games"])
    assert out.exit_code == 0
    for name in ("xeri", "crossfire", "crosswalk", "battlefield_cribbage"):
        assert name in out.output
    assert "jack_xeri" in out.output and "any_jack_20" in out.output


def test_conformance_command_checks_every_case_of_a_game():
    out = runner.invoke(app, ["conformance", "crossfire", "--games", "1"])
    assert out.exit_code == 0, out.output
    from arena.conformance import cases

    assert f"{len(cases(['crossfire']))} cases passed" in out.output
    out = runner.invoke(app, ["conformance", "nope"])
    assert out.exit_code == 2 and "unknown game 'nope'" in out.output


def test_conformance_command_reports_a_broken_game(monkeypatch):
    from arena.games.crossfire import CrossfireState

    # A leak: every observation shows the whole stock.
    original = CrossfireState.observation
    monkeypatch.setattr(CrossfireState, "observation",
                        lambda self, seat: {**original(self, seat), "peek": sorted(self.hidden_from(seat))})
    out = runner.invoke(app, ["conformance", "crossfire", "--games", "1"])
    assert out.exit_code == 1 and "leak" in out.output.lower()


def test_unreachable_ray_address_fails_fast_with_one_line(tmp_path):
    import socket

    with socket.socket() as s:  # a free port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = runner.invoke(app, ["run", str(write_config(tmp_path)), "--db", str(tmp_path / "a.db"),
                              "--ray-address", f"127.0.0.1:{port}"])
    assert out.exit_code == 2
    assert f"cannot join Ray at 127.0.0.1:{port}: nothing answers there" in out.output


def test_quickstart_runs_through_the_console_script(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = ROOT
    arena = Path(sys.executable).parent / "arena"
    cmd = [str(arena)] if arena.exists() else [sys.executable, "-m", "arena"]
    proc = subprocess.run(
        [*cmd, "run", str(root / "configs" / "quickstart.toml"), "--db", str(tmp_path / "q.db"),
         "--executor", "serial", "-q"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "24 games in 3 matches" in proc.stdout and "xeri_heuristic" in proc.stdout


def test_run_says_executor_and_sandbox_on_its_first_line(tmp_path):
    from arena.players.launch import sandbox_status

    out = runner.invoke(app, ["run", str(write_config(tmp_path)), "--db", str(tmp_path / "a.db"), "-q"])
    assert out.exit_code == 0, out.output
    first = out.output.splitlines()[0]
    assert first.startswith("executor: serial (auto: 12 games planned, below 500); sandbox: ")
    assert f"sandbox: {sandbox_status()[0]} (auto: " in first


def _main_after_ray(args: list[str]) -> subprocess.CompletedProcess:
    """`arena ARGS` through the console script's main(), in a process that has imported Ray."""
    code = ("import sys, ray\n"
            "from arena.cli import main\n"
            f"sys.argv = ['arena', *{args!r}]\n"
            "main()\n")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_after_ray_the_exit_status_and_output_are_the_commands_own():
    # Past Ray, main() leaves by os._exit (Ray's core worker can crash in the interpreter's
    # finalization): the status, and everything printed, must still be what the command gave.
    listed = _main_after_ray(["games"])
    assert listed.returncode == 0, listed.stderr
    assert "xeri" in listed.stdout and "crossfire" in listed.stdout
    refused = _main_after_ray(["ratings", "--db", "/nonexistent/folder/x.db"])
    assert refused.returncode not in (0, -11) and refused.stderr.strip(), refused
    assert "Traceback" not in refused.stderr

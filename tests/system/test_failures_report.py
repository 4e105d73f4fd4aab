"""`arena failures` with the culprit's stderr tail, and `arena run`'s line for a bot that never started.

Real tournaments of real subprocess bots, through the command line.
"""

from __future__ import annotations

import csv
import io
import json
import socket
import sys
import textwrap
from pathlib import Path

from typer.testing import CliRunner

from arena.cli import app
from arena.cli._app import console
from arena.reports import never_started, stderr_tail
from arena.store import Store
from arena.store.queries import bot_starts
from tests.support.paths import BOTS

runner = CliRunner()

# A bot that writes hostile text to stderr and then crashes at its second move: a formula, rich
# markup, a terminal escape, and a "Cannot find module" line like the one an author must find.
CRASHER = '''
import json, sys
for i in range(20):
    print(f"noise {i}", file=sys.stderr)
print("=HYPERLINK(\\"http://x\\")", file=sys.stderr)
print("[red]not markup[/red] \\x1b[2J", file=sys.stderr)
print("Error: Cannot find module 'left-pad'", file=sys.stderr)
sys.stderr.flush()
acts = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "ready"}), flush=True)
    elif msg["type"] == "act":
        acts += 1
        if acts == 2:
            sys.exit(1)
        print(json.dumps({"type": "action", "request_id": msg["request_id"],
                          "action": msg["legal_actions"][0]}), flush=True)
'''


def write(tmp_path: Path, bots: str) -> Path:
    """A one-deal Xeri round robin of the given [[bots]] tables."""
    tmp_path.chmod(0o755)  # the bots' folder: a root runner's bots run as uids of their own
    path = tmp_path / "t.toml"
    path.write_text(textwrap.dedent('''
        name = "t"
        game = "xeri"
        deals = 1
        max_failures = 1
        [options]
        rounds = 1
        [time]
        move_ms = 5000
        startup_ms = 5000
    ''') + textwrap.dedent(bots))
    return path


def run(path: Path, db: Path):
    """`arena run` serially, quietly."""
    return runner.invoke(app, ["run", str(path), "--db", str(db), "--executor", "serial", "-q"])


def test_failures_show_the_culprits_stderr_tail_in_every_format(tmp_path):
    (tmp_path / "crasher.py").write_text(CRASHER)
    path = write(tmp_path, f'''
        [[bots]]
        name = "crasher"
        command = ["{sys.executable}", "crasher.py"]
        [[bots]]
        manifest = "{BOTS}/random.toml"
    ''')
    db = tmp_path / "a.db"
    out = run(path, db)
    assert out.exit_code == 0, out.output
    assert "never started" not in out.output

    out = runner.invoke(app, ["failures", "--db", str(db), "--format", "json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    assert rows and {r["reason"] for r in rows} <= {"crash", "failure_budget"}
    crash = next(r for r in rows if r["reason"] == "crash")
    assert crash["bot"] == "crasher" and crash["evidence"] == "exit code 1"
    tail = crash["stderr_tail"]
    assert tail.endswith("Error: Cannot find module 'left-pad'")
    assert len(tail.splitlines()) == 5 and "noise 18" in tail and "noise 17" not in tail

    out = runner.invoke(app, ["failures", "--db", str(db), "--format", "csv"])
    table = list(csv.reader(io.StringIO(out.output)))
    assert table[0] == ["game", "match", "bot", "reason", "detail", "evidence", "stderr_tail", "hint"]
    cell = table[1 + rows.index(crash)][6]
    # Only a cell that starts with = + - @ is run as a formula; this one starts with "noise 18".
    assert cell.startswith("noise 18") and '=HYPERLINK("http://x")' in cell

    saved = console._width
    console.width = 400  # one line per row, so the checks below see whole cells
    try:
        out = runner.invoke(app, ["failures", "--db", str(db)])
    finally:
        console._width = saved
    assert out.exit_code == 0
    assert "Cannot find module 'left-pad'" in out.output
    assert "[red]not markup[/red]" in out.output  # shown as text, not as markup
    assert "\x1b[2J" not in out.output and "\\x1b[2J" in out.output


def with_two_random_bots(tmp_path: Path, name: str, command: list[str]) -> Path:
    """A config of the bot `name` running `command` against two random bots."""
    return write(tmp_path, f'''
        [[bots]]
        name = "{name}"
        command = {json.dumps(command)}
        [[bots]]
        manifest = "{BOTS}/random.toml"
        [[bots]]
        manifest = "{BOTS}/random.toml"
        name = "random-b"
        args = ["2"]
    ''')


def test_a_csv_cell_that_starts_with_a_formula_is_neutralised(tmp_path):
    # A bot whose stderr is only a formula: its tail starts with "=".
    (tmp_path / "formula.py").write_text(
        'import sys\nprint("=1+1", file=sys.stderr)\nsys.stderr.flush()\nsys.exit(2)\n')
    path = with_two_random_bots(tmp_path, "formula", [sys.executable, "formula.py"])
    db = tmp_path / "a.db"
    ran = run(path, db)
    assert ran.exit_code == 1, ran.output  # not played as planned: one bot never started
    out = runner.invoke(app, ["failures", "--db", str(db), "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(out.output)))
    assert rows and all(r["bot"] == "formula" for r in rows)
    first = rows[0]
    assert first["reason"] == "startup_failure" and first["stderr_tail"] == "'=1+1"
    # Exited before `ready`: it never started, and the run said so in one line.
    lines = [ln for ln in ran.output.splitlines() if ln.startswith("bot ")]
    assert lines == ["bot 'formula' never started: handshake failed: the bot closed its output or "
                     "exited (exit code 2)"]


def test_a_missing_command_is_refused_before_anything_is_written(tmp_path):
    path = with_two_random_bots(tmp_path, "ghost", ["/nonexistent/ghost-bot"])
    db = tmp_path / "a.db"
    out = run(path, db)
    assert out.exit_code == 2 and not db.exists()
    assert out.output.strip().splitlines() == [
        f"error: bot 'ghost': /nonexistent/ghost-bot is not installed on host {socket.gethostname()}"]


def test_a_bot_that_never_started_is_reported_once_and_the_run_exits_1(tmp_path):
    (tmp_path / "quits.py").write_text("import sys\nsys.exit(3)\n")
    path = with_two_random_bots(tmp_path, "quits", [sys.executable, "quits.py"])
    db = tmp_path / "a.db"
    out = run(path, db)
    assert out.exit_code == 1, out.output
    lines = [ln for ln in out.output.splitlines() if ln.startswith("bot ")]
    assert len(lines) == 1 and lines[0].startswith("bot 'quits' never started: handshake failed")
    last = out.output.strip().splitlines()[-1]
    assert last.endswith("could not be played as planned: 1 of 3 bots never started; their games "
                         "are all forfeits")
    store = Store(db)
    (row,) = never_started(bot_starts(store, store.tournament()["id"]))
    assert row["bot"] == "quits" and row["games"] == 4


def test_a_run_where_no_bot_starts_exits_1(tmp_path):
    (tmp_path / "quits.py").write_text("import sys\nsys.exit(3)\n")
    path = write(tmp_path, f'''
        [[bots]]
        name = "ghost-a"
        command = ["{sys.executable}", "quits.py"]
        [[bots]]
        name = "ghost-b"
        command = ["{sys.executable}", "quits.py", "b"]
    ''')
    out = run(path, tmp_path / "a.db")
    assert out.exit_code == 1
    assert sum(ln.startswith("bot ") for ln in out.output.splitlines()) == 2
    assert "could not be played as planned: no bot ever started" in out.output


def test_a_bot_that_ran_once_is_not_reported(tmp_path):
    # Crashes mid-game (so it ran), then forfeits by budget: not a bot that never started.
    (tmp_path / "crasher.py").write_text(CRASHER)
    path = write(tmp_path, f'''
        [[bots]]
        name = "crasher"
        command = ["{sys.executable}", "crasher.py"]
        [[bots]]
        manifest = "{BOTS}/random.toml"
    ''')
    db = tmp_path / "a.db"
    assert run(path, db).exit_code == 0
    store = Store(db)
    assert never_started(bot_starts(store, store.tournament()["id"])) == []


def test_stderr_tail_is_bounded():
    assert stderr_tail("") == ""
    assert stderr_tail("a\nb\nc\nd\ne\nf\ng\n") == "c\nd\ne\nf\ng"
    long = stderr_tail("x" * 10_000)
    assert len(long) == 501 and long.startswith("…")

"""`arena run`: play (or resume) a tournament from its config file."""

from __future__ import annotations

import shlex
from datetime import timedelta
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                           TimeElapsedColumn)
from rich.text import Text

from arena.cli._app import DB_OPTION, app, console, err_console, fail
from arena.errors import ArenaError, MatchErrorLimit
from arena.tournament import Listener


class ExecutorKind(str, Enum):
    """Where matches run."""

    auto = "auto"
    ray = "ray"
    serial = "serial"


@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="Tournament config (TOML).")],
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    executor: Annotated[ExecutorKind, typer.Option(help="Where matches run (auto: serial for small work or one CPU, else Ray).")] = ExecutorKind.auto,
    ray_address: Annotated[Optional[str], typer.Option(help="Join this Ray cluster instead of starting a local one.")] = None,
    workers: Annotated[Optional[int], typer.Option(min=1, help="CPUs of the local Ray instance.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue the unfinished tournament of this config.")] = False,
    new: Annotated[bool, typer.Option("--new", help="Start a second tournament of a config the database holds one of already (a deliberate re-run).")] = False,
    pin: Annotated[Optional[bool], typer.Option("--pin/--no-pin", help="Pin each match and its bots to one core (default: the config's pin_cpu).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run (or resume) a tournament from a config file and print its standings and ratings.

    A config the database already holds a tournament of is refused: --resume goes on with it,
    --new starts a second one. Ends with one line per bot that never started, then (exit 1) a
    last line saying the tournament could not be played as planned.
    """
    from arena.tournament import run_config

    listener = ProgressListener(quiet)
    resume_hint = _resume_command(config, db, executor, ray_address, workers, pin)
    try:
        with listener.progress:
            outcome = run_config(config, db, executor.value, ray_address, workers, resume, pin,
                                 listener, new=new)
    except KeyboardInterrupt:
        err_console.print(f"interrupted: finished matches are saved; resume with `{resume_hint}`",
                          soft_wrap=True, highlight=False, markup=False)
        raise typer.Exit(130)
    except MatchErrorLimit as exc:
        err_console.print(f"error: {exc}", soft_wrap=True, highlight=False, markup=False)
        err_console.print(f"the tournament stopped; after fixing the cause resume with `{resume_hint}`",
                          soft_wrap=True, highlight=False, markup=False)
        raise typer.Exit(1)
    except ArenaError as exc:
        fail(exc)
    console.print(
        f"tournament {outcome.tournament_id}: {outcome.games_played} games in "
        f"{outcome.matches_played} matches"
        + (f" ({outcome.matches_skipped} matches already recorded)" if outcome.matches_skipped else "")
        + (f"; {outcome.errors} runner errors retried" if outcome.errors else "")
        + f"; database {db}", highlight=False, markup=False,
    )
    from arena.cli.tournament import print_summary

    print_summary(db, outcome.tournament_id)
    _report_never_started(db, outcome.tournament_id)


def _report_never_started(db: Path, tournament_id: int) -> None:
    """One line per bot that never started (besides its forfeits), then exit 1.

    Its standings are recorded, but every game of such a bot is a forfeit: the tournament was not
    played as planned, and a script or a CI job running it must see that.
    """
    from arena import reports
    from arena.cli._app import open_store

    store = open_store(db)
    dead = reports.never_started(store, tournament_id)
    for row in dead:
        why = row["detail"]
        if row["evidence"] and row["evidence"] not in why:
            why += f" ({row['evidence']})"
        err_console.print(f"bot {row['bot']!r} never started: {why}",
                          soft_wrap=True, highlight=False, markup=False)
    seated = store.db.execute(
        "select count(distinct s.bot) from game_seats s join games g on g.id = s.game_id "
        "where g.tournament_id = ?", [tournament_id]).fetchone()[0]
    if dead:
        which = ("no bot ever started" if len(dead) == seated
                 else f"{len(dead)} of {seated} bots never started; their games are all forfeits")
        err_console.print(f"tournament {tournament_id} could not be played as planned: {which}",
                          soft_wrap=True, highlight=False, markup=False)
        raise typer.Exit(1)


class ProgressListener(Listener):
    """Shows the executor choice, then a progress bar of games with the current stage and round."""

    def __init__(self, quiet: bool):
        self.progress = Progress(
            TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
            TextColumn("games"), TimeElapsedColumn(), EtaColumn(),
            console=err_console, disable=quiet,
        )
        self.task = None
        self.name = ""

    def executor(self, name: str, reason: str, sandbox: str = "", sandbox_reason: str = "",
                 enforced: str = "") -> None:
        """Say which executor and sandbox the run uses and why, and what bounds each bot (the
        run's first line)."""
        line = f"executor: {name} ({reason})"
        if sandbox:
            line += f"; sandbox: {sandbox} ({sandbox_reason})"
        if enforced:
            line += f"; {enforced}"
        console.print(line, highlight=False, markup=False, soft_wrap=True)

    def started(self, tournament_id: int, planned_games: int, done_games: int) -> None:
        """Start the bar at the games already recorded."""
        self.name = f"tournament {tournament_id}"
        self.task = self.progress.add_task(self.name, total=max(planned_games, done_games),
                                           completed=done_games)
        self.progress.tasks[0].fields["start_completed"] = done_games

    def round_started(self, stage, round_no: int) -> None:
        """Show the stage and round being played."""
        where = f"{stage.config.name} " if stage.number > 1 or stage.config.name != stage.config.game else ""
        self.progress.update(self.task, description=(
            f"{self.name} {where}round {round_no}/{stage.total_rounds}"))

    def match_done(self, result) -> None:
        """Advance by the match's games."""
        self.progress.advance(self.task, len(result.games))

    def notice(self, message: str) -> None:
        """Print a line the organiser should read (a new version recorded, a mismatched ready, a
        node quarantined)."""
        self.progress.console.print(message, highlight=False, markup=False, soft_wrap=True)

    def match_failed(self, failure, attempt: int) -> None:
        """Report a runner error above the bar."""
        where = f" on {failure.host}" if failure.host else ""
        self.progress.console.print(
            f"match {failure.match_id}: runner error ({failure.kind}){where}, attempt {attempt}; "
            f"retrying", highlight=False, markup=False)


class EtaColumn(ProgressColumn):
    """Time left from this run's own pace (games done since it started), not rich's short window."""

    def render(self, task) -> Text:
        """The estimate, or -:--:-- before the first match finishes."""
        start = task.fields.get("start_completed", 0)
        done = task.completed - start
        elapsed = task.elapsed or 0.0
        if task.finished:
            return Text("done", style="progress.remaining")
        if done <= 0 or not elapsed or task.total is None:
            return Text("eta -:--:--", style="progress.remaining")
        left = max(0.0, task.total - task.completed) * elapsed / done
        return Text(f"eta {timedelta(seconds=max(1, round(left)))}", style="progress.remaining")


def _resume_command(config: Path, db: Path, executor, ray_address, workers, pin) -> str:
    """The command that resumes this run with the same options."""
    parts = ["arena", "run", str(config), "--db", str(db), "--resume", "--executor", executor.value]
    if ray_address:
        parts += ["--ray-address", ray_address]
    if workers:
        parts += ["--workers", str(workers)]
    if pin is not None:
        parts.append("--pin" if pin else "--no-pin")
    return shlex.join(parts)

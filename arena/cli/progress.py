"""The progress bar of `arena run`: a tournament listener that draws it.

Its own module because it subclasses the driver's `Listener`: `arena.cli.run` imports it only
when a run starts, so importing the CLI does not import the driver.
"""

from __future__ import annotations

from datetime import timedelta

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from arena.cli._app import console, err_console
from arena.session import Listener


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
        # Wrapped between words at the terminal's width: it is long, and read at 80 columns.
        console.print(line, highlight=False, markup=False)

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

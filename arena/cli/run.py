"""`arena run`: play (or resume) a tournament from its config file."""

from __future__ import annotations

import shlex
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from arena.cli._app import DB_OPTION, app, console, err_console, fail
from arena.cli.tables import WIDE_OPTION
from arena.errors import ArenaError, MatchErrorLimit


class ExecutorKind(str, Enum):
    """Where matches run."""

    auto = "auto"
    ray = "ray"
    serial = "serial"


@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="Tournament config (TOML).")],
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    executor: Annotated[ExecutorKind, typer.Option(
            help="Where matches run (auto: serial for small work or one CPU, else Ray).")
    ] = ExecutorKind.auto,
    ray_address: Annotated[Optional[str], typer.Option(
        help="Join this Ray cluster instead of starting a local one.")] = None,
    workers: Annotated[Optional[int], typer.Option(min=1, help="CPUs of the local Ray instance.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue the unfinished tournament of this config.")] = False,
    new: Annotated[bool, typer.Option("--new",
            help="Start a second tournament of a config the database holds one of already "
                 "(a deliberate re-run).")] = False,
    pin: Annotated[Optional[bool], typer.Option("--pin/--no-pin",
            help="Pin each match and its bots to one core (default: the config's pin_cpu).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    wide: Annotated[bool, WIDE_OPTION] = False,
) -> None:
    """Run (or resume) a tournament from a config file and print its standings and ratings.

    A config the database already holds a tournament of is refused: --resume goes on with it,
    --new starts a second one. Ends with one line per bot that never started, then (exit 1) a
    last line saying the tournament could not be played as planned.
    """
    # The driver (and with it the executors and the registry) is imported only when a run starts:
    # the read-only commands registered beside this one stay light.
    from arena.cli.progress import ProgressListener
    from arena.tournament import run_config

    listener = ProgressListener(quiet)
    resume_hint = _resume_command(config, db, executor, ray_address, workers, pin)
    try:
        with listener.progress:
            outcome = run_config(config, db, executor=executor.value, ray_address=ray_address,
                                 workers=workers, resume=resume, pin=pin, listener=listener,
                                 new=new)
    except KeyboardInterrupt:
        err_console.print(f"interrupted: finished matches are saved; resume with `{resume_hint}`",
                          soft_wrap=True, highlight=False, markup=False)
        raise typer.Exit(130) from None
    except MatchErrorLimit as exc:
        err_console.print(f"error: {exc}", soft_wrap=True, highlight=False, markup=False)
        err_console.print(f"the tournament stopped; after fixing the cause resume with `{resume_hint}`",
                          soft_wrap=True, highlight=False, markup=False)
        raise typer.Exit(1) from None
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
    from arena.store.queries import bot_starts

    starts = bot_starts(open_store(db), tournament_id)
    dead = reports.never_started(starts)
    for row in dead:
        why = row["detail"]
        if row["evidence"] and row["evidence"] not in why:
            why += f" ({row['evidence']})"
        err_console.print(f"bot {row['bot']!r} never started: {why}",
                          soft_wrap=True, highlight=False, markup=False)
    seated = len(starts)  # one row per bot seated in the tournament
    if dead:
        which = ("no bot ever started" if len(dead) == seated
                 else f"{len(dead)} of {seated} bots never started; their games are all forfeits")
        err_console.print(f"tournament {tournament_id} could not be played as planned: {which}",
                          soft_wrap=True, highlight=False, markup=False)
        raise typer.Exit(1)


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

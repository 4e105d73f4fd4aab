"""`arena ladder start|resume|status|stop`: a continuous competition of registry bots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from arena.cli._app import (
    DB_OPTION,
    OutputFormat,
    app,
    console,
    err_console,
    fail,
    open_store,
    print_ratings,
    printable,
)
from arena.cli.run import ExecutorKind
from arena.cli.tables import WIDE_OPTION
from arena.errors import ArenaError, MatchErrorLimit

ladder_app = typer.Typer(help="A ladder: registry bots play on and on; new versions join as they are added.",
                         no_args_is_help=True)
app.add_typer(ladder_app, name="ladder")

CONFIG_ARG = typer.Argument(help="Ladder config (TOML).")
LADDER_ARG = typer.Argument(help="Ladder name or id (default: the newest ladder).")
# The options `ladder start` and `ladder resume` share.
RAY_OPTION = typer.Option(help="Join this Ray cluster.")
WORKERS_OPTION = typer.Option(min=1, help="CPUs of the local Ray instance.")
GAMES_OPTION = typer.Option(min=1, help="Stop after this many games (this run).")
MINUTES_OPTION = typer.Option(min=0.01, help="Stop after this many minutes.")
QUIET_OPTION = typer.Option("--quiet", "-q")


def _printer(quiet: bool):
    """A listener printing entries and a line every 10 tables (no bar: a ladder has no end)."""
    from arena.session import Listener  # the drivers' imports are heavy: only when one runs

    class Printer(Listener):
        def ladder_started(self, tournament_id: int, resumed: bool, tables: int) -> None:
            if not quiet:
                word = f"resumed after {tables} tables" if resumed else "started"
                console.print(f"ladder {tournament_id} {word}", highlight=False, markup=False)

        def entered(self, key: str, status: str, reason: str) -> None:
            if not quiet:
                text = f"entered: {key}" if status == "active" else f"rejected: {key}: {reason}"
                console.print(text, highlight=False, markup=False)

        def table_done(self, number: int, result) -> None:
            if not quiet and (number + 1) % 10 == 0:
                console.print(f"{number + 1} tables", highlight=False, markup=False)

        def notice(self, text: str) -> None:
            console.print(text, highlight=False, markup=False, soft_wrap=True)

    return Printer()


def _go(config: Path, db: Path, resume: bool, executor: ExecutorKind, ray_address: str | None,
        workers: int | None, games: int | None, minutes: float | None, quiet: bool) -> None:
    from arena.ladder import run_ladder

    listener = _printer(quiet)
    hint = f"arena ladder resume {config} --db {db}"
    try:
        run = run_ladder(config, db, executor=executor.value, ray_address=ray_address,
                         workers=workers, resume=resume, games=games, minutes=minutes,
                         listener=listener)
    except KeyboardInterrupt:
        err_console.print(f"interrupted: finished tables are saved; continue with `{hint}`",
                          soft_wrap=True, highlight=False, markup=False)
        raise typer.Exit(130) from None
    except MatchErrorLimit as exc:
        err_console.print(f"error: {exc}", soft_wrap=True, highlight=False, markup=False)
        raise typer.Exit(1) from None
    except ArenaError as exc:
        fail(exc)
    console.print(f"ladder {run.tournament_id} {run.status}: {run.tables_played} tables, "
                  f"{run.games_played} games this run; continue with `{hint}`",
                  highlight=False, markup=False)


@ladder_app.command()
def start(
    config: Annotated[Path, CONFIG_ARG],
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    executor: Annotated[ExecutorKind, typer.Option(
            help="Where matches run (auto: Ray unless bounded to few games).")] = ExecutorKind.auto,
    ray_address: Annotated[Optional[str], RAY_OPTION] = None,
    workers: Annotated[Optional[int], WORKERS_OPTION] = None,
    games: Annotated[Optional[int], GAMES_OPTION] = None,
    minutes: Annotated[Optional[float], MINUTES_OPTION] = None,
    quiet: Annotated[bool, QUIET_OPTION] = False,
) -> None:
    """Start a ladder: it plays until Ctrl-C, `arena ladder stop`, --games or --minutes."""
    _go(config, db, False, executor, ray_address, workers, games, minutes, quiet)


@ladder_app.command()
def resume(
    config: Annotated[Path, CONFIG_ARG],
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    executor: Annotated[ExecutorKind, typer.Option(help="Where matches run.")] = ExecutorKind.auto,
    ray_address: Annotated[Optional[str], RAY_OPTION] = None,
    workers: Annotated[Optional[int], WORKERS_OPTION] = None,
    games: Annotated[Optional[int], GAMES_OPTION] = None,
    minutes: Annotated[Optional[float], MINUTES_OPTION] = None,
    quiet: Annotated[bool, QUIET_OPTION] = False,
) -> None:
    """Continue a ladder exactly where it stopped (tables in flight are played again)."""
    _go(config, db, True, executor, ray_address, workers, games, minutes, quiet)


@ladder_app.command()
def status(
    ladder: Annotated[Optional[str], LADDER_ARG] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
    wide: Annotated[bool, WIDE_OPTION] = False,
) -> None:
    """Games played, in flight, games per minute, bots, and each game's top 10 with intervals."""
    from arena.ladder_view import LadderView, ladder_status

    try:
        info = ladder_status(LadderView.load(open_store(db), ladder))
    except ArenaError as exc:
        fail(exc)
    if format is not OutputFormat.table:
        print(json.dumps(info, indent=2, ensure_ascii=False))
        return
    driver = info["driver"]
    running = (f"driver pid {driver['pid']} on {printable(driver['host'])}"
               if driver and driver["alive"] else "no driver running")
    console.print(
        f"ladder {info['id']} {printable(info['name'])}: {info['status']} ({running}); "
        f"{info['tables_played']} tables, {info['games_played']} games, {info['in_flight']} in "
        f"flight; {info['games_last_minute']} games in the last minute; {info['bots_active']} bots "
        f"active, {info['bots_retired']} retired, {len(info['bots_rejected'])} rejected",
        highlight=False)
    for r in info["bots_rejected"]:
        console.print(f"rejected {printable(r['bot'])}: {printable(r['reason'])}", highlight=False)
    for game, board in info["leaderboards"].items():
        print_ratings(board["rows"], f"{info['name']} — {game} (top {len(board['rows'])})",
                      OutputFormat.table, board["method"])


@ladder_app.command()
def stop(
    ladder: Annotated[Optional[str], LADDER_ARG] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
) -> None:
    """Ask a running ladder to stop after its tables in flight (resume it later)."""
    from arena.store.views import find_ladder

    try:
        store = open_store(db)
        t = find_ladder(store, ladder)
        asked = store.request_stop(t["id"])
    except ArenaError as exc:
        fail(exc)
    if asked:
        console.print(f"stop requested: ladder {t['id']} stops within a heartbeat; its tables are "
                      f"kept", highlight=False, markup=False)
    else:
        console.print(f"ladder {t['id']} is not running ({t['status']})", highlight=False,
                      markup=False)

"""`arena ratings` and `arena failures`: a tournament's rating table and its forfeits."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from arena.cli._app import (DB_OPTION, TOURNAMENT_ARG, OutputFormat, app, console, fail, new_table,
                            open_store, print_ratings)
from arena.errors import ArenaError, ConfigError


@app.command()
def ratings(
    tournament: Annotated[Optional[int], TOURNAMENT_ARG] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    stage: Annotated[Optional[int], typer.Option(min=1, help="Only this stage (default: every stage).")] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
) -> None:
    """Print a tournament's rating table (one per stage of an event)."""
    try:
        store = open_store(db)
        t = store.tournament(tournament)
        stages = store.stages(t["id"])
        if stage is not None:
            stages = [s for s in stages if s["stage"] == stage]
            if not stages:
                raise ConfigError(f"--stage: tournament {t['id']} has no stage {stage}")
        tables = [(s, store.ratings(t["id"], stage=s["stage"])) for s in stages]
    except ArenaError as exc:
        fail(exc)
    for s, rows in tables:
        where = f"stage {s['stage']} {s['name']}, " if len(stages) > 1 or stage else ""
        print_ratings(rows, f"{t['name']} — {s['game']} ({where}tournament {t['id']}, {t['status']})",
                      format)


@app.command()
def failures(
    tournament: Annotated[Optional[int], TOURNAMENT_ARG] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
) -> None:
    """List the forfeited games of a tournament with reason and evidence."""
    try:
        store = open_store(db)
        t = store.tournament(tournament)
        rows = store.failures(t["id"])
    except ArenaError as exc:
        fail(exc)
    table = new_table(f"forfeits — tournament {t['id']}", "game", "bot", "reason", "detail", "evidence")
    for r in rows:
        table.add_row(*(escape(str(r[k] or "")) for k in ("id", "culprit_bot", "termination",
                                                          "detail", "evidence")))
    console.print(table)

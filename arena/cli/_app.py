"""Shared parts of the command line: the app, consoles, common options and error mapping."""

from __future__ import annotations

import csv
import json
import sys
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from arena.errors import ArenaError, ConfigError

app = typer.Typer(
    name="arena", no_args_is_help=True, add_completion=False,
    help="Arena: tournaments and ratings for card-game bots.",
)
console = Console()
err_console = Console(stderr=True)

DB_OPTION = typer.Option("--db", help="SQLite database file.")
TOURNAMENT_ARG = typer.Argument(help="Tournament id (default: newest).")


def fail(exc: ArenaError) -> None:
    """Print a domain error as one line and exit: 2 for bad input, 1 otherwise."""
    err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(2 if isinstance(exc, ConfigError) else 1)


class OutputFormat(str, Enum):
    """How a table is printed."""

    table = "table"
    csv = "csv"
    json = "json"


def open_store(db: Path):
    """The existing database at `db`; ConfigError when there is none (nothing is created)."""
    from arena.store import Store

    if not db.exists():
        raise ConfigError(f"no database at {db}")
    return Store(db)


def print_ratings(rows: list[dict], title: str, fmt: OutputFormat) -> None:
    """Print a rating table as a rich table, CSV or JSON."""
    cols = ["rank", "bot", "rating", "games", "wins", "draws", "losses", "score_pct"]
    ranked = [{"rank": i + 1, **r} for i, r in enumerate(rows)]
    if fmt is OutputFormat.json:
        print(json.dumps([{c: r[c] for c in cols} for r in ranked], indent=2))
        return
    if fmt is OutputFormat.csv:
        w = csv.DictWriter(sys.stdout, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(ranked)
        return
    table = Table(title=escape(title), title_justify="left")
    for c, label in zip(cols, ["#", "bot", "Elo", "games", "W", "D", "L", "score %"]):
        table.add_column(label, justify="left" if c == "bot" else "right")
    for r in ranked:
        table.add_row(str(r["rank"]), escape(r["bot"]), f"{r['rating']:.1f}", str(r["games"]),
                      _num(r["wins"]), _num(r["draws"]), _num(r["losses"]), f"{r['score_pct']:.1f}")
    console.print(table)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def new_table(title: str, *columns: str, right: tuple[str, ...] = ()) -> Table:
    """A rich table with the given columns; those in `right` are right-aligned."""
    table = Table(title=escape(title), title_justify="left")
    for col in columns:
        table.add_column(col, justify="right" if col in right else "left", overflow="fold")
    return table

"""The `arena` command line: each command parses, calls one library function, maps errors."""

from __future__ import annotations

import csv
import json
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
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


def main() -> None:
    """Entry point of the `arena` console script."""
    app()


def fail(exc: ArenaError) -> None:
    """Print a domain error as one line and exit: 2 for bad input, 1 otherwise."""
    err_console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
    raise typer.Exit(2 if isinstance(exc, ConfigError) else 1)


class ExecutorKind(str, Enum):
    """Where matches run."""

    ray = "ray"
    serial = "serial"


class OutputFormat(str, Enum):
    """How a table is printed."""

    table = "table"
    csv = "csv"
    json = "json"


@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="Tournament config (TOML).")],
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    executor: Annotated[ExecutorKind, typer.Option(help="Where matches run.")] = ExecutorKind.ray,
    ray_address: Annotated[Optional[str], typer.Option(help="Join this Ray cluster instead of starting a local one.")] = None,
    workers: Annotated[Optional[int], typer.Option(min=1, help="CPUs of the local Ray instance.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue the unfinished tournament of this config.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run a tournament from a config file and print its rating table."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from arena.config import load_config
    from arena.executors import make_executor
    from arena.store import Store
    from arena.tournament import run_tournament

    try:
        cfg, bots, rows = load_config(config)
        store = Store(db)
        progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("games"), TimeRemainingColumn(), console=err_console, disable=quiet,
        )
        task = None

        def on_start(tid: int, matches: int, games: int) -> None:
            nonlocal task
            task = progress.add_task(f"{cfg.name} (tournament {tid})", total=games)

        def on_result(result) -> None:
            progress.advance(task, len(result.games))

        with progress, make_executor(executor.value, ray_address, workers) as ex:
            outcome = run_tournament(cfg, bots, rows, store, ex, resume=resume,
                                     on_start=on_start, on_result=on_result)
    except KeyboardInterrupt:
        err_console.print(
            f"interrupted: finished matches are saved; resume with "
            f"`arena run {config} --db {db} --resume`", soft_wrap=True
        )
        raise typer.Exit(130)
    except ArenaError as exc:
        fail(exc)
    console.print(
        f"tournament {outcome.tournament_id}: {outcome.games_played} games in "
        f"{outcome.matches_played} matches"
        + (f" ({outcome.matches_skipped} matches already recorded)" if outcome.matches_skipped else "")
        + f"; database {db}"
    )
    print_ratings(outcome.ratings, f"{cfg.name} — {cfg.game}", OutputFormat.table)
    failures = store.failures(outcome.tournament_id)
    if failures:
        console.print(f"{len(failures)} forfeits: see `arena failures --db {db}`")


@app.command()
def ratings(
    tournament: Annotated[Optional[int], TOURNAMENT_ARG] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
) -> None:
    """Print a tournament's rating table."""
    try:
        store = _open(db)
        t = store.tournament(tournament)
        rows = store.ratings(t["id"])
    except ArenaError as exc:
        fail(exc)
    print_ratings(rows, f"{t['name']} — {t['game']} (tournament {t['id']}, {t['status']})", format)


@app.command()
def failures(
    tournament: Annotated[Optional[int], TOURNAMENT_ARG] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
) -> None:
    """List the forfeited games of a tournament with reason and evidence."""
    try:
        store = _open(db)
        t = store.tournament(tournament)
        rows = store.failures(t["id"])
    except ArenaError as exc:
        fail(exc)
    table = Table(title=f"forfeits — tournament {t['id']}")
    for col in ("game", "bot", "reason", "detail", "evidence"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["id"], r["culprit_bot"], r["termination"], r["detail"], r["evidence"])
    console.print(table)


@app.command()
def games() -> None:
    """List the registered games, their seat counts and options."""
    from arena.games import get_game, game_names

    for name in game_names():
        gt = get_game(name).game_type
        table = Table(title=f"{gt.name} — {gt.title} ({'/'.join(map(str, gt.seat_counts))} seats"
                      + (", simultaneous moves" if gt.simultaneous else "") + ")",
                      title_justify="left")
        table.add_column("option")
        table.add_column("default")
        table.add_column("values")
        table.add_column("description", overflow="fold")
        for opt, field in gt.options_model.model_fields.items():
            table.add_row(opt, json.dumps(field.get_default(call_default_factory=True)),
                          _values(field.annotation), field.description or "")
        console.print(table)


@app.command()
def conformance(
    game: Annotated[Optional[list[str]], typer.Argument(help="Games to check (default: all).")] = None,
    games: Annotated[int, typer.Option(min=1, help="Random games per case.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the checks.")] = 0,
    seats: Annotated[Optional[int], typer.Option(min=2, max=4, help="Only this seat count.")] = None,
) -> None:
    """Run the conformance kit over every seat count and option set of the games."""
    from arena.conformance import case_id, check_all

    table = Table(title="conformance", title_justify="left")
    for col in ("case", "games", "steps", "moves/s"):
        table.add_column(col, justify="left" if col == "case" else "right")
    try:
        from arena.games import get_game

        for name in game or []:
            get_game(name)
        for case, report in check_all(game or None, games=games, seed=seed, seats=seats):
            table.add_row(case_id(case), str(report.games), str(report.steps),
                          f"{report.moves_per_second:,.0f}")
    except ArenaError as exc:
        if table.row_count:
            console.print(table)
        fail(exc)
    console.print(table)
    console.print(f"{table.row_count} cases passed")


@app.command()
def replay(
    game_id: Annotated[str, typer.Argument(help="Game id, as stored in the games table.")],
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
) -> None:
    """Replay a stored game from its seed and moves and check it reproduces the record."""
    from arena.replay import replay as replay_game

    try:
        state, game = replay_game(_open(db), game_id)
    except ArenaError as exc:
        fail(exc)
    console.print_json(json.dumps(state.full_view()))
    console.print(f"{game_id}: {len(game['moves'])} moves replayed; scores {state.scores()}; "
                  f"termination {game['termination']}")


@app.command()
def schema(
    out: Annotated[Path, typer.Option(help="Folder to write the JSON Schemas into.")] = Path("protocol/schema"),
) -> None:
    """Write the JSON Schemas of the arena/1 protocol messages."""
    from arena.protocol import write_schemas

    for path in write_schemas(out):
        console.print(f"wrote {path}")


@app.command()
def transcript(
    game: Annotated[str, typer.Argument(help="Game name (see `arena games`).")],
    seats: Annotated[int, typer.Option(min=2, max=4, help="Number of seats.")] = 2,
    seed: Annotated[int, typer.Option(help="Deal seed.")] = 1,
    option: Annotated[list[str], typer.Option("--option", "-o", help="Game option as key=JSON value.")] = [],
    out: Annotated[Optional[Path], typer.Option(help="File to write (default: print).")] = None,
) -> None:
    """Record every protocol message of one game between random subprocess bots."""
    from arena.transcripts import random_bots, record_transcript, write_transcript

    try:
        lines = record_transcript(game, random_bots(seats), parse_options(option), seed)
    except ArenaError as exc:
        fail(exc)
    if out:
        write_transcript(lines, out)
        console.print(f"wrote {out}: {len(lines) - 1} messages")
    else:
        for line in lines:
            print(json.dumps(line, separators=(",", ":")))


def parse_options(pairs: list[str]) -> dict:
    """Game options from `key=value` strings; the value is JSON, or a plain string."""
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"expected key=value, got {pair!r}", param_hint="--option")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def _open(db: Path):
    from arena.store import Store

    if not db.exists():
        raise ConfigError(f"no database at {db}")
    return Store(db)


def _values(annotation) -> str:
    """The allowed values of an option's type, e.g. `"a" | "b"`, `int | null`."""
    import types
    import typing

    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " | ".join(json.dumps(a) for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_values(a) for a in typing.get_args(annotation))
    if annotation is type(None):
        return "null"
    if annotation is bool:
        return "true | false"
    return getattr(annotation, "__name__", str(annotation))


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
    table = Table(title=title, title_justify="left")
    for c, label in zip(cols, ["#", "bot", "Elo", "games", "W", "D", "L", "score %"]):
        table.add_column(label, justify="left" if c == "bot" else "right")
    for r in ranked:
        table.add_row(str(r["rank"]), r["bot"], f"{r['rating']:.1f}", str(r["games"]),
                      _num(r["wins"]), _num(r["draws"]), _num(r["losses"]), f"{r['score_pct']:.1f}")
    console.print(table)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"

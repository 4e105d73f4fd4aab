"""Game commands: `games`, `conformance`, `replay`, `schema`, `transcript`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from arena.cli._app import DB_OPTION, app, console, fail, new_table, open_store, printable
from arena.cli.tables import TEXT, WIDE_OPTION, WORDS
from arena.errors import ArenaError, ConfigError


@app.command()
def games(wide: Annotated[bool, WIDE_OPTION] = False) -> None:
    """List the registered games, their seat counts and options."""
    from arena.games import game_names, get_game

    for name in game_names():
        gt = get_game(name).game_type
        # The values wrap between values, never inside one; the description goes first.
        table = new_table(f"{gt.name} — {gt.title} ({'/'.join(map(str, gt.seat_counts))} seats"
                          + (", simultaneous moves" if gt.simultaneous else "") + ")",
                          "option", "default", "values", "description",
                          kinds={"values": WORDS, "description": TEXT},
                          priorities={"option": 0, "default": 0, "values": 1, "description": 2})
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
    wide: Annotated[bool, WIDE_OPTION] = False,
) -> None:
    """Run the conformance kit over every seat count and option set of the games."""
    from arena.conformance import case_id, check_all

    # A case names its options: they wrap between options, never inside one.
    table = new_table("conformance", "case", "games", "steps", "moves/s",
                      right=("games", "steps", "moves/s"), kinds={"case": WORDS})
    try:
        from arena.games import get_game

        for name in game or []:
            get_game(name)
        for case, report in check_all(game or None, games=games, seed=seed, seats=seats):
            table.add_row(case_id(case).replace(",", ", "), str(report.games), str(report.steps),
                          f"{report.moves_per_second:,.0f}")
    except ArenaError as exc:
        if table.row_count:
            console.print(table)
        fail(exc)
    console.print(table)
    console.print(f"{table.row_count} cases passed")


@app.command()
def replay(
    game_id: Annotated[str, typer.Argument(help="Game id (see `arena tournament show`, the web).")],
    view: Annotated[Optional[str], typer.Option(
        "--view", help="Only what one seat saw: seat:N (its observations; others' hidden cards "
        "never shown).")] = None,
    full: Annotated[bool, typer.Option("--full", help="Draw the full state after every step.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The plies as JSON (machine form).")] = False,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
) -> None:
    """Replay a stored game move by move: each ply's seat, bot, action and what it did, bot log
    lines beside their moves, the ending and the scores."""
    from arena.replay_text import render_text, replay_game, replay_json, replay_logs

    if view is not None and full:
        fail(ConfigError("--view and --full exclude each other: a seat's view hides what --full shows"))
    try:
        store = open_store(db)
        record = replay_game(store, game_id, view or ("full" if full else "spectator"))
        logs = replay_logs(store, record)
    except ArenaError as exc:
        fail(exc)
    if as_json:
        print(json.dumps(replay_json(record, logs), separators=(",", ":")))
        return
    for line in render_text(record, logs):
        console.print(printable(line), highlight=False)


@app.command()
def schema(
    out: Annotated[Path, typer.Option(help="Folder to write the JSON Schemas into.")] = Path("protocol/schema"),
) -> None:
    """Write the JSON Schemas of the arena/2 protocol messages and of each game's observations and actions."""
    from arena.game_schemas import write_game_schemas
    from arena.protocol import write_schemas

    try:
        for path in write_schemas(out):
            console.print(f"wrote {path}")
        # Per-game files go in a subfolder, so the message-schema glob `*.schema.json` does not see them.
        for path in write_game_schemas(out / "games"):
            console.print(f"wrote {path}")
    except OSError as exc:  # --out is a file, or a folder that cannot be written
        fail(ConfigError(f"--out: cannot write into {out}: {exc.strerror or exc}"))


@app.command()
def transcript(
    game: Annotated[str, typer.Argument(help="Game name (see `arena games`).")],
    seats: Annotated[int, typer.Option(min=2, max=4, help="Number of seats.")] = 2,
    seed: Annotated[int, typer.Option(help="Deal seed.")] = 1,
    option: Annotated[list[str], typer.Option("--option", "-o", help="Game option as key=JSON value.")] = [],  # noqa: B006
    out: Annotated[Optional[Path], typer.Option(help="File to write (default: print).")] = None,
) -> None:
    """Record every protocol message of one game between random subprocess bots."""
    from arena.transcripts import random_bots, record_transcript, write_transcript

    try:
        lines = record_transcript(game, random_bots(seats), parse_options(option), seed)
    except ArenaError as exc:
        fail(exc)
    if out:
        try:
            write_transcript(lines, out)
        except OSError as exc:  # --out is a folder, or under a file
            fail(ConfigError(f"--out: cannot write {out}: {exc.strerror or exc}"))
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



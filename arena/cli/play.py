"""`arena play GAME --against BOT`: a person plays one seat in the terminal against bots."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from arena.cli._app import DB_OPTION, app, console, fail, printable
from arena.cli.games import parse_options
from arena.errors import ArenaError


@app.command()
def play(
    game: Annotated[str, typer.Argument(help="Game name (see `arena games`).")],
    against: Annotated[list[str], typer.Option(
        "--against", help="A bot for the other seats: `random`, a bot folder or manifest, or a "
        "registry NAME[@VERSION]; repeat for 3-4 seats (random bots fill the rest).")] = ["random"],  # noqa: B006
    seat: Annotated[int, typer.Option(help="Your seat (0 plays first in most games).")] = 0,
    seats: Annotated[Optional[int], typer.Option(min=2, max=4, help="Number of seats "
                                                 "(default: you and the --against bots).")] = None,
    seed: Annotated[int, typer.Option(help="Deal seed.")] = 1,
    option: Annotated[list[str], typer.Option("--option", "-o", help="Game option as key=JSON value.")] = [],  # noqa: B006
    name: Annotated[str, typer.Option(help="Your name in the records.")] = "you",
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
) -> None:
    """Play a seat of GAME yourself: the game drawn as text, your legal actions numbered; the
    game is recorded (`arena replay ID` shows it). Type `?` for help, `q` to resign."""
    from arena.play import play_game, resolve_bot
    from arena.store import Store

    try:
        bots = [resolve_bot(target, db, seed=seed + i) for i, target in enumerate(against, 1)]
        store = Store(db)
        result = play_game(game, bots, store, sys.stdin, console, seat=seat, seats=seats,
                           seed=seed, options=parse_options(option), name=name)
    except ArenaError as exc:
        fail(exc)
    console.print(f"recorded as game {printable(result.game_id)} (tournament "
                  f"{result.tournament_id}): arena replay {printable(result.game_id)} --db "
                  f"{printable(str(db))}", highlight=False, soft_wrap=True)

"""`arena author ...`: the competition server's authors and their API tokens (organiser side).

A token is printed once, alone on stdout (so `TOKEN=$(arena author add NAME)` keeps it); only its
hash is stored, so a lost token is replaced with `arena author rotate`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from arena.cli._app import DB_OPTION, app, console, err_console, fail, new_table, printable
from arena.errors import ArenaError

author_app = typer.Typer(help="Authors of the competition server and their API tokens.",
                         no_args_is_help=True)
app.add_typer(author_app, name="author")

NAME_ARG = typer.Argument(help="The author's name.")


def _show_token(name: str, token: str) -> None:
    err_console.print(f"API token of {printable(name)} (shown once; only its hash is stored):",
                      highlight=False, soft_wrap=True)
    print(token)


@author_app.command("add")
def add(
    name: Annotated[str, NAME_ARG],
    email: Annotated[Optional[str], typer.Option("--email", help="A contact address.")] = None,
    organiser: Annotated[bool, typer.Option(
        "--organiser", help="An organiser's token acts on every author's bots.")] = False,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
) -> None:
    """Add an author and print its API token once."""
    from arena.server.authors import add_author
    from arena.store import Store

    try:
        token = add_author(Store(db), name, email, "organiser" if organiser else "author")
    except ArenaError as exc:
        fail(exc)
    _show_token(name, token)


@author_app.command("revoke")
def revoke(name: Annotated[str, NAME_ARG], db: Annotated[Path, DB_OPTION] = Path("arena.db")) -> None:
    """Revoke every token of an author and end its browser sessions (401 from now on)."""
    from arena.cli._app import open_store
    from arena.server.authors import revoke_author

    try:
        count = revoke_author(open_store(db), name)
    except ArenaError as exc:
        fail(exc)
    console.print(f"revoked {count} token(s) of {printable(name)}", highlight=False,
                  soft_wrap=True)


@author_app.command("rotate")
def rotate(name: Annotated[str, NAME_ARG], db: Annotated[Path, DB_OPTION] = Path("arena.db")) -> None:
    """Revoke an author's tokens, end its browser sessions and print a new token once."""
    from arena.cli._app import open_store
    from arena.server.authors import rotate_token

    try:
        token = rotate_token(open_store(db), name)
    except ArenaError as exc:
        fail(exc)
    _show_token(name, token)


@author_app.command("list")
def list_(db: Annotated[Path, DB_OPTION] = Path("arena.db")) -> None:
    """The authors: role, email, live tokens, submissions, last token use."""
    from arena.cli._app import open_store
    from arena.server.authors import list_authors

    try:
        rows = list_authors(open_store(db))
    except ArenaError as exc:
        fail(exc)
    table = new_table("Authors", "name", "role", "email", "tokens", "submissions", "last used",
                      right=("tokens", "submissions"))
    for r in rows:
        table.add_row(printable(r["name"]), r["role"], printable(r["email"] or ""),
                      str(r["live_tokens"]), str(r["submissions"]), r["last_used_at"] or "never")
    console.print(table)

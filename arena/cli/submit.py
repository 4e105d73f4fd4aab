"""`arena submit` and `arena submissions`: a bot author's side of a competition server.

Each command calls one function of arena.submit and maps its errors to exit codes: 0 clean (or
done), 1 a failed check, a server that cannot be reached or a limit, 2 bad input (the folder, the
manifest, the token, the address, or a request the server refuses as it stands).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Optional

import typer

from arena.cli._app import app, console, err_console, new_table, printable
from arena.cli.tables import TEXT, WIDE_OPTION
from arena.errors import ArenaError, ConfigError, ServerError

SERVER_OPTION = typer.Option("--server", help="The competition server's URL (default: "
                             "$ARENA_SERVER, else ~/.config/arena/server).")
TOKEN_FILE_OPTION = typer.Option("--token-file", help="A file holding your API token, readable "
                                 "only by you; used even when $ARENA_TOKEN is set (default: "
                                 "$ARENA_TOKEN, else ~/.config/arena/token).")


def _say(text: str) -> None:
    console.print(printable(text), highlight=False, soft_wrap=True)


def _warn(text: str) -> None:
    err_console.print(f"warning: {printable(text)}", highlight=False, soft_wrap=True)


def _fail(exc: ArenaError) -> None:
    """One line on stderr; exit 2 for bad input (ours, or a request the server refuses), else 1."""
    err_console.print(f"[red]error:[/red] {printable(exc)}", highlight=False, soft_wrap=True)
    bad = isinstance(exc, ConfigError) or (isinstance(exc, ServerError) and exc.bad_input)
    raise typer.Exit(2 if bad else 1)


@app.command()
def submit(
    path: Annotated[Path, typer.Argument(help="The bot's folder (holding its bot.toml).")],
    server: Annotated[Optional[str], SERVER_OPTION] = None,
    token_file: Annotated[Optional[Path], TOKEN_FILE_OPTION] = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once uploaded; "
                                          "`arena submissions` shows the check.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Seconds to follow the "
                                           "check before giving up waiting.")] = 600.0,
) -> None:
    """Upload a bot folder to a competition server and follow its check: exit 0 clean, 1 failed
    (or the server unreachable), 2 bad input."""
    from arena.submit import submit_bot, verdict_lines

    try:
        sub = submit_bot(path, server, token_file, wait=not no_wait, timeout=timeout,
                         say=_say, warn=_warn)
    except ArenaError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        err_console.print("stopped following the check; it goes on on the server: "
                          "`arena submissions` shows its verdict", highlight=False, soft_wrap=True)
        raise typer.Exit(130) from None
    if no_wait:
        return
    for line in verdict_lines(sub):
        _say(line)
    raise typer.Exit(0 if sub.get("status") == "clean" else 1)


@app.command()
def submissions(
    server: Annotated[Optional[str], SERVER_OPTION] = None,
    token_file: Annotated[Optional[Path], TOKEN_FILE_OPTION] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False,
    wide: Annotated[bool, WIDE_OPTION] = False,
) -> None:
    """List your submissions on a competition server (an organiser's token: everyone's)."""
    from arena.submit import list_submissions

    try:
        url, who, rows = list_submissions(server, token_file)
    except ArenaError as exc:
        _fail(exc)
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    name = who.get("name") or "?"
    whose = "every author's" if who.get("role") == "organiser" else f"{name}'s"
    if not rows:
        _say(f"no submissions of {name} at {url} yet: `arena submit PATH` uploads a bot")
        return
    authors = who.get("role") == "organiser"  # everyone's rows: whose each one is
    columns = ["id", *(["author"] if authors else []), "bot", "version", "status", "submitted",
               "checked", "reason"]
    table = new_table(f"{whose} submissions at {url}", *columns, right=("id",),
                      kinds={"reason": TEXT},
                      priorities={"id": 0, "author": 1, "bot": 0, "version": 0, "status": 0,
                                  "reason": 2, "submitted": 3, "checked": 4})
    for r in rows:
        table.add_row(printable(r.get("id")), *([printable(r.get("author"))] if authors else []),
                      printable(r.get("bot")), printable(r.get("version")),
                      printable(r.get("status")), printable(moment(r.get("created_at"))),
                      printable(moment(r.get("checked_at"))), printable(r.get("reason")))
    console.print(table)


def moment(value: object) -> str:
    """A server timestamp (ISO text or Unix seconds) as `2026-12-03 21:17` (UTC), or ''."""
    if value is None or value == "":
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, timezone.utc).strftime("%Y-%m-%d %H:%M")
        except (OverflowError, OSError, ValueError):
            return str(value)
    return str(value)[:16].replace("T", " ")

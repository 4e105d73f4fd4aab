"""`arena ratings` and `arena failures`: a tournament's rating table and its forfeits."""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from arena.cli._app import (DB_OPTION, TOURNAMENT_ARG, OutputFormat, app, console, fail, new_table,
                            open_store, print_ratings)
from arena.errors import ArenaError, ConfigError
from arena.reports import _safe_cell


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


FAILURE_FIELDS = ("game", "match", "bot", "reason", "detail", "evidence", "stderr_tail")
TAIL_LINES = 5  # lines of the culprit's stderr shown beside a forfeit
TAIL_CHARS = 500  # at most this many characters of them: the last ones, nearest the failure
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def stderr_tail(text: str | None, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
    """The last `lines` lines of a bot's stderr, at most `chars` characters (cut at the front)."""
    if not text:
        return ""
    tail = "\n".join(text.rstrip().splitlines()[-lines:])
    return tail if len(tail) <= chars else "…" + tail[-chars:]


def failure_rows(store, tournament_id: int) -> list[dict]:
    """Each forfeit of a tournament, in game order, with the culprit's stderr tail from that match.

    A bot's log is kept per match (every process it ran in the match, one after the other), so
    the tail is that of its last process in the match: the one that failed in its last forfeit.
    """
    rows = store.db.execute(
        "select g.id, g.match_id, g.culprit_bot, g.termination, g.detail, g.evidence, l.stderr "
        "from games g left join bot_logs l on l.match_id = g.match_id and l.bot = g.culprit_bot "
        "where g.tournament_id = ? and g.termination != 'normal' order by g.ordinal, g.id",
        [tournament_id]).fetchall()
    return [dict(zip(FAILURE_FIELDS, (*r[:6], stderr_tail(r[6])))) for r in rows]


def _printable(value: object) -> str:
    """Untrusted text made safe for a terminal: rich markup escaped, control characters shown as \\xNN."""
    text = _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value or ""))
    return escape(text)


@app.command()
def failures(
    tournament: Annotated[Optional[int], TOURNAMENT_ARG] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
) -> None:
    """List the forfeited games of a tournament: reason, evidence and the culprit's stderr tail."""
    try:
        store = open_store(db)
        t = store.tournament(tournament)
        rows = failure_rows(store, t["id"])
    except ArenaError as exc:
        fail(exc)
    if format is OutputFormat.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if format is OutputFormat.csv:
        # Evidence and stderr are the bot's own text: a spreadsheet must not run them as formulas.
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(FAILURE_FIELDS)
        writer.writerows([_safe_cell(r[k]) for k in FAILURE_FIELDS] for r in rows)
        return
    table = new_table(f"forfeits — tournament {t['id']}", "game", "bot", "reason", "detail",
                      "evidence", "stderr (tail)")
    for r in rows:
        table.add_row(*(_printable(r[k]) for k in ("game", "bot", "reason", "detail", "evidence",
                                                   "stderr_tail")))
    console.print(table)
    if not rows:
        console.print("no forfeits", highlight=False, markup=False)

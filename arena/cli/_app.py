"""Shared parts of the command line: the app, consoles, common options and error mapping."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import sys
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from arena.cli.tables import FIXED, TEXT, FittedTable
from arena.cli.tables import reset as reset_tables
from arena.errors import ArenaError, ConfigError, StoreError

console = Console()
err_console = Console(stderr=True)

# typer vendors click from 0.2x on (and uses the click package before): its own UsageError is the
# one raised, reached through the public BadParameter whichever typer this is.
UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


class ArenaGroup(TyperGroup):
    """The `arena` group: usage errors and unreadable databases end as one line, never a box or traceback."""

    def make_context(self, info_name, args, parent=None, **extra):
        """Parse the top-level arguments, keeping them to quote a bad value back."""
        self.raw_args = list(args)
        try:
            return super().make_context(info_name, args, parent, **extra)
        except UsageError as exc:
            self._usage_error(exc)

    def invoke(self, ctx):
        """Run the command; a usage error or a damaged database is printed as one line."""
        reset_tables()  # --wide is the command's own (tests run many commands in one process)
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            self._usage_error(exc)
        except sqlite3.DatabaseError as exc:
            # Damage past the pages a database's opening reads (a page overwritten, a truncated
            # copy) surfaces in whichever query first touches it: any command may meet it.
            db = ctx.meta.get(DB_META, "the database")
            code = getattr(exc, "sqlite_errorcode", None)
            if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
                fail(StoreError(f"cannot read {db}: {exc} (a damaged or foreign SQLite file)"))
            if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM):
                fail(StoreError(f"cannot write {db}: {exc} (the file or its folder is read-only?)"))
            fail(StoreError(f"database {db}: {exc}"))

    def _usage_error(self, exc) -> None:
        if type(exc).__name__ == "NoArgsIsHelpError":
            raise exc  # not an error: the group's help
        message = exc.format_message()
        value = self._bad_value(exc)
        if value is not None and repr(value) not in message:
            message += f" (got {value!r})"
        command = exc.ctx.command_path if exc.ctx is not None else "arena"
        err_console.print(f"[red]error:[/red] {escape(message)} (see `{escape(command)} --help`)",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code)

    def _bad_value(self, exc) -> str | None:
        """The value a BadParameter refused, as typed (None when not found)."""
        cause = exc.__cause__
        if hasattr(cause, "errors"):  # typer's pydantic validation keeps the input
            try:
                return str(cause.errors()[0]["input"])
            except (IndexError, KeyError, TypeError):
                pass
        param = getattr(exc, "param", None)
        if getattr(param, "param_type_name", None) != "option":
            return None
        args = getattr(self, "raw_args", [])
        found = None
        for i, arg in enumerate(args):
            for opt in param.opts:
                if arg == opt and i + 1 < len(args):
                    found = args[i + 1]
                elif arg.startswith(opt + "="):
                    found = arg[len(opt) + 1:]
        return found  # the last one given is the one that failed


app = typer.Typer(
    name="arena", no_args_is_help=True, add_completion=False, cls=ArenaGroup,
    help="Arena: tournaments and ratings for card-game bots.",
)

DB_META = "arena.db"  # where a command's --db is kept, for the damaged-database message


def _remember_db(ctx: typer.Context, value: Path) -> Path:
    ctx.meta[DB_META] = value
    return value


DB_OPTION = typer.Option("--db", help="SQLite database file.", callback=_remember_db)
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


_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(value: object) -> str:
    """Untrusted text made safe for a terminal: rich markup escaped, control characters shown as \\xNN."""
    text = _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value or ""))
    return escape(text)


def open_store(db: Path):
    """The existing database at `db`; ConfigError when there is none (nothing is created)."""
    from arena.store import Store

    return Store.open_existing(db)


METHOD_LABELS = {"elo": "Elo", "bt": "Bradley–Terry", "pl": "Plackett–Luce"}
TIEBREAK_HEADERS = {"buchholz": "BH", "buchholz_cut1": "BH-1", "sonneborn_berger": "SB",
                    "direct_encounter": "DE", "game_points": "game pts", "match_points": "pts"}
TIEBREAK_NAMES = {"buchholz": "Buchholz", "buchholz_cut1": "Buchholz cut-1",
                  "sonneborn_berger": "Sonneborn-Berger", "direct_encounter": "direct encounter",
                  "game_points": "game points", "match_points": "match points"}
_RATING_FIELDS = ("rank", "bot", "version", "rating", "lo", "hi", "minus", "plus", "lo_open",
                  "hi_open", "games", "wins", "draws", "losses", "pair_points", "score_pct", "flag")


def whole_number(x):
    """A count as an int when it is whole (CSV/JSON show 3, not 3.0)."""
    return int(x) if isinstance(x, float) and x.is_integer() else x


def rating_records(rows: list[dict], tiebreaks: tuple[str, ...] = ()) -> list[dict]:
    """Rating rows as exported (CSV/JSON): ranked, with −/+ margins and whole counts as ints; an
    end the data does not bound is None with `lo_open` / `hi_open` true (arena.ratings.bounds)."""
    from arena.ratings.bounds import open_ends

    out = []
    for i, r in enumerate(rows, 1):
        r = open_ends(r)
        lo, hi = r["lo"], r["hi"]
        rec = {"rank": r.get("rank", i), "bot": r["bot"], "version": r.get("version", ""),
               "rating": r["rating"], "lo": lo, "hi": hi,
               "minus": None if lo is None else round(r["rating"] - lo, 1),
               "plus": None if hi is None else round(hi - r["rating"], 1),
               "lo_open": r["lo_open"], "hi_open": r["hi_open"],
               "games": r["games"], "wins": whole_number(r["wins"]), "draws": whole_number(r["draws"]),
               "losses": whole_number(r["losses"]),
               "pair_points": whole_number(r.get("pair_points", r.get("points", 0.0))),
               "score_pct": r["score_pct"], "flag": r.get("flag")}
        rec.update({t: whole_number(r.get(t)) for t in tiebreaks})
        out.append(rec)
    return out


def version_label(bot: str, version: str, rows: list[dict]) -> str:
    """How a table shows a bot: `name@version` when its name has several versions among `rows`
    (or it is so named already), else `name (version)`."""
    if not version or bot.endswith(f"@{version}"):
        return bot
    if sum(r["bot"] == bot for r in rows) > 1:
        return f"{bot}@{version}"
    return f"{bot} ({version})"


def print_ratings(rows: list[dict], title: str, fmt: OutputFormat, method: str = "elo",
                  tiebreaks: tuple[str, ...] = (), extra: tuple[str, ...] = ()) -> None:
    """Print a rating table (rank, bot, version, rating −/+, games, W/D/L, score %, tie-breaks)."""
    records = rating_records(rows, tiebreaks)
    for rec, row in zip(records, rows):
        rec.update({k: row.get(k) for k in extra})
    fields = [*_RATING_FIELDS, *tiebreaks, *extra]
    if fmt is OutputFormat.json:
        print(json.dumps({"method": method, "rows": records}, indent=2, ensure_ascii=False))
        return
    if fmt is OutputFormat.csv:
        from arena.reports import safe_cell

        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(fields)
        writer.writerows([safe_cell(r[f]) for f in fields] for r in records)
        return
    intervals = any(r["lo"] is not None or r["hi"] is not None for r in records)
    flags = any(r["flag"] for r in records)
    label = METHOD_LABELS.get(method, method)
    table = FittedTable(title=escape(f"{title} — {label}"), title_justify="left")
    extra_labels = [e.replace("_", " ") for e in extra]
    # What folds first at a narrow width: extras, tie-breaks, then W-D-L and points (the score
    # says as much); the note (a rating's caveat, such as "all wins") stays with the rating.
    columns = [("#", 0), ("bot (version)", 0), ("rating", 0), *([("95 %", 1)] if intervals else []),
               ("games", 2), ("pair pts", 4), ("W-D-L", 5), ("score %", 3),
               *((TIEBREAK_HEADERS.get(t, t), 6) for t in tiebreaks),
               *((e, 7) for e in extra_labels), *([("note", 2)] if flags else [])]
    for c, priority in columns:
        left = c in ("bot (version)", "note", "95 %")
        text = c == "note"
        # Only text may wrap: numbers cut in two are misread.
        table.add_column(c, justify="left" if left else "right", kind=TEXT if text else FIXED,
                         priority=priority)
    for r in records:
        who = printable(version_label(r["bot"], r["version"], records))
        cells = [str(r["rank"]), who, f"{r['rating']:.0f}"]
        if intervals:
            cells.append(interval_text(r))
        cells += [str(r["games"]), plain_number(r["pair_points"]),
                  f"{plain_number(r['wins'])}-{plain_number(r['draws'])}-{plain_number(r['losses'])}",
                  f"{r['score_pct']:.1f}", *(plain_number(r[t]) if r[t] is not None else "" for t in tiebreaks),
                  *(printable(r[k]) for k in extra),
                  *([printable(r["flag"])] if flags else [])]
        table.add_row(*cells)
    if tiebreaks:
        # named only while their columns show: a folded tie-break needs no legend
        table.legend = ("tie-breaks: ", {TIEBREAK_HEADERS.get(t, t): TIEBREAK_NAMES.get(t, t)
                                         for t in tiebreaks})
        table.caption_justify = "left"
    console.print(table)
    if any((r["flag"] or "").startswith("pool ") for r in records):
        console.print("the field split into pools that never met: ratings compare only within "
                      "a pool", highlight=False, markup=False)


def interval_text(r: dict) -> str:
    """`−209 +57`; an end the data does not bound is `∞` (`−209 +∞` for a bot with all wins)."""
    if r["minus"] is None and r["plus"] is None and not (r["lo_open"] or r["hi_open"]):
        return ""
    minus = "∞" if r["lo_open"] or r["minus"] is None else f"{r['minus']:.0f}"
    plus = "∞" if r["hi_open"] or r["plus"] is None else f"{r['plus']:.0f}"
    return f"−{minus} +{plus}"


def plain_number(x: float) -> str:
    """A number as a table shows it: 3 rather than 3.0, else its shortest form."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def new_table(title: str, *columns: str, right: tuple[str, ...] = (),
              priorities: dict[str, int] | None = None,
              kinds: dict[str, str] | None = None,
              groups: dict[str, str] | None = None) -> FittedTable:
    """A table fitted to the terminal (arena.cli.tables) with the given columns; those in `right`
    are right-aligned. `priorities` (0 never folds, higher folds sooner; default: the first two
    never, then the rightmost first), `kinds` (fixed, the default: never wrapped or cut;
    words; text) and `groups` (columns that fold together) by column header."""
    table = FittedTable(title=escape(title), title_justify="left")
    for col in columns:
        table.add_column(col, justify="right" if col in right else "left", overflow="fold",
                         kind=(kinds or {}).get(col, FIXED),
                         priority=(priorities or {}).get(col), group=(groups or {}).get(col))
    return table

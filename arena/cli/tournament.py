"""`arena tournament ...`: list, show, status, cancel and export stored tournaments; run summaries.

Each command parses its arguments, loads one read model (arena.store.views), renders it with
arena.reports and prints the result. Bot names, evidence and tracebacks are untrusted: every one
is escaped before rich sees it.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import sys
import tempfile
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from arena import reports
from arena.cli._app import (
    DB_OPTION,
    TIEBREAK_HEADERS,
    TIEBREAK_NAMES,
    TOURNAMENT_ARG,
    OutputFormat,
    app,
    console,
    err_console,
    fail,
    new_table,
    open_store,
    print_ratings,
)
from arena.cli.tables import TEXT, WIDE_OPTION, WORDS
from arena.errors import ArenaError, ConfigError
from arena.store.views import TournamentProgress, TournamentView

tournament_app = typer.Typer(
    help="Inspect stored tournaments: list, show, status, cancel, export.", no_args_is_help=True)
app.add_typer(tournament_app, name="tournament")

ID_ARG = typer.Argument(help="Tournament id.")
EVIDENCE_SHOWN = 200  # characters of a forfeit's evidence in a table (JSON output has all of it)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class ViewFormat(str, Enum):
    """How show and status print."""

    table = "table"
    json = "json"


class ExportFormat(str, Enum):
    """The export file formats."""

    jsonl = "jsonl"
    csv = "csv"


# -- rendering helpers ----------------------------------------------------------------------------


def _safe(value: object) -> str:
    """Untrusted text for rich: control characters made visible (no terminal escapes), markup escaped."""
    text = "" if value is None else str(value)
    return escape(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text))


def _num(value: float | int | None) -> str:
    if value is None:
        return "–"
    value = round(float(value), 3)
    return str(int(value)) if value.is_integer() else f"{value:g}"


def _print_json(data: object) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _tiebreak_columns(tiebreaks: list[str], limit: int | None = None) -> list[str]:
    # Game points have their own column already.
    shown = [t for t in tiebreaks if t != "game_points"]
    return shown[:limit] if limit is not None else shown


def _standings_table(title: str, stage: dict, compact: bool):
    breaks = _tiebreak_columns(stage["tiebreaks"], 2 if compact else None)
    cols = ["#", "bot", "pts", "game pts"]
    if not compact:
        cols += ["M", "W", "D", "L", "byes"]
    cols += [TIEBREAK_HEADERS[t] for t in breaks]
    # Match points and the first tie-breaks decide the ranking: they stay longest.
    priority = {"pts": 0, "game pts": 1, "M": 3, "W": 3, "D": 3, "L": 3, "byes": 4}
    priority.update({TIEBREAK_HEADERS[t]: 2 for t in breaks})
    table = new_table(title, *cols, right=tuple(c for c in cols if c != "bot"), priorities=priority,
                      groups=dict.fromkeys(("M", "W", "D", "L"), "record"))
    for r in stage["standings"]:
        cells = [str(r["rank"]), _safe(r["bot"]), _num(r["match_points"]), _num(r["game_points"])]
        if not compact:
            cells += [str(r[k]) for k in ("matches", "wins", "draws", "losses", "byes")]
        cells += [_num(r[t]) for t in breaks]
        table.add_row(*cells)
    if breaks:
        table.legend = ("tie-breaks in order: ",
                        {TIEBREAK_HEADERS[t]: TIEBREAK_NAMES[t] for t in breaks})
        table.caption_justify = "left"
    return table


def _overall_table(title: str, rows: list[dict]):
    stages = rows[0]["stages"] if rows else []
    stage_names = [f"{s['stage']}. {s['name']}" for s in stages]
    cols = ["#", "bot", "score", "stage wins", "game pts", *stage_names]
    table = new_table(title, *cols, right=tuple(c for c in cols if c != "bot"),
                      priorities={"score": 0, "stage wins": 3, "game pts": 4,
                                  **{name: 2 for name in stage_names}})
    for r in rows:
        cells = [str(r["rank"]), _safe(r["bot"]), _num(r["score"]), str(r["stage_wins"]),
                 _num(r["game_points"])]
        for s in r["stages"]:
            cells.append("left out" if s["left_out"] else "–" if s["rank"] is None
                         else f"{s['rank']}: {_num(s['points'])} → {_num(s['contribution'])}")
        table.add_row(*cells)
    # A stage's maximum is the same for all its bots: said once, with its weight.
    maxima = {}
    for r in rows:
        for s in r["stages"]:
            if s["maximum"] is not None:
                maxima[s["stage"]] = s["maximum"]
    table.caption = ("score: the weighted mean over the stages a bot plays of its share, match "
                     "points / the stage's maximum (cells: rank: match points → contribution, "
                     "weight × share / the weights of its stages); "
                     + "; ".join(f"{s['stage']}. {_safe(s['name'])}: weight {_num(s['weight'])}, "
                                 f"maximum {_num(maxima.get(s['stage']))}" for s in stages))
    table.caption_justify = "left"
    return table


def _stage_label(stage: dict, event: bool) -> str:
    return f"stage {stage['stage']} {stage['name']}" if event else stage["name"]


def _last_line(text: str | None) -> str:
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


# -- commands ---------------------------------------------------------------------------------------


@tournament_app.command("list")
def list_tournaments(db: Annotated[Path, DB_OPTION] = Path("arena.db"),
                     wide: Annotated[bool, WIDE_OPTION] = False) -> None:
    """List the stored tournaments, newest first, with their progress."""
    try:
        rows = open_store(db).tournaments()
    except ArenaError as exc:
        fail(exc)
    table = new_table(f"tournaments in {db}", "id", "name", "game", "format", "status", "bots",
                      "matches", "games", "created", right=("id", "bots", "matches", "games"),
                      priorities={"game": 1, "status": 2, "format": 3, "bots": 4, "games": 4,
                                  "matches": 5, "created": 6})
    for r in rows:
        table.add_row(str(r["id"]), _safe(r["name"]), _safe(r["game"]), _safe(r["format"]),
                      _safe(r["status"]), str(r["bots"]), str(r["matches"]), str(r["games"]),
                      _safe((r["created_at"] or "")[:16].replace("T", " ")))
    console.print(table)


@tournament_app.command()
def show(
    tournament: Annotated[Optional[int], TOURNAMENT_ARG] = None,
    round_no: Annotated[Optional[int], typer.Option("--round",
            help="Standings and pairings as they were after this round.")] = None,
    stage: Annotated[Optional[int], typer.Option(min=1, help="Only this stage.")] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    format: Annotated[ViewFormat, typer.Option("--format", "-f")] = ViewFormat.table,
    wide: Annotated[bool, WIDE_OPTION] = False,
) -> None:
    """Show standings with tie-breaks, pairings per round, per-deal results, forfeits and errors."""
    try:
        report = reports.tournament_report(TournamentView.load(open_store(db), tournament),
                                           round_no, stage)
    except ArenaError as exc:
        fail(exc)
    if format is ViewFormat.json:
        _print_json(report)
        return
    t, event = report["tournament"], report["event"]
    after = f", after round {round_no}" if round_no is not None else ""
    console.print(f"tournament {t['id']} {_safe(t['name'])}: {_safe(t['game'])} "
                  f"({_safe(t['format'])}), {_safe(t['status'])}{after}", highlight=False)
    if event and report["overall"] is not None:
        console.print(_overall_table("overall standing", report["overall"]))
    for st in report["stages"]:
        label = _stage_label(st, event)
        console.print(_standings_table(
            f"{label} — {st['format']}, {st['rounds_recorded']}/{st['rounds']} rounds, "
            f"{st['status']}{after}", st, compact=False))
        if st["left_out"]:
            console.print(f"left out (do not play {_safe(st['game'])}): "
                          + ", ".join(_safe(n) for n in st["left_out"]), highlight=False)
        _print_pairings(label, st)
        _print_deals(label, st)
        _print_forfeits(label, st)
        _print_errors(label, st)
    _print_node_events(report.get("node_events") or [])
    print_forfeit_summary(report, db)


def print_forfeit_summary(report: dict, db: Path) -> None:
    """When games were forfeited: how many per bot and reason, then the command that lists each
    one with its bot's stderr in that game."""
    rows = reports.forfeit_summary(report)
    if not rows:
        return
    total = sum(r["games"] for r in rows)
    table = new_table(f"forfeits: {total} game{'s' if total != 1 else ''}", "bot", "reason",
                      "games", right=("games",))
    for r in rows:
        table.add_row(_safe(r["bot"]), _safe(r["reason"]), str(r["games"]))
    console.print(table)
    command = ["arena", "failures", str(report["tournament"]["id"])]
    if db != Path("arena.db"):
        command += ["--db", str(db)]
    console.print("each forfeit with its bot's stderr in that game:", highlight=False)
    # a command on a line of its own, never broken, so it can be copied whole
    console.print(f"  {shlex.join(command)}", soft_wrap=True, highlight=False, markup=False)


def ran_on(node: str | None, host: str | None) -> str:
    """Where a match ran: the host and the head of its Ray node id ("" when not recorded)."""
    if not host and not node:
        return ""
    return f"{host or '?'} ({node[:8]})" if node else (host or "")


def _print_pairings(label: str, st: dict) -> None:
    # On Ray, which node ran each match (matches of one run may be spread over machines).
    on_ray = any(tb.get("node") for rnd in st["pairings"] for tb in rnd["tables"])
    columns = ["round", "table", "bots", "match pts", "game pts", "status"]
    table = new_table(f"{label} — pairings", *columns, *(["ran on"] if on_ray else []),
                      right=("round", "table"), kinds={"bots": WORDS},
                      priorities={"bots": 0, "match pts": 1, "game pts": 2, "status": 3,
                                  "ran on": 4})
    for rnd in st["pairings"]:
        for tb in rnd["tables"]:
            bots = tb["bots"]
            table.add_row(str(rnd["round"]), str(tb["table"]),
                          " – ".join(_safe(b["bot"]) for b in bots),
                          " – ".join(_num(b["match_points"]) for b in bots),
                          " – ".join(_num(b["game_points"]) for b in bots),
                          tb["status"] + (f" ({tb['attempts']} attempts)"
                                          if tb["attempts"] > 1 else ""),
                          *([_safe(ran_on(tb.get("node"), tb.get("host")))] if on_ray else []))
        for bye in rnd["byes"]:
            table.add_row(str(rnd["round"]), "bye", _safe(bye["bot"]), _num(bye["points"]), "", "",
                          *([""] if on_ray else []))
    console.print(table)


def _print_node_events(events: list[dict]) -> None:
    if not events:
        return
    table = new_table("nodes taken out of the run", "node", "event", "why", "at",
                      priorities={"why": 2, "at": 1}, kinds={"why": TEXT})
    for e in events:
        table.add_row(_safe(ran_on(e["node"], e["host"])), _safe(e["event"]), _safe(e["detail"]),
                      _safe((e["recorded_at"] or "")[:19].replace("T", " ")))
    console.print(table)


def _print_deals(label: str, st: dict) -> None:
    if not st["deals"]:
        return
    table = new_table(f"{label} — per deal (pentanomial: deals scoring 0, ½, 1, 1½, 2 for the "
                      f"first bot)", "round", "table", "bots", "score", "pentanomial", "deals",
                      right=("round", "table"), kinds={"bots": WORDS, "deals": WORDS},
                      priorities={"bots": 0, "score": 1, "pentanomial": 2, "deals": 3})
    for d in st["deals"]:
        penta = " ".join(str(n) for n in d["pentanomial"]) if d["pentanomial"] else "–"
        deals = ", ".join(f"{x['deal']}: {_num(x['points'][0])}–{_num(x['points'][1])}"
                          for x in d["deals"])
        table.add_row(str(d["round"]), str(d["table"]),
                      " vs ".join(_safe(b) for b in d["bots"]),
                      "–".join(_num(p) for p in d["points"]), penta, deals)
    console.print(table)


def _print_forfeits(label: str, st: dict) -> None:
    if not st["forfeits"]:
        return
    table = new_table(f"{label} — forfeits", "game", "bot", "reason", "detail", "evidence",
                      priorities={"reason": 1, "detail": 2, "evidence": 3},
                      kinds={"detail": TEXT, "evidence": TEXT})
    for f in st["forfeits"]:
        evidence = f["evidence"] or ""
        if len(evidence) > EVIDENCE_SHOWN:
            evidence = evidence[:EVIDENCE_SHOWN] + " …"
        table.add_row(_safe(f["game_id"]), _safe(f["bot"]), _safe(f["reason"]), _safe(f["detail"]),
                      _safe(evidence))
    console.print(table)


def _print_errors(label: str, st: dict) -> None:
    if not st["errors"]:
        return
    table = new_table(f"{label} — runner errors (not counted against any bot)", "match",
                      "attempt", "kind", "worker", "match status", "error",
                      right=("attempt",), kinds={"error": TEXT},
                      priorities={"match": 0, "attempt": 1, "kind": 1, "worker": 3,
                                  "match status": 2, "error": 4})
    for e in st["errors"]:
        where = ran_on(e.get("node"), e.get("host")) or e["worker"]
        table.add_row(_safe(e["match_id"]), str(e["attempt"]), _safe(e["kind"]), _safe(where),
                      _safe(e["status"]), _safe(_last_line(e["error"])))
    console.print(table)


@tournament_app.command()
def status(
    tournament: Annotated[Optional[int], TOURNAMENT_ARG] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    format: Annotated[ViewFormat, typer.Option("--format", "-f")] = ViewFormat.table,
    wide: Annotated[bool, WIDE_OPTION] = False,
) -> None:
    """Show a tournament's progress: rounds, games done and planned, ETA, and who runs it."""
    try:
        info = reports.tournament_status(TournamentProgress.load(open_store(db), tournament))
    except ArenaError as exc:
        fail(exc)
    if format is ViewFormat.json:
        _print_json(info)
        return
    console.print(f"tournament {info['id']} {_safe(info['name'])}: {_safe(info['status'])}",
                  highlight=False)
    lease = info["lease"]
    if lease is None:
        console.print("driver: none holds this tournament", highlight=False)
    else:
        age = lease["heartbeat_age_s"]
        state = ("alive" if lease["alive"]
                 else "stale: its driver is gone; `arena run CONFIG --resume` takes over")
        cancel = ", cancel requested" if lease["cancel_requested"] else ""
        console.print(f"driver: pid {lease['pid']} on {_safe(lease['host'])}, last heartbeat "
                      f"{_num(age)} s ago ({state}{cancel})", highlight=False)
    table = new_table("progress", "stage", "name", "status", "rounds", "matches", "errors", "games",
                      right=("stage", "rounds", "matches", "errors", "games"),
                      priorities={"status": 1, "rounds": 1, "games": 1, "matches": 2, "errors": 3})
    for s in info["stages"]:
        table.add_row(str(s["stage"]), _safe(s["name"]), _safe(s["status"]),
                      f"{s['rounds_recorded']}/{s['rounds_total']}", str(s["matches_finished"]),
                      str(s["matches_error"]),
                      f"{s['games_done']}/{s['games_planned'] if s['games_planned'] is not None else '?'}")
    console.print(table)
    planned = info["games_planned"]
    rate = (f"{info['rate']:.2f} games/s ({info['rate_basis']})" if info["rate"] else "no pace yet")
    console.print(f"games {info['games_done']}/{planned if planned is not None else '?'}; {rate}; "
                  f"ETA {_duration(info['eta_s'])}", highlight=False)


@tournament_app.command()
def cancel(
    tournament: Annotated[int, ID_ARG],
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
) -> None:
    """Cancel a tournament: ask its running driver to stop, or mark a stopped one cancelled."""
    try:
        store = open_store(db)
        lease = store.lease(tournament)
        outcome = store.request_cancel(tournament)
    except ArenaError as exc:
        fail(exc)
    if outcome == "requested":
        holder = f"pid {lease['pid']} on {_safe(lease['host'])}" if lease else "its holder"
        console.print(f"cancel requested: the driver ({holder}) will stop after the matches in "
                      f"flight finish (within a heartbeat); finished matches are kept",
                      highlight=False)
    else:
        console.print(f"tournament {tournament} cancelled", highlight=False)


@tournament_app.command()
def export(
    tournament: Annotated[int, ID_ARG],
    format: Annotated[ExportFormat, typer.Option("--format", "-f",
            help="jsonl: one game per line; csv: one row per game seat.")] = ExportFormat.jsonl,
    output: Annotated[Optional[Path], typer.Option("--output", "-o",
            help="File to write (default: standard output).")] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
) -> None:
    """Export a tournament's games (seats and moves) as JSON lines or CSV."""
    try:
        store = open_store(db)
        tid = store.tournament(tournament)["id"]
        if output is None:
            rows = reports.export_tournament(store, tid, format.value, sys.stdout)
            sys.stdout.flush()
        else:
            rows = _export_file(store, tid, format.value, output)
    except ArenaError as exc:
        fail(exc)
    except BrokenPipeError:
        _quiet_stdout()  # the reader (`| head`) has had enough; the exit should not complain
        raise typer.Exit(141) from None
    except OSError as exc:
        fail(ConfigError(f"cannot write {output}: {exc.strerror or exc}"))
    unit = "games" if format is ExportFormat.jsonl else "seat rows"
    err_console.print(f"{rows} {unit} exported" + (f" to {_safe(output)}" if output else ""),
                      highlight=False)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so flushing it at exit does not raise a second BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a real file (a test runner's buffer): nothing will be flushed to a pipe


def _export_file(store, tid: int, fmt: str, output: Path) -> int:
    """Write the export next to `output` and rename it into place: readers never see half a file."""
    parent = output.parent if str(output.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{output.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            rows = reports.export_tournament(store, tid, fmt, fh)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp makes the file private (0600); the export gets the mode any new file would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, output)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return rows


# -- the end of `arena run` --------------------------------------------------------------------------


def _sprt_line(test: dict) -> str:
    """One candidate's SPRT stop rule as a line of text (names are printed without markup)."""
    rule = (f"SPRT {test['candidate']} vs the field ({test['model']}, elo0={test['elo0']:g}, "
            f"elo1={test['elo1']:g}, alpha={test['alpha']:g}, beta={test['beta']:g})")
    if test["llr"] is None:
        return f"{rule}: no complete deal pairs yet"
    verdict = {"H1": "H1 accepted (stronger)", "H0": "H0 accepted (not stronger)",
               None: "undecided when the gauntlet ended"}[test["decision"]]
    return (f"{rule}: pairs {test['counts']}, LLR {test['llr']:.3f} in "
            f"[{test['lower']:.3f}, {test['upper']:.3f}] — {verdict}")


def print_summary(db: Path, tournament_id: int) -> None:
    """Print what `arena run` ends with: each stage's standings and Elo table, and an event's overall."""
    try:
        view = TournamentView.load(open_store(db), tournament_id)
        report = reports.tournament_report(view)
        from arena import rating_reports  # numpy and scipy: loaded only when needed

        ratings = {st["stage"]: rating_reports.tournament_ratings(view, st["stage"])
                   for st in report["stages"]}
        sprts = {st["stage"]: rating_reports.gauntlet_sprt(view, st["stage"])
                 for st in report["stages"]}
    except ArenaError as exc:
        fail(exc)
    t, event = report["tournament"], report["event"]
    for st in report["stages"]:
        label = _stage_label(st, event)
        console.print(_standings_table(f"{label} — standings ({st['format']})", st, compact=True))
        table = ratings[st["stage"]]
        print_ratings(table["rows"], f"{label} — ratings (tournament {t['id']}, {t['status']})",
                      OutputFormat.table, table["method"])
        for test in sprts[st["stage"]]:
            console.print(_sprt_line(test), highlight=False, markup=False)
    if event and report["overall"] is not None:
        console.print(_overall_table(f"{t['name']} — overall standing", report["overall"]))
    print_forfeit_summary(report, db)

"""`arena bot ...`: the bot registry (add, list, show, remove), `check` and `new` (author's kits).

Each command parses, calls one function of arena.registry, arena.checker or arena.kits, and prints
the result. Bot names, manifests, evidence and stderr are untrusted: all are escaped.
"""

from __future__ import annotations

import json
import re
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from arena.cli._app import DB_OPTION, app, console, err_console, fail, new_table
from arena.cli.tables import WIDE_OPTION, WORDS
from arena.errors import ArenaError, ConfigError

bot_app = typer.Typer(
    help="Submitted bots: add, list, show, remove, check; start a new one from a kit.",
    no_args_is_help=True)
app.add_typer(bot_app, name="bot")

REF_ARG = typer.Argument(help="NAME (every version / the latest) or NAME@VERSION.")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class Lang(str, Enum):
    """The kit languages."""

    python = "python"
    node = "node"
    c = "c"


def _safe(value: object) -> str:
    """Untrusted text for rich: control characters made visible, markup escaped."""
    text = "" if value is None else str(value)
    return escape(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text))


def _say(text: str) -> None:
    console.print(text, highlight=False, soft_wrap=True)


def _line(text: str) -> None:
    """A line of a report, wrapped at the terminal's width between words (a name stays whole)."""
    console.print(text, highlight=False)


def _registry(db: Path):
    from arena.registry import Registry

    return Registry(db)


@bot_app.command()
def add(path: Annotated[Path, typer.Argument(help="A bot folder with a manifest, or a manifest file.")],
        db: Annotated[Path, DB_OPTION] = Path("arena.db")) -> None:
    """Validate a bot's manifest, snapshot its folder beside the database and record the version."""
    try:
        result = _registry(db).add(path)
    except ArenaError as exc:
        fail(exc)
    _say(_safe(result.message))


@bot_app.command("list")
def list_bots(db: Annotated[Path, DB_OPTION] = Path("arena.db"),
              as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False,
              wide: Annotated[bool, WIDE_OPTION] = False) -> None:
    """List every registered bot version."""
    try:
        versions = _registry(db).versions()
    except ArenaError as exc:
        fail(exc)
    if as_json:
        print(json.dumps([{k: v for k, v in x.__dict__.items() if k != "extra"} | {"ref": x.ref}
                          for x in versions], indent=2, ensure_ascii=False))
        return
    table = new_table(f"bots in {db}", "bot", "version", "status", "language", "author", "games",
                      "hash", "added", kinds={"games": WORDS},
                      priorities={"status": 1, "games": 2, "language": 3, "author": 4, "hash": 5,
                                  "added": 6})
    for v in versions:
        table.add_row(_safe(v.name), _safe(v.version), _safe(v.status), _safe(v.language),
                      _safe(v.author), _safe(", ".join(v.games) or "any"), v.content_hash[:8],
                      _safe((v.added_at or "")[:16].replace("T", " ")))
    console.print(table)


@bot_app.command()
def show(ref: Annotated[str, REF_ARG],
         db: Annotated[Path, DB_OPTION] = Path("arena.db"),
         as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False) -> None:
    """A bot's versions: games, tournaments played, latest ratings, recent failures with stderr."""
    try:
        info = _registry(db).show(ref)
    except ArenaError as exc:
        fail(exc)
    if as_json:
        print(json.dumps(info, indent=2, ensure_ascii=False, default=str))
        return
    for v in info["versions"]:
        _line(f"[bold]{_safe(v['ref'])}[/bold]  {_safe(v['status'])}  hash {v['content_hash'][:12]}  "
             f"added {_safe((v['added_at'] or '')[:16].replace('T', ' '))}")
        _line(f"  command {_safe(' '.join(v['command']))}  language {_safe(v['language'] or '?')}"
             f"  author {_safe(v['author'] or '?')}")
        _line(f"  games {_safe(', '.join(v['games']) or 'any')}; played {v['games_played']} games "
             f"in {v['tournaments']} tournaments")
        for r in v["ratings"]:
            _line(f"  rating in tournament {r['tournament_id']} ({_safe(r['tournament'])}) stage "
                 f"{r['stage']}: {_safe(r['method'])} {r['rating']:.1f} over {r['games']} games")
        for e in v["ladders"]:
            state = {"active": "playing", "retired": "retired", "rejected": "rejected"}.get(
                e["status"], e["status"])
            _line(f"  ladder {e['ladder_id']} ({_safe(e['ladder'])}): {_safe(state)} since table "
                 f"{e['joined_tick']}, {e['games']} games"
                 + (f" — {_safe(e['reason'])}" if e["reason"] else ""))
        if v["ladder_ratings"]:
            points = ", ".join(f"{p['rating']:.0f}@{p['tables']}" for p in v["ladder_ratings"][-8:])
            _line(f"  ladder rating trajectory (rating@tables): {points}")
        for g in v["ladder_games"][:5]:
            _line(f"  ladder game {_safe(g['game_id'])}: {_safe(g['game'])} {g['seats']} seats, "
                 f"rank {g['rank']}" + ("" if g["termination"] == "normal"
                                        else f" ({_safe(g['termination'])})"))
        for f in v["failures"]:
            _line(f"  failure {_safe(f['game_id'])}: {_safe(f['termination'])}: {_safe(f['detail'])}"
                 + (f" — {_safe(f['evidence'][:200])}" if f["evidence"] else ""))
            for line in (f["stderr_tail"] or "").splitlines()[-5:]:
                _line(f"    stderr| {_safe(line)}")


@bot_app.command()
def remove(ref: Annotated[str, REF_ARG],
           db: Annotated[Path, DB_OPTION] = Path("arena.db")) -> None:
    """Retire a version (or every version of a bot): its games and ratings stay."""
    try:
        retired = _registry(db).remove(ref)
    except ArenaError as exc:
        fail(exc)
    if retired:
        _say(f"retired {_safe(', '.join(retired))} (games and ratings stay)")
    else:
        _say(f"{_safe(ref)} was already retired")


@bot_app.command()
def check(
    target: Annotated[str, typer.Argument(help="A bot folder or manifest, or NAME[@VERSION] in the registry.")],
    game: Annotated[Optional[str], typer.Option(
            help="Only this game (default: every game the manifest lists).")] = None,
    option: Annotated[list[str], typer.Option(
        "--option", "-o", help="Check only this option set: key=JSON value, repeatable "
        "(default: the defaults and each option that changes what a bot is sent).")] = [],  # noqa: B006
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    move_ms: Annotated[Optional[int], typer.Option(min=1,
            help="Move time limit (default: the tournament default).")] = None,
    startup_ms: Annotated[Optional[int], typer.Option(min=1,
            help="Startup limit (default: the tournament default).")] = None,
    deals: Annotated[int, typer.Option(
        min=1, help="Deals per game and seat count with the default options (each played in "
        "every seat); each further option set plays half as many, at least one.")] = 2,
    sandbox: Annotated[str, typer.Option(
        help="auto (bwrap when it works here), none or bwrap: as in a tournament.")] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False,
) -> None:
    """Play the bot against the random bot in each claimed game, seat count and option set that
    changes what a bot is sent; exit 0 when clean."""
    from arena.checker import CheckStopped, check_bot, resolve_target, stop_on_signals
    from arena.cli.games import parse_options
    from arena.config import TimeConfig
    from arena.protocol import TimeControl

    defaults = TimeConfig()
    time = TimeControl(startup_ms=startup_ms or defaults.startup_ms,
                       move_ms=move_ms or defaults.move_ms)
    try:
        options = parse_options(option) if option else None
    except typer.BadParameter as exc:  # one line, like every other bad input
        fail(ConfigError(f"-o: {exc.message}"))
    try:
        with stop_on_signals():
            spec, games, expected, language = resolve_target(target, db, sandbox)
            report = check_bot(spec, games, game, time, deals, expected=expected,
                               options=options, language=language)
    except ArenaError as exc:
        fail(exc)
    except CheckStopped as exc:
        err_console.print(f"[red]error:[/red] check stopped by {exc}: its bots were stopped, "
                          "no report", highlight=False, soft_wrap=True)
        raise typer.Exit(128 + exc.signum) from None
    if as_json:
        from dataclasses import asdict

        data = {k: v for k, v in asdict(report).items() if k != "move_ms"}
        data.update(clean=report.clean, median_ms=report.median_ms, worst_ms=report.worst_ms,
                    moves=len(report.move_ms), timeouts=report.timeouts,
                    not_played=report.not_played)
        print(json.dumps(data, indent=2, ensure_ascii=False))
        raise typer.Exit(0 if report.clean else 1)
    _print_check(report, time.move_ms)
    raise typer.Exit(0 if report.clean else 1)


def _print_check(report, move_ms: int) -> None:
    """The check report: each option set's result, the problems with their hints, move times,
    games not played and the bot's stderr (size, warnings, last lines)."""
    from arena.checker import options_label

    for c in report.combos:
        mark = "ok" if c.clean_games == c.games else "PROBLEM"
        unplayed = (f"; {c.not_played} not played after its first failure" if c.not_played
                    else "")
        _say(f"{mark:>7}  {_safe(c.label)}: {c.clean_games}/{c.games} games clean, {c.moves} "
             f"moves, {c.seconds:.1f} s{unplayed}")
    for p in report.problems:
        where = f"{p.seats} seats" + (f", {options_label(p.options)}" if p.options else "")
        game_id = f", game {_safe(p.game_id)}" if p.game_id else ""
        _say(f"[red]problem[/red] in {_safe(p.game)} ({_safe(where)}{game_id}): {_safe(p.words)}")
        if p.detail:
            _say(f"  what happened: {_safe(p.detail)}")
        if p.evidence:
            _say(f"  evidence: {_safe(p.evidence)}")
        if p.hint:
            _say(f"  [bold]hint:[/bold] {_safe(p.hint)}")
    if report.not_played:
        _say(f"games not played: {report.not_played}, because the failure budget ran out: the "
             "check stops an option set's match at the bot's first failure (the rest would "
             "repeat it, each costing up to a full timeout); fix the problem and check again")
    if report.move_ms:
        timed_out = (f", {report.timeouts} timed out (counted at the time waited)"
                     if report.timeouts else ", none timed out")
        _say(f"move time: median {report.median_ms:,.1f} ms, worst {report.worst_ms:,.1f} ms "
             f"(limit {move_ms:,} ms) over {len(report.move_ms):,} moves{timed_out}")
    _print_stderr(report)
    for w in report.warnings:
        _say(f"[yellow]warning:[/yellow] {_safe(w)}")
    verdict = "clean" if report.clean else f"{len(report.problems)} problem(s)"
    flagged = sum(n for _, n in report.stderr_warnings)
    if flagged:
        verdict += f", {flagged:,} warning line(s) in its stderr"
    _say(f"{_safe(report.bot)}: {verdict} ({report.seconds:.1f} s)")


STDERR_WARNINGS_SHOWN = 5  # distinct warning lines of a bot's stderr shown, the most frequent first


def _print_stderr(report) -> None:
    if not report.stderr_bytes:
        _say("stderr: empty")
        return
    flagged = sum(n for _, n in report.stderr_warnings)
    _say(f"stderr: {_size(report.stderr_bytes)}, "
         + (f"{flagged:,} line(s) look like warnings or errors:" if flagged
            else "no line looks like a warning or an error"))
    ranked = sorted(report.stderr_warnings, key=lambda w: -w[1])
    for line, times in ranked[:STDERR_WARNINGS_SHOWN]:
        _say(f"  {times:>5,}× {_safe(line[:300])}")
    if len(ranked) > STDERR_WARNINGS_SHOWN:
        _say(f"         … and {len(ranked) - STDERR_WARNINGS_SHOWN} other distinct line(s)")
    # A clean bot's tail is shorter: enough to see what it logs, not a wall of text.
    lines = report.stderr_tail.splitlines()[-(12 if report.problems else 5):]
    _say("the bot's stderr (last lines):")
    for line in lines:
        _say(f"  | {_safe(line)}")


def _size(n: int) -> str:
    return f"{n:,} bytes" if n < 10_000 else f"{n / 1024:,.1f} KiB" if n < 10 << 20 \
        else f"{n / (1 << 20):,.1f} MiB"


@bot_app.command()
def new(
    name: Annotated[str, typer.Argument(help="The new bot's name (also its folder's).")],
    lang: Annotated[Lang, typer.Option("--lang", help="The kit's language.")] = Lang.python,
    directory: Annotated[Path, typer.Option("--dir", help="Where the bot's folder is created.")] = Path("."),
) -> None:
    """Write a working bot folder (manifest, source, README) from the author's kit."""
    from arena.kits import new_bot

    try:
        folder = new_bot(name, lang.value, directory)
    except ArenaError as exc:
        fail(exc)
    except OSError as exc:  # --dir is a file, or a folder that cannot be written
        fail(ConfigError(f"--dir: cannot write {directory / name}: {exc.strerror or exc}"))
    _say(f"wrote {_safe(folder)}: edit the strategy, then `arena bot check {_safe(folder)}`")

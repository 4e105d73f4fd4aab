"""Rating commands — `arena ratings`, `leaderboard`, `crosstable`, `h2h`, `sprt` — and `arena failures`."""

from __future__ import annotations

import csv
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from arena.cli._app import (
    DB_OPTION,
    TOURNAMENT_ARG,
    OutputFormat,
    app,
    console,
    fail,
    new_table,
    open_store,
    plain_number,
    print_ratings,
    printable,
    whole_number,
)
from arena.cli.tables import TEXT, WIDE_OPTION, PagedMatrix
from arena.errors import ArenaError, ConfigError
from arena.ratings.defaults import DEFAULT_RATING, DEFAULT_SAMPLES
from arena.reports import FAILURE_FIELDS, failure_rows, safe_cell
from arena.store.views import TournamentView, tournament_row

METHOD_OPTION = typer.Option("--method", "-m", help="elo, bt (Bradley–Terry) or pl (Plackett–Luce); "
                             "default: the maximum-likelihood one for the games (bt for 2 seats).")
SAMPLES_OPTION = typer.Option("--samples", min=0, max=10_000,
                              help="Bootstrap samples for the 95 % intervals (0: none).")


@app.command()
def ratings(
    target: Annotated[Optional[str], typer.Argument(
        help="Tournament id (default: newest), or `fit` to rate a results file.")] = None,
    file: Annotated[Optional[Path], typer.Argument(
        help="With `fit`: a JSONL results file, one {\"players\": [...], \"ranks\": [...]} per line.")] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    stage: Annotated[Optional[int], typer.Option(min=1, help="Only this stage (default: every stage).")] = None,
    method: Annotated[Optional[str], METHOD_OPTION] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
    wide: Annotated[bool, WIDE_OPTION] = False,
    anchor: Annotated[Optional[str], typer.Option(
        help="With `fit`: NAME=RATING fixes that player's rating (instead of the pool average).")] = None,
    average: Annotated[float, typer.Option(help="With `fit`: the pool's average rating.")] = DEFAULT_RATING,
    samples: Annotated[int, SAMPLES_OPTION] = DEFAULT_SAMPLES,
    seed: Annotated[int, typer.Option(help="With `fit`: the bootstrap's seed.")] = 0,
    los: Annotated[bool, typer.Option("--los", help="Also print the likelihood of superiority "
                                      "between every two bots.")] = False,
) -> None:
    """Print a tournament's rating table (one per stage), or `arena ratings fit FILE` to rate any results."""
    from arena import rating_reports  # numpy and scipy: loaded only when needed

    if target == "fit":
        if file is None:
            fail(ConfigError("ratings fit: give the results file, e.g. `arena ratings fit results.jsonl`"))
        try:
            result = rating_reports.fit_file(file, method, anchor, average, samples, seed)
        except ArenaError as exc:
            fail(exc)
        print_ratings(result.rows, f"{file.name}", format, result.method)
        if los and result.los:
            _print_los([r["bot"] for r in result.rows], result.los, format)
        return
    if file is not None:
        fail(ConfigError(f"unexpected argument {str(file)!r} (only `fit` takes a file)"))
    try:
        tournament = None
        if target is not None:
            try:
                tournament = int(target)
            except ValueError:
                raise ConfigError(f"expected a tournament id or `fit`, got {target!r}") from None
        # Games are loaded when the table may be computed from them rather than stored.
        view = TournamentView.load(open_store(db), tournament, games=method is not None or los)
        t = view.tournament
        stages = view.stages
        if stage is not None:
            stages = [s for s in stages if s["stage"] == stage]
            if not stages:
                raise ConfigError(f"--stage: tournament {t['id']} has no stage {stage}")
        tables = [(s, rating_reports.tournament_ratings(view, s["stage"], method),
                   rating_reports.los_table(view, s["stage"], method) if los else None)
                  for s in stages]
    except ArenaError as exc:
        fail(exc)
    for s, table, superiority in tables:
        where = f"stage {s['stage']} {s['name']}, " if len(stages) > 1 or stage else ""
        print_ratings(table["rows"], f"{t['name']} — {s['game']} ({where}tournament {t['id']}, "
                      f"{t['status']})", format, table["method"], table["tiebreaks"])
        if superiority:
            _print_los(superiority["bots"], superiority["los"], format)


def _print_los(bots: list[str], matrix: dict, format: OutputFormat) -> None:
    """The LOS matrix: row bot better than column bot, in %."""
    if format is OutputFormat.json:
        print(json.dumps({"los": matrix}, indent=2, ensure_ascii=False))
        return
    if format is OutputFormat.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(("bot", "opponent", "los"))
        writer.writerows((safe_cell(a), safe_cell(b), round(matrix[a][b], 4))
                         for a in bots for b in bots if a != b)
        return
    console.print(PagedMatrix("likelihood of superiority (row better than column, %)",
                              [printable(a) for a in bots],
                              [["—" if a == b else f"{100 * matrix[a][b]:.1f}" for b in bots]
                               for a in bots]))


@app.command()
def leaderboard(
    game: Annotated[str, typer.Argument(help="Game name (see `arena games`).")],
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    since: Annotated[Optional[str], typer.Option(
        help="Only games recorded at or after this ISO date/time, e.g. 2026-11-01.")] = None,
    method: Annotated[Optional[str], METHOD_OPTION] = None,
    samples: Annotated[int, SAMPLES_OPTION] = DEFAULT_SAMPLES,
    ladder: Annotated[Optional[str], typer.Option(help="Only this ladder's games (name or id).")] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
    wide: Annotated[bool, WIDE_OPTION] = False,
) -> None:
    """One game's leaderboard: every recorded game of it (tournaments and ladders), per bot version."""
    from arena import rating_reports  # numpy and scipy: loaded only when needed

    try:
        if since is not None:
            since = _iso(since)
        store = open_store(db)
        ladder_id = None
        if ladder is not None:
            from arena.store.views import find_ladder

            ladder_id = find_ladder(store, ladder)["id"]
        board = rating_reports.leaderboard(store, game, method, since, samples,
                                           ladder_id=ladder_id)
    except ArenaError as exc:
        fail(exc)
    scope = f"since {since}" if since else "all games"
    if ladder is not None:
        scope += f" of ladder {ladder}"
    rows = board["rows"]
    if format is OutputFormat.table:  # the day is enough on a terminal
        rows = [{**r, "last": (r["last_played"] or "")[:10]} for r in rows]
    print_ratings(rows, f"{game} leaderboard ({scope})", format, board["method"],
                  extra=("last",) if format is OutputFormat.table else ("last_played",))


def _iso(text: str) -> str:
    """An ISO date or date-time as the stored UTC timestamps compare (ConfigError otherwise)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"--since: expected an ISO date such as 2026-11-01, got {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")


@app.command()
def crosstable(
    tournament: Annotated[Optional[int], TOURNAMENT_ARG] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    stage: Annotated[Optional[int], typer.Option(min=1, help="Only this stage (default: every stage).")] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
    wide: Annotated[bool, WIDE_OPTION] = False,
) -> None:
    """Every bot against every other: pair points and games, as a chess crosstable."""
    from arena import rating_reports  # numpy and scipy: loaded only when needed

    try:
        view = TournamentView.load(open_store(db), tournament, games=True)
        t = view.tournament
        stages = [s for s in view.stages if stage is None or s["stage"] == stage]
        if not stages:
            raise ConfigError(f"--stage: tournament {t['id']} has no stage {stage}")
        tables = [(s, rating_reports.crosstable_report(view, s["stage"])) for s in stages]
    except ArenaError as exc:
        fail(exc)
    if format is OutputFormat.json:
        print(json.dumps([{"stage": s["stage"], **x} for s, x in tables], indent=2, ensure_ascii=False))
        return
    if format is OutputFormat.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(("stage", "bot", "opponent", "pair_points", "games", "wins", "draws",
                         "losses"))
        for s, x in tables:
            for a in x["bots"]:
                for b in x["bots"]:
                    if a != b:
                        c = x["cells"][a][b]
                        writer.writerow((s["stage"], safe_cell(a), safe_cell(b),
                                         whole_number(c["pair_points"]), c["games"], c["wins"],
                                         c["draws"], c["losses"]))
        return
    for s, x in tables:
        bots = x["bots"]
        values, totals = [], []
        for a in bots:
            cells = []
            for b in bots:
                c = x["cells"][a].get(b)
                # A pair that never met shows a dot: an empty cell reads as a missing number.
                cells.append("—" if c is None else f"{plain_number(c['pair_points'])}/{c['games']}"
                             if c["games"] else "·")
            values.append(cells)
            points = sum(c["pair_points"] for c in x["cells"][a].values())
            games = sum(c["games"] for c in x["cells"][a].values())
            totals.append(f"{plain_number(points)}/{games}")
        unmet = any("·" in row for row in values)
        console.print(PagedMatrix(
            escape(f"{t['name']} — {s['game']} crosstable (stage {s['stage']}; "
                   f"pair points/games against each opponent)"),
            [printable(a) for a in bots], values, totals,
            caption="· did not meet" if unmet else None))


@app.command()
def h2h(
    bot_a: Annotated[str, typer.Argument(metavar="BOT", help="NAME or NAME@VERSION.")],
    bot_b: Annotated[str, typer.Argument(metavar="OPPONENT", help="NAME or NAME@VERSION.")],
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    tournament: Annotated[Optional[int], typer.Option(help="Only this tournament.")] = None,
    game: Annotated[Optional[str], typer.Option(help="Only this game.")] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
    wide: Annotated[bool, WIDE_OPTION] = False,
) -> None:
    """Head to head: two bots' record, per-deal pair scores, Elo difference with its margin, LOS."""
    from arena import rating_reports  # numpy and scipy: loaded only when needed

    try:
        result = rating_reports.head_to_head(open_store(db), bot_a, bot_b, tournament, game).as_dict()
    except ArenaError as exc:
        fail(exc)
    if format is OutputFormat.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    lines = result["lines"]
    if format is OutputFormat.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(("bot", "opponent", "game", "seats", "games", "wins", "draws", "losses",
                         "score_pct", "elo", "elo_lo", "elo_hi", "basis", "los", "pairs_0",
                         "pairs_0.5", "pairs_1", "pairs_1.5", "pairs_2"))
        for line in [*lines, {**result, "game": "all", "seats": None}]:
            elo = line["elo"] or {}
            writer.writerow((safe_cell(bot_a), safe_cell(bot_b), safe_cell(line["game"]),
                             line["seats"], line["games"], line["wins"], line["draws"],
                             line["losses"], line["score_pct"], elo.get("diff"), elo.get("lo"),
                             elo.get("hi"), elo.get("basis"), line["los"], *line["pentanomial"]))
        return
    say = lambda text: console.print(text, highlight=False, markup=False)  # noqa: E731
    say(f"{bot_a} against {bot_b}: {result['games']} games, +{result['wins']} ={result['draws']} "
        f"-{result['losses']}" + (f" ({result['score_pct']:.1f} %)" if result["games"] else ""))
    if sum(result["pentanomial"]):
        counts = ", ".join(f"{p}: {n}" for p, n in zip(("0", "½", "1", "1½", "2"), result["pentanomial"]))
        say(f"duplicate deals (pair score of {bot_a}: deals): {counts}")
    if len(lines) > 1:
        _print_h2h_lines(bot_a, bot_b, result)
        return
    if result["elo"]:
        e = result["elo"]
        say(f"Elo difference {e['diff']:+.1f} (95 %: {e['lo']:+.1f} to {e['hi']:+.1f}, {e['basis']})")
    elif result["games"]:
        say("Elo difference: not estimable (a perfect score, or too few games)")
    if result["los"] is not None:
        say(f"likelihood of superiority {100 * result['los']:.1f} %")


def _print_h2h_lines(bot_a: str, bot_b: str, result: dict) -> None:
    """One row per game (and seat count) and the pooled row, each from its own games only."""
    lines = result["lines"]
    counts: dict[str, int] = {}
    for line in lines:
        counts[line["game"]] = counts.get(line["game"], 0) + 1
    table = new_table(f"{printable(bot_a)} against {printable(bot_b)}, per game (each row's figures from its own "
                      "games)", "game", "games", "W-D-L", "score %", "Elo", "95 %", "LOS %",
                      "basis", right=("games", "W-D-L", "score %", "Elo", "LOS %"),
                      priorities={"score %": 1, "Elo": 1, "95 %": 2, "W-D-L": 3, "LOS %": 3,
                                  "basis": 4})
    for line in [*lines, {**result, "game": "all games", "seats": None}]:
        label = line["game"] + (f" ({line['seats']} seats)"
                                if line["seats"] and counts.get(line["game"], 0) > 1 else "")
        e = line["elo"]
        table.add_row(printable(label), str(line["games"]),
                      f"{line['wins']}-{line['draws']}-{line['losses']}",
                      f"{line['score_pct']:.1f}",
                      "—" if e is None else f"{e['diff']:+.0f}",
                      "—" if e is None else f"{e['lo']:+.0f}…{e['hi']:+.0f}",
                      "—" if line["los"] is None else f"{100 * line['los']:.1f}",
                      "" if e is None else e["basis"])
    console.print(table)


@app.command("sprt")
def sprt_command(
    bot_a: Annotated[str, typer.Argument(metavar="NEW", help="The new version: NAME or NAME@VERSION.")],
    bot_b: Annotated[str, typer.Argument(metavar="BASE", help="The baseline: NAME or NAME@VERSION.")],
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    elo0: Annotated[float, typer.Option(help="H0: NEW is this much stronger (Elo).")] = 0.0,
    elo1: Annotated[float, typer.Option(help="H1: NEW is this much stronger (Elo).")] = 5.0,
    alpha: Annotated[float, typer.Option(min=0.0001, max=0.5, help="False-positive rate.")] = 0.05,
    beta: Annotated[float, typer.Option(min=0.0001, max=0.5, help="False-negative rate.")] = 0.05,
    model: Annotated[str, typer.Option(help="logistic or normalized (fishtest's models).")] = "logistic",
    tournament: Annotated[Optional[int], typer.Option(help="Only this tournament.")] = None,
    game: Annotated[Optional[str], typer.Option(help="Only this game.")] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
) -> None:
    """SPRT over recorded games: is NEW shown elo1 stronger than BASE (H1) or not (H0)? Exit 0 once decided."""
    from arena import rating_reports  # numpy and scipy: loaded only when needed

    try:
        from arena.ratings.sequential import MODELS

        if model not in MODELS:
            raise ConfigError(f"--model: unknown model {model!r}; choose {' or '.join(MODELS)}")
        if elo1 <= elo0:
            raise ConfigError(f"--elo1 ({elo1}) must be above --elo0 ({elo0})")
        result = rating_reports.sprt_report(open_store(db), bot_a, bot_b, elo0, elo1, alpha,
                                            beta, model, tournament, game)
    except ArenaError as exc:
        fail(exc)
    if format is OutputFormat.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    elif format is OutputFormat.csv:
        keys = ("a", "b", "basis", "elo0", "elo1", "alpha", "beta", "model", "llr", "lower",
                "upper", "decision")
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(keys)
        writer.writerow([safe_cell(result[k]) for k in keys])
    else:
        verdict = {"H1": f"H1 accepted: {bot_a} is stronger by about {elo1:g} Elo or more",
                   "H0": f"H0 accepted: {bot_a} is not {elo1:g} Elo stronger",
                   None: "no decision yet: play more games"}[result["decision"]]
        console.print(
            f"SPRT ({model}) elo0={elo0:g} elo1={elo1:g} alpha={alpha:g} beta={beta:g}, "
            f"{result['basis']} counts {result['counts']}: LLR {result['llr']:.3f} "
            f"[{result['lower']:.3f}, {result['upper']:.3f}] — {verdict}",
            highlight=False, markup=False)
    raise typer.Exit(0 if result["decision"] else 3)


@app.command()
def failures(
    tournament: Annotated[Optional[int], TOURNAMENT_ARG] = None,
    db: Annotated[Path, DB_OPTION] = Path("arena.db"),
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
    wide: Annotated[bool, WIDE_OPTION] = False,
) -> None:
    """List the forfeited games of a tournament: reason, evidence and the culprit's stderr tail."""
    try:
        store = open_store(db)
        t = tournament_row(store, tournament)
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
        writer.writerows([safe_cell(r[k]) for k in FAILURE_FIELDS] for r in rows)
        return
    table = new_table(f"forfeits — tournament {t['id']}", "game", "bot", "reason", "detail",
                      "evidence", "stderr (tail)", "hint",
                      priorities={"reason": 1, "detail": 2, "evidence": 3, "stderr (tail)": 4,
                                  "hint": 5},
                      kinds={"detail": TEXT, "evidence": TEXT, "stderr (tail)": TEXT, "hint": TEXT})
    for r in rows:
        table.add_row(*(printable(r[k]) for k in ("game", "bot", "reason", "detail", "evidence",
                                                   "stderr_tail", "hint")))
    console.print(table)
    if not rows:
        console.print("no forfeits", highlight=False, markup=False)

"""Every table-printing command reads at 80, 120 and 200 columns: no line is wider than the
terminal, and every number and name it shows is whole (never cut, never split over two lines).

The commands are listed once, in `COMMANDS`: each with its arguments and the values it must
show, taken from the same command's `--format json` (or the store), by column header. A column
that folded away is named under its table; its values are then not looked for, but the columns
that never fold (`ESSENTIAL`) must always be there. `--wide` shows every column.
A new command of the CLI is either in `COMMANDS` or in `NOT_TABLES` with the reason
(`test_every_command_is_listed`).

The database: registry bots with long names, a round robin with a crashing bot (forfeits), an
event of a 3-seat Swiss stage and a round robin, a 30-bot Swiss (the crosstable pages), and a
ladder of registry bots (played in-process).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.cli._app import console, err_console
from arena.store import Store
from tests.support.botfolders import make_bot
from tests.support.config import python_bot, python_bots, write_tournament
from tests.support.submit_server import AUTHOR_TOKEN, shared_server
from tests.support.tournaments import play_config

WIDTHS = (80, 120, 200)
LONG = "xeri_heuristic_deluxe"
LONGER = "random_walker_supreme"


class Crasher:
    """In-process bot that fails at its first move: its games are forfeits."""

    def choose(self, observation, legal_actions):
        raise RuntimeError("crashed on purpose")


# -- the database -----------------------------------------------------------------------------------


def _ladder(folder: Path, db: Path) -> None:
    """A short Xeri ladder of the registry bots, each played by an in-process random bot."""
    from dataclasses import replace

    from arena.config import load_ladder_config
    from arena.executors import SerialExecutor
    from arena.ladder import Ladder, key_of
    from arena.registry import Registry
    from tests.support.bots import SeededRandom

    def in_process(self, version):
        key = key_of(version)
        spec = replace(self.registry.spec(version, name=key), command=(), factory=SeededRandom)
        self.specs[key], self.bot_ids[key] = spec, version.id
        return spec

    path = folder / "ladder.toml"
    path.write_text('name = "ladder-of-long-names"\nseed = 4\ndeals = 1\nvalidate = false\n'
                    '[[formats]]\ngame = "xeri"\nseats = 2\noptions = { rounds = 1 }\n'
                    '[matchmaking]\nplacement_games = 2\n[leaderboard]\nevery_tables = 4\n'
                    'samples = 20\n')
    ladder = Ladder(load_ladder_config(path), Store(db), Registry(db), SerialExecutor(pin=False),
                    games=12)
    ladder._load_spec = in_process.__get__(ladder)
    ladder.run()


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """The database every command reads (built once)."""
    from arena.registry import Registry

    folder = tmp_path_factory.mktemp("widths")
    path = folder / "arena.db"
    registry = Registry(path)
    registry.add(make_bot(folder / "deluxe", LONG, "1.0.0"))
    registry.add(make_bot(folder / "walker", LONGER, "2"))
    store = Store(path)
    rr = [python_bot(LONG), python_bot(LONGER), *python_bots(2),
          python_bot("crasher", f"{__name__}:Crasher")]
    play_config(write_tournament(folder, name="long-names-round-robin", format="round_robin",
                                 deals=1, options={"rounds": 1}, max_failures=2, bots=rr), store)
    stages = [{"name": "three-seat-swiss", "game": "crosswalk", "format": "swiss", "seats": 3,
               "rounds": 2, "options": {"rounds": 1}},
              {"name": "xeri-final", "game": "xeri", "format": "round_robin",
               "options": {"rounds": 1}}]
    play_config(write_tournament(folder, name="event-of-stages", deals=1, stages=stages,
                                 bots=[python_bot(LONG), python_bot(LONGER), *python_bots(4)]),
                store)
    thirty = [python_bot(f"player_{i:02d}_tactician") for i in range(30)]
    play_config(write_tournament(folder, name="thirty-bot-swiss", format="swiss", rounds=3,
                                 deals=1, options={"rounds": 1}, bots=thirty), store)
    _ladder(folder, path)
    return path


# -- what each command must show ----------------------------------------------------------------------


def plain(x) -> str:
    """A number as the tables print it."""
    x = round(float(x), 3)
    return str(int(x)) if x.is_integer() else f"{x:g}"


def json_of(db: Path, *args: str):
    """The JSON a command prints (several documents in a row: a list of them)."""
    result = CliRunner().invoke(app, [*args, "--db", str(db)])
    assert result.exit_code in (0, 3), result.output
    docs, text, at = [], result.stdout, 0
    decoder = json.JSONDecoder()
    while text[at:].strip():
        at += len(text[at:]) - len(text[at:].lstrip())
        doc, at = decoder.raw_decode(text, at)
        docs.append(doc)
    return docs[0] if len(docs) == 1 else docs


def rating_values(rows: list[dict]) -> dict[str, list[str]]:
    """A rating table's cells by column header."""
    from arena.cli._app import interval_text

    out: dict[str, list[str]] = {"#": [], "bot (version)": [], "rating": [], "95 %": [],
                                 "games": [], "pair pts": [], "W-D-L": [], "score %": []}
    for r in rows:
        out["#"].append(str(r["rank"]))
        out["bot (version)"].append(r["bot"])
        out["rating"].append(f"{r['rating']:.0f}")
        if interval_text(r):
            out["95 %"].append(interval_text(r))
        out["games"].append(str(r["games"]))
        out["pair pts"].append(plain(r["pair_points"]))
        out["W-D-L"].append(f"{plain(r['wins'])}-{plain(r['draws'])}-{plain(r['losses'])}")
        out["score %"].append(f"{r['score_pct']:.1f}")
    return out


def ratings_values(db, *args):
    return rating_values(json_of(db, "ratings", *args, "-f", "json")["rows"])


def leaderboard_values(db):
    return rating_values(json_of(db, "leaderboard", "xeri", "--samples", "40", "-f", "json")["rows"])


def los_values(db):
    ratings, los = json_of(db, "ratings", "1", "--los", "-f", "json")
    bots = [r["bot"] for r in ratings["rows"]]
    cells = [f"{100 * los['los'][a][b]:.1f}" for a in bots for b in bots if a != b]
    return {**rating_values(ratings["rows"]), "los": cells}


def crosstable_values(db, tournament):
    out = {"bot": [], "cells": []}
    for x in json_of(db, "crosstable", tournament, "-f", "json"):
        out["bot"] += x["bots"]
        for a in x["bots"]:
            row = [x["cells"][a][b] for b in x["bots"] if b != a]
            out["cells"] += [f"{plain(c['pair_points'])}/{c['games']}" for c in row if c["games"]]
            out["cells"].append(f"{plain(sum(c['pair_points'] for c in row))}/"
                                f"{sum(c['games'] for c in row)}")
    return out


def show_values(db, tournament):
    report = json_of(db, "tournament", "show", tournament, "-f", "json")
    out = {"bot": [], "pts": [], "game pts": [], "score": [], "#": []}
    for st in report["stages"]:
        for r in st["standings"]:
            out["#"].append(str(r["rank"]))
            out["bot"].append(r["bot"])
            out["pts"].append(plain(r["match_points"]))
            out["game pts"].append(plain(r["game_points"]))
        for rnd in st["pairings"]:
            for tb in rnd["tables"]:
                out["bot"] += [b["bot"] for b in tb["bots"]]
    for r in report["overall"] or []:
        out["score"].append(plain(r["score"]))
    return out


def status_values(db, tournament):
    info = json_of(db, "tournament", "status", tournament, "-f", "json")
    return {"name": [s["name"] for s in info["stages"]],
            "rounds": [f"{s['rounds_recorded']}/{s['rounds_total']}" for s in info["stages"]],
            "games": [f"{s['games_done']}/{s['games_planned']}" for s in info["stages"]]}


def list_values(db):
    rows = Store.open_existing(db).tournaments()
    return {"id": [str(r["id"]) for r in rows], "name": [r["name"] for r in rows],
            "game": [r["game"] for r in rows], "format": [r["format"] for r in rows],
            "status": [r["status"] for r in rows], "games": [str(r["games"]) for r in rows]}


def failures_values(db):
    rows = json_of(db, "failures", "1", "-f", "json")
    assert rows, "the round robin has forfeits"
    return {"game": [r["game"] for r in rows], "bot": [r["bot"] for r in rows],
            "reason": [r["reason"] for r in rows]}


def bot_list_values(db):
    rows = json_of(db, "bot", "list", "--json")
    return {"bot": [r["name"] for r in rows], "version": [r["version"] for r in rows],
            "status": [r["status"] for r in rows], "hash": [r["content_hash"][:8] for r in rows]}


def bot_show_values(db):
    info = json_of(db, "bot", "show", LONG, "--json")
    return {"ref": [v["ref"] for v in info["versions"]],
            "hash": [v["content_hash"][:12] for v in info["versions"]]}


def ladder_values(db):
    info = json_of(db, "ladder", "status", "-f", "json")
    out = {"name": [info["name"]]}
    for board in info["leaderboards"].values():
        out.update(rating_values(rating_records(board["rows"])))
    return out


def rating_records(rows):
    from arena.cli._app import rating_records as records

    return records(rows)


def h2h_values(db):
    r = json_of(db, "h2h", LONG, LONGER, "-f", "json")
    out = {"bots": [LONG, LONGER], "counts": [str(r["games"]), f"+{r['wins']}",
                                              f"={r['draws']}", f"-{r['losses']}"]}
    if len(r["lines"]) > 1:  # one row per game and seat count, then the pooled row
        out.update({"game": [line["game"] for line in r["lines"]],
                    "games": [str(line["games"]) for line in r["lines"]],
                    "score %": [f"{line['score_pct']:.1f}" for line in [*r["lines"], r]]})
    return out


def sprt_values(db):
    r = json_of(db, "sprt", LONG, LONGER, "-f", "json")
    return {"llr": [f"{r['llr']:.3f}", f"{r['lower']:.3f}", f"{r['upper']:.3f}"]}


def games_values(db):
    from arena.cli.games import _values
    from arena.games import game_names, get_game

    out = {"option": [], "default": [], "values": []}
    for name in game_names():
        for opt, field in get_game(name).game_type.options_model.model_fields.items():
            out["option"].append(opt)
            out["default"].append(json.dumps(field.get_default(call_default_factory=True)))
            out["values"] += _values(field.annotation).split(" | ")
    return out


def submissions_values(db):
    rows = shared_server().submissions.values()  # `arena submissions` reads a server, not `db`
    return {"id": [str(r["id"]) for r in rows], "bot": [r["bot"] for r in rows],
            "version": [r["version"] for r in rows], "status": [r["status"] for r in rows],
            "submitted": [r["created_at"][:16].replace("T", " ") for r in rows]}


def conformance_values(db):
    from arena.conformance import case_id, cases

    return {"case": [part for c in cases(["xeri"]) if c[1] == 2 for part in case_id(c).split(",")]}


# Command -> (its arguments, without --db; the values it shows by column header, or None: see
# the test). `--db` is added to every command that takes it.
COMMANDS: dict[str, tuple[list[str], object]] = {
    "tournament list": (["tournament", "list"], list_values),
    "tournament show": (["tournament", "show", "1"], lambda db: show_values(db, "1")),
    "tournament show (event)": (["tournament", "show", "2"], lambda db: show_values(db, "2")),
    "tournament status": (["tournament", "status", "2"], lambda db: status_values(db, "2")),
    "ratings": (["ratings", "1"], lambda db: ratings_values(db, "1")),
    "ratings (Swiss stage)": (["ratings", "2", "--stage", "1"],
                              lambda db: ratings_values(db, "2", "--stage", "1")),
    "ratings --los": (["ratings", "1", "--los"], los_values),
    "leaderboard": (["leaderboard", "xeri", "--samples", "40"], leaderboard_values),
    "crosstable": (["crosstable", "2"], lambda db: crosstable_values(db, "2")),
    "crosstable (30 bots)": (["crosstable", "3"], lambda db: crosstable_values(db, "3")),
    "h2h": (["h2h", LONG, LONGER], h2h_values),
    "sprt": (["sprt", LONG, LONGER], sprt_values),
    "failures": (["failures", "1"], failures_values),
    "bot list": (["bot", "list"], bot_list_values),
    "bot show": (["bot", "show", LONG], bot_show_values),
    "ladder status": (["ladder", "status"], ladder_values),
    "games": (["games"], games_values),
    "conformance": (["conformance", "xeri", "--games", "1", "--seats", "2"], conformance_values),
    "submissions": (["submissions"], submissions_values),
}
# Columns that never fold, by command: the table is pointless without them.
ESSENTIAL = {
    "ratings": ("#", "bot (version)", "rating"),
    "ratings (Swiss stage)": ("#", "bot (version)", "rating"),
    "leaderboard": ("#", "bot (version)", "rating"),
    "ladder status": ("bot (version)", "rating"),
    "tournament list": ("id", "name"),
    "tournament show (event)": ("#", "bot", "pts", "score"),
    "crosstable (30 bots)": ("bot", "cells"),
    "bot list": ("bot", "version"),
    "failures": ("game", "bot"),
    "games": ("option", "default"),
    "submissions": ("id", "bot", "version", "status"),
}
# Commands that print no table, and why.
NOT_TABLES = {
    "run": "plays a tournament; its closing tables are those of `tournament show` and `ratings`, "
           "and the README shows them at 80 columns",
    "serve": "starts the web app",
    "submit": "uploads a bot and follows its check: lines (tests/integration/test_submit_cli.py)",
    "replay": "replays one game (text, not a table)",
    "schema": "writes files",
    "play": "a game played in the terminal, drawn as text",
    "transcript": "prints protocol messages as JSON lines",
    "tournament cancel": "one line",
    "tournament export": "JSON lines or CSV",
    "bot add": "one line", "bot remove": "one line", "bot new": "one line",
    "bot check": "a report of lines, each wrapped",
    "ladder start": "plays a ladder", "ladder resume": "plays a ladder",
    "ladder stop": "one line",
    "server": "starts the competition server",
    "author add": "prints a token", "author rotate": "prints a token", "author revoke": "one line",
    "author list": "short columns (name, role, counts); this database has no authors",
}


def command_paths() -> dict[str, object]:
    """Every command of the CLI by its path (`tournament show`), as click commands."""
    import typer.main

    out = {}

    def walk(group, prefix):
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):
                walk(cmd, f"{prefix}{name} ")
            else:
                out[f"{prefix}{name}"] = cmd
    walk(typer.main.get_command(app), "")
    return out


_expected: dict[tuple[str, Path], dict] = {}


def expected_values(name: str, db: Path) -> dict[str, list[str]]:
    """A command's values by column header (computed once per database)."""
    if (name, db) not in _expected:
        _expected[name, db] = COMMANDS[name][1](db)
    return _expected[name, db]


def run_at(db: Path, width: int, args: list[str], monkeypatch) -> str:
    monkeypatch.setattr(console, "_width", width)
    monkeypatch.setattr(err_console, "_width", width)
    takes_db = args[0] not in ("games", "conformance", "submissions")
    if args[0] == "submissions":  # a stand-in competition server, in this process
        monkeypatch.setenv("ARENA_SERVER", shared_server().url)
        monkeypatch.setenv("ARENA_TOKEN", AUTHOR_TOKEN)
    result = CliRunner().invoke(app, [*args, *(["--db", str(db)] if takes_db else [])])
    assert result.exit_code in (0, 3), result.output  # sprt: 3 while undecided
    return result.stdout


def folded_columns(output: str) -> set[str]:
    """The columns the notes under the tables say were left out."""
    text = " ".join(output.split())
    found = set()
    for names in re.findall(r"left out to fit \d+ columns: (.*?); --wide", text):
        found.update(n.strip() for n in names.split(", "))
    return found


# -- the tests ------------------------------------------------------------------------------------------


def test_every_command_is_listed():
    paths = command_paths()
    listed = {path_of(args) for args, _ in COMMANDS.values()}
    assert not listed & set(NOT_TABLES)
    assert set(paths) == listed | set(NOT_TABLES), "a new command: add it to COMMANDS or NOT_TABLES"
    for path, cmd in paths.items():
        if any(p.name == "wide" for p in cmd.params):
            assert path in listed or path == "run", f"{path} takes --wide but is not checked"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_tables_fit_the_width_and_show_whole_values(name, width, db, monkeypatch):
    args = COMMANDS[name][0]
    expected = expected_values(name, db)
    output = run_at(db, width, args, monkeypatch)
    # a command to copy (its own line, indented) is never broken, however long its --db path
    too_wide = [line for line in output.splitlines()
                if len(line) > width and not line.startswith("  arena ")]
    assert not too_wide, f"{name} at {width} columns:\n" + "\n".join(too_wide)
    folded = folded_columns(output)
    assert not folded & set(ESSENTIAL.get(name, ())), f"{name} folded {folded}"
    for header, cells in expected.items():
        if header in folded:
            continue
        missing = sorted({c for c in cells if c not in output})
        assert not missing, f"{name} at {width} columns lacks whole {header} values {missing}:\n{output}"


def path_of(args: list[str]) -> str:
    """The command path of a COMMANDS entry's arguments."""
    return " ".join(args[:2]) if args[0] in ("tournament", "bot", "ladder") else args[0]


WIDE = sorted(n for n, (args, _) in COMMANDS.items()
              if any(p.name == "wide" for p in command_paths()[path_of(args)].params))


@pytest.mark.parametrize("name", WIDE)
def test_wide_shows_every_column(name, db, monkeypatch):
    args = COMMANDS[name][0]
    expected = expected_values(name, db)
    output = run_at(db, 80, [*args, "--wide"], monkeypatch)
    assert not folded_columns(output)
    for header, cells in expected.items():
        missing = sorted({c for c in cells if c not in output})
        assert not missing, f"{name} --wide lacks {header} values {missing}"


def test_a_narrow_rating_table_keeps_rank_name_and_rating_and_says_what_it_left_out(db, monkeypatch):
    output = run_at(db, 80, ["ratings", "2", "--stage", "1"], monkeypatch)
    head = next(line for line in output.splitlines() if "bot (version)" in line)
    assert "#" in head and "rating" in head and "95 %" in head
    note = " ".join(output.split())
    assert "--wide shows them, as do --format=csv and --format=json" in note


def test_a_30_bot_crosstable_pages_with_no_empty_cell(db, monkeypatch):
    for width in WIDTHS:
        output = run_at(db, width, ["crosstable", "3"], monkeypatch)
        blocks = re.findall(r"opponents (\d+)–(\d+) of 30", " ".join(output.split()))
        assert blocks and blocks[0][0] == "1" and blocks[-1][1] == "30"  # it pages, in order
        body = [line for line in output.splitlines() if line.startswith("│")]
        assert len(body) == 30 * len(blocks)  # every block has every row, each on one line
        for line in body:
            cells = line.strip("│").split("│")
            assert all(c.strip() for c in cells), line
        assert "· did not meet" in output

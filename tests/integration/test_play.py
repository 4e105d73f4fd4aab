"""`arena play`: a person (scripted input) plays a whole game of each game against an in-process
random bot; the game is recorded and replays; bad input re-prompts; `q` resigns."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from typer.testing import CliRunner

from arena.cli import app
from arena.errors import ConfigError
from arena.play import play_game, table_of
from arena.players.base import BotSpec
from arena.store import Store
from tests.support.bots import SeededRandom

runner = CliRunner()
GAMES = [("xeri", None, {"rounds": 1}), ("crossfire", None, {}), ("crosswalk", 3, {"rounds": 1}),
         ("battlefield_cribbage", None, {"target": 31})]


def random_spec(name: str = "rnd", seed: int = 3) -> BotSpec:
    """An in-process seeded random bot."""
    return BotSpec(name=name, factory=lambda: SeededRandom(seed))


class Typist(io.TextIOBase):
    """A person who types the given lines, then `fallback` for ever (None: the input ends)."""

    def __init__(self, lines: list[str], fallback: str | None = "1"):
        self.lines = list(lines)
        self.fallback = fallback
        self.read_lines = 0

    def readline(self, size: int = -1) -> str:  # noqa: ARG002 - the TextIO signature
        self.read_lines += 1
        if self.lines:
            return self.lines.pop(0) + "\n"
        return "" if self.fallback is None else self.fallback + "\n"


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=80, color_system=None), out


@pytest.mark.parametrize("game,seats,options", GAMES)
def test_a_person_plays_a_whole_game_which_is_recorded_and_replays(tmp_path, game, seats,
                                                                    options):
    store = Store(tmp_path / "p.db")
    con, out = console()
    result = play_game(game, [random_spec()], store, Typist([]), con, seat=1, seats=seats,
                       seed=5, options=options)
    assert result.record.termination == "normal"
    text = out.getvalue()
    assert "you play seat 1" in text and "game over" in text
    assert "   1. " in text  # the legal actions, numbered
    stored = store.load_game(result.game_id)
    assert stored["seats"][1]["bot"] == "you" and len(stored["moves"]) == len(result.record.moves)
    assert [s["score"] for s in stored["seats"]] == result.record.scores
    # Recorded like any game: `arena replay` shows it, its tournament is finished.
    replayed = runner.invoke(app, ["replay", result.game_id, "--db", str(tmp_path / "p.db")])
    assert replayed.exit_code == 0, replayed.output
    assert "end: normal" in replayed.output and "seat 1 you" in replayed.output
    assert store.tournament(result.tournament_id)["status"] == "finished"


def test_invalid_input_re_prompts_with_one_line_and_help_shows_the_actions(tmp_path):
    store = Store(tmp_path / "p.db")
    con, out = console()
    typist = Typist(["", "x", "0", "99", "?", "1"])
    result = play_game("crossfire", [random_spec()], store, typist, con, seed=2)
    text = out.getvalue()
    assert result.record.termination == "normal"
    assert "'x' is not an action: type 1 to 5, ? for help or q to quit" in text
    assert "'99' is not an action" in text and "'0' is not an action" in text
    assert "'' is not an action" in text
    assert text.count("q to resign") >= 2  # at the start and after `?`
    first = text.index("your move")
    assert "   1. play slot" in text[text.index("'99' is not an action"):]  # `?` redraws them
    assert first > 0


@pytest.mark.parametrize("lines,fallback,evidence", [(["1", "q"], None, "typed 'q'"),
                                                     (["1"], None, "end of input")])
def test_quitting_or_the_end_of_input_resigns_and_is_recorded_as_a_forfeit(
        tmp_path, lines, fallback, evidence):
    store = Store(tmp_path / "p.db")
    con, out = console()
    result = play_game("xeri", [random_spec()], store, Typist(lines, fallback), con, seat=0,
                       options={"rounds": 1})
    assert (result.record.termination, result.record.culprit) == ("resigned", 0)
    stored = store.load_game(result.game_id)
    assert stored["termination"] == "resigned" and stored["culprit_bot"] == "you"
    assert stored["evidence"] == evidence
    assert [s["rank"] for s in stored["seats"]] == [2, 1]
    assert "you resign" in out.getvalue()
    failures = store.failures(result.tournament_id)
    assert [f["termination"] for f in failures] == ["resigned"]


def test_random_bots_fill_the_seats_left_and_names_stay_unique():
    seats, others = table_of("crosswalk", [random_spec("a"), random_spec("a")], 4, 0, 1)
    assert seats == 4 and [b.name for b in others] == ["a", "a-2", "random-3"]
    assert table_of("battlefield_cribbage", [random_spec()] * 2, None, 2, 1)[0] == 3


@pytest.mark.parametrize("kwargs,names", [
    ({"seat": 2}, ["--seat 2", "0 to 1"]),
    ({"seats": 3}, ["--seats 3", "xeri"]),
    ({"options": {"rounds": "many"}}, ["rounds"]),
])
def test_bad_arguments_are_config_errors_before_anything_is_recorded(tmp_path, kwargs, names):
    store = Store(tmp_path / "p.db")
    with pytest.raises(ConfigError) as err:
        play_game("xeri", [random_spec()], store, Typist([]), console()[0], **kwargs)
    for name in names:
        assert name in str(err.value)
    assert store.tournaments() == []


def test_the_cli_plays_against_a_named_bot_with_typed_input(tmp_path, monkeypatch):
    import arena.play

    # `random` is the built-in subprocess bot: an in-process one stands in for it here.
    monkeypatch.setattr(arena.play, "resolve_bot", lambda target, db, seed=1: random_spec(target))
    db = tmp_path / "p.db"
    out = runner.invoke(app, ["play", "xeri", "--against", "random", "-o", "rounds=1",
                              "--seat", "1", "--db", str(db)], input="abc\n" + "1\n" * 60)
    assert out.exit_code == 0, out.output
    assert "'abc' is not an action" in out.output
    assert "recorded as game t1-play-g1" in out.output
    replayed = runner.invoke(app, ["replay", "t1-play-g1", "--db", str(db), "--view", "seat:1"])
    assert replayed.exit_code == 0 and "seat 1 you" in replayed.output


def test_the_cli_reports_an_unknown_game_or_bot_in_one_line(tmp_path):
    db = tmp_path / "p.db"
    out = runner.invoke(app, ["play", "chess", "--db", str(db)], input="q\n")
    assert out.exit_code == 2 and out.output.startswith("error: unknown game 'chess'"), out.output
    out = runner.invoke(app, ["play", "xeri", "--against", str(tmp_path / "nobot"),
                              "--db", str(db)], input="q\n")
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1, out.output
    assert "nobot" in out.output


def test_ctrl_c_at_the_prompt_resigns_and_the_game_is_still_recorded(tmp_path):
    class Interrupted(Typist):
        def readline(self, size: int = -1) -> str:
            raise KeyboardInterrupt

    store = Store(tmp_path / "p.db")
    con, out = console()
    result = play_game("crossfire", [random_spec()], store, Interrupted([]), con)
    assert result.record.termination == "resigned" and result.record.evidence == "Ctrl-C"
    assert store.tournament(result.tournament_id)["status"] == "finished"


def test_typed_text_and_bot_names_are_shown_safely(tmp_path):
    store = Store(tmp_path / "p.db")
    con, out = console()
    play_game("crossfire", [random_spec("evil\x1b[2J[bold]")], store,
              Typist(["\x1b[31m[red]no", "q"]), con)
    text = out.getvalue()
    assert "\x1b" not in text
    assert "evil\\x1b[2J[bold]" in text and "'\\x1b[31m[red]no' is not an action" in text

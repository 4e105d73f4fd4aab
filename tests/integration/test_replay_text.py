"""`arena replay ID` move by move: every ply, the stored scores at the end, a seat's view that
shows no card hidden from it, the JSON form, bot log lines beside their moves, one-line errors."""

from __future__ import annotations

import dataclasses
import json
import random
import re

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.games import new_game
from arena.games.text import text_view
from arena.match import GameRecord, MatchResult, Move
from arena.replay_text import logs_by_ply, render_text, replay_game
from arena.store import Store

runner = CliRunner()
GAMES = [("xeri", 2, {"rounds": 1}), ("crossfire", 2, {}), ("crosswalk", 3, {"rounds": 1}),
         ("battlefield_cribbage", 2, {"target": 31})]


def record_random_games(store: Store, game: str, seats: int, options: dict,
                        seeds: range) -> list[str]:
    """Play a seeded random game of `game` per seed and record each as the driver does."""
    bots = {f"bot{i}": store.add_bot(f"bot{i}") for i in range(seats)}
    tid = store.create_tournament(f"t-{game}", game, "round_robin", seats, 1, options, {},
                                  list(bots.values()))
    ids = []
    for seed in seeds:
        state, rng, moves, step = new_game(game, options, seats, seed), random.Random(seed), [], 0
        while state.to_act():
            actions = {s: rng.choice(state.legal_actions(s)) for s in state.to_act()}
            moves += [Move(step, s, a, 1.0) for s, a in actions.items()]
            state.apply(actions)
            step += 1
        result = state.result()
        gid = f"{game}-{seed}"
        record = GameRecord(game_id=gid, ordinal=seed, deal=seed, rotation=0, seed=seed,
                            seats=list(bots), teams=state.teams(), scores=list(result.scores),
                            ranks=list(result.ranks), termination="normal", culprit=None,
                            detail="", evidence="", duration_ms=1.0, moves=moves)
        store.record_match(tid, 1, seed, game, options,
                           MatchResult(f"m-{gid}", [record], {}, 1.0), bots)
        ids.append(gid)
    return ids


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A database with three random games of each of the four games: (path, {game: ids})."""
    path = tmp_path_factory.mktemp("replay") / "r.db"
    store = Store(path)
    ids = {game: record_random_games(store, game, seats, options, range(1, 4))
           for game, seats, options in GAMES}
    store.db.conn.close()
    return path, ids


@pytest.mark.parametrize("game", [g for g, _, _ in GAMES])
def test_every_ply_appears_and_the_scores_at_the_end_are_the_stored_ones(recorded, game):
    path, ids = recorded
    gid = ids[game][0]
    out = runner.invoke(app, ["replay", gid, "--db", str(path)])
    assert out.exit_code == 0, out.output
    stored = Store.open_readonly(path).load_game(gid)
    lines = out.output.splitlines()
    for move in stored["moves"]:
        # One line per ply: its number, seat and bot, then the action in words.
        pattern = rf"^\s*{move['ply']}\s+seat {move['seat']} bot{move['seat']}\s+\S"
        assert any(re.match(pattern, line) for line in lines), (move, out.output[:2000])
    scores = ", ".join(f"seat {s['seat']} {s['score']:g}" for s in stored["seats"])
    assert f"scores {scores}" in out.output
    assert "end: normal" in out.output
    assert f"{len(stored['moves'])} moves" in lines[0]


@pytest.mark.parametrize("game", [g for g, _, _ in GAMES])
def test_full_draws_the_whole_state_after_each_step(recorded, game):
    path, ids = recorded
    out = runner.invoke(app, ["replay", ids[game][0], "--full", "--db", str(path)])
    assert out.exit_code == 0, out.output
    replay = replay_game(Store.open_readonly(path), ids[game][0], "full")
    assert "start:" in out.output
    assert all(step.seen_after is not None for step in replay.steps)


@pytest.mark.parametrize("game,seats", [(g, n) for g, n, _ in GAMES])
def test_a_seat_view_shows_no_card_hidden_from_that_seat(recorded, game, seats):
    """Property over several deals and every seat: each step's text (its moves, what it did, the
    seat's drawing when it acted) names no card the seat cannot know at that point."""
    path, ids = recorded
    store = Store.open_readonly(path)
    view = text_view(game)
    for gid in ids[game]:
        stored = store.load_game(gid)
        for seat in range(seats):
            replay = replay_game(store, gid, f"seat:{seat}")
            state = new_game(game, stored["options"], seats, stored["seed"])
            # The seat's drawing when it acted is checked against the cards hidden then; the
            # moves and what they did against the cards hidden after the step.
            for step in replay.steps:
                hidden_before = state.hidden_from(seat)
                state.apply({m["seat"]: next(x["action"] for x in stored["moves"]
                                             if x["ply"] == m["ply"]) for m in step.moves})
                if step.seen_before is not None:
                    drawn = "\n".join(view.observation(step.seen_before))
                    assert not words(drawn) & hidden_before, (gid, seat, step.step)
                moves = "\n".join(render_text(one_step(replay, step)))
                assert not words(moves) & state.hidden_from(seat), (gid, seat, step.step)
            end = "\n".join(view.observation(replay.final))
            assert not words(end) & state.hidden_from(seat), (gid, seat)
            # The CLI prints the same (and a seat's view of the whole game passes too).
            out = runner.invoke(app, ["replay", gid, "--view", f"seat:{seat}", "--db", str(path)])
            assert out.exit_code == 0, out.output
            assert f"view: what seat {seat} saw" in out.output


def one_step(replay, step):
    """The replay cut down to one step's moves and what they did (no drawing of the seat)."""
    return dataclasses.replace(replay, steps=[dataclasses.replace(step, seen_before=None)],
                               initial=None, final=None)


def words(text: str) -> set[str]:
    """The words of a text (a card code is one)."""
    return set(re.findall(r"[A-Za-z0-9]+", text))


def test_json_is_a_structured_list_of_plies(recorded):
    path, ids = recorded
    gid = ids["crosswalk"][0]
    out = runner.invoke(app, ["replay", gid, "--json", "--db", str(path)])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    stored = Store.open_readonly(path).load_game(gid)
    assert [p["ply"] for p in data["plies"]] == [m["ply"] for m in stored["moves"]]
    assert [p["action"] for p in data["plies"]] == [m["action"] for m in stored["moves"]]
    assert [s["score"] for s in data["seats"]] == [s["score"] for s in stored["seats"]]
    assert data["termination"] == "normal" and data["view"] == "spectator"
    seat_view = json.loads(runner.invoke(
        app, ["replay", gid, "--json", "--view", "seat:1", "--db", str(path)]).output)
    assert seat_view["view"] == "seat:1" and seat_view["initial"]["seat"] == 1


@pytest.mark.parametrize("args,names", [
    (["replay", "no-such-game"], ["no-such-game"]),
    (["replay", "xeri-1", "--view", "seat:7"], ["seat:7", "seat:0", "seat:1"]),
    (["replay", "xeri-1", "--view", "full-ish"], ["full-ish"]),
    (["replay", "xeri-1", "--view", "seat:1", "--full"], ["--view", "--full"]),
])
def test_a_bad_id_or_view_is_a_one_line_error(recorded, args, names):
    path, _ = recorded
    out = runner.invoke(app, [*args, "--db", str(path)])
    text = out.output.strip()
    assert out.exit_code != 0 and "Traceback" not in text, text
    assert len(text.splitlines()) == 1 and text.startswith("error: "), text
    for name in names:
        assert name in text, (name, text)


def test_bot_log_lines_appear_beside_their_moves(recorded, monkeypatch):
    path, ids = recorded
    gid = ids["xeri"][0]
    seat_of = {m["ply"]: m["seat"] for m in Store.open_readonly(path).load_game(gid)["moves"]}
    me, other = seat_of[2], 1 - seat_of[2]
    rows = [{"seat": me, "bot": f"bot{me}", "ply": 2, "text": "thinking about the pile"},
            {"seat": other, "bot": f"bot{other}", "ply": 3, "text": "secret: I hold the AS"}]
    replay = replay_game(Store.open_readonly(path), gid)
    lines = render_text(replay, logs_by_ply(rows))
    at = next(i for i, line in enumerate(lines) if re.match(rf"^\s*2\s+seat {me}", line))
    assert "thinking about the pile" in lines[at + 1]
    # Through the CLI, where the store offers them (a store method another change adds).
    monkeypatch.setattr(Store, "game_logs", lambda self, game_id: rows, raising=False)
    out = runner.invoke(app, ["replay", gid, "--db", str(path)])
    assert f"bot{me}: thinking about the pile" in out.output
    # A seat's view shows its own bot's lines only: another's may name its hidden cards.
    out = runner.invoke(app, ["replay", gid, "--view", f"seat:{me}", "--db", str(path)])
    assert "thinking about the pile" in out.output and "secret" not in out.output
    plies = json.loads(runner.invoke(app, ["replay", gid, "--json", "--db", str(path)]).output)
    by_ply = {p["ply"]: p.get("logs") for p in plies["plies"]}
    assert by_ply[2] == [{"bot": f"bot{me}", "text": "thinking about the pile"}]


def test_untrusted_log_text_is_made_printable(recorded, monkeypatch):
    path, ids = recorded
    rows = [{"seat": 0, "bot": "bot0", "ply": 0, "text": "\x1b[31mred[/] [bold]x"}]
    monkeypatch.setattr(Store, "game_logs", lambda self, game_id: rows, raising=False)
    out = runner.invoke(app, ["replay", ids["xeri"][0], "--db", str(path)])
    assert out.exit_code == 0, out.output
    assert "\x1b" not in out.output and "\\x1b[31mred[/] [bold]x" in out.output

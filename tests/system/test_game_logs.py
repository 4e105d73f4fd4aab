"""Bots' stderr per game, each line with the ply it came in: recorded with the games, bounded,
shown by `arena failures` per game, never doubled by a resume after a kill.

Real subprocess bots (tests/fakebots/chatty_bot.py logs at known moments).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from arena.cli import app
from arena.store import Store
from arena.store.queries import game_log_counts, game_log_lines
from tests.support.config import manifest_bot, write_tournament
from tests.support.paths import FAKES
from tests.support.stops import query, start, wait_for
from tests.support.tournaments import play_config

runner = CliRunner()


def chatty(name: str = "chatty", flood: int = 0, crash: int = 0, delay_ms: int = 0) -> dict:
    """A [[bots]] entry of the chatty fake bot."""
    return {"name": name, "command": ["python3", "chatty_bot.py", str(flood), str(crash),
                                      str(delay_ms)], "workdir": str(FAKES)}


def play(tmp_path: Path, bots: list[dict], **fields) -> tuple[Store, int]:
    """A one-round Xeri round robin of `bots` played serially into tmp_path/a.db."""
    fields.setdefault("deals", 1)
    path = write_tournament(tmp_path, bots=bots, options={"rounds": 1}, time={"move_ms": 5000},
                            **fields)
    store = Store(tmp_path / "a.db")
    return store, play_config(path, store).tournament_id


def games_of(store: Store, tid: int) -> list[str]:
    return [g["id"] for g in store.game_results(tid)]


def test_each_stderr_line_is_recorded_at_the_ply_of_the_move_it_came_with(tmp_path):
    store, tid = play(tmp_path, [chatty(), manifest_bot("random")], deals=2)
    games = games_of(store, tid)
    assert len(games) == 4
    for number, game_id in enumerate(games, 1):
        game = store.load_game(game_id)
        seat = next(s["seat"] for s in game["seats"] if s["bot"] == "chatty")
        own_plies = [m["ply"] for m in game["moves"] if m["seat"] == seat]
        lines = [row for row in game_log_lines(store, game_id) if row["seat"] == seat]
        assert {row["bot"] for row in lines} == {"chatty"}
        moves = [row for row in lines if " move " in row["text"]]
        # Its K-th line "game G move K" came while it was asked for its K-th move.
        assert [row["ply"] for row in moves] == own_plies
        assert [row["text"] for row in moves] == [f"game {number} move {k}"
                                                  for k in range(1, len(own_plies) + 1)]
        starts = [row for row in lines if row["text"].startswith("start ")]
        assert [row["text"] for row in starts] == [f"start {number} {game_id}"]
        assert starts[0]["ply"] <= own_plies[0]
        # What it writes on game_end comes after the last move; when it comes after the next
        # game began (the runner does not wait for it), it opens that game's log instead.
        # That game's log opens at ply 0, and its ply moves on to this bot's first request (ply 1
        # when it moves second) while a late line may still be on its way.
        ends = [(row["text"], row["ply"]) for row in lines if row["text"].startswith("end ")]
        late = [(text, ply) for text, ply in ends if text == f"end {number - 1}"]
        assert all(ply <= own_plies[0] for _, ply in late), ends
        own = [ply for text, ply in ends if text == f"end {number}"]
        assert own in ([], [len(game["moves"])]), ends
        assert [text for text, _ in ends] in ([f"end {number}"], [f"end {number - 1}"],
                                              [f"end {number - 1}", f"end {number}"], []), ends
        counts = game_log_counts(store, game_id)
        assert counts[seat]["lines"] == len(lines) and counts[seat]["dropped_lines"] == 0


def test_a_megabyte_of_stderr_a_game_keeps_its_head_and_tail_and_counts_what_was_dropped(tmp_path):
    store, tid = play(tmp_path, [chatty(flood=1 << 20), manifest_bot("random")])
    for number, game_id in enumerate(games_of(store, tid), 1):
        lines = game_log_lines(store, game_id)
        counts = next(iter(game_log_counts(store, game_id).values()))
        kept = sum(len(row["text"].encode()) + 1 for row in lines)
        assert counts["bytes"] > 1 << 20
        assert 64 * 1024 - 100 < kept <= (64 + 16) * 1024
        assert kept + counts["dropped_bytes"] == counts["bytes"]
        assert len(lines) + counts["dropped_lines"] == counts["lines"]
        # The head (its start, its flood's first lines) and the tail (its last moves) are there.
        texts = [row["text"] for row in lines]
        assert f"start {number} {game_id}" in texts[:3] and texts[3].startswith(f"flood {number}")
        assert any(text.startswith(f"game {number} move ") for text in texts[-3:])
        numbers = [row["line_no"] for row in lines]
        gaps = [b - a - 1 for a, b in zip(numbers, numbers[1:]) if b - a > 1]
        assert gaps == [counts["dropped_lines"]]


def test_failures_show_each_forfeits_own_stderr_not_the_matchs_tail(tmp_path):
    # Every process of the bot dies at its first move: a crash in each game, each saying its game.
    store, tid = play(tmp_path, [chatty(crash=1), manifest_bot("random")], deals=2,
                      max_failures=3)
    out = runner.invoke(app, ["failures", str(tid), "--db", str(tmp_path / "a.db"), "-f", "json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    crashes = [r for r in rows if r["reason"] == "crash"]
    assert len(crashes) == 3 and len(rows) == 4
    for row in crashes:
        assert row["stderr_tail"].splitlines()[-1] == f"dying in game {row['game']}"
    budget = next(r for r in rows if r["reason"] == "failure_budget")
    assert budget["stderr_tail"] == ""  # not started in that game: it wrote nothing there


def log_snapshot(db: Path) -> dict:
    """The move lines of every game (the lines written on game_start and game_end may land in
    the game before or after, as they come: not compared), and per game and seat whether the
    rows kept are exactly the lines counted (nothing doubled, nothing lost)."""
    conn = sqlite3.connect(db)
    try:
        return {
            "moves": conn.execute("select game_id, seat, ply, text from game_logs "
                                  "where text like 'game % move %' order by 1, 2, 3").fetchall(),
            "whole": conn.execute(
                "select c.game_id, c.seat, c.lines - c.dropped_lines = (select count(*) from "
                "game_logs l where l.game_id = c.game_id and l.seat = c.seat) from "
                "game_log_counts c order by 1, 2").fetchall(),
        }
    finally:
        conn.close()


def test_a_resume_after_a_kill_records_each_games_logs_once(tmp_path):
    bots = [chatty(f"c{i}", delay_ms=10) for i in range(4)]
    config = write_tournament(tmp_path, name="k", format="swiss", rounds=2, deals=1, seed=5,
                              bots=bots, options={"rounds": 1}, time={"move_ms": 5000})
    full, killed = tmp_path / "full.db", tmp_path / "killed.db"
    proc = start(config, full, "--executor", "serial", cwd=tmp_path)
    assert proc.wait(timeout=300) == 0, (tmp_path / "out.txt").read_text()
    proc = start(config, killed, "--executor", "serial", cwd=tmp_path)
    # Killed mid-run, once a first match is recorded and before the last one is.
    assert wait_for(lambda: query(killed, "select count(*) from matches where status = "
                                          "'finished'")[0][0] >= 1, timeout=120)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    recorded = query(killed, "select count(*) from games")[0][0]
    assert 0 < recorded < query(full, "select count(*) from games")[0][0]
    proc = start(config, killed, "--executor", "serial", "--resume", cwd=tmp_path)
    assert proc.wait(timeout=300) == 0, (tmp_path / "out.txt").read_text()[-3000:]
    got, want = log_snapshot(killed), log_snapshot(full)
    assert got["moves"] and got == want
    assert all(whole for *_, whole in got["whole"])
    games = query(killed, "select count(*) from games")[0][0]
    assert query(killed, "select count(distinct game_id) from game_log_counts")[0][0] == games


def test_run_and_show_end_with_the_forfeits_per_bot_and_reason_and_the_failures_command(tmp_path):
    config = write_tournament(tmp_path, bots=[chatty(crash=1), manifest_bot("random")], deals=2,
                              max_failures=3, options={"rounds": 1}, time={"move_ms": 5000})
    db = tmp_path / "runs.db"
    out = runner.invoke(app, ["run", str(config), "--db", str(db), "--executor", "serial", "-q"])
    assert out.exit_code == 0, out.output
    shown = runner.invoke(app, ["tournament", "show", "1", "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    for output in (out.output, shown.output):
        lines = [line.rstrip() for line in output.splitlines()]
        start = lines.index("forfeits: 4 games")
        rows = [line.strip("│ ").split(" │ ") for line in lines[start:] if line.startswith("│")]
        assert [[cell.strip() for cell in row] for row in rows] == [
            ["chatty", "crash", "3"], ["chatty", "failure_budget", "1"]]
        assert lines[-2:] == ["each forfeit with its bot's stderr in that game:",
                              f"  arena failures 1 --db {db}"]


def test_arena_replay_prints_each_log_line_beside_the_move_it_came_with(tmp_path):
    store, tid = play(tmp_path, [chatty(), manifest_bot("random")])
    game_id = games_of(store, tid)[0]
    game = store.load_game(game_id)
    seat = next(s["seat"] for s in game["seats"] if s["bot"] == "chatty")
    own_plies = [m["ply"] for m in game["moves"] if m["seat"] == seat]
    for view in ([], ["--view", f"seat:{seat}"]):
        out = runner.invoke(app, ["replay", game_id, "--json", *view, "--db", str(tmp_path / "a.db")])
        assert out.exit_code == 0, out.output
        plies = json.loads(out.output)["plies"]
        said = {p["ply"]: [line["text"] for line in p.get("logs", [])] for p in plies}
        for k, ply in enumerate(own_plies, 1):
            assert f"game 1 move {k}" in said[ply], (ply, said[ply])
    text = runner.invoke(app, ["replay", game_id, "--db", str(tmp_path / "a.db")]).output
    lines = text.splitlines()
    for k, ply in enumerate(own_plies, 1):
        # each line sits right under the move it came with: "<ply>  seat N chatty  <action>"
        at = lines.index(f"      | chatty: game 1 move {k}")
        assert lines[at - 1].split()[:4] == [str(ply), "seat", str(seat), "chatty"], lines[at - 1]


def test_failures_say_the_usual_mistake_behind_each_forfeit(tmp_path):
    picky = {"name": "picky", "command": ["python3", "picky_bot.py", "string_int"],
             "workdir": str(FAKES)}
    path = write_tournament(tmp_path, bots=[picky, manifest_bot("random")],
                            game="battlefield_cribbage", deals=1, max_failures=1,
                            time={"move_ms": 5000})
    store = Store(tmp_path / "a.db")
    tid = play_config(path, store).tournament_id
    out = runner.invoke(app, ["failures", str(tid), "--db", str(tmp_path / "a.db"), "-f", "json"])
    assert out.exit_code == 0, out.output
    illegal = [r for r in json.loads(out.output) if r["reason"] == "illegal_action"]
    assert illegal, out.output
    assert all("the string where the legal action has" in r["hint"] for r in illegal), illegal
    table = runner.invoke(app, ["failures", str(tid), "--db", str(tmp_path / "a.db"), "--wide"])
    assert "the string where the legal" in " ".join(table.output.split())

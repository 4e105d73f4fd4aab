"""The replay page without JavaScript: the final position and every move, with the bots' log
lines beside the move they came at (arena.web.replay.move_list through the real app)."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from arena.store import Store
from arena.web import create_app
from arena.web.replay import move_list
from tests.support.game_logs import MOVES, record_logged_game


@pytest.fixture
def db(tmp_path):
    """One recorded Xeri game of six moves whose bots logged at known plies, one line hostile,
    and seat 1's log with its middle dropped (tests/support/game_logs.py)."""
    state = record_logged_game(tmp_path / "logs.db")
    return tmp_path / "logs.db", state


def test_the_move_list_puts_each_log_line_at_its_ply_and_marks_what_was_dropped(db):
    path, state = db
    data = move_list(Store.open_readonly(path), "g")
    assert [m["ply"] for m in data["moves"]] == list(range(MOVES))
    by_ply = {m["ply"]: [(line["bot"], line["text"]) for line in m["logs"]] for m in data["moves"]}
    assert by_ply[0] == [("a", "a starts")]
    assert by_ply[1] == [("b", "b at ply 1")]
    assert by_ply[2] == [("a", "<b>a thinks about ply 2</b>")]
    assert by_ply[5][0][1] == "[… 39 lines (3,900 bytes) of its log dropped here …]"
    assert by_ply[5][1] == ("b", "b after dropping")
    assert [line["text"] for line in data["after"]] == ["b ends"]
    assert data["steps"] == MOVES and data["scores"] == list(state.scores())


def test_the_page_without_javascript_shows_the_final_position_and_the_moves_with_their_logs(db):
    path, state = db
    with TestClient(create_app(path)) as client:
        page = client.get("/games/g")
    assert page.status_code == 200
    text = page.text
    # The controls only work with the script: hidden until it shows them, so no "Step 0 / 0".
    assert re.search(r'<div class="replay-controls"[^>]*\bhidden\b', text)
    assert f"Final position (after {MOVES} steps)" in text
    final = text[text.index("Final position"):text.index("</dl>")]
    for hand in state.full_view()["hands"]:  # each seat's cards, as words
        assert " ".join(hand) in final
    rows = re.findall(r'<tr class="move-row[^"]*" data-step="(\d+)" data-ply="(\d+)"', text)
    assert rows[:MOVES] == [(str(p + 1), str(p)) for p in range(MOVES)]
    row2 = text[text.index('id="ply-2"'):text.index('id="ply-3"')]
    assert "&lt;b&gt;a thinks about ply 2&lt;/b&gt;" in row2  # escaped, beside its move
    assert "<b>a thinks" not in text
    assert "b ends" in text[text.index('id="after-last-move"'):]
    assert "Game ended: seat 1 · b: crash" in text

"""The sample transcripts in protocol/transcripts stay true to the engines."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.games import game_names
from arena.transcripts import check_transcript, random_bots, record_transcript
from tests.support.paths import ROOT

FOLDER = ROOT / "protocol" / "transcripts"
FILES = sorted(FOLDER.glob("*.jsonl"))


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_game_has_a_sample_transcript():
    assert {load(p)[0]["game"] for p in FILES} >= set(game_names())


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_sample_transcript_replays_against_the_engine(path):
    lines = load(path)
    assert check_transcript(lines) > 0
    kinds = [e["message"]["type"] for e in lines[1:]]
    assert kinds[0] == "hello" and kinds[-1] == "bye"
    assert {"ready", "game_start", "act", "action", "game_end"} <= set(kinds)


def test_a_tampered_transcript_is_caught():
    lines = load(FOLDER / "xeri.jsonl")
    bad = copy.deepcopy(lines)
    act = next(e for e in bad[1:] if e["message"]["type"] == "act")
    act["message"]["observation"]["my_hand"] = ["AS"]
    with pytest.raises(ArenaError, match="observation differs"):
        check_transcript(bad)


def test_recording_is_deterministic():
    a = record_transcript("xeri", random_bots(2), {"rounds": 1}, seed=5)
    b = record_transcript("xeri", random_bots(2), {"rounds": 1}, seed=5)
    assert a == b


@pytest.mark.parametrize("game", ["crossfire", "crosswalk"])
def test_simultaneous_games_send_act_to_every_acting_seat_before_any_answer(game):
    lines = load(FOLDER / f"{game}.jsonl")
    seats = lines[0]["seats"]
    events = [(e["from"], e["message"]["type"]) for e in lines[1:]
              if e["message"]["type"] in ("act", "action")]
    assert events
    # Steps come as a block of `acting` requests, then their answers.
    i = 0
    while i < len(events):
        block = 0
        while i + block < len(events) and events[i + block] == ("runner", "act"):
            block += 1
        assert block >= 2 and block <= seats
        assert events[i + block:i + 2 * block] == [("bot", "action")] * block
        i += 2 * block


def test_a_write_that_fails_midway_leaves_the_old_transcript_whole(tmp_path, monkeypatch):
    from arena import transcripts

    target = tmp_path / "xeri.jsonl"
    old = [{"n": 1}, {"n": 2}]
    transcripts.write_transcript(old, target)
    before = target.read_bytes()
    real_write = Path.write_text

    def half_then_full_disk(self, text, *args, **kwargs):
        real_write(self, text[: len(text) // 2], *args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", half_then_full_disk)
    with pytest.raises(OSError, match="No space"):
        transcripts.write_transcript([{"n": i} for i in range(100)], target)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["xeri.jsonl"]

"""The replay viewer's data (arena.web.replay): game facts and frames rebuilt from seed and moves.

The database holds a small tournament of each game played through the driver with in-process
bots; expected values are recomputed here with the engine, not copied.
"""

from __future__ import annotations

import json
from itertools import groupby
from pathlib import Path

import pytest

from arena.errors import ConfigError, StoreError
from arena.games import new_game
from arena.store import Store
from arena.web.replay import game_meta, parse_view, replay_data
from tests.support.web_replay import (
    XSS,
    build_db,
)


def game_ids(store: Store) -> dict[str, str]:
    """One game id per game name (the first recorded); four-seat Xeri's as "xeri_4p"."""
    ids: dict[str, str] = {}
    for row in store.db.query(
            "select id, game, num_seats from games order by tournament_id, ordinal"):
        key = "xeri_4p" if (row["game"], row["num_seats"]) == ("xeri", 4) else row["game"]
        ids.setdefault(key, row["id"])
    return ids


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """The populated database, built once for the module."""
    return build_db(tmp_path_factory.mktemp("webreplay"))


@pytest.fixture
def ro(db) -> Store:
    """The database opened read-only, as `arena serve` opens it."""
    return Store.open_readonly(db)


def test_every_game_is_in_the_database(ro):
    assert sorted(game_ids(ro)) == ["battlefield_cribbage", "crossfire", "crosswalk", "xeri",
                                    "xeri_4p"]


@pytest.mark.parametrize("game", ["xeri", "crossfire", "crosswalk", "battlefield_cribbage",
                                  "xeri_4p"])
def test_meta_has_the_stored_facts(ro, game):
    gid = game_ids(ro)[game]
    meta = game_meta(ro, gid)
    stored = ro.load_game(gid)
    assert meta["game"] == game.removesuffix("_4p") and meta["num_seats"] == stored["num_seats"]
    assert meta["options"] == stored["options"]
    assert [s["bot"] for s in meta["seats"]] == [s["bot"] for s in stored["seats"]]
    assert meta["scores"] == [s["score"] for s in stored["seats"]]
    assert meta["ranks"] == [s["rank"] for s in stored["seats"]]
    assert meta["moves"] == len(stored["moves"])
    assert meta["steps"] == len({m["step"] for m in stored["moves"]})
    assert meta["termination"] == "normal" and meta["tournament_id"] == stored["tournament_id"]
    assert sorted(s for team in meta["teams"] for s in team) == list(range(meta["num_seats"]))
    assert meta["views"] == ["full"] + [f"seat:{s}" for s in range(meta["num_seats"])]
    json.dumps(meta)


@pytest.mark.parametrize("game", ["xeri", "crossfire", "crosswalk", "battlefield_cribbage",
                                  "xeri_4p"])
def test_seat_frames_are_the_observations_the_bot_was_sent(ro, game):
    gid = game_ids(ro)[game]
    stored = ro.load_game(gid)
    state = new_game(stored["game"], stored["options"], stored["num_seats"], stored["seed"])
    steps = [list(g) for _, g in groupby(stored["moves"], key=lambda m: m["step"])]
    views = {s: replay_data(ro, gid, f"seat:{s}", check=True)["frames"]
             for s in range(stored["num_seats"])}
    full = replay_data(ro, gid, "full")["frames"]
    assert len(full) == len(steps) + 1
    for i in range(len(steps) + 1):
        for seat, frames in views.items():
            frame = frames[i]
            assert frame["view"] == state.observation(seat)
            assert frame["hidden"] == sorted(state.hidden_from(seat))
            assert frame["acting"] == (seat in state.to_act())
        assert full[i]["view"] == state.full_view()
        assert full[i]["scores"] == state.scores() and full[i]["to_act"] == state.to_act()
        expected = [] if i == 0 else [{"seat": m["seat"], "action": m["action"]}
                                      for m in steps[i - 1]]
        assert full[i]["moves"] == expected
        if i < len(steps):
            state.apply({m["seat"]: m["action"] for m in steps[i]})
    assert full[-1]["to_act"] == [] and full[-1]["scores"] == [s["score"] for s in stored["seats"]]


def test_a_four_seat_xeri_game_replays_by_seat_and_side(ro):
    gid = game_ids(ro)["xeri_4p"]
    meta = game_meta(ro, gid)
    assert meta["num_seats"] == 4 and sorted(meta["teams"]) == [[0, 2], [1, 3]]
    assert meta["views"] == ["full", "seat:0", "seat:1", "seat:2", "seat:3"]
    assert [s["score"] for s in meta["seats"]][:2] == [s["score"] for s in meta["seats"]][2:]
    full = replay_data(ro, gid, "full")
    assert full["num_seats"] == 4 and len(full["frames"]) == 48 + 1  # one round of 48 plays
    first = full["frames"][0]["view"]
    assert [len(h) for h in first["hands"]] == [6, 6, 6, 6] and len(first["captured"]) == 2
    assert len(first["scores"]) == len(first["round_points"]) == len(first["captured_counts"]) == 2
    assert full["frames"][-1]["to_act"] == []
    for seat in range(4):
        frames = replay_data(ro, gid, f"seat:{seat}", check=True)["frames"]
        for i, frame in enumerate(frames):
            obs, hands = frame["view"], full["frames"][i]["view"]["hands"]
            assert (obs["seat"], obs["team"], obs["partner"]) == (seat, seat % 2, (seat + 2) % 4)
            assert obs["hand_counts"] == [len(h) for h in hands] and obs["my_hand"] == hands[seat]
            # The partner's hand is as hidden as the opponents' (but for cards every seat saw in
            # a rejected starting pile); the seat's own is not.
            seen = {c for p in obs["redeals"] for c in p}
            others = {c for s in range(4) if s != seat for c in hands[s]} - seen
            assert others <= set(frame["hidden"]) and not set(hands[seat]) & set(frame["hidden"])
            assert frame["scores"][seat] == frame["scores"][(seat + 2) % 4]
    for bad in ("seat:4", "seat:-1"):
        with pytest.raises(ConfigError, match="unknown view"):
            replay_data(ro, gid, bad)


def test_hidden_cards_are_sent_only_when_asked(ro):
    gid = game_ids(ro)["xeri"]
    plain = replay_data(ro, gid, "seat:0")
    assert all("hidden" not in f for f in plain["frames"])
    assert all("hidden" not in f for f in replay_data(ro, gid, "full", check=True)["frames"])
    checked = replay_data(ro, gid, "seat:0", check=True)
    assert checked["frames"][0]["hidden"]  # the opponent's hand and the stock at the deal


def test_the_data_is_json(ro):
    for gid in game_ids(ro).values():
        data = replay_data(ro, gid, "full")
        assert json.loads(json.dumps(data)) == data


def test_the_xss_bot_name_is_data(ro):
    names = {s["bot"] for gid in game_ids(ro).values() for s in game_meta(ro, gid)["seats"]}
    assert XSS in names


def test_unknown_game_and_bad_views_are_refused(ro):
    gid = game_ids(ro)["xeri"]
    with pytest.raises(StoreError, match="no game with id"):
        game_meta(ro, "nope")
    with pytest.raises(StoreError, match="no game with id"):
        replay_data(ro, "nope", "full")
    for bad in ("seat:2", "seat:-1", "seat:x", "seat", "Full", "", "seat:0:1"):
        with pytest.raises(ConfigError, match="unknown view"):
            replay_data(ro, gid, bad)
    assert parse_view("full", 2) is None and parse_view("seat:1", 2) == 1


def test_the_store_is_not_written(db, ro):
    before = db.stat().st_mtime_ns, db.read_bytes()
    for gid in game_ids(ro).values():
        game_meta(ro, gid)
        replay_data(ro, gid, "seat:0", check=True)
    assert (db.stat().st_mtime_ns, db.read_bytes()) == before


def test_a_forfeited_game_replays_up_to_its_last_recorded_move(tmp_path):
    import random

    from arena.match import GameRecord, MatchResult, Move

    store = Store(tmp_path / "f.db")
    bots = {"a": store.add_bot("a", "1.2"), "b": store.add_bot("b")}
    tid = store.create_tournament("f", "xeri", "round_robin", 2, 1, {}, {}, list(bots.values()))
    state, rng, moves = new_game("xeri", {}, 2, 11), random.Random(3), []
    for step in range(5):
        seat = state.to_act()[0]
        action = rng.choice(state.legal_actions(seat))
        moves.append(Move(step, seat, action, 1.0))
        state.apply({seat: action})
    record = GameRecord(game_id="g", ordinal=0, deal=0, rotation=0, seed=11, seats=["a", "b"],
                        teams=[[0], [1]], scores=[0.0, 0.0], ranks=[1, 2], termination="timeout",
                        culprit=1, detail="no answer in 2000 ms", evidence="", duration_ms=1.0,
                        moves=moves)
    store.record_match(tid, 1, 1, "xeri", {}, MatchResult("m", [record], {}, 1.0), bots)
    ro = Store.open_readonly(tmp_path / "f.db")
    meta = game_meta(ro, "g")
    assert (meta["termination"], meta["culprit_seat"], meta["culprit_bot"]) == ("timeout", 1, "b")
    assert [s["version"] for s in meta["seats"]] == ["1.2", ""]
    assert meta["moves"] == meta["steps"] == 5
    frames = replay_data(ro, "g", "seat:1")["frames"]
    assert len(frames) == 6 and frames[-1]["view"] == state.observation(1)
    assert frames[-1]["to_act"] == state.to_act() != []  # the game stopped, not ended

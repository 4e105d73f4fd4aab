"""Replay data for the web viewer: a stored game's facts and its frames, one per step.

The frames are rebuilt from the stored seed and moves with the game engine, as `arena replay`
does, so a seat's view is exactly the observation the runner sent that bot in `act`
(`state.observation(seat)`), and the full view is `state.full_view()`.

Hidden card identities (`state.hidden_from(seat)`) are test data: they go out only when the
caller asks with `check=True`, so the page never receives them in ordinary use. The API route
`GET /api/games/{id}/replay?view=...&check=1` is meant to pass it on as
`replay_data(store, id, view, check=request.query_params.get("check") == "1")`; the browser test
uses it to check that no seat view draws a card hidden from that seat.
"""

from __future__ import annotations

import json
from itertools import groupby

from arena.errors import ConfigError, StoreError, UnknownGameError
from arena.games import get_game, new_game
from arena.store import Store
from arena.store.queries import (
    game_log_counts,
    game_log_lines,
    game_row,
    game_seats,
    ladder_by_id,
    move_counts,
)


def parse_view(view: str, num_seats: int) -> int | None:
    """The seat of a view string ("seat:N"), None for "full"; ConfigError for anything else."""
    if view == "full":
        return None
    prefix, _, number = str(view).partition(":")
    # isdigit alone admits '²' (int() then fails: a 500) and '１' (a seat under another spelling).
    if (prefix != "seat" or not number.isascii() or not number.isdigit()
            or int(number) >= num_seats):
        seats = ", ".join(f"seat:{s}" for s in range(num_seats))
        raise ConfigError(f"unknown view {str(view)[:40]!r} (known: full, {seats})")
    return int(number)


def game_meta(store: Store, game_id: str) -> dict:
    """A stored game's facts: game, options, seats with bots, teams, ending, results, sizes."""
    row = game_row(store, game_id)
    seats = [
        {"seat": s["seat"], "bot": s["bot"], "bot_id": s["bot_id"],
         # the registry name, which the bot's page is under (a ladder seat's bot is name@version)
         "name": s["name"] or s["bot"], "version": s["version"] or "",
         "team": s["team"], "score": s["score"], "rank": s["rank"]}
        for s in game_seats(store, game_id)
    ]
    counts = move_counts(store, game_id)
    teams: dict[int, list[int]] = {}
    for s in seats:
        teams.setdefault(s["team"] if s["team"] is not None else s["seat"], []).append(s["seat"])
    try:
        title = get_game(row["game"]).game_type.title
    except UnknownGameError:  # a game of a plugin not installed here: the name still shows
        title = row["game"]
    return {
        "id": row["id"],
        "game": row["game"],
        "title": title,
        "options": json.loads(row["options"] or "{}"),
        "num_seats": row["num_seats"],
        "seats": seats,
        "teams": list(teams.values()),
        "termination": row["termination"],
        "culprit_seat": row["culprit_seat"],
        "culprit_bot": row["culprit_bot"],
        "detail": row["detail"],
        "scores": [s["score"] for s in seats],
        "ranks": [s["rank"] for s in seats],
        "steps": counts["steps"],
        "moves": counts["moves"],
        "tournament_id": row["tournament_id"],
        # a ladder's games link to its ladder page, a tournament's to its tournament page
        "ladder": row["tournament_id"] is not None and ladder_by_id(store, row["tournament_id"])
        is not None,
        "match_id": row["match_id"],
        "deal": row["deal"],
        "stage": row.get("stage"),
        "recorded_at": row["recorded_at"],
        "views": ["full"] + [f"seat:{s}" for s in range(row["num_seats"])],
    }


def replay_data(store: Store, game_id: str, view: str, check: bool = False) -> dict:
    """Every frame of a stored game seen from `view` ("full" or "seat:N"), initial state first.

    A frame holds `view` (the observation, or the full view), `moves` (the step just applied, as
    `{"seat", "action"}`; empty in the first frame), `scores`, `to_act` and, for a seat view,
    `acting` (whether that bot was sent this observation). With `check`, seat frames also carry
    `hidden`: the sorted cards hidden from that seat (for tests; never drawn).
    """
    game = store.load_game(game_id)
    seat = parse_view(view, game["num_seats"])
    state = new_game(game["game"], game["options"], game["num_seats"], game["seed"])
    steps = [list(moves) for _, moves in groupby(game["moves"], key=lambda m: m["step"])]
    frames = []
    moves: list[dict] = []
    for i in range(len(steps) + 1):
        to_act = state.to_act()
        frame = {
            "step": i,
            "moves": moves,
            "scores": list(state.scores()),
            "to_act": to_act,
        }
        if seat is None:
            frame["view"] = state.full_view()
        else:
            frame["view"] = state.observation(seat)
            frame["acting"] = seat in to_act
            if check:
                frame["hidden"] = sorted(state.hidden_from(seat))
        frames.append(frame)
        if i < len(steps):
            moves = [{"seat": m["seat"], "action": m["action"]} for m in steps[i]]
            # apply() re-validates every stored action: a record the engine disagrees with is a
            # broken database, reported as such rather than drawn wrongly.
            try:
                state.apply({m["seat"]: m["action"] for m in moves})
            except Exception as exc:  # noqa: BLE001 - any engine refusal means the same thing
                raise StoreError(f"replay of {game_id} fails at step {i + 1}: {exc}") from None
    return {
        "game_id": game_id,
        "game": game["game"],
        "view": view,
        "num_seats": game["num_seats"],
        "termination": game["termination"],
        "frames": frames,
    }


def move_list(store: Store, game_id: str) -> dict:
    """A stored game's moves in order with the bots' stderr lines beside the move they came at,
    and its final position: what the replay page shows without JavaScript.

    `moves`: per move `ply`, `step` (the frame that shows it, from 1), `seat`, `bot`, `action`
    (compact JSON text), `ms` and `logs`, the lines (`seat`, `bot`, `text`, and `dropped` on the
    marker where the middle of a long log was dropped) that came while that move was asked for;
    `after`: the lines that came after the last move; `final`: the full view's fields as text,
    and `scores`, of the position the moves lead to; `lines`: how many log lines there are.
    """
    game = store.load_game(game_id)
    bots = {s["seat"]: s["bot"] for s in game["seats"]}
    at_ply: dict[int, list[dict]] = {}
    last_line: dict[int, int] = {}
    counts = game_log_counts(store, game_id)
    lines = game_log_lines(store, game_id)
    for row in lines:
        seat = row["seat"]
        if row["line_no"] > last_line.get(seat, -1) + 1 and seat in counts:
            dropped = counts[seat]
            at_ply.setdefault(row["ply"], []).append({
                "seat": seat, "bot": row["bot"], "dropped": True,
                "text": f"[… {dropped['dropped_lines']:,} lines ({dropped['dropped_bytes']:,} "
                        f"bytes) of its log dropped here …]"})
        last_line[seat] = row["line_no"]
        at_ply.setdefault(row["ply"], []).append(
            {"seat": seat, "bot": row["bot"], "text": row["text"]})
    state = new_game(game["game"], game["options"], game["num_seats"], game["seed"])
    moves = []
    for step_no, (_, step) in enumerate(groupby(game["moves"], key=lambda m: m["step"]), 1):
        step = list(step)
        for m in step:
            moves.append({"ply": m["ply"], "step": step_no, "seat": m["seat"],
                          "bot": bots.get(m["seat"], ""), "action": _compact(m["action"]),
                          "ms": m["ms"], "logs": at_ply.pop(m["ply"], [])})
        try:
            state.apply({m["seat"]: m["action"] for m in step})
        except Exception as exc:  # noqa: BLE001 - any engine refusal means the same thing
            raise StoreError(f"replay of {game_id} fails at step {step_no}: {exc}") from None
    after = [line for ply in sorted(at_ply) for line in at_ply[ply]]
    view = state.full_view()
    final = [{"key": key, "value": _plain(value)} for key, value in view.items()]
    return {"moves": moves, "after": after, "final": final, "scores": list(state.scores()),
            "steps": len({m["step"] for m in moves}), "lines": len(lines)}


def _compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _plain(value) -> str:
    """A view field as short text: a list of plain values as words, anything else as JSON."""
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return " ".join(str(v) for v in value) if value else "—"
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        return " | ".join(_plain(v) for v in value)  # per seat: "5H JH KS | 2C 9D"
    return value if isinstance(value, str) else _compact(value)

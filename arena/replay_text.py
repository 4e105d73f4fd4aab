"""A stored game move by move, as text or as a structured list of plies (`arena replay ID`).

The game is rebuilt from its stored seed and moves with the engine. Three views:

- the spectator's (default): every action and what it did, from the full state;
- `full`: the same, with the whole state drawn before the first move and after every step;
- a seat's (`seat`): only what that seat saw. Its observations are drawn when it had to act, the
  account of each step comes from its observations before and after, and a card in another
  seat's action that the seat cannot know after the step (`hidden_from`) shows as `??`.

Bot log lines (stderr, by ply) go under the move of that ply when the caller passes them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from arena.errors import ConfigError, StoreError
from arena.games import new_game
from arena.games.text import TextView, number, numbers, text_view
from arena.store import Store

HIDDEN = "??"
LogLines = Mapping[int, Sequence[tuple[str, str]]]  # ply -> [(who, text)]


@dataclass
class StepRecord:
    """One step of a replayed game: its moves (one per acting seat), what changed, and views."""

    step: int
    moves: list[dict]  # {ply, seat, bot, action, text, ms}
    events: list[str]
    scores_before: list[float]
    scores_after: list[float]
    seen_before: dict | None = None  # the seat's observation when it acted, or the full view
    seen_after: dict | None = None  # the full view after the step (full mode)


@dataclass
class GameReplay:
    """A stored game replayed from one view, ready to print or to dump as JSON."""

    game_id: str
    game: str
    options: dict
    num_seats: int
    seats: list[dict]  # {seat, bot, score, rank}
    termination: str
    culprit_seat: int | None
    detail: str
    view: str  # "spectator", "full" or "seat:N"
    initial: dict | None  # the first drawn view (full mode, or the seat's first observation)
    steps: list[StepRecord] = field(default_factory=list)
    final: dict | None = None  # the last drawn view (full mode, or the seat's last observation)


def parse_view(view: str, num_seats: int) -> int | None:
    """The seat of "seat:N", None for "spectator" or "full"; ConfigError for anything else."""
    if view in ("spectator", "full"):
        return None
    prefix, _, number_text = str(view).partition(":")
    # isdigit alone admits '²' and '１': only ASCII digits name a seat.
    if (prefix != "seat" or not number_text.isascii() or not number_text.isdigit()
            or int(number_text) >= num_seats):
        seats = ", ".join(f"seat:{s}" for s in range(num_seats))
        raise ConfigError(f"unknown view {str(view)[:40]!r} (known: {seats})")
    return int(number_text)


def redact(value: Any, hidden: set[str]) -> Any:
    """`value` with every string in `hidden` replaced by ?? (at any depth)."""
    if isinstance(value, str):
        return HIDDEN if value in hidden else value
    if isinstance(value, list):
        return [redact(v, hidden) for v in value]
    if isinstance(value, dict):
        return {k: redact(v, hidden) for k, v in value.items()}
    return value


def replay_game(store: Store, game_id: str, view: str = "spectator") -> GameReplay:
    """Replay a stored game step by step from `view` ("spectator", "full" or "seat:N")."""
    game = store.load_game(game_id)
    num_seats = game["num_seats"]
    seat = parse_view(view, num_seats)
    state = new_game(game["game"], game["options"], num_seats, game["seed"])
    names = {s["seat"]: s["bot"] for s in game["seats"]}
    out = GameReplay(
        game_id=game_id, game=game["game"], options=game["options"], num_seats=num_seats,
        seats=[{"seat": s["seat"], "bot": s["bot"], "score": s["score"], "rank": s["rank"]}
               for s in game["seats"]],
        termination=game["termination"], culprit_seat=game.get("culprit_seat"),
        detail=game.get("detail") or "", view=view, initial=None)

    def look() -> dict:
        return state.full_view() if seat is None else state.observation(seat)

    before = look()
    if view == "full" or seat is not None:
        out.initial = before
    for step, group in groupby(game["moves"], key=lambda m: m["step"]):
        group = list(group)
        scores_before = list(state.scores())
        acting_view = before if seat is not None and any(m["seat"] == seat for m in group) else None
        try:
            state.apply({m["seat"]: m["action"] for m in group})
        except Exception as exc:  # noqa: BLE001 - any engine refusal means a broken record
            raise StoreError(f"replay of {game_id} fails at step {step + 1}: {exc}") from None
        after = look()
        hidden = state.hidden_from(seat) if seat is not None else set()
        moves = [{"ply": m["ply"], "seat": m["seat"], "bot": names.get(m["seat"], "?"),
                  "action": redact(m["action"], hidden) if m["seat"] != seat else m["action"],
                  "ms": m.get("ms")} for m in group]
        record = StepRecord(step, moves, [], scores_before, list(state.scores()),
                            seen_before=acting_view, seen_after=after if view == "full" else None)
        record.events = _events(game["game"], before, after)
        out.steps.append(record)
        before = after
    if seat is not None or view == "full":
        out.final = before
    if game["termination"] == "normal":
        recorded = [s["score"] for s in game["seats"]]
        if not state.is_over() or list(state.result().scores) != recorded:
            raise StoreError(f"replay of {game_id} gives scores {state.scores()}, "
                             f"the record says {recorded}")
    return out


def _events(game: str, before: dict, after: dict) -> list[str]:
    try:
        return text_view(game).events(before, after)
    except Exception:  # noqa: BLE001 - a view's bug must not hide the moves themselves
        return []


def logs_by_ply(rows: Iterable[Mapping[str, Any]] | None,
                seat: int | None = None) -> dict[int, list[tuple[str, str]]]:
    """Bot log rows ({seat, bot, ply, text}) as ply -> [(who, text)], in their order; with
    `seat`, that seat's lines only (another bot's log may name its hidden cards)."""
    out: dict[int, list[tuple[str, str]]] = {}
    for row in rows or ():
        if seat is not None and row.get("seat") != seat:
            continue
        who = row.get("bot") or f"seat {row.get('seat')}"
        ply = row.get("ply")
        out.setdefault(-1 if ply is None else int(ply), []).append((str(who), str(row.get("text", ""))))
    return out


def replay_logs(store: Store, replay: GameReplay) -> dict[int, list[tuple[str, str]]]:
    """The bots' stderr lines of a replayed game by ply, as its view may see them (a seat's view:
    that seat's own lines only)."""
    seat = replay.view.partition(":")[2]
    return logs_by_ply(store.game_logs(replay.game_id), int(seat) if seat else None)


def render_text(replay: GameReplay, logs: LogLines | None = None) -> list[str]:
    """The replay as lines: a header, one line per move with what it did, the ending and scores.

    `logs` (ply -> [(who, text)]) go under the move of their ply; lines of a ply before the first
    move come first, those after the last move at the end.
    """
    view = text_view(replay.game)
    logs = dict(logs or {})
    plies = sorted(m["ply"] for s in replay.steps for m in s.moves)
    # Each log line goes under the last move at or before its ply.
    placed: dict[int, list[tuple[str, str]]] = {}
    early: list[tuple[str, str]] = []
    for ply in sorted(logs):
        target = max((p for p in plies if p <= ply), default=None)
        (early if target is None else placed.setdefault(target, [])).extend(logs[ply])
    lines = _header(replay)
    lines += _log_lines(early)
    if replay.initial is not None and replay.view == "full":
        lines += ["", "start:"] + _indent(view.full(replay.initial))
    width = max((len(str(m["ply"])) for s in replay.steps for m in s.moves), default=1)
    bot_width = min(16, max((len(m["bot"]) for s in replay.steps for m in s.moves), default=1))
    for step in replay.steps:
        if step.seen_before is not None:
            lines += ["", f"seat {replay.view.split(':')[1]} sees:"]
            lines += _indent(view.observation(step.seen_before))
        for move in step.moves:
            lines.append(f"{move['ply']:>{width}}  seat {move['seat']} "
                         f"{_clip(move['bot'], bot_width):<{bot_width}}  {_action(view, move['action'])}")
            lines += _log_lines(placed.get(move["ply"], ()), width)
        pad = " " * (width + 2)
        lines += [pad + "  " + e for e in step.events]
        if step.scores_after != step.scores_before:
            lines.append(f"{pad}  scores {numbers(step.scores_before)} → {numbers(step.scores_after)}")
        if step.seen_after is not None:
            lines += _indent(view.full(step.seen_after), width + 4)
    if replay.final is not None and replay.view != "full":
        lines += ["", f"seat {replay.view.split(':')[1]} sees at the end:"]
        lines += _indent(view.observation(replay.final))
    lines += _footer(replay)
    # One blank line between blocks, however they meet.
    return [line for i, line in enumerate(lines) if line or (i and lines[i - 1])]


def _header(replay: GameReplay) -> list[str]:
    seats = ", ".join(f"seat {s['seat']} {s['bot']}" for s in replay.seats)
    options = _wrap([f"{k}={json.dumps(v)}" for k, v in sorted(replay.options.items())], "options: ")
    what = {"spectator": "every action", "full": "every action and the full state"}.get(
        replay.view, f"what {replay.view.replace(':', ' ')} saw")
    moves = sum(len(s.moves) for s in replay.steps)
    return [f"game {replay.game_id}: {replay.game}, {replay.num_seats} seats, {moves} moves",
            f"view: {what}", "seats: " + seats] + options + [""]


def _footer(replay: GameReplay) -> list[str]:
    lines = [""]
    if replay.termination == "normal":
        lines.append("end: normal")
    else:
        culprit = next((s["bot"] for s in replay.seats if s["seat"] == replay.culprit_seat), "?")
        lines.append(f"end: {replay.termination} by seat {replay.culprit_seat} ({culprit})"
                     + (f": {replay.detail}" if replay.detail else ""))
    lines.append("scores " + ", ".join(f"seat {s['seat']} {number(s['score'])}" for s in replay.seats))
    lines.append("ranks  " + ", ".join(f"seat {s['seat']} {s['rank']}" for s in replay.seats))
    return lines


def _wrap(words: list[str], first: str, width: int = 78) -> list[str]:
    """Words in lines of at most `width` characters, the first line led by `first`."""
    lines: list[str] = []
    line = first
    for word in words:
        if len(line) + len(word) > width and line.strip():
            lines.append(line.rstrip())
            line = " " * len(first)
        line += word + " "
    if words:
        lines.append(line.rstrip())
    return lines


def _action(view: TextView, action: Any) -> str:
    try:
        return view.action(action)
    except Exception:  # noqa: BLE001 - a redacted or unusual action still shows as data
        return str(action)


def _log_lines(lines: Iterable[tuple[str, str]], width: int = 0) -> list[str]:
    pad = " " * (width + 4)
    return [f"{pad}| {who}: {text}" for who, text in lines]


def _indent(lines: list[str], by: int = 2) -> list[str]:
    return [" " * by + line for line in lines]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def replay_json(replay: GameReplay, logs: LogLines | None = None) -> dict:
    """The replay as plain data: the game's facts and one entry per move (with its step's events
    and scores, and the bot log lines of its ply), plus the drawn views of the mode."""
    logs = logs or {}
    plies = []
    for step in replay.steps:
        for i, move in enumerate(step.moves):
            entry = {"ply": move["ply"], "step": step.step, "seat": move["seat"], "bot": move["bot"],
                     "action": move["action"], "ms": move["ms"]}
            if logs.get(move["ply"]):
                entry["logs"] = [{"bot": who, "text": text} for who, text in logs[move["ply"]]]
            if i == len(step.moves) - 1:  # what the step did belongs to its last move
                entry["events"] = step.events
                entry["scores"] = step.scores_after
            if i == 0 and step.seen_before is not None:
                entry["observation"] = step.seen_before
            if i == len(step.moves) - 1 and step.seen_after is not None:
                entry["full_view"] = step.seen_after
            plies.append(entry)
    return {
        "game_id": replay.game_id, "game": replay.game, "options": replay.options,
        "num_seats": replay.num_seats, "view": replay.view, "seats": replay.seats,
        "termination": replay.termination, "culprit_seat": replay.culprit_seat,
        "detail": replay.detail, "initial": replay.initial, "plies": plies, "final": replay.final,
    }

"""Text views of games: what a terminal shows of an observation, a full state and an action.

Each game returns a `TextView` from its `text_view()` hook (the game's `<game>_text` module), so
`arena replay` and `arena play` can draw any registered game and the conformance kit can check
that every game has one. A view draws only what the dict it is given holds: an observation's
drawing can show no more than the observation, which is what keeps a seat's replay free of
other seats' hidden cards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


def action_words(action: Any) -> str:
    """An action in a few words: its `type` with underscores as spaces, then its other fields."""
    if not isinstance(action, dict):
        return str(action)
    words = [str(action.get("type", "")).replace("_", " ")]
    for key, value in action.items():
        if key == "type":
            continue
        if isinstance(value, list):
            value = ",".join(map(str, value))
        words.append(f"{key.replace('_', ' ')} {value}")
    return " ".join(w for w in words if w)


def no_events(before: dict, after: dict) -> list[str]:
    """No game-specific account of a step (the replay still shows the actions and scores)."""
    return []


@dataclass(frozen=True)
class TextView:
    """How a game draws itself as text.

    `observation(obs)` and `full(view)` give lines for a seat's observation and for a full view;
    `action(a)` words one action (as listed to a person choosing); `events(before, after)` says
    what happened between two views of the same kind (two observations of one seat, or two full
    views), from what they hold alone.
    """

    observation: Callable[[dict], list[str]]
    full: Callable[[dict], list[str]]
    action: Callable[[Any], str] = action_words
    events: Callable[[dict, dict], list[str]] = no_events


def cards(codes: Sequence[Any] | None, hidden: str = "??") -> str:
    """Card codes joined by spaces, None as `hidden`; "-" for none."""
    if not codes:
        return "-"
    return " ".join(hidden if c is None else str(c) for c in codes)


def numbers(values: Sequence[Any]) -> str:
    """Numbers joined by spaces, whole floats without their `.0`."""
    return " ".join(number(v) for v in values)


def number(value: Any) -> str:
    """A number as text, a whole float without its `.0`."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def new_entries(before: list | None, after: list | None) -> list:
    """The entries of a growing list (a history) added between two views; all of `after` when it
    was started over (a new round)."""
    before, after = before or [], after or []
    if len(after) >= len(before) and after[:len(before)] == before:
        return after[len(before):]
    return list(after)


def text_view(game: str) -> TextView:
    """The text view of a registered game; ConfigError when the game has none."""
    from arena.errors import ConfigError
    from arena.games import get_game

    view = get_game(game).text_view()
    if view is None:
        raise ConfigError(f"game {game!r} has no text view")
    return view

"""The game registry: games register by name; `new_game` creates a validated game state."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from arena.errors import UnknownGameError
from arena.games.base import (
    JSON,
    GameOptions,
    GameResult,
    GameState,
    GameType,
    Policy,
    forfeit_ranks,
    parse_options,
    play_out,
    ranks_from_scores,
)

# Built-in games are imported on first use, so `import arena` stays fast.
_BUILTIN = {
    "xeri": "arena.games.xeri",
    "crossfire": "arena.games.crossfire",
    "crosswalk": "arena.games.crosswalk",
    "battlefield_cribbage": "arena.games.battlefield_cribbage",
}
GAMES: dict[str, type[GameState]] = {}


def register(cls: type[GameState]) -> type[GameState]:
    """Class decorator: register a GameState subclass under its game type's name."""
    GAMES[cls.game_type.name] = cls
    return cls


def _load_builtins() -> None:
    for module in _BUILTIN.values():
        importlib.import_module(module)


def game_names() -> list[str]:
    """The names of every registered game, sorted."""
    _load_builtins()
    return sorted(GAMES)


def get_game(name: str) -> type[GameState]:
    """The GameState class registered as `name`; UnknownGameError names the known games."""
    if name not in GAMES and name in _BUILTIN:
        importlib.import_module(_BUILTIN[name])
    if name not in GAMES:
        raise UnknownGameError(f"unknown game {name!r} (known: {', '.join(game_names())})")
    return GAMES[name]


def make_options(name: str, raw: Mapping[str, Any] | None = None) -> GameOptions:
    """Validated options of game `name` from a mapping of raw values (defaults fill the rest)."""
    cls = get_game(name)
    return parse_options(cls.game_type.options_model, raw, name)


def new_game(
    name: str, options: GameOptions | Mapping[str, Any] | None, num_seats: int, seed: int
) -> GameState:
    """A new game of `name` for `num_seats` seats, fully determined by `seed` and the actions."""
    cls = get_game(name)
    if not isinstance(options, GameOptions):
        options = parse_options(cls.game_type.options_model, options, name)
    cls.validate_options(options, num_seats)
    return cls(options, num_seats, seed)


__all__ = [
    "GAMES",
    "JSON",
    "GameOptions",
    "GameResult",
    "GameState",
    "GameType",
    "forfeit_ranks",
    "game_names",
    "get_game",
    "make_options",
    "new_game",
    "play_out",
    "Policy",
    "ranks_from_scores",
    "register",
]

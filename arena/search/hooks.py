"""What search needs of a game beyond the game API, declared by the game itself.

A game's class answers `search_hooks()` (arena.games.base.GameState) with a `SearchHooks`, usually
built in a sibling module of the game (`arena/games/<game>_search.py`) that the class imports
only when a search first asks, so playing a game never loads its search knowledge. A game that
declares nothing is searched with the generic defaults: uniformly random playouts, and no shipped
bot (a per-game ISMCTSBot keeps its own settings). Nothing under `arena/search/` names a game.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from arena.games import game_names, get_game

if TYPE_CHECKING:
    from arena.search.playouts import Profile

# The profile kinds a game may declare: "tuned" (the default), "policy" (rule-based playout
# policies), "paired" (the paired root search) and "random" (whole-game random playouts, rank
# rewards: plain ISMCTS). arena.search.playouts.profile_for says what a missing kind falls back to.
PROFILE_KINDS = ("tuned", "policy", "paired", "random")


@dataclass(frozen=True)
class SearchHooks:
    """One game's search knowledge: playout profiles by kind and its shipped ISMCTS bots."""

    # Profile per kind (PROFILE_KINDS); a kind left out falls back as profile_for says.
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    # The shipped bots of this game by name, unique across games (configs name them as
    # `arena.search.bot:ismcts_<name>`): ISMCTSBot settings, any of `iterations`, `exploration`
    # and `profile` (a kind).
    bots: Mapping[str, Mapping] = field(default_factory=dict)
    # Which of `bots` plays a table of (seats, options); None: the bot named as the game.
    pick_bot: Callable[[int, Mapping], str] | None = None


# What a game that declares no hooks is searched with.
GENERIC = SearchHooks()


def search_hooks(game: str) -> SearchHooks:
    """The search hooks game `game` declares, or the generic defaults."""
    hooks = get_game(game).search_hooks()
    return GENERIC if hooks is None else hooks


def declared_bots() -> dict[str, tuple[str, Mapping]]:
    """Every registered game's shipped bots: bot name -> (game, settings)."""
    bots: dict[str, tuple[str, Mapping]] = {}
    for game in game_names():
        for name, settings in search_hooks(game).bots.items():
            if name in bots:
                raise ValueError(f"shipped search bot {name!r} is declared by both "
                                 f"{bots[name][0]!r} and {game!r}")
            bots[name] = (game, settings)
    return bots

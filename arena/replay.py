"""Replaying a stored game from its seed and moves, to check or inspect it."""

from __future__ import annotations

from itertools import groupby

from arena.errors import StoreError
from arena.games import GameState, new_game
from arena.store import Store


def replay(store: Store, game_id: str) -> tuple[GameState, dict]:
    """Rebuild a stored game's final state; StoreError if the replay disagrees with the record."""
    game = store.load_game(game_id)
    state = new_game(game["game"], game["options"], game["num_seats"], game["seed"])
    for _step, moves in groupby(game["moves"], key=lambda m: m["step"]):
        state.apply({m["seat"]: m["action"] for m in moves})
    if game["termination"] == "normal":
        result = state.result()
        recorded = [s["score"] for s in game["seats"]]
        if list(result.scores) != recorded or list(result.ranks) != [s["rank"] for s in game["seats"]]:
            raise StoreError(
                f"replay of {game_id} gives scores {result.scores}, the record says {recorded}"
            )
    return state, game

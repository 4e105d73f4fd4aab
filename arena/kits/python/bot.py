#!/usr/bin/env python3
"""{{name}}: an Arena bot. Replace `choose` with your strategy; arenabot.py runs the protocol."""

from __future__ import annotations

from arenabot import log, run


def choose(observation: dict, legal_actions: list):
    """Return one element of legal_actions, unchanged."""
    return legal_actions[0]


def on_game_start(message: dict) -> None:
    """Called at each game_start: its game, options, your seat and the players."""
    log(f"game {message['game_id']}: {message['game']}, seat {message['seat']}")


if __name__ == "__main__":
    run(choose, name="{{name}}", version="1", on_game_start=on_game_start)

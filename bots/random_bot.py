#!/usr/bin/env python3
"""Plays a uniformly random legal action in any game. Standard library only.

The random seed comes from the first argument (default: from the game id), so runs are repeatable.
"""

from __future__ import annotations

import random
import sys

from arenabot import run

rng = random.Random(sys.argv[1] if len(sys.argv) > 1 else 0)


def on_game_start(msg: dict) -> None:
    # Reseed per game so a game's moves do not depend on which games came before it.
    rng.seed(f"{msg['game_id']}:{msg['seat']}")


if __name__ == "__main__":
    run(lambda obs, legal: rng.choice(legal), name="random", version="1", on_game_start=on_game_start)

#!/usr/bin/env python3
"""Plays a uniformly random legal action in any game. Standard library only.

The random seed is the first argument (default 0). One process serves a whole match and the
runner sends requests in a fixed order, so the same match gives the same moves.
"""

from __future__ import annotations

import random
import sys

from arenabot import run

rng = random.Random(sys.argv[1] if len(sys.argv) > 1 else 0)


if __name__ == "__main__":
    run(lambda obs, legal: rng.choice(legal), name="random", version="1")

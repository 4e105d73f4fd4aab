#!/usr/bin/env python3
"""Plays a uniformly random legal action in any game. Standard library only.

The random seed is the first argument (default 0). One process serves a whole match and the
runner sends requests in a fixed order, so the same match gives the same moves.
"""

from __future__ import annotations

import os
import random
import sys

try:
    from arenabot import run  # beside this file: in a bot folder, the kit's file copied in
except ImportError:
    # The built-in copy inside the arena package (arena/bots/): the Python kit's own arenabot.py,
    # in arena/kits/python/, so the package holds it once.
    sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "kits",
                                    "python"))
    from arenabot import run

rng = random.Random(sys.argv[1] if len(sys.argv) > 1 else 0)


if __name__ == "__main__":
    run(lambda obs, legal: rng.choice(legal), name="random", version="1")

#!/usr/bin/env python3
"""A seeded random bot that takes DELAY_MS per move, so a test can stop a run in the middle.

Usage: slow_random.py SEED DELAY_MS. The same seed gives the same moves whatever the delay.
"""

import random
import sys
import time

sys.path.insert(0, sys.argv[3] if len(sys.argv) > 3 else ".")
from arenabot import run  # noqa: E402

rng = random.Random(sys.argv[1])
delay = int(sys.argv[2]) / 1000


def choose(observation, legal):
    time.sleep(delay)
    return rng.choice(legal)


if __name__ == "__main__":
    run(choose, name="slow-random", version="1")

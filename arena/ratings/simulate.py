"""Drawing game outcomes from a rating model, for simulations (benchmarks, tests)."""

from __future__ import annotations

import math
import random


def plackett_luce_ranks(rng: random.Random, strengths: list[float]) -> list[int]:
    """Finishing ranks (1 best) of sides drawn from Plackett–Luce with natural-log strengths."""
    left = list(range(len(strengths)))
    ranks = [0] * len(strengths)
    for place in range(1, len(strengths) + 1):
        weights = [math.exp(strengths[i]) for i in left]
        x = rng.random() * sum(weights)
        for i, w in zip(left, weights):  # noqa: B007 (i is the one drawn, used after the loop)
            x -= w
            if x <= 0:
                break
        ranks[i] = place
        left.remove(i)
    return ranks

"""Match specs for tests: `spec_for(bots, deals=…)`, every seat rotation of duplicate deals."""

from __future__ import annotations

from arena.cards import derive_seed
from arena.match import GamePlan, MatchSpec
from arena.scheduling import seatings
from tests.support.bots import FAST


def spec_for(bots, deals=1, time=FAST, max_failures=3, game="xeri", options=None):
    """A match spec over `bots` with duplicate deals."""
    plans = tuple(
        GamePlan(f"m-d{d}-s{r}", i, d, r, derive_seed("test", d), seating)
        for i, (d, r, seating) in enumerate(seatings(len(bots), deals, True))
    )
    return MatchSpec("m", game, options or {}, tuple(bots), plans, time, max_failures)

"""Tournament formats as pure schedulers, and the registry the driver picks them from."""

from __future__ import annotations

from arena.errors import ConfigError
from arena.scheduling.base import History, MatchScore, Pairing, Round, Scheduler, Table
from arena.scheduling.gauntlet import Gauntlet
from arena.scheduling.round_robin import RoundRobin
from arena.scheduling.seating import seatings
from arena.scheduling.swiss import Swiss, default_rounds, max_rounds

SCHEDULERS: dict[str, Scheduler] = {"round_robin": RoundRobin(), "swiss": Swiss(), "gauntlet": Gauntlet()}


def get_scheduler(name: str) -> Scheduler:
    """The registered scheduler called `name`; ConfigError names the unknown format."""
    try:
        return SCHEDULERS[name]
    except KeyError:
        raise ConfigError(f"unknown format {name!r} (choose round_robin, swiss or gauntlet)") from None


__all__ = [
    "SCHEDULERS", "Gauntlet", "History", "MatchScore", "Pairing", "Round", "RoundRobin", "Scheduler",
    "Swiss", "Table", "default_rounds", "get_scheduler", "max_rounds", "seatings",
]

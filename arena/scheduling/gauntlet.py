"""Gauntlet: each candidate plays the rest of the field; candidates never meet each other.

Two seats: in round r (from 0) of a cycle, the candidate at index c of `Pairing.candidates` meets
field[(r + c) % F], so over F rounds it meets every field bot once, and it plays once per round
(distinct candidates meet distinct field bots while there are no more candidates than field bots).
Three or four seats: a cycle has C(F, seats-1) rounds; in round r candidate c sits with the field
combination of lexicographic rank (r + c) mod C(F, seats-1). The table is rotated by r + cycle, so
first seat moves round the table from round to round and a second cycle swaps the seats of every
two-seat pairing.
"""

from __future__ import annotations

from math import comb

from arena.errors import ConfigError
from arena.scheduling.base import History, Pairing, Round, Scheduler, Table
from arena.scheduling.round_robin import rotate, unrank_combination


def field_of(pairing: Pairing) -> list[int]:
    """The non-candidate bots, in index order."""
    candidates = set(pairing.candidates)
    return [bot for bot in range(pairing.entrants) if bot not in candidates]


class Gauntlet(Scheduler):
    """Candidates against the field; rounds do not depend on results."""

    name = "gauntlet"
    depends_on_results = False

    def total_rounds(self, pairing: Pairing) -> int:
        """C(F, seats-1) rounds per cycle, times cycles."""
        field_size = pairing.entrants - len(set(pairing.candidates))
        return comb(field_size, pairing.seats - 1) * pairing.cycles

    def validate(self, pairing: Pairing) -> None:
        """Raise ConfigError for no, repeated or unknown candidates, or too small a field."""
        if pairing.seats < 2:
            raise ConfigError(f"gauntlet needs tables of at least 2 seats (got {pairing.seats})")
        if not pairing.candidates:
            raise ConfigError("gauntlet needs at least one candidate (got none)")
        unknown = [c for c in pairing.candidates if not 0 <= c < pairing.entrants]
        if unknown:
            raise ConfigError(
                f"gauntlet candidate {unknown[0]} is not an entrant (0..{pairing.entrants - 1})")
        if len(set(pairing.candidates)) != len(pairing.candidates):
            repeated = next(c for c in pairing.candidates if pairing.candidates.count(c) > 1)
            raise ConfigError(f"gauntlet candidate {repeated} is listed twice")
        field_size = pairing.entrants - len(pairing.candidates)
        if field_size < pairing.seats - 1:
            raise ConfigError(
                f"gauntlet needs a field of at least {pairing.seats - 1} non-candidate bots for "
                f"{pairing.seats}-seat tables (got {field_size})")
        if pairing.cycles < 1:
            raise ConfigError(f"gauntlet needs at least 1 cycle (got {pairing.cycles})")

    def next_round(self, pairing: Pairing, history: History) -> Round | None:
        """Round len(history.rounds) + 1: one table per candidate; results are ignored."""
        self.validate(pairing)
        played = len(history.rounds)
        if played >= self.total_rounds(pairing):
            return None
        field = field_of(pairing)
        opponents = pairing.seats - 1
        per_cycle = comb(len(field), opponents)
        cycle, index = divmod(played, per_cycle)
        number = played + 1
        tables = []
        for c, candidate in enumerate(pairing.candidates):
            rank = (index + c) % per_cycle
            chosen = unrank_combination(len(field), opponents, rank)
            group = (candidate, *(field[i] for i in chosen))
            tables.append(Table(number, c + 1, rotate(group, index + cycle)))
        return Round(number, tuple(tables))

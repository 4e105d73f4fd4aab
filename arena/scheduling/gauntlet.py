"""Gauntlet: each candidate plays the rest of the field; candidates never meet each other.

Two seats: in round r (from 0) of a cycle, the candidate at index c of `Pairing.candidates` meets
field[(r + c) % F], so over F rounds it meets every field bot once, and it plays once per round
(distinct candidates meet distinct field bots while there are no more candidates than field bots).
Three or four seats: a cycle has C(F, seats-1) rounds; in round r candidate c sits with the field
combination of lexicographic rank (r + c) mod C(F, seats-1). The table is rotated by r + cycle, so
first seat moves round the table from round to round and a second cycle swaps the seats of every
two-seat pairing.

With an SPRT stop rule (2 seats only), each candidate's duplicate-deal pair scores against the
field so far (pentanomial counts of complete deals) are tested before every round; a candidate
whose test has decided (H0 or H1) sits out from then on, and the stage ends when every candidate
has decided or the cycles run out. The rounds then depend on results: the driver waits for each.
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

    def depends_on(self, pairing: Pairing) -> bool:
        """Only with an SPRT stop rule do the rounds depend on results."""
        return pairing.sprt is not None

    def next_round(self, pairing: Pairing, history: History) -> Round | None:
        """Round len(history.rounds) + 1: one table per candidate still playing."""
        self.validate(pairing)
        played = len(history.rounds)
        if played >= self.total_rounds(pairing):
            return None
        decided = set(decided_candidates(pairing, history)) if pairing.sprt else set()
        if decided >= set(pairing.candidates):
            return None
        field = field_of(pairing)
        opponents = pairing.seats - 1
        per_cycle = comb(len(field), opponents)
        cycle, index = divmod(played, per_cycle)
        number = played + 1
        tables = []
        for c, candidate in enumerate(pairing.candidates):
            if candidate in decided:
                continue
            rank = (index + c) % per_cycle
            chosen = unrank_combination(len(field), opponents, rank)
            group = (candidate, *(field[i] for i in chosen))
            tables.append(Table(number, len(tables) + 1, rotate(group, index + cycle)))
        return Round(number, tuple(tables))


def candidate_pairs(candidate: int, history: History) -> list[int]:
    """Pentanomial counts (deals scoring 0, ½, 1, 1½, 2) of a candidate's complete 2-game deals."""
    counts = [0] * 5
    for match in history.matches:
        if len(match.bots) == 2 and candidate in match.bots:
            position = match.bots.index(candidate)
            for games, points in match.deals:
                if games == 2:
                    counts[min(4, max(0, round(points[position] * 2)))] += 1
    return counts


def sprt_state(pairing: Pairing, history: History) -> dict[int, tuple[list[int], object]]:
    """Each candidate's pair counts and SPRT result (an arena.ratings.SprtResult) so far."""
    from arena.ratings.sequential import sprt  # scipy is loaded only for stages that use the rule

    elo0, elo1, alpha, beta, model = pairing.sprt
    out = {}
    for candidate in pairing.candidates:
        counts = candidate_pairs(candidate, history)
        out[candidate] = (counts, sprt(counts, elo0, elo1, alpha, beta, model) if sum(counts)
                          else None)
    return out


def decided_candidates(pairing: Pairing, history: History) -> list[int]:
    """The candidates whose SPRT has reached H0 or H1."""
    return [c for c, (_, result) in sprt_state(pairing, history).items()
            if result is not None and result.decision is not None]

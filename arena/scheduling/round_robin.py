"""Round robin: every group of `seats` bots meets once per cycle.

Two seats use the circle (Berger) method: an even field of N plays N-1 rounds of N/2 tables, an odd
field N rounds in which one bot rests (a rest is not a bye: it scores nothing and is not listed in
`Round.byes`). Seats are oriented by a regular tournament on the rotating positions, so every bot
is first in half its matches (within one, for an even field).

Three or four seats: the C(N, seats) groups are dealt into rounds of N // seats tables. For a
field whose group count is at most `GREEDY_LIMIT` each round takes, from the remaining groups in
lexicographic order, every group disjoint from those already taken; when the remaining groups
overlap too much to fill a round that way, it is completed with the next remaining groups (a bot
then plays twice in that round, which the driver allows: these rounds do not wait on results).
Each group's first seat goes to its bot furthest below its pro-rata share of firsts, which keeps
every bot within one of C(N-1, seats-1) / seats. Bigger fields fall back to lexicographic chunks
of N // seats groups, unranked on demand so nothing of size C(N, seats) is ever built, rotated by
their rank. Cycle c rotates every group c further, so for two seats even cycles (2nd, 4th, ...)
swap the seats of every pairing.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from math import comb

from arena.errors import ConfigError
from arena.scheduling.base import History, Pairing, Round, Scheduler, Table

#: Fields with at most this many groups get the greedy disjoint schedule (built once, cached).
GREEDY_LIMIT = 5_000


def unrank_combination(n: int, k: int, rank: int) -> tuple[int, ...]:
    """The `rank`-th (from 0) k-subset of range(n) in lexicographic order."""
    group = []
    x = 0
    for position in range(k):
        while True:
            starting_here = comb(n - x - 1, k - position - 1)
            if rank < starting_here:
                group.append(x)
                x += 1
                break
            rank -= starting_here
            x += 1
    return tuple(group)


def next_combination(group: tuple[int, ...], n: int) -> tuple[int, ...] | None:
    """The k-subset of range(n) after `group` in lexicographic order, or None after the last."""
    k = len(group)
    items = list(group)
    for i in range(k - 1, -1, -1):
        if items[i] < n - k + i:
            items[i] += 1
            for j in range(i + 1, k):
                items[j] = items[j - 1] + 1
            return tuple(items)
    return None


def rotate(group: tuple[int, ...], shift: int) -> tuple[int, ...]:
    """`group` starting from its position `shift` (mod its length), keeping the cyclic order."""
    shift %= len(group)
    return group[shift:] + group[:shift]


def circle_round(entrants: int, index: int) -> list[tuple[int, int]]:
    """The oriented pairings of round `index` (from 0) of the circle method; a resting bot is left out."""
    size = entrants + entrants % 2  # an odd field gets a phantom opponent: whoever meets it rests
    moving = size - 1  # positions 0..size-2 rotate around the fixed bot size-1
    fixed = size - 1
    pairs = []
    if fixed < entrants:
        # The fixed bot meets a different rotating bot each round; alternating its seat by round
        # parity keeps it within one of even.
        pairs.append((index, fixed) if index % 2 == 0 else (fixed, index))
    for k in range(1, size // 2):
        a, b = (index + k) % moving, (index - k) % moving
        # x sits first against y when y is less than half-way round from x: a regular tournament
        # on the odd cycle of rotating positions, so each of them is first in exactly half.
        pairs.append((a, b) if (b - a) % moving <= (moving - 1) // 2 else (b, a))
    return pairs


@lru_cache(maxsize=8)
def greedy_schedule(entrants: int, seats: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """One cycle's rounds of seated groups, chosen greedily disjoint (see the module docstring)."""
    groups = list(combinations(range(entrants), seats))
    masks = [sum(1 << bot for bot in group) for group in groups]
    per_round = max(1, entrants // seats)
    end = len(groups)
    # A doubly linked list of the groups not yet scheduled: unlinking is O(1) and a scan only
    # touches groups still remaining.
    following = list(range(1, end + 1))
    preceding = list(range(-1, end - 1))
    head = 0 if groups else end

    def unlink(index: int) -> None:
        """Drop group `index` from the remaining list."""
        nonlocal head
        before, after = preceding[index], following[index]
        if before >= 0:
            following[before] = after
        else:
            head = after
        if after < end:
            preceding[after] = before

    firsts = [0] * entrants
    seen = [0] * entrants
    rounds = []
    while head != end:
        chosen: list[int] = []
        busy = 0
        index = head
        while index != end and len(chosen) < per_round:
            after = following[index]
            if not masks[index] & busy:
                chosen.append(index)
                busy |= masks[index]
                unlink(index)
            index = after
        index = head
        while index != end and len(chosen) < per_round:
            after = following[index]
            chosen.append(index)
            unlink(index)
            index = after
        seated = []
        for index in sorted(chosen):
            group = groups[index]
            for bot in group:
                seen[bot] += 1
            # First seat to the bot furthest below its pro-rata share of firsts so far (a bot's
            # groups come unevenly: bot 0's early, the top bots' late), so all end within one.
            start = min(range(seats), key=lambda pos: (firsts[group[pos]] * seats - seen[group[pos]],
                                                      (pos - index) % seats))
            firsts[group[start]] += 1
            seated.append(rotate(group, start))
        rounds.append(tuple(seated))
    return tuple(rounds)


def rounds_per_cycle(entrants: int, seats: int) -> int:
    """Rounds in one cycle of a round robin of `entrants` bots at `seats`-seat tables."""
    if seats == 2:
        return entrants - 1 if entrants % 2 == 0 else entrants
    per_round = max(1, entrants // seats)
    return -(-comb(entrants, seats) // per_round)


class RoundRobin(Scheduler):
    """Every group of `seats` bots meets once per cycle; rounds do not depend on results."""

    name = "round_robin"
    depends_on_results = False

    def total_rounds(self, pairing: Pairing) -> int:
        """Rounds per cycle times cycles."""
        return rounds_per_cycle(pairing.entrants, pairing.seats) * pairing.cycles

    def validate(self, pairing: Pairing) -> None:
        """Raise ConfigError for fewer bots than seats, fewer than 2 seats or fewer than 1 cycle."""
        if pairing.seats < 2:
            raise ConfigError(f"round_robin needs tables of at least 2 seats (got {pairing.seats})")
        if pairing.entrants < pairing.seats:
            raise ConfigError(
                f"round_robin needs at least {pairing.seats} bots for {pairing.seats}-seat tables "
                f"(got {pairing.entrants})")
        if pairing.cycles < 1:
            raise ConfigError(f"round_robin needs at least 1 cycle (got {pairing.cycles})")

    def next_round(self, pairing: Pairing, history: History) -> Round | None:
        """Round len(history.rounds) + 1 of the schedule; results are ignored."""
        self.validate(pairing)
        played = len(history.rounds)
        if played >= self.total_rounds(pairing):
            return None
        per_cycle = rounds_per_cycle(pairing.entrants, pairing.seats)
        cycle, index = divmod(played, per_cycle)
        groups = self._groups(pairing.entrants, pairing.seats, index)
        number = played + 1
        tables = tuple(Table(number, i, rotate(group, cycle)) for i, group in enumerate(groups, 1))
        return Round(number, tables)

    @staticmethod
    def _groups(entrants: int, seats: int, index: int) -> list[tuple[int, ...]]:
        """The seated groups of round `index` (from 0) of the first cycle."""
        if seats == 2:
            return circle_round(entrants, index)
        if comb(entrants, seats) <= GREEDY_LIMIT:
            return list(greedy_schedule(entrants, seats)[index])
        per_round = max(1, entrants // seats)
        first = index * per_round
        last = min(comb(entrants, seats), first + per_round)
        groups = []
        group: tuple[int, ...] | None = unrank_combination(entrants, seats, first)
        for rank in range(first, last):
            assert group is not None
            groups.append(rotate(group, rank))
            group = next_combination(group, entrants)
        return groups

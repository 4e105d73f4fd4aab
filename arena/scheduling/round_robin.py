"""Round robin: every group of `seats` bots meets once per cycle.

Two seats use the circle (Berger) method: an even field of N plays N-1 rounds of N/2 tables, an odd
field N rounds in which one bot rests (a rest is not a bye: it scores nothing and is not listed in
`Round.byes`). Seats are oriented by a regular tournament on the rotating positions, so every bot
is first in half its matches (within one, for an even field).

Three or four seats: the C(N, seats) groups are dealt into ⌈C(N, seats) / (N // seats)⌉ rounds of
N // seats tables (the last round takes what is left). By Baranyai's theorem this can always be
done with no bot at two tables of one round — the complete k-uniform hypergraph splits into
matchings of any sizes up to N // k — and `resolvable_schedule` builds such a split with
Baranyai's own proof: it adds the bots one at a time, each round extending one of its partial
tables (or the set of bots it rests) by the new bot, and an integral flow (a b-matching of rounds
to partial tables) keeps every partial table extendable to exactly the groups not yet dealt. When
N // seats divides C(N, seats) every round is a perfect matching (N ≡ 0 mod seats) or rests the same
number of bots; the N mod seats bots a round does not seat rest (not byes, as above). Fields of
more than `DESIGN_LIMIT` groups (a few seconds to build) fall back to lexicographic chunks of N // seats
groups, unranked on demand so nothing of size C(N, seats) is ever built, rotated by their rank; a
bot may then play twice in a round, which the driver allows (these rounds do not wait on
results). Each group's first seat goes to its bot furthest below its pro-rata share of firsts,
which keeps every bot within one of C(N-1, seats-1) / seats. Cycle c rotates every group c
further, so for two seats even cycles (2nd, 4th, ...) swap the seats of every pairing.

Schedule versions: a stage recorded by an older Arena (no `schedule` in its stored config) was
dealt by version 1, which took each round's groups greedily in lexicographic order and let a bot
play twice when the greedy pass ran dry (4 of the 28 rounds of 8 bots at 3 seats); a resumed
stage keeps the version it was recorded with (`arena.events.keep_recorded_schedules`), so its
re-derived rounds still match the recorded ones. Version 2 is the resolvable schedule above.
"""

from __future__ import annotations

from collections import deque
from fractions import Fraction
from functools import lru_cache
from itertools import combinations
from math import ceil, comb, floor

from arena.errors import ConfigError
from arena.scheduling.base import History, Pairing, Round, Scheduler, Table

#: Schedule version 1: fields with at most this many groups get the greedy schedule (cached).
GREEDY_LIMIT = 5_000
#: Schedule version 2: fields with at most this many groups get the resolvable schedule (cached).
DESIGN_LIMIT = 30_000
#: The schedule versions of 3-4-seat round robins; new stages are dealt by the last.
SCHEDULES = (1, 2)
SCHEDULE_VERSION = SCHEDULES[-1]


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
        rounds.append([(index, groups[index]) for index in sorted(chosen)])
    return seat_firsts(rounds, entrants, seats)


def seat_firsts(rounds: list[list[tuple[int, tuple[int, ...]]]], entrants: int,
                seats: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Rounds of (lexicographic rank, sorted group), each group rotated to balance first seats."""
    firsts = [0] * entrants
    seen = [0] * entrants
    seated_rounds = []
    for groups in rounds:
        seated = []
        for index, group in groups:
            for bot in group:
                seen[bot] += 1
            # First seat to the bot furthest below its pro-rata share of firsts so far (a bot's
            # groups come unevenly: bot 0's early, the top bots' late), so all end within one
            # (version 1's fields; the resolvable schedule balances firsts by a b-matching).
            start = min(range(seats), key=lambda pos: (firsts[group[pos]] * seats - seen[group[pos]],
                                                      (pos - index) % seats))
            firsts[group[start]] += 1
            seated.append(rotate(group, start))
        seated_rounds.append(tuple(seated))
    return tuple(seated_rounds)


def rank_combination(group: tuple[int, ...], n: int) -> int:
    """The lexicographic rank (from 0) of the sorted k-subset `group` of range(n)."""
    k = len(group)
    rank = 0
    previous = -1
    for position, bot in enumerate(group):
        for skipped in range(previous + 1, bot):
            rank += comb(n - skipped - 1, k - position - 1)
        previous = bot
    return rank


@lru_cache(maxsize=8)
def resolvable_schedule(entrants: int, seats: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """One cycle's rounds of seated groups, no bot twice in a round (see the module docstring)."""
    groups = [tuple(bot for bot in range(entrants) if mask >> bot & 1)
              for mask in _baranyai(entrants, seats)]
    per_round = max(1, entrants // seats)
    groups = [g for i in range(0, len(groups), per_round) for g in sorted(groups[i:i + per_round])]
    # First seats: each bot is in C(N-1, k-1) groups, so its fair share of firsts is that over k.
    # A group giving 1/k to each member meets it exactly, so some choice keeps every bot between
    # the floor and the ceiling of it: fill every bot to the floor first, then to the ceiling.
    share = Fraction(comb(entrants - 1, seats - 1), seats)
    # Each group offers its bots starting from a position that turns with its rank, so the greedy
    # pass does not favour the lowest-numbered bots.
    members = [list(rotate(g, rank_combination(g, entrants))) for g in groups]
    first = _one_each(members, dict.fromkeys(range(entrants), floor(share)), complete=False)
    first = _one_each(members, dict.fromkeys(range(entrants), ceil(share)), first)
    seated = [rotate(g, g.index(bot)) for g, bot in zip(groups, first)]
    return tuple(tuple(seated[i:i + per_round]) for i in range(0, len(seated), per_round))


def _baranyai(n: int, k: int) -> list[int]:
    """Every k-subset of range(n) as a bit mask, round after round of n // k disjoint ones."""
    per_round = n // k
    total = comb(n, k)
    rounds = -(-total // per_round)
    sizes = [per_round] * (rounds - 1) + [total - per_round * (rounds - 1)]
    # Round j: its partial tables (bit masks, sizes) and how many more bots it must rest. The
    # invariant after bot v-1: every subset S of range(v) is a partial table C(n-v, k-|S|) times
    # over all rounds, so the tables complete to each k-subset exactly once.
    tables = [[0] * size for size in sizes]
    filled = [[0] * size for size in sizes]
    to_rest = [n - size * k for size in sizes]
    REST = -1  # the option "bot v rests in this round"
    for v in range(n):
        left = n - v  # bots v..n-1
        room: dict[int, int] = {}
        options = []
        for j in range(rounds):
            choices = []
            for mask, size in zip(tables[j], filled[j]):
                if size < k and mask not in choices:
                    choices.append(mask)
                    # Of the C(left, k-|S|) copies of S, those that take bot v.
                    room.setdefault(mask, comb(left - 1, k - size - 1))
            if to_rest[j]:
                choices.append(REST)
            options.append(choices)
        room[REST] = rounds - sum(room.values())
        for j, choice in enumerate(_one_each(options, room)):
            if choice == REST:
                to_rest[j] -= 1
            else:
                i = tables[j].index(choice)
                tables[j][i] |= 1 << v
                filled[j][i] += 1
    return [mask for masks in tables for mask in masks]


def _one_each(options: list[list[int]], room: dict[int, int],
              chosen: list[int | None] | None = None, complete: bool = True) -> list[int | None]:
    """One of options[j] for every j, option r chosen at most room[r] times (deterministic).

    `chosen` is a partial choice to extend (kept except where a path moves it). With `complete`
    a choice for every j must exist (Baranyai's fractional flow shows it does; AssertionError
    otherwise); without, as many j as possible get one and the rest None. A greedy pass places
    most, phases of augmenting paths (a BFS forest from every unplaced j) the rest.
    """
    chosen = list(chosen) if chosen is not None else [None] * len(options)
    load = dict.fromkeys(room, 0)
    holders: dict[int, dict[int, None]] = {r: {} for r in room}  # ordered sets
    for j, r in enumerate(chosen):
        if r is not None:
            load[r] += 1
            holders[r][j] = None
    # Greedy: each j takes the option that most needs takers — room left over the j's still to
    # come that could take it — which leaves few to the augmenting paths.
    claimants = dict.fromkeys(room, 0)
    for j, choices in enumerate(options):
        if chosen[j] is None:
            for r in choices:
                claimants[r] += 1
    for j, choices in enumerate(options):
        if chosen[j] is not None:
            continue
        best, need = None, 0.0
        for r in choices:
            free = room[r] - load[r]
            if free > 0 and free / claimants[r] > need:
                best, need = r, free / claimants[r]
        for r in choices:
            claimants[r] -= 1
        if best is not None:
            chosen[j] = best
            load[best] += 1
            holders[best][j] = None
    unplaced = [j for j, c in enumerate(chosen) if c is None]
    while unplaced:
        reached: dict[int, tuple[int, int | None]] = {}  # option -> (j that takes it, j's current)
        queue: deque[int] = deque()
        for j in unplaced:
            for r in options[j]:
                if r not in reached:
                    reached[r] = (j, None)
                    queue.append(r)
        ends = []
        while queue:
            r = queue.popleft()
            if load[r] < room[r]:
                ends.append(r)
                continue
            for i in holders[r]:
                for r2 in options[i]:
                    if r2 not in reached:
                        reached[r2] = (i, r)
                        queue.append(r2)
        if not ends:
            if complete:
                raise AssertionError("no choice for every one: the counts are wrong")
            break
        done: set[int] = set()
        for end in ends:  # the trees of the forest are disjoint: one path per tree
            path, r = [], end
            while True:
                i, before = reached[r]
                path.append((i, r, before))
                if before is None:
                    break
                r = before
            if path[-1][0] in done or load[end] >= room[end]:
                continue
            done.add(path[-1][0])
            load[end] += 1
            for i, r, before in path:
                chosen[i] = r
                holders[r][i] = None
                if before is not None:
                    del holders[before][i]
        unplaced = [j for j in unplaced if chosen[j] is None]
    return chosen


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

    def __init__(self, schedule: int = SCHEDULE_VERSION):
        if schedule not in SCHEDULES:
            raise ConfigError(f"round robin schedule version {schedule!r} is not one this Arena "
                              f"knows ({', '.join(map(str, SCHEDULES))}); is the database from "
                              f"a newer Arena?")
        self.schedule = schedule

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
        groups = self._groups(pairing.entrants, pairing.seats, index, self.schedule)
        number = played + 1
        tables = tuple(Table(number, i, rotate(group, cycle)) for i, group in enumerate(groups, 1))
        return Round(number, tables)

    @staticmethod
    def _groups(entrants: int, seats: int, index: int, schedule: int) -> list[tuple[int, ...]]:
        """The seated groups of round `index` (from 0) of the first cycle."""
        if seats == 2:
            return circle_round(entrants, index)
        if schedule >= 2 and comb(entrants, seats) <= DESIGN_LIMIT:
            return list(resolvable_schedule(entrants, seats)[index])
        if schedule == 1 and comb(entrants, seats) <= GREEDY_LIMIT:
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

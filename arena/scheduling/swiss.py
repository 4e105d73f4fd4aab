"""Swiss: each round pairs bots of similar score who have not met, for a fixed number of rounds.

Scores are the sum of a bot's match points over the stage's recorded matches plus
`Pairing.bye_points` per bye. Ranking is by score, ties by the initial order: `Pairing.seeding`
(strongest first) when given, else a shuffle seeded from `Pairing.seed`. The default number of
rounds is ceil(log2 N) + 1 for any table size, capped at `max_rounds`.

Round 1 pairs the top half of the initial order against the bottom half (1 v N/2+1, ...); with
larger tables, table i takes the i-th bot of each of the `seats` bands of the order.

Two seats, later rounds: a maximum-weight perfect matching (networkx's blossom) on integer costs
in tiers, each above any sum of the tiers below over a whole matching: (a) earlier meetings, so a
rematch is used only when no rematch-free pairing exists, and then as few as possible; (b) an odd
field's bye, a vertex joined only to bots that have not had one (so no bot gets two), costed by
the recipient's score above the bottom, so it goes to the lowest score that (a) allows; (c) the
squared score differences of the pairs plus a first-seat term: nothing while both bots stay within
one first of even, a tie-break for two bots both left two off, and more than two one-point score
differences for a pairing that leaves a bot three or more off (small fields otherwise drift there
when a score group forces the same seat on both). For speed blossom never sees the complete
graph: each bot is joined to its nearest `NEIGHBOURS` rematch-free bots in the score order, and a
big field is matched in windows of `WINDOW` bots down the ranking (each looking `LOOKAHEAD` further
so floaters can drop; pairs touching the window are settled, the bye vertex joins the last). If a
window cannot pair its bots, or the bye misses the lowest score possible, the whole field is
matched with the neighbourhood doubling until it pairs everyone (bye to the lowest score), up to
the complete graph with rematch edges, which keeps (a) and (b) exact. In each pair the bot with
fewer firsts net of its seconds sits first; ties go to fewer firsts, then to the bot that was
second last round, then to the better ranked.

Three or four seats, later rounds: the N mod seats lowest-ranked bots without a bye get byes (so
`max_rounds` keeps each bot to one bye at most). The others are taken in rank order: the top
unplaced bot completes its table with the choice, from a window of the next unplaced bots, of
fewest repeat meetings, then least first-seat strain (see `first_seat_strain`: whether some bot
must end the round more than one first off its fair share), then smallest score spread — like
chess Swiss's absolute colour rules, seat balance outranks score homogeneity, since tables whose
bots are all due (or all overdue) the same seat otherwise drift a bot to first 3 times in 4. A
table left with repeats tries swaps with nearby tables, and a field of at most `EXACT_LIMIT` bots
at tables that still has repeats is searched exhaustively for a grouping with fewer; tables left
with strain then try swaps that add no repeats. Each table's seats are then ordered (all
permutations) for least strain, then to give first seat to the bot that has been first least,
then to even out how often each bot has sat in each seat.

Tables are numbered from 1 down from the top score. The round is a pure function of the pairing
and the history.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations, permutations
from math import ceil, log2

import networkx as nx

from arena.errors import ConfigError
from arena.scheduling.base import History, Pairing, Round, Scheduler, Table, exact_points

#: Rematch-free score-order neighbours each bot starts with in the two-seat matching graph.
NEIGHBOURS = 20
#: Two seats: bots settled per matching window, and the extra bots each window looks ahead to.
WINDOW = 100
LOOKAHEAD = 60
#: Scores are compared as integers in units of 1/SCORE_SCALE (exact for halves, thirds, quarters).
SCORE_SCALE = 12
#: Weight of a squared score difference in SCORE_SCALE units: a half-point difference costs 360.
SCORE_WEIGHT = 10
#: Seat term for leaving a bot two firsts off even: below a half-point difference, a tie-break.
MILD_SEAT_COST = 10
#: And per first beyond that: just above two one-point differences (2 × 1440), since fields whose
#: score groups force the same seat on both bots otherwise drift to three or more off even (at
#: 1,500, just above one, a 34-bot stage of default length left a bot first 5 times in 7).
SEVERE_SEAT_COST = 3_000
#: Larger-table grouping: unplaced bots considered to complete the top bot's table, per seat.
WINDOW_PER_SEAT = 3
#: Larger-table repair: tables either side tried for swaps that remove a repeat meeting.
REPAIR_REACH = 8
#: Larger tables: at most this many bots at tables get an exhaustive search against repeats.
EXACT_LIMIT = 12


def max_rounds(entrants: int, seats: int) -> int:
    """Most rounds a Swiss stage can have: every bot gets at most one bye (N-1 with no byes)."""
    spare = entrants % seats
    return entrants // spare if spare else entrants - 1


def default_rounds(entrants: int, seats: int) -> int:
    """ceil(log2 N) + 1 rounds, capped at `max_rounds`."""
    return max(1, min(ceil(log2(max(entrants, 2))) + 1, max_rounds(entrants, seats)))


def initial_order(pairing: Pairing) -> list[int]:
    """The round-1 order, strongest first: the seeding, else a shuffle seeded by the stage seed."""
    if pairing.seeding:
        return list(pairing.seeding)
    order = list(range(pairing.entrants))
    # A string seed hashes the same in every process (no PYTHONHASHSEED dependence).
    random.Random(f"arena.swiss:{pairing.seed}").shuffle(order)
    return order


@dataclass
class Standing:
    """What pairing needs of the history: scores, byes, meetings, seats taken, and the ranking."""

    scores: list[float]
    had_bye: set[int]
    met: dict[tuple[int, int], int]
    seat_counts: list[list[int]]
    games: list[int]
    last_second: set[int]
    ranking: list[int]
    position: list[int]

    @classmethod
    def of(cls, pairing: Pairing, history: History) -> Standing:
        """The standing after the rounds in `history`."""
        n, seats = pairing.entrants, pairing.seats
        # Summed exactly: match points are floats of thirds and sixths at 4 seats, whose float sum
        # depends on the order the matches come in (completion order on Ray, table order on a
        # resume), and a last-bit difference between equal scores reorders the ranking.
        totals = [Fraction(0)] * n
        for match in history.matches:
            for bot, points in zip(match.bots, match.match_points):
                totals[bot] += exact_points(points)
        had_bye: set[int] = set()
        met: dict[tuple[int, int], int] = {}
        seat_counts = [[0] * seats for _ in range(n)]
        games = [0] * n
        for rnd in history.rounds:
            for bot in rnd.byes:
                totals[bot] += exact_points(pairing.bye_points)
                had_bye.add(bot)
            for table in rnd.tables:
                for seat, bot in enumerate(table.bots):
                    seat_counts[bot][seat] += 1
                    games[bot] += 1
                for a, b in combinations(sorted(table.bots), 2):
                    met[a, b] = met.get((a, b), 0) + 1
        scores = [float(total) for total in totals]
        last_second = set()
        if history.rounds:
            for table in history.rounds[-1].tables:
                last_second.update(table.bots[1:])
        seed_rank = [0] * n
        for rank, bot in enumerate(initial_order(pairing)):
            seed_rank[bot] = rank
        ranking = sorted(range(n), key=lambda bot: (-scores[bot], seed_rank[bot]))
        position = [0] * n
        for pos, bot in enumerate(ranking):
            position[bot] = pos
        return cls(scores, had_bye, met, seat_counts, games, last_second, ranking, position)

    def meetings(self, a: int, b: int) -> int:
        """How often bots a and b have met in this stage."""
        return self.met.get((a, b) if a < b else (b, a), 0)

    def repeats(self, group: tuple[int, ...] | list[int]) -> int:
        """Earlier meetings among the bots of `group`, counted per pair and meeting."""
        return sum(self.meetings(a, b) for a, b in combinations(group, 2))

    def imbalance(self, bot: int) -> int:
        """Times first minus times second (two seats)."""
        return self.seat_counts[bot][0] - (self.games[bot] - self.seat_counts[bot][0])


class Swiss(Scheduler):
    """Swiss system: rounds paired by score, without avoidable rematches."""

    name = "swiss"
    depends_on_results = True

    def total_rounds(self, pairing: Pairing) -> int:
        """`Pairing.rounds`, or `default_rounds` when it is None."""
        if pairing.rounds is not None:
            return pairing.rounds
        return default_rounds(pairing.entrants, pairing.seats)

    def validate(self, pairing: Pairing) -> None:
        """Raise ConfigError for too few bots, a round count out of range or a bad seeding."""
        n, seats = pairing.entrants, pairing.seats
        if seats < 2:
            raise ConfigError(f"swiss needs tables of at least 2 seats (got {seats})")
        if n < seats + 1:
            raise ConfigError(f"swiss needs at least {seats + 1} bots for {seats}-seat tables (got {n})")
        rounds = self.total_rounds(pairing)
        if rounds < 1:
            raise ConfigError(f"swiss rounds must be at least 1 (got {rounds})")
        most = max_rounds(n, seats)
        if rounds > most:
            raise ConfigError(
                f"swiss rounds {rounds} is more than the {most} possible for {n} bots at "
                f"{seats}-seat tables")
        if pairing.seeding and sorted(pairing.seeding) != list(range(n)):
            raise ConfigError(
                f"swiss seeding {list(pairing.seeding)} is not an ordering of the {n} entrants 0..{n - 1}")

    def next_round(self, pairing: Pairing, history: History) -> Round | None:
        """Round len(history.rounds) + 1, paired from the scores so far; None after the last."""
        self.validate(pairing)
        number = len(history.rounds) + 1
        if number > self.total_rounds(pairing):
            return None
        if number == 1:
            return first_round(pairing)
        standing = Standing.of(pairing, history)
        if pairing.seats == 2:
            pairs, byes = pair_two_seats(standing)
        else:
            pairs, byes = group_tables(standing, pairing.seats)
        pairs.sort(key=lambda bots: min(standing.position[b] for b in bots))
        tables = tuple(Table(number, i, bots) for i, bots in enumerate(pairs, 1))
        return Round(number, tables, tuple(sorted(byes, key=standing.position.__getitem__)))


def first_round(pairing: Pairing) -> Round:
    """Round 1: the top band of the initial order against the next, byes to the lowest."""
    order = initial_order(pairing)
    seats = pairing.seats
    spare = len(order) % seats
    byes = tuple(order[len(order) - spare:]) if spare else ()
    playing = order[:len(order) - spare]
    size = len(playing) // seats
    tables = []
    for i in range(size):
        group = tuple(playing[i + band * size] for band in range(seats))
        shift = i % seats  # first seat moves down the tables, as colours alternate in chess
        tables.append(Table(1, i + 1, group[shift:] + group[:shift]))
    return Round(1, tuple(tables), byes)


def pair_two_seats(standing: Standing) -> tuple[list[tuple[int, ...]], list[int]]:
    """Oriented pairs and the bye (if any): windowed matching, else the whole field's."""
    n = len(standing.ranking)
    bye_vertex = n if n % 2 else None
    matching = windowed_matching(standing, bye_vertex)
    if matching is None or not lowest_bye(standing, matching, bye_vertex):
        matching = field_matching(standing, bye_vertex)
    pairs = []
    byes = []
    for u, v in matching:
        if bye_vertex in (u, v):
            byes.append(u if v == bye_vertex else v)
        else:
            pairs.append(orient(standing, u, v))
    return pairs, byes


def lowest_bye(standing: Standing, matching: list[tuple[int, int]], bye_vertex: int | None) -> bool:
    """Whether the matching gives its bye (if any) to a lowest score among bots without one."""
    if bye_vertex is None:
        return True
    recipient = next(u if v == bye_vertex else v for u, v in matching if bye_vertex in (u, v))
    eligible = (standing.scores[bot] for bot in standing.ranking if bot not in standing.had_bye)
    return standing.scores[recipient] <= min(eligible)


def windowed_matching(standing: Standing, bye_vertex: int | None) -> list[tuple[int, int]] | None:
    """Rematch-free pairs settled window by window down the ranking, or None if that fails.

    Each step matches the top `WINDOW` unsettled bots plus `LOOKAHEAD` more (so floaters can go
    down) and settles only the pairs that touch the top `WINDOW`; the bye vertex joins the last
    window. Blossom's cost grows much faster than the field, so this is far quicker on big fields;
    when some window cannot pair its top without a rematch, the caller matches the whole field.
    """
    unsettled = list(standing.ranking)
    settled: list[tuple[int, int]] = []
    while unsettled:
        last = len(unsettled) <= WINDOW + LOOKAHEAD
        window = unsettled if last else unsettled[:WINDOW + LOOKAHEAD]
        graph = matching_graph(standing, window, NEIGHBOURS, bye_vertex if last else None, False)
        matching = nx.max_weight_matching(graph, maxcardinality=True)
        top = set(window if last else window[:WINDOW])
        chosen = [(u, v) for u, v in matching if u in top or v in top]
        if sum(1 for u, v in chosen for bot in (u, v) if bot in top) != len(top):
            return None
        settled.extend(chosen)
        done = {bot for pair in chosen for bot in pair}
        unsettled = [bot for bot in unsettled if bot not in done]
    return settled


def field_matching(standing: Standing, bye_vertex: int | None) -> list[tuple[int, int]]:
    """Pairs for the whole field, the neighbourhood doubling until it is perfect, bye to the lowest."""
    ranking = standing.ranking
    n = len(ranking)
    wanted = (n + 1) // 2
    neighbours = NEIGHBOURS
    while True:
        complete = neighbours >= n - 1
        graph = matching_graph(standing, ranking, neighbours, bye_vertex, with_rematches=complete)
        matching = nx.max_weight_matching(graph, maxcardinality=True)
        if len(matching) == wanted and (complete or lowest_bye(standing, list(matching), bye_vertex)):
            return list(matching)
        if complete:
            # Unreachable after validate(): rematch edges make the graph complete and a bye
            # vertex always has a bot left without a bye.
            raise ConfigError(f"swiss: no pairing exists for {n} bots")
        neighbours *= 2


def matching_graph(standing: Standing, bots: list[int], neighbours: int, bye_vertex: int | None,
                   with_rematches: bool) -> nx.Graph:
    """The weighted pairing graph of `bots` (in rank order), each joined to its nearest `neighbours`."""
    n = len(standing.ranking)
    scaled = [round(score * SCORE_SCALE) for score in standing.scores]
    imbalance = [standing.imbalance(bot) for bot in range(n)]
    edges: list[tuple[int, int, int, int]] = []  # (u, v, cost without rematches, meetings)
    for i, u in enumerate(bots):
        found = 0
        for v in bots[i + 1:]:
            if found >= neighbours:
                break
            met = standing.meetings(u, v)
            if met and not with_rematches:
                continue
            found += 1
            edges.append((u, v, pair_cost(scaled[u], scaled[v], imbalance[u], imbalance[v]), met))
    if bye_vertex is not None:
        # Room below every other cost for a tie-break among equal scores: the lowest ranked.
        edges = [(u, v, cost * (n + 1), met) for u, v, cost, met in edges]
    # Costs come in tiers, each above any sum of those below over a whole matching: rematches,
    # then the bye's score above the lowest (so it goes to the lowest score it can), then the
    # pair costs, then which of equally scored bots gets the bye.
    pairs_total = max((cost for _, _, cost, _ in edges), default=0) * ((n + 2) // 2) + n + 1
    if bye_vertex is not None:
        bottom = min(scaled)
        for u in bots:
            if u not in standing.had_bye:
                cost = (scaled[u] - bottom) * pairs_total + n - 1 - standing.position[u]
                edges.append((u, bye_vertex, cost, 0))
    rematch = pairs_total + max((cost for _, _, cost, met in edges if not met), default=0) + 1
    costs = [(u, v, cost + rematch * met) for u, v, cost, met in edges]
    top = max((cost for _, _, cost in costs), default=0) + 1
    graph = _MatchingGraph()
    graph.add_nodes_from(bots)
    if bye_vertex is not None:
        graph.add_node(bye_vertex)
    # All perfect matchings have the same number of edges, so maximising top - cost minimises cost.
    graph.add_weighted_edges_from((u, v, top - cost) for u, v, cost in costs)
    return graph


class _MatchingGraph(nx.Graph):
    """An nx.Graph whose `G[u]` is its adjacency dict itself rather than a read-only view.

    max_weight_matching reads `G[v][w]` millions of times on a big field (most of a 1,000-bot
    round's pairing went into building views); the same dicts in the same order, so the same
    matching. Only the matching reads this graph, and never writes through `G[u]`.
    """

    def __getitem__(self, n):
        return self._adj[n]


def pair_cost(score_u: int, score_v: int, imbalance_u: int, imbalance_v: int) -> int:
    """Cost of pairing two bots: squared score difference, then the seat imbalance it forces."""
    low, high = sorted((imbalance_u, imbalance_v))
    # The lower sits first: it moves up one, the other down one.
    return (score_u - score_v) ** 2 * SCORE_WEIGHT + seat_cost(low + 1) + seat_cost(high - 1)


def seat_cost(imbalance: int) -> int:
    """Cost of leaving a bot `imbalance` firsts over its seconds (or under)."""
    excess = abs(imbalance) - 1
    if excess <= 0:
        return 0
    return MILD_SEAT_COST + SEVERE_SEAT_COST * (excess - 1)


def orient(standing: Standing, u: int, v: int) -> tuple[int, int]:
    """(first, second): fewer net firsts first, then fewer firsts, second last round, better rank."""

    def key(bot: int) -> tuple[int, int, int, int]:
        """Sorts the bot due first seat first."""
        return (standing.imbalance(bot), standing.seat_counts[bot][0],
                0 if bot in standing.last_second else 1, standing.position[bot])

    return (u, v) if key(u) <= key(v) else (v, u)


def group_tables(standing: Standing, seats: int) -> tuple[list[tuple[int, ...]], list[int]]:
    """Seated tables and byes for tables of three or more, grouped by score (see module docstring)."""
    ranking = standing.ranking
    spare = len(ranking) % seats
    byes = [bot for bot in reversed(ranking) if bot not in standing.had_bye][:spare]
    resting = set(byes)
    playing = [bot for bot in ranking if bot not in resting]
    groups = greedy_groups(standing, playing, seats)
    repair(standing, groups, standing.repeats)
    if len(playing) <= EXACT_LIMIT and any(standing.repeats(g) for g in groups):
        groups = fewest_repeats(standing, playing, seats, groups)
    repair(standing, groups, lambda group: first_seat_strain(standing, group), keep_repeats=True)
    return [seat_order(standing, group) for group in groups], byes


def seating_strain(standing: Standing, group: list[int] | tuple[int, ...], first: int) -> int:
    """How far beyond one first off its fair share this round leaves `group`'s bots, `first` first.

    In units of 1/seats of a first: a bot first f times in g games, first again or not (x), is
    seats·(f + x) − (g + 1) off an even share; anything past ±seats counts.
    """
    seats = len(group)
    strain = 0
    for bot in group:
        off = seats * (standing.seat_counts[bot][0] + (bot == first)) - (standing.games[bot] + 1)
        strain += max(0, abs(off) - seats)
    return strain


def first_seat_strain(standing: Standing, group: list[int] | tuple[int, ...]) -> int:
    """The least `seating_strain` of `group` over its choices of first seat."""
    return min(seating_strain(standing, group, first) for first in group)


def score_spread(standing: Standing, group: list[int] | tuple[int, ...]) -> float:
    """Highest minus lowest score in `group`."""
    scores = [standing.scores[bot] for bot in group]
    return max(scores) - min(scores)


def greedy_groups(standing: Standing, playing: list[int], seats: int) -> list[list[int]]:
    """Tables in rank order: the top unplaced bot with the best companions from a window below it."""
    unplaced = list(playing)
    window = WINDOW_PER_SEAT * (seats - 1)
    groups = []
    while unplaced:
        top, candidates = unplaced[0], unplaced[1:1 + window]
        best = min(
            combinations(range(len(candidates)), seats - 1),
            key=lambda picks: table_key(standing, [top, *(candidates[i] for i in picks)], picks),
        )
        group = [top, *(candidates[i] for i in best)]
        chosen = set(group)
        unplaced = [bot for bot in unplaced if bot not in chosen]
        groups.append(group)
    return groups


def table_key(standing: Standing, group: list[int], picks: tuple[int, ...]) -> tuple:
    """Greedy grouping's preference: fewest repeats, then least first-seat strain, then spread."""
    return (standing.repeats(group), first_seat_strain(standing, group),
            score_spread(standing, group), picks)


def repair(standing: Standing, groups: list[list[int]], cost, keep_repeats: bool = False) -> None:
    """Swap bots between nearby tables while a swap lowers `cost` (of a table) over the two
    tables; with `keep_repeats`, only swaps that add no repeat meetings."""
    for index, group in enumerate(groups):
        while cost(group):
            best = None
            for other in range(max(0, index - REPAIR_REACH), min(len(groups), index + REPAIR_REACH + 1)):
                if other == index:
                    continue
                partner = groups[other]
                repeats = standing.repeats(group) + standing.repeats(partner) if keep_repeats else 0
                before = cost(group) + cost(partner)
                for i, a in enumerate(group):
                    for j, b in enumerate(partner):
                        mine = group[:i] + [b] + group[i + 1:]
                        theirs = partner[:j] + [a] + partner[j + 1:]
                        if keep_repeats and standing.repeats(mine) + standing.repeats(theirs) > repeats:
                            continue
                        gain = before - cost(mine) - cost(theirs)
                        if gain <= 0:
                            continue
                        spread = score_spread(standing, mine) + score_spread(standing, theirs)
                        key = (-gain, spread, abs(other - index), other, i, j)
                        if best is None or key < best[0]:
                            best = (key, other, mine, theirs)
            if best is None:
                break
            _, other, mine, theirs = best
            groups[index][:] = mine
            groups[other][:] = theirs


def fewest_repeats(standing: Standing, playing: list[int], seats: int,
                   fallback: list[list[int]]) -> list[list[int]]:
    """Exhaustive search (small fields) for a grouping with fewer repeats, first found in rank order."""
    best_repeats = sum(standing.repeats(g) for g in fallback)
    best: list[list[int]] = fallback
    current: list[list[int]] = []

    def search(unplaced: list[int], repeats: int) -> bool:
        """Place `unplaced` below `current`; True once a grouping without repeats is found."""
        nonlocal best, best_repeats
        if repeats >= best_repeats:
            return False
        if not unplaced:
            best, best_repeats = [list(g) for g in current], repeats
            return repeats == 0  # nothing beats zero: stop
        top, rest = unplaced[0], unplaced[1:]
        for picks in combinations(range(len(rest)), seats - 1):
            group = [top, *(rest[i] for i in picks)]
            current.append(group)
            taken = set(picks)
            left = [bot for i, bot in enumerate(rest) if i not in taken]
            if search(left, repeats + standing.repeats(group)):
                return True
            current.pop()
        return False

    search(playing, 0)
    return best


def seat_order(standing: Standing, group: list[int]) -> tuple[int, ...]:
    """The seating of `group` that gives first seat to whom it is due, then evens out the seats."""
    seats = len(group)

    def cost(order: tuple[int, ...]) -> tuple[int, int, int, tuple[int, ...]]:
        """Lower for a seating that suits the bots' seat history better."""
        first = order[0]
        # Over-representation in first seat relative to a fair share of the games played.
        first_excess = standing.seat_counts[first][0] * seats - standing.games[first]
        spread = sum((standing.seat_counts[bot][seat] + 1) ** 2 for seat, bot in enumerate(order))
        return (seating_strain(standing, group, first), first_excess, spread,
                tuple(standing.position[bot] for bot in order))

    return min(permutations(group), key=cost)

"""Schedulers: round robin, Swiss and gauntlet as pure functions of (pairing, history)."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction
from itertools import combinations
from math import comb

import networkx as nx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arena.errors import ConfigError
from arena.scheduling import (
    SCHEDULERS,
    Gauntlet,
    History,
    MatchScore,
    Pairing,
    Round,
    RoundRobin,
    Swiss,
    default_rounds,
    get_scheduler,
    max_rounds,
    seatings,
)
from arena.scheduling import swiss as swiss_module
from arena.scheduling.round_robin import (
    DESIGN_LIMIT,
    GREEDY_LIMIT,
    greedy_schedule,
    next_combination,
    rank_combination,
    resolvable_schedule,
    unrank_combination,
)

# --- helpers -----------------------------------------------------------------------------------


def random_match(rng: random.Random, rnd: int, table: int, bots: tuple[int, ...],
                 games: int = 4) -> MatchScore:
    """A match with random game results and the match points they give (per MatchScore's definition)."""
    sides = len(bots)
    game_points = [0.0] * sides
    for _ in range(games):
        places = [rng.randrange(sides) for _ in range(sides)]  # equal places are ties
        for i in range(sides):
            ahead = sum(1.0 if places[i] < places[j] else 0.5 if places[i] == places[j] else 0.0
                        for j in range(sides) if j != i)
            game_points[i] += ahead / (sides - 1)
    match_points = tuple(
        sum(1.0 if game_points[i] > game_points[j] else 0.5 if game_points[i] == game_points[j] else 0.0
            for j in range(sides) if j != i) / (sides - 1)
        for i in range(sides))
    return MatchScore(rnd, table, bots, tuple(game_points), match_points, games)


def played(history: History, rnd: Round, rng: random.Random) -> History:
    """`history` with `rnd` appended and a random result for each of its tables."""
    scores = tuple(random_match(rng, rnd.number, t.number, t.bots) for t in rnd.tables)
    return History(history.rounds + (rnd,), history.matches + scores)


def scores_of(pairing: Pairing, history: History) -> list[Fraction]:
    """Match points plus bye points per bot, computed independently of the scheduler.

    Exact: a float sum of thirds depends on the order of the matches, so equal scores could
    compare unequal.
    """
    scores = [Fraction(0)] * pairing.entrants
    for match in history.matches:
        for bot, points in zip(match.bots, match.match_points):
            scores[bot] += Fraction(points).limit_denominator(1000)
    for rnd in history.rounds:
        for bot in rnd.byes:
            scores[bot] += Fraction(pairing.bye_points).limit_denominator(1000)
    return scores


def met_pairs(history: History) -> Counter:
    """How often each (sorted) pair of bots has shared a table."""
    met: Counter = Counter()
    for rnd in history.rounds:
        for table in rnd.tables:
            met.update(combinations(sorted(table.bots), 2))
    return met


def repeats(met: Counter, group: tuple[int, ...]) -> int:
    """Earlier meetings among `group`."""
    return sum(met[pair] for pair in combinations(sorted(group), 2))


def fewest_repeats_possible(met: Counter, bots: list[int], seats: int) -> int:
    """Brute force: the fewest repeat meetings of any grouping of `bots` into tables of `seats`."""
    if not bots:
        return 0
    top, rest = bots[0], bots[1:]
    best = None
    for others in combinations(rest, seats - 1):
        remaining = [b for b in rest if b not in others]
        total = repeats(met, (top, *others)) + fewest_repeats_possible(met, remaining, seats)
        best = total if best is None else min(best, total)
    return best


def fewest_rematches_possible(met: Counter, bots: list[int], bye_allowed: set[int]) -> int:
    """The fewest earlier meetings over any pairing of `bots` (with a bye if their number is odd)."""
    most = max(met.values(), default=0) + 1
    graph = nx.Graph()
    graph.add_weighted_edges_from((a, b, most - met[a, b]) for a, b in combinations(sorted(bots), 2))
    if len(bots) % 2:
        graph.add_weighted_edges_from(("bye", b, most) for b in bye_allowed)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    assert len(matching) == (len(bots) + 1) // 2
    return sum(met[tuple(sorted(pair))] for pair in matching if "bye" not in pair)


def rematch_free_pairing_exists(met: Counter, bots: list[int], bye_allowed: set[int]) -> bool:
    """Whether `bots` (plus a bye if their number is odd) can all be paired without a rematch."""
    graph = nx.Graph()
    graph.add_nodes_from(bots)
    graph.add_edges_from(pair for pair in combinations(sorted(bots), 2) if not met[pair])
    if len(bots) % 2:
        graph.add_edges_from(("bye", b) for b in bye_allowed)
    return len(nx.max_weight_matching(graph, maxcardinality=True)) == (len(bots) + 1) // 2


def run_stage(scheduler, pairing: Pairing) -> list[Round]:
    """All rounds of a stage whose rounds do not depend on results."""
    history = History()
    rounds = []
    while (rnd := scheduler.next_round(pairing, history)) is not None:
        rounds.append(rnd)
        history = History(history.rounds + (rnd,))
        assert len(rounds) <= scheduler.total_rounds(pairing)
    return rounds


# --- registry and seatings ---------------------------------------------------------------------


def test_registry_names_each_format():
    assert set(SCHEDULERS) == {"round_robin", "swiss", "gauntlet"}
    for name, scheduler in SCHEDULERS.items():
        assert get_scheduler(name) is scheduler
        assert scheduler.name == name
    assert not get_scheduler("round_robin").depends_on_results
    assert not get_scheduler("gauntlet").depends_on_results
    assert get_scheduler("swiss").depends_on_results


def test_unknown_format_is_a_config_error():
    message = r"unknown format 'knockout' \(choose round_robin, swiss or gauntlet\)"
    with pytest.raises(ConfigError, match=message):
        get_scheduler("knockout")


@pytest.mark.parametrize("num_seats", [2, 3, 4])
def test_seatings_rotate_each_deal(num_seats):
    duplicate = seatings(num_seats, 5, True)
    assert [(deal, rotation) for deal, rotation, _ in duplicate] == [
        (deal, rotation) for deal in range(5) for rotation in range(num_seats)]
    single = seatings(num_seats, 5, False)
    assert [(deal, rotation) for deal, rotation, _ in single] == [
        (deal, deal % num_seats) for deal in range(5)]
    for _, rotation, seating in duplicate + single:
        assert seating == tuple((seat + rotation) % num_seats for seat in range(num_seats))


@given(n=st.integers(1, 12), data=st.data())
def test_unranking_walks_the_lexicographic_order(n, data):
    k = data.draw(st.integers(1, n))
    everything = list(combinations(range(n), k))
    rank = data.draw(st.integers(0, len(everything) - 1))
    assert unrank_combination(n, k, rank) == everything[rank]
    following = next_combination(everything[rank], n)
    assert following == (everything[rank + 1] if rank + 1 < len(everything) else None)


# --- round robin -------------------------------------------------------------------------------


@pytest.mark.parametrize(("seats", "entrants"), [(s, n) for s in (2, 3, 4) for n in range(s, 13)])
def test_round_robin_every_group_meets_once_per_cycle(seats, entrants):
    scheduler = RoundRobin()
    cycles = 2
    pairing = Pairing(entrants=entrants, seats=seats, seed=0, cycles=cycles)
    rounds = run_stage(scheduler, pairing)
    assert len(rounds) == scheduler.total_rounds(pairing)
    per_cycle = len(rounds) // cycles
    every_group = Counter(combinations(range(entrants), seats))
    for cycle in range(cycles):
        groups = Counter(tuple(sorted(t.bots)) for rnd in rounds[cycle * per_cycle:(cycle + 1) * per_cycle]
                         for t in rnd.tables)
        assert groups == every_group
    for number, rnd in enumerate(rounds, 1):
        assert rnd.number == number and rnd.byes == ()
        assert [t.number for t in rnd.tables] == list(range(1, len(rnd.tables) + 1))
        assert all(t.round == number for t in rnd.tables)
        assert len(rnd.tables) <= max(1, entrants // seats)


@pytest.mark.parametrize("entrants", range(2, 17))
def test_circle_method_rounds(entrants):
    rounds = run_stage(RoundRobin(), Pairing(entrants=entrants, seats=2, seed=0, cycles=2))
    per_cycle = entrants - 1 if entrants % 2 == 0 else entrants
    assert len(rounds) == 2 * per_cycle
    firsts: Counter = Counter()
    for rnd in rounds[:per_cycle]:
        bots = [b for t in rnd.tables for b in t.bots]
        assert len(bots) == len(set(bots)), "a bot plays twice in a round"
        assert len(rnd.tables) == entrants // 2  # an odd field rests exactly one bot
        firsts.update(t.bots[0] for t in rnd.tables)
    for bot in range(entrants):
        # Each bot plays entrants-1 matches a cycle: first in half of them (within one).
        assert abs(2 * firsts[bot] - (entrants - 1)) <= 1
    for first, second in zip(rounds[:per_cycle], rounds[per_cycle:]):
        assert [t.bots[::-1] for t in first.tables] == [t.bots for t in second.tables]


@pytest.mark.parametrize("seats", [3, 4])
@pytest.mark.parametrize("entrants", range(5, 13))
def test_round_robin_larger_tables_spread_bots_and_first_seats(seats, entrants):
    rounds = run_stage(RoundRobin(), Pairing(entrants=entrants, seats=seats, seed=0))
    first_round = [b for t in rounds[0].tables for b in t.bots]
    assert len(first_round) == len(set(first_round)) == entrants // seats * seats
    firsts = Counter(t.bots[0] for rnd in rounds for t in rnd.tables)
    share = comb(entrants - 1, seats - 1) / seats  # each bot's groups, over the seats
    assert all(abs(firsts[bot] - share) <= 1 for bot in range(entrants))


def overlaps(rnd: Round) -> int:
    """Seats of a round beyond one per bot (0: no bot at two tables)."""
    bots = [b for t in rnd.tables for b in t.bots]
    return len(bots) - len(set(bots))


@pytest.mark.parametrize("seats", [3, 4])
@pytest.mark.parametrize("entrants", range(3, 21))
def test_round_robin_at_three_and_four_seats_never_seats_a_bot_twice_in_a_round(seats, entrants):
    # The promise: every group of `seats` bots once per cycle, in ⌈C(N, k) / (N // k)⌉ rounds of
    # N // k tables. Baranyai's theorem splits the C(N, k) groups into matchings of any sizes up
    # to N // k, so for every N a schedule keeping the promise with no bot twice in a round
    # exists: the fewest overlaps possible is 0 for every field size, and the schedule has 0.
    if entrants < seats:
        return
    scheduler = RoundRobin()
    pairing = Pairing(entrants=entrants, seats=seats, seed=0, cycles=2)
    rounds = run_stage(scheduler, pairing)
    per_round = entrants // seats
    per_cycle = -(-comb(entrants, seats) // per_round)
    assert len(rounds) == 2 * per_cycle == scheduler.total_rounds(pairing)
    assert [overlaps(r) for r in rounds] == [0] * len(rounds)
    every_group = Counter(combinations(range(entrants), seats))
    for cycle in (0, 1):
        tables = [t for r in rounds[cycle * per_cycle:(cycle + 1) * per_cycle] for t in r.tables]
        assert Counter(tuple(sorted(t.bots)) for t in tables) == every_group
    # Every round but the last seats N // k tables; first seats within one of the fair share.
    assert all(len(r.tables) == per_round for r in rounds[:per_cycle - 1])
    firsts = Counter(t.bots[0] for r in rounds[:per_cycle] for t in r.tables)
    share = Fraction(comb(entrants - 1, seats - 1), seats)
    assert all(abs(firsts[bot] - share) < 1 for bot in range(entrants))
    # Deterministic: another seed, and a schedule built afresh, give the same rounds.
    resolvable_schedule.cache_clear()
    again = run_stage(RoundRobin(), Pairing(entrants=entrants, seats=seats, seed=99, cycles=2))
    assert again == rounds


def test_the_old_schedule_is_kept_for_stages_recorded_with_it():
    # Version 1 (greedy, lexicographic) sat a bot at two tables in 4 of the 28 rounds of 8 bots
    # at 3 seats; it stays available, unchanged, for resuming stages recorded with it.
    assert sum(1 for r in greedy_schedule(8, 3) if len({b for g in r for b in g}) < 6) == 4
    old = run_stage(RoundRobin(schedule=1), Pairing(entrants=8, seats=3, seed=0))
    assert [[t.bots for t in r.tables] for r in old] == [list(r) for r in greedy_schedule(8, 3)]
    assert sum(overlaps(r) > 0 for r in old) == 4
    with pytest.raises(ConfigError, match="schedule version 3 is not one this Arena knows"):
        RoundRobin(schedule=3)


@pytest.mark.parametrize(("n", "k"), [(9, 3), (12, 4), (20, 4)])
def test_rank_combination_inverts_unrank(n, k):
    for rank in range(0, comb(n, k), 7):
        assert rank_combination(unrank_combination(n, k, rank), n) == rank


def test_round_robin_ignores_results():
    scheduler = RoundRobin()
    pairing = Pairing(entrants=9, seats=3, seed=5)
    history = History()
    rng = random.Random(1)
    for _ in range(4):
        rnd = scheduler.next_round(pairing, history)
        history = played(history, rnd, rng)
    bare = History(history.rounds)
    assert scheduler.next_round(pairing, history) == scheduler.next_round(pairing, bare)


def test_round_robin_big_field_is_lazy_lexicographic_chunks():
    scheduler = RoundRobin()
    entrants, seats = 1000, 3
    pairing = Pairing(entrants=entrants, seats=seats, seed=0)
    assert comb(entrants, seats) > max(GREEDY_LIMIT, DESIGN_LIMIT)
    per_round = entrants // seats
    total = scheduler.total_rounds(pairing)
    assert total == -(-comb(entrants, seats) // per_round)
    fake_history = History(rounds=(Round(1, ()),) * (total - 1))
    last = scheduler.next_round(pairing, fake_history)
    expected_left = comb(entrants, seats) - (total - 1) * per_round
    assert len(last.tables) == expected_left
    assert sorted(last.tables[-1].bots) == [997, 998, 999]
    assert scheduler.next_round(pairing, History(rounds=(Round(1, ()),) * total)) is None
    middle = scheduler.next_round(pairing, History(rounds=(Round(1, ()),) * 1234))
    start = 1234 * per_round
    assert [tuple(sorted(t.bots)) for t in middle.tables] == [
        unrank_combination(entrants, seats, rank) for rank in range(start, start + per_round)]


# --- gauntlet ----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(seats=st.integers(2, 4), field=st.integers(1, 8), data=st.data())
def test_gauntlet_candidates_meet_every_field_group_once_per_cycle(seats, field, data):
    field += seats - 2  # at least seats-1 field bots
    candidates_count = data.draw(st.integers(1, 4))
    entrants = field + candidates_count
    candidates = tuple(data.draw(st.permutations(range(entrants)))[:candidates_count])
    cycles = data.draw(st.integers(1, 2))
    scheduler = Gauntlet()
    pairing = Pairing(entrants=entrants, seats=seats, seed=0, candidates=candidates, cycles=cycles)
    rounds = run_stage(scheduler, pairing)
    assert len(rounds) == scheduler.total_rounds(pairing) == comb(field, seats - 1) * cycles
    field_bots = [b for b in range(entrants) if b not in candidates]
    per_cycle = len(rounds) // cycles
    for cycle in range(cycles):
        met: Counter = Counter()
        for rnd in rounds[cycle * per_cycle:(cycle + 1) * per_cycle]:
            seated = [b for t in rnd.tables for b in t.bots if b in candidates]
            assert sorted(seated) == sorted(candidates), "one table per candidate per round"
            for table in rnd.tables:
                in_table = [b for b in table.bots if b in candidates]
                assert len(in_table) == 1, "candidates met"
                met[in_table[0], tuple(sorted(b for b in table.bots if b not in candidates))] += 1
        expected = Counter({(c, group): 1 for c in candidates
                            for group in combinations(field_bots, seats - 1)})
        assert met == expected
    if seats == 2:
        for candidate in candidates:
            firsts = sum(1 for rnd in rounds[:per_cycle] for t in rnd.tables if t.bots[0] == candidate)
            assert abs(2 * firsts - per_cycle) <= 1
        if candidates_count <= field:
            for rnd in rounds:
                opponents = [b for t in rnd.tables for b in t.bots if b not in candidates]
                assert len(opponents) == len(set(opponents))


# --- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(("scheduler", "pairing", "message"), [
    (Swiss(), Pairing(entrants=2, seats=2, seed=0),
     r"swiss needs at least 3 bots for 2-seat tables \(got 2\)"),
    (Swiss(), Pairing(entrants=4, seats=4, seed=0),
     r"swiss needs at least 5 bots for 4-seat tables \(got 4\)"),
    (Swiss(), Pairing(entrants=8, seats=2, seed=0, rounds=8), r"swiss rounds 8 is more than the 7 possible"),
    (Swiss(), Pairing(entrants=9, seats=2, seed=0, rounds=10), r"swiss rounds 10 is more than the 9"),
    (Swiss(), Pairing(entrants=10, seats=4, seed=0, rounds=6), r"swiss rounds 6 is more than the 5 possible"),
    (Swiss(), Pairing(entrants=12, seats=4, seed=0, rounds=12), r"swiss rounds 12 is more than the 11"),
    (Swiss(), Pairing(entrants=8, seats=2, seed=0, rounds=0), r"swiss rounds must be at least 1 \(got 0\)"),
    (Swiss(), Pairing(entrants=4, seats=2, seed=0, seeding=(0, 1, 1, 3)), r"swiss seeding \[0, 1, 1, 3\]"),
    (Swiss(), Pairing(entrants=4, seats=2, seed=0, seeding=(0, 1, 2)), r"swiss seeding \[0, 1, 2\]"),
    (Gauntlet(), Pairing(entrants=4, seats=2, seed=0), r"gauntlet needs at least one candidate"),
    (Gauntlet(), Pairing(entrants=4, seats=4, seed=0, candidates=(0, 1)), r"field of at least 3 .*\(got 2\)"),
    (Gauntlet(), Pairing(entrants=4, seats=2, seed=0, candidates=(4,)), r"candidate 4 is not an entrant"),
    (Gauntlet(), Pairing(entrants=4, seats=2, seed=0, candidates=(1, 1)), r"candidate 1 is listed twice"),
    (RoundRobin(), Pairing(entrants=2, seats=3, seed=0), r"round_robin needs at least 3 bots .*\(got 2\)"),
    (RoundRobin(), Pairing(entrants=4, seats=2, seed=0, cycles=0), r"at least 1 cycle \(got 0\)"),
])
def test_validate_rejects_unplayable_stages(scheduler, pairing, message):
    with pytest.raises(ConfigError, match=message) as caught:
        scheduler.validate(pairing)
    assert "\n" not in str(caught.value)
    with pytest.raises(ConfigError):
        scheduler.next_round(pairing, History())


@pytest.mark.parametrize(("entrants", "seats", "most"),
                         [(8, 2, 7), (9, 2, 9), (12, 4, 11), (10, 4, 5), (11, 3, 5)])
def test_max_rounds(entrants, seats, most):
    assert max_rounds(entrants, seats) == most
    Swiss().validate(Pairing(entrants=entrants, seats=seats, seed=0, rounds=most))


def test_default_rounds_is_log2_plus_one_capped():
    assert default_rounds(1000, 2) == 11
    assert default_rounds(16, 2) == 5
    assert default_rounds(17, 2) == 6
    assert default_rounds(3, 2) == 3  # ceil(log2 3) + 1 = 3 = max_rounds(3, 2)
    assert default_rounds(5, 4) == 4  # capped: 5 bots at 4 seats, one bye each, 5 rounds at most
    assert default_rounds(6, 4) == 3  # capped: two byes a round, 3 rounds at most


# --- swiss -------------------------------------------------------------------------------------


def test_swiss_round_one_follows_the_seeding():
    seeding = (4, 2, 6, 0, 1, 5, 3)
    rnd = Swiss().next_round(Pairing(entrants=7, seats=2, seed=0, seeding=seeding), History())
    assert rnd.byes == (3,)
    assert [set(t.bots) for t in rnd.tables] == [{4, 0}, {2, 1}, {6, 5}]  # 1 v 4, 2 v 5, 3 v 6
    assert [t.bots[0] for t in rnd.tables] == [4, 1, 6]  # the top seed's seat alternates down the tables


def test_swiss_round_one_shuffle_comes_from_the_seed_only():
    swiss = Swiss()
    first = {seed: swiss.next_round(Pairing(entrants=10, seats=2, seed=seed), History()) for seed in range(8)}
    random.seed(123)  # the global generator must not matter
    assert swiss.next_round(Pairing(entrants=10, seats=2, seed=3), History()) == first[3]
    assert len({rnd.tables for rnd in first.values()}) > 1


@settings(max_examples=40, deadline=None)
@given(half=st.integers(2, 20), seed=st.integers(0, 2**32))
def test_swiss_round_two_pairs_winners_with_winners(half, seed):
    entrants = 2 * half
    swiss = Swiss()
    pairing = Pairing(entrants=entrants, seats=2, seed=seed)
    first = swiss.next_round(pairing, History())
    rng = random.Random(seed)
    # Decisive results: half the field on 1 point, half on 0.
    matches = []
    for table in first.tables:
        points = (1.0, 0.0) if rng.random() < 0.5 else (0.0, 1.0)
        matches.append(MatchScore(1, table.number, table.bots, points, points, 1))
    second = swiss.next_round(pairing, History((first,), tuple(matches)))
    scores = scores_of(pairing, History((first,), tuple(matches)))
    mixed = sum(1 for t in second.tables if scores[t.bots[0]] != scores[t.bots[1]])
    assert mixed == half % 2  # an odd score group floats exactly one bot down
    tops = [max(scores[b] for b in t.bots) for t in second.tables]
    assert tops == sorted(tops, reverse=True)


@settings(max_examples=30, deadline=None)
@given(seats=st.integers(3, 4), entrants=st.integers(16, 60), seed=st.integers(0, 2**32))
def test_swiss_larger_tables_round_two_has_no_repeats(seats, entrants, seed):
    # Past the exhaustive-search size the grouping is heuristic; after one round of at least
    # `seats` tables a repeat-free grouping exists and the greedy-plus-swaps must find it.
    pairing = Pairing(entrants=entrants, seats=seats, seed=seed, rounds=2)
    swiss = Swiss()
    first = swiss.next_round(pairing, History())
    history = played(History(), first, random.Random(seed))
    second = swiss.next_round(pairing, history)
    met = met_pairs(history)
    assert sum(repeats(met, t.bots) for t in second.tables) == 0


def check_swiss_stage(pairing: Pairing, results_seed: int) -> None:
    """Play a whole Swiss stage with random results, checking every round's invariants."""
    swiss = Swiss()
    n, seats = pairing.entrants, pairing.seats
    rng = random.Random(results_seed)
    history = History()
    byes: Counter = Counter()
    rounds_played = 0
    while True:
        rnd = swiss.next_round(pairing, history)
        if rnd is None:
            break
        rounds_played += 1
        # Pure and deterministic: the same inputs (even rebuilt, in a fresh instance) give the same
        # round, whatever order the matches finished in (on Ray, any order).
        rebuilt = History(tuple(history.rounds), tuple(reversed(history.matches)))
        assert Swiss().next_round(pairing, rebuilt) == rnd
        assert rnd.number == rounds_played
        assert [t.number for t in rnd.tables] == list(range(1, len(rnd.tables) + 1))
        assert all(t.round == rnd.number and len(t.bots) == seats for t in rnd.tables)
        everyone = [b for t in rnd.tables for b in t.bots] + list(rnd.byes)
        assert sorted(everyone) == list(range(n)), "each bot at exactly one table or bye"
        assert len(rnd.byes) == n % seats
        assert not any(byes[b] for b in rnd.byes), "a second bye"
        byes.update(rnd.byes)
        scores = scores_of(pairing, history)
        tops = [max(scores[b] for b in t.bots) for t in rnd.tables]
        assert tops == sorted(tops, reverse=True), "tables not numbered from the top score down"
        met = met_pairs(history)
        rematches = sum(repeats(met, t.bots) for t in rnd.tables)
        if seats == 2:
            if rematches:
                allowed = {b for b in range(n) if not byes[b] or b in rnd.byes}
                assert not rematch_free_pairing_exists(met, list(range(n)), allowed), "avoidable rematch"
                fewest = fewest_rematches_possible(met, list(range(n)), allowed)
                assert rematches == fewest, "more rematches than needed"
        else:
            playing = sorted(b for b in range(n) if b not in rnd.byes)
            if rematches and len(playing) <= swiss_module.EXACT_LIMIT:
                assert rematches == fewest_repeats_possible(met, playing, seats), "avoidable repeat meeting"
            # Byes go to the lowest scores among bots that have not had one.
            for bot in rnd.byes:
                assert all(byes[other] for other in range(n) if scores[other] < scores[bot])
        if seats == 2 and rnd.byes and not rematches:
            # The bye goes to the lowest score that still allows a rematch-free pairing.
            (bye,) = rnd.byes
            for lower in range(n):
                if scores[lower] < scores[bye] and not byes[lower]:
                    others = [b for b in range(n) if b != lower]
                    assert not rematch_free_pairing_exists(met, others, set()), "bye not to the lowest"
        history = played(history, rnd, rng)
    assert rounds_played == swiss.total_rounds(pairing)
    firsts = Counter(t.bots[0] for r in history.rounds for t in r.tables)
    games = Counter(b for r in history.rounds for t in r.tables for b in t.bots)
    if seats == 2:
        # Default-length stages keep every bot within two firsts of its seconds; stages run to
        # the maximum are forced by rematch avoidance and reach three (found by search).
        bound = 2 if rounds_played <= default_rounds(n, seats) else 3
        assert all(abs(2 * firsts[b] - games[b]) <= bound for b in range(n))
    else:
        assert all(abs(firsts[b] - games[b] / seats) <= 1.5 for b in range(n))
        seat_counts = Counter((b, s) for r in history.rounds for t in r.tables for s, b in enumerate(t.bots))
        assert all(abs(seat_counts[b, s] - games[b] / seats) <= 2 for b in range(n) for s in range(seats))


@st.composite
def swiss_stages(draw, most_entrants: int = 40, full_length: bool = False) -> Pairing:
    """A playable Swiss stage: 2-4 seats, seats+1..most_entrants bots, some round count."""
    seats = draw(st.integers(2, 4))
    entrants = draw(st.integers(seats + 1, most_entrants))
    most = max_rounds(entrants, seats)
    upper = most if full_length else min(most, default_rounds(entrants, seats) + 2)
    rounds = draw(st.one_of(st.none(), st.integers(1, upper)))
    seeding = tuple(draw(st.permutations(range(entrants)))) if draw(st.booleans()) else ()
    bye_points = draw(st.sampled_from([1.0, 0.5]))
    return Pairing(entrants=entrants, seats=seats, seed=draw(st.integers(0, 2**32)), rounds=rounds,
                   seeding=seeding, bye_points=bye_points)


@settings(max_examples=150, deadline=None)
@given(pairing=swiss_stages(), results_seed=st.integers(0, 2**32))
# Found by Hypothesis: a bot first 5 times in 7 while the first-seat cost was below two one-point
# score differences.
@example(pairing=Pairing(entrants=34, seats=2, seed=0), results_seed=1467488)
# Found by Hypothesis: three bots each first twice in three grouped at one table, so one of them
# was first 3 times in 4 (grouping by score alone, before the first-seat strain term).
@example(pairing=Pairing(entrants=39, seats=3, seed=0, rounds=4), results_seed=2114)
@example(pairing=Pairing(entrants=31, seats=3, seed=633116126, rounds=4, bye_points=0.5),
         results_seed=1595288470)
def test_swiss_stage_invariants(pairing, results_seed):
    check_swiss_stage(pairing, results_seed)


@settings(max_examples=40, deadline=None)
@given(pairing=swiss_stages(most_entrants=12, full_length=True), results_seed=st.integers(0, 2**32))
def test_swiss_long_stages_on_small_fields(pairing, results_seed):
    # Up to max_rounds: rematches become unavoidable and the last bots without a bye get them.
    check_swiss_stage(pairing, results_seed)


@settings(max_examples=15, deadline=None)
@given(entrants=st.integers(30, 40), seed=st.integers(0, 2**32))
def test_swiss_windowed_matching_keeps_the_guarantees(entrants, seed):
    # Tiny windows and neighbourhoods exercise the paths a 1000-bot field takes: settling window
    # by window, and falling back to the whole field when a window cannot pair without a rematch.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(swiss_module, "WINDOW", 6)
        patch.setattr(swiss_module, "LOOKAHEAD", 4)
        patch.setattr(swiss_module, "NEIGHBOURS", 2)
        check_swiss_stage(Pairing(entrants=entrants, seats=2, seed=seed,
                                  rounds=min(12, max_rounds(entrants, 2))), seed + 1)

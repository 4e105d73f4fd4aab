"""Bradley–Terry, Plackett–Luce and bootstrap: exact values, ties, teams, pools, coverage."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.errors import ConfigError
from arena.ratings.bootstrap import bootstrap, intervals, resample, simulate, tie_rates
from arena.ratings.bradley_terry import bradley_terry
from arena.ratings.bradley_terry import fit_tables as fit_bt
from arena.ratings.fitting import compile_games
from arena.ratings.plackett_luce import fit_tables as fit_pl
from arena.ratings.plackett_luce import plackett_luce


def table(number, ranks, bots, teams=None, group=None):
    """A game with one seat per bot, ranks given per seat (and teams, if any)."""
    teams = teams or list(range(len(bots)))
    g = {"id": f"g{number}", "ordinal": number,
         "seats": [{"bot": b, "team": t, "rank": r} for b, t, r in zip(bots, teams, ranks)]}
    if group is not None:
        g["group"] = group
    return g


def duel_games(a, b, wins, draws, losses, start=0):
    """Two-player games: a's wins, draws and losses against b."""
    ranks = [(1, 2)] * wins + [(1, 1)] * draws + [(2, 1)] * losses
    return [table(start + i, r, [a, b]) for i, r in enumerate(ranks)]


def three_bot_pool():
    return (duel_games("E1", "E2", 18, 9, 3) + duel_games("E2", "E3", 18, 9, 3, 100)
            + duel_games("E1", "E3", 24, 6, 0, 200))


def test_bradley_terry_three_bots_exact():
    ratings = bradley_terry(three_bot_pool(), average=0).rating_of()
    assert ratings["E1"] == pytest.approx(190.849, abs=1e-3)
    assert ratings["E2"] == pytest.approx(0.0, abs=1e-3)
    assert ratings["E3"] == pytest.approx(-190.849, abs=1e-3)


def test_plackett_luce_three_bots_exact():
    orders = [[0, 1, 2], [1, 2, 0], [0, 2, 1], [2, 0, 1]]
    games = [table(i, [order.index(b) + 1 for b in range(3)], ["b0", "b1", "b2"])
             for i, order in enumerate(orders)]
    ratings = plackett_luce(games, average=0).rating_of()
    assert [ratings[b] for b in ("b0", "b1", "b2")] == pytest.approx(
        [55.763, -65.322, 9.559], abs=1e-3)


def random_duels(seed, n=200, bots="abcdef", teams=False):
    rng = random.Random(seed)
    games = []
    for i in range(n):
        if teams:
            names = rng.sample(bots, 4)
            result = rng.choice([(1, 2), (2, 1), (1, 1)])
            games.append(table(i, [result[j % 2] for j in range(4)], names, [0, 1, 0, 1]))
        else:
            games.append(table(i, rng.choice([(1, 2), (2, 1), (1, 1), (1, 2)]),
                               rng.sample(bots, 2)))
    return games


@pytest.mark.parametrize("teams", [False, True])
def test_plackett_luce_on_two_sides_equals_bradley_terry_with_half_draws(teams):
    games = random_duels(4, teams=teams, bots="abcdefgh")
    bt = bradley_terry(games).rating_of()
    pl = plackett_luce(games).rating_of()
    assert set(bt) == set(pl)
    for bot in bt:
        assert pl[bot] == pytest.approx(bt[bot], abs=1e-6)


def test_draw_counts_half_a_win_and_half_a_loss():
    # One win and one loss is the same evidence as two draws: equal ratings either way.
    drawn = bradley_terry(duel_games("a", "b", 0, 2, 0) + duel_games("b", "c", 3, 1, 1, 10))
    split = bradley_terry(duel_games("a", "b", 1, 0, 1) + duel_games("b", "c", 3, 1, 1, 10))
    assert drawn.rating_of() == pytest.approx(split.rating_of(), abs=1e-6)


def test_multi_seat_tables_weigh_pairs_by_one_over_n_minus_one():
    # A 4-seat table weighted 1/3 per pair: 3 identical tables = one full-weight game per pair.
    four = [table(i, [1, 2, 3, 4], list("abcd")) for i in range(3)]
    pairs = [table(10 + i, [1, 2], [x, y]) for i, (x, y) in enumerate(
        [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")])]
    # Make both pools bounded: add the same reversed results to each.
    back4 = [table(100 + i, [4, 3, 2, 1], list("abcd")) for i in range(3)]
    back2 = [table(200 + i, [2, 1], [g["seats"][0]["bot"], g["seats"][1]["bot"]])
             for i, g in enumerate(pairs)]
    got = bradley_terry(four + back4 + four).rating_of()
    want = bradley_terry(pairs + back2 + pairs).rating_of()
    assert got == pytest.approx(want, abs=1e-6)


def test_team_members_share_the_side_strength():
    games = [table(i, [1, 2, 1, 2] if i % 3 else [2, 1, 2, 1], list("abcd"), [0, 1, 0, 1])
             for i in range(30)]
    ratings = bradley_terry(games).rating_of()
    assert ratings["a"] == pytest.approx(ratings["c"])
    assert ratings["b"] == pytest.approx(ratings["d"])
    assert ratings["a"] > ratings["b"]


@pytest.mark.parametrize("fit", [bradley_terry, plackett_luce])
def test_disconnected_pool_is_reported_as_groups_each_centred(fit):
    games = duel_games("a", "b", 3, 1, 2) + duel_games("x", "y", 1, 1, 4, 50)
    result = fit(games, average=1000)
    assert sorted(map(sorted, result.groups)) == [["a", "b"], ["x", "y"]]
    r = result.rating_of()
    assert r["a"] + r["b"] == pytest.approx(2000)
    assert r["x"] + r["y"] == pytest.approx(2000)


@pytest.mark.parametrize("fit", [bradley_terry, plackett_luce])
def test_perfect_records_are_finite_and_flagged(fit):
    games = duel_games("a", "b", 5, 0, 0) + duel_games("b", "c", 2, 2, 2, 10)
    result = fit(games)
    r = result.rating_of()
    assert all(np.isfinite(v) for v in r.values())
    assert r["c"] > r["b"]  # b also lost five games to a
    assert 0 < r["a"] - r["b"] < 1000
    assert result.flags == {"a": "all wins"}
    loser = fit(duel_games("a", "b", 4, 0, 0) + duel_games("a", "c", 1, 0, 1, 10))
    assert loser.flags == {"b": "all losses"}


def test_set_that_never_lost_to_the_rest_is_bounded_and_flagged():
    # a and b trade wins, and both always beat c and d (who trade wins too): no perfect record,
    # yet the gap between the two sets is unbounded without the prior.
    games = (duel_games("a", "b", 2, 0, 2) + duel_games("c", "d", 2, 0, 2, 10)
             + duel_games("a", "c", 3, 0, 0, 20) + duel_games("b", "d", 3, 0, 0, 30))
    result = bradley_terry(games)
    assert all(np.isfinite(result.ratings))
    assert result.flags == {"a": "no losses vs rest", "b": "no losses vs rest",
                            "c": "no wins vs rest", "d": "no wins vs rest"}


def test_named_anchor_and_unknown_anchor():
    games = three_bot_pool()
    r = bradley_terry(games, anchor=("E3", 1000.0)).rating_of()
    assert r["E3"] == pytest.approx(1000.0)
    assert r["E1"] - r["E3"] == pytest.approx(2 * 190.8485, abs=1e-3)
    with pytest.raises(ConfigError, match="nobody"):
        bradley_terry(games, anchor=("nobody", 0.0))


def test_bots_without_games_keep_the_average():
    result = plackett_luce(three_bot_pool(), bots=["idle"], average=1200)
    assert result.rating_of()["idle"] == 1200
    assert result.flags["idle"] == "no games"


def test_plackett_luce_ties_in_multi_seat_tables():
    # A 3-way tie is the geometric mean of its 6 orders: it favours nobody and pulls ratings
    # together, as a draw does.
    orders = [table(0, [1, 2, 3], list("abc")), table(1, [3, 2, 1], list("abc")),
              table(2, [1, 3, 2], list("abc"))]
    tie = table(3, [1, 1, 1], list("abc"))
    without = plackett_luce(orders).rating_of()
    with_tie = plackett_luce(orders + [tie]).rating_of()
    assert with_tie["a"] > with_tie["c"]
    assert with_tie["a"] - with_tie["c"] < without["a"] - without["c"]
    # Two sides tied for second: the same as the mean of both orders of those two.
    tied = plackett_luce([table(0, [1, 2, 2], list("abc")), table(1, [3, 1, 2], list("abc"))])
    split = plackett_luce([table(0, [1, 2, 3], list("abc")), table(1, [1, 3, 2], list("abc")),
                           table(2, [3, 1, 2], list("abc")), table(3, [3, 1, 2], list("abc"))])
    assert tied.rating_of() == pytest.approx(split.rating_of(), abs=1e-6)


order_games = st.lists(
    st.tuples(st.permutations(list("abcd")), st.lists(st.integers(1, 3), min_size=4, max_size=4)),
    min_size=6, max_size=25)


@settings(max_examples=25, deadline=None)
@given(order_games, st.randoms(use_true_random=False))
def test_ratings_do_not_depend_on_game_order(spec, rnd):
    games = [table(i, ranks, list(bots)) for i, (bots, ranks) in enumerate(spec)]
    shuffled = games[:]
    rnd.shuffle(shuffled)
    for fit in (bradley_terry, plackett_luce):
        assert fit(shuffled).rating_of() == pytest.approx(fit(games).rating_of(), abs=1e-5)


@settings(max_examples=25, deadline=None)
@given(order_games, st.floats(-500, 500), st.sampled_from("abcd"))
def test_shifting_the_anchor_shifts_every_rating_equally(spec, shift, anchor):
    games = [table(i, ranks, list(bots)) for i, (bots, ranks) in enumerate(spec)]
    for fit in (bradley_terry, plackett_luce):
        base = fit(games, anchor=(anchor, 1500.0)).rating_of()
        moved = fit(games, anchor=(anchor, 1500.0 + shift)).rating_of()
        assert moved == pytest.approx({b: v + shift for b, v in base.items()}, abs=1e-6)
        by_average = fit(games, average=1500.0 + shift).rating_of()
        centred = fit(games).rating_of()
        assert by_average == pytest.approx({b: v + shift for b, v in centred.items()}, abs=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.sampled_from([(1, 2), (1, 1)])),
                min_size=1, max_size=30))
def test_disconnected_pools_and_perfect_records_always_finite(spec):
    # Bots 0-2 only meet each other, 3-5 only each other: never one pool.
    games = []
    for i, (x, y, ranks) in enumerate(spec):
        if x == y or (x < 3) != (y < 3):
            continue
        games.append(table(i, ranks, [f"b{x}", f"b{y}"]))
    if not games:
        return
    for fit in (bradley_terry, plackett_luce):
        result = fit(games)
        assert np.all(np.isfinite(result.ratings))
        for group in result.groups:
            assert all((int(b[1:]) < 3) == (int(group[0][1:]) < 3) for b in group)
        sides = {int(g["seats"][0]["bot"][1:]) < 3 for g in games}
        assert len(result.groups) == (2 if len(sides) == 2 else 0)



@settings(max_examples=25, deadline=None)
@given(order_games, st.lists(st.sampled_from("abcd"), min_size=1, max_size=6),
       st.lists(st.sampled_from("abcd"), min_size=1, max_size=6))
def test_perfect_records_get_finite_flagged_ratings(spec, beaten, beaten_by):
    games = [table(i, ranks, list(bots)) for i, (bots, ranks) in enumerate(spec)]
    games += [table(100 + i, [1, 2], ["champ", b]) for i, b in enumerate(beaten)]
    games += [table(200 + i, [2, 1], ["dud", b]) for i, b in enumerate(beaten_by)]
    for fit in (bradley_terry, plackett_luce):
        result = fit(games)
        assert np.all(np.isfinite(result.ratings))
        assert result.flags["champ"] == "all wins"
        assert result.flags["dud"] == "all losses"
        r = result.rating_of()
        assert r["champ"] > r["dud"]

# --- Bootstrap -----------------------------------------------------------------------------

def simulated_event(rng, n_bots, seats, draw_rate=0.2, rounds=2):
    """A round robin (2 seats) or random 4-seat tables among bots of known strength."""
    true = rng.normal(0, 150, n_bots)
    true -= true.mean()
    names = [f"b{i}" for i in range(n_bots)]
    games = []
    if seats == 2:
        for _ in range(rounds):
            for i in range(n_bots):
                for j in range(i + 1, n_bots):
                    p = 1 / (1 + 10 ** ((true[j] - true[i]) / 400))
                    # Draws at draw_rate where possible, keeping i's expected score p.
                    draw = min(draw_rate, 2 * p, 2 * (1 - p))
                    u = rng.random()
                    ranks = [1, 1] if u < draw else [1, 2] if u < draw + p - draw / 2 else [2, 1]
                    games.append(table(len(games), ranks, [names[i], names[j]]))
    else:
        for _ in range(rounds * n_bots * (n_bots - 1) // 6):
            who = rng.choice(n_bots, seats, replace=False)
            noisy = true[who] * np.log(10) / 400 + rng.gumbel(size=seats)
            ranks = np.argsort(np.argsort(-noisy)) + 1
            games.append(table(len(games), ranks.tolist(), [names[w] for w in who]))
    return true, names, games


@pytest.mark.parametrize("seats,fit", [(2, fit_bt), (4, fit_pl)])
def test_bootstrap_intervals_cover_the_true_strengths(seats, fit):
    rng = np.random.default_rng(2024)
    covered = total = 0
    for event in range(8):
        true, names, games = simulated_event(rng, 24, seats)
        tables = compile_games(games, names)
        result = fit(tables, average=0.0)
        lo, hi = intervals(bootstrap(tables, result, samples=80, seed=event, average=0.0))
        covered += int(np.sum((lo <= true) & (true <= hi)))
        total += len(true)
    assert 0.90 <= covered / total <= 0.98


def test_bootstrap_is_deterministic_given_the_seed_and_worker_count_free():
    rng = np.random.default_rng(1)
    _, names, games = simulated_event(rng, 6, 2)
    tables = compile_games(games, names)
    fitted = fit_bt(tables)
    once = bootstrap(tables, fitted, samples=12, seed=7)
    again = bootstrap(tables, fitted, samples=12, seed=7)
    other = bootstrap(tables, fitted, samples=12, seed=8)
    assert np.array_equal(once, again)
    assert not np.array_equal(once, other)
    assert np.array_equal(once, bootstrap(tables, fitted, samples=12, seed=7, workers=2))


def test_resampling_keeps_groups_whole():
    games = [table(i, [1, 2], ["a", "b"], group=f"deal{i // 2}") for i in range(40)]
    tables = compile_games(games)
    for seed in range(5):
        sample = resample(tables, np.random.default_rng(seed))
        per_group = np.bincount(sample.table_group, minlength=20)
        assert per_group.sum() == 40
        assert np.all(per_group % 2 == 0)  # both rotations of a deal, or neither


def test_simulated_draws_follow_the_observed_rate_and_the_model_score():
    games = duel_games("a", "b", 300, 400, 300)
    tables = compile_games(games)
    assert tie_rates(tables) == {2: pytest.approx(0.4)}
    theta = np.array([0.3, -0.3])  # a is stronger
    ranks = simulate(tables, theta, tie_rates(tables), np.random.default_rng(3)).side_rank
    a_rank, b_rank = ranks[0::2], ranks[1::2]
    draws = np.mean(a_rank == b_rank)
    score = np.mean(np.where(a_rank < b_rank, 1.0, np.where(a_rank == b_rank, 0.5, 0.0)))
    assert draws == pytest.approx(0.4, abs=0.04)
    assert score == pytest.approx(1 / (1 + np.exp(-0.6)), abs=0.03)


def test_simulated_multi_seat_orders_are_whole_orders():
    games = [table(i, [1, 2, 2, 4], list("abcd")) for i in range(50)]
    tables = compile_games(games)
    ranks = simulate(tables, np.zeros(4), tie_rates(tables), np.random.default_rng(0)).side_rank
    for t in ranks.reshape(-1, 4):
        ordered = np.sort(t)
        assert ordered[0] == 1
        # Standard competition ranking: a rank is 1 + the number of sides ahead of it.
        assert all(r == 1 + np.sum(t < r) for r in t)

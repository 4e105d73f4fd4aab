"""Match scoring and standings: hand-checked examples, multi-seat and team tables, properties."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.config import parse_config
from arena.errors import ConfigError
from arena.scheduling.base import History, MatchScore, Round, Table
from arena.standings import (
    DEFAULT_TIEBREAKS,
    ROUND_ROBIN_TIEBREAKS,
    StandingRow,
    deal_scores,
    default_tiebreaks,
    game_points,
    overall_standings,
    pentanomial,
    score_match,
    standings,
)


def seats(*ranks, teams=None):
    """One game's seats, one per rank (each its own team unless `teams` says otherwise)."""
    teams = teams if teams is not None else range(len(ranks))
    return [{"team": t, "rank": r} for t, r in zip(teams, ranks)]


def duel(round_no, table, a, b, points_a, points_b):
    """A recorded two-bot match with the given game points (match points 1 / ½ / 0)."""
    mp_a = 1.0 if points_a > points_b else 0.5 if points_a == points_b else 0.0
    return MatchScore(round=round_no, table=table, bots=(a, b), game_points=(points_a, points_b),
                      match_points=(mp_a, 1.0 - mp_a), games=2)


def history_of(rounds, byes=None):
    """A History from {round: [(a, b, points_a, points_b), ...]} and {round: (bye, ...)}."""
    byes = byes or {}
    rnds, matches = [], []
    for r, pairings in sorted(rounds.items()):
        tables = tuple(Table(r, t, (a, b)) for t, (a, b, _, _) in enumerate(pairings, 1))
        rnds.append(Round(r, tables, tuple(byes.get(r, ()))))
        matches += [duel(r, t, *p) for t, p in enumerate(pairings, 1)]
    return History(tuple(rnds), tuple(matches))


def by_entry(rows):
    return {row.entry: row for row in rows}


# ---------------------------------------------------------------------------------------------
# Game points


def test_two_sides_win_draw_loss():
    assert game_points(seats(1, 2)) == [1.0, 0.0]
    assert game_points(seats(2, 1)) == [0.0, 1.0]
    assert game_points(seats(1, 1)) == [0.5, 0.5]


def test_three_sides_with_a_tie_for_first():
    # S = 3: each tied winner has 1 side behind and 1 tied → (1 + ½) / 2; the last has 0 / 2.
    assert game_points(seats(1, 1, 2)) == [0.75, 0.75, 0.0]
    # Tie for last: the winner (2 behind) / 2 = 1; each loser (0 + ½) / 2 = ¼.
    assert game_points(seats(1, 2, 2)) == [1.0, 0.25, 0.25]


def test_four_sides_with_a_tie_in_the_middle():
    # S = 4: first 3/3; the two seconds (1 behind + ½ tied) / 3 = ½; last 0.
    assert game_points(seats(1, 2, 2, 3)) == [1.0, 0.5, 0.5, 0.0]
    # All tied: 3 × ½ / 3 = ½ each.
    assert game_points(seats(4, 4, 4, 4)) == [0.5] * 4


def test_team_seats_share_their_sides_points():
    # Teams 0 (two seats), 1, 2: three sides, team 0 first, teams 1 and 2 tied last.
    assert game_points(seats(1, 1, 2, 2, teams=[0, 0, 1, 2])) == [1.0, 1.0, 0.25, 0.25]
    # Two teams of two: an ordinary win for team 1.
    assert game_points(seats(2, 1, 2, 1, teams=[0, 1, 0, 1])) == [0.0, 1.0, 0.0, 1.0]


def test_one_side_scores_nothing():
    assert game_points(seats(1, 1, teams=[0, 0])) == [0.0, 0.0]


@given(st.lists(st.integers(1, 4), min_size=2, max_size=8))
def test_sides_share_s_over_two_points(ranks):
    # Each of the S(S−1)/2 pairs of sides hands out 1 point, scaled by 1 / (S − 1).
    assert sum(game_points(seats(*ranks))) == pytest.approx(len(ranks) / 2)


# ---------------------------------------------------------------------------------------------
# Matches


def test_two_bot_match_sums_game_points_in_bot_order():
    games = [
        [{"entry": 4, "team": 0, "rank": 1}, {"entry": 2, "team": 1, "rank": 2}],  # 4 wins
        [{"entry": 2, "team": 0, "rank": 1}, {"entry": 4, "team": 1, "rank": 1}],  # draw
    ]
    m = score_match(3, 2, [2, 4], games)
    assert (m.round, m.table, m.bots, m.games) == (3, 2, (2, 4), 2)
    assert m.game_points == (0.5, 1.5)
    assert m.match_points == (0.0, 1.0)
    assert m.partners == frozenset()


def test_three_seat_match():
    def game(r0, r1, r2):
        return [{"entry": e, "team": e, "rank": r} for e, r in zip((0, 1, 2), (r0, r1, r2))]

    games = [
        game(1, 2, 3),  # 0: 2/2 = 1, 1: 1/2 = ½, 2: 0
        game(2, 1, 1),  # 1 and 2 tie first: (1 + ½)/2 = ¾ each, 0: 0
        game(1, 3, 2),  # 0: 1, 2: ½, 1: 0
    ]
    m = score_match(1, 1, [0, 1, 2], games)
    # Totals: 0: 1 + 0 + 1 = 2; 1: ½ + ¾ + 0 = 1¼; 2: 0 + ¾ + ½ = 1¼.
    assert m.game_points == (2.0, 1.25, 1.25)
    # 0 is ahead of both (2/2); 1 and 2 are level with each other, behind 0: (0 + ½) / 2 = ¼.
    assert m.match_points == (1.0, 0.25, 0.25)


def test_team_match_compares_only_opponents():
    # Seat order 0, 1, 2, 3; 0 and 2 are one team, 1 and 3 the other. The seats rotate per game.
    def game(order, winner_team):
        team = {0: 0, 2: 0, 1: 1, 3: 1}
        return [{"entry": e, "team": team[e], "rank": 1 if team[e] == winner_team else 2}
                for e in order]

    games = [game((0, 1, 2, 3), 0), game((1, 2, 3, 0), 1), game((2, 3, 0, 1), 0)]
    m = score_match(1, 1, [0, 1, 2, 3], games)
    assert m.game_points == (2.0, 1.0, 2.0, 1.0)
    assert m.partners == frozenset({(0, 2), (1, 3)})
    # Bot 0's opponents are 1 and 3, both with fewer game points: 2/2 = 1. Partners don't count.
    assert m.match_points == (1.0, 0.0, 1.0, 0.0)


def test_match_without_games_scores_zero():
    m = score_match(2, 5, [3, 1], [])
    assert isinstance(m, MatchScore)
    assert (m.game_points, m.match_points, m.games) == ((0.0, 0.0), (0.0, 0.0), 0)


def test_seat_of_a_bot_not_at_the_table_is_rejected():
    with pytest.raises(ValueError, match="entry 9"):
        score_match(1, 1, [0, 1], [[{"entry": 0, "team": 0, "rank": 1},
                                    {"entry": 9, "team": 1, "rank": 2}]])


@given(st.lists(st.tuples(st.integers(1, 2), st.integers(1, 2)), min_size=1, max_size=6))
def test_two_bot_match_points_sum_to_one(ranks):
    games = [[{"entry": 0, "team": 0, "rank": a}, {"entry": 1, "team": 1, "rank": b}]
             for a, b in ranks]
    m = score_match(1, 1, [0, 1], games)
    assert sum(m.match_points) == 1.0
    assert sum(m.game_points) == len(ranks)


@given(st.integers(2, 6), st.integers(1, 4), st.integers(0, 1000))
def test_all_games_drawn_gives_everyone_equal_points(n, n_games, seed):
    rng = random.Random(seed)
    bots = list(range(n))
    games = []
    for _ in range(n_games):
        order = bots[:]
        rng.shuffle(order)
        games.append([{"entry": e, "team": e, "rank": 1} for e in order])
    m = score_match(1, 1, bots, games)
    assert len(set(m.game_points)) == 1
    assert m.match_points == (0.5,) * n


# ---------------------------------------------------------------------------------------------
# Deals and the pentanomial


def test_deal_scores_and_pentanomial():
    def game(deal, winner):
        # winner: 0 or 1 for that entry's win, None for a draw.
        ranks = (1, 1) if winner is None else (1, 2) if winner == 0 else (2, 1)
        return {"deal": deal, "seats": [{"entry": 0, "team": 0, "rank": ranks[0]},
                                        {"entry": 1, "team": 1, "rank": ranks[1]}]}

    games = [
        game(1, 0), game(1, 1),        # split: 1 each
        game(2, 0), game(2, 0),        # 0 wins both: 2 / 0
        game(3, None), game(3, 0),     # 1½ / ½
        game(4, 1), game(4, None),     # ½ / 1½
        game(5, 0),                    # unfinished pair: 1 / 0 in one game
        game(6, 1), game(6, 1),        # 0 / 2
        game(7, 0), game(7, 0),        # 2 / 0
    ]
    rows = deal_scores(list(reversed(games)))  # input order is irrelevant
    expected_0 = {1: 1.0, 2: 2.0, 3: 1.5, 4: 0.5, 5: 1.0, 6: 0.0, 7: 2.0}
    assert [(r["deal"], r["entry"]) for r in rows] == [(d, e) for d in range(1, 8) for e in (0, 1)]
    for r in rows:
        n = 1 if r["deal"] == 5 else 2
        mine = expected_0[r["deal"]] if r["entry"] == 0 else n - expected_0[r["deal"]]
        assert (r["points"], r["games"]) == (mine, n)
    # Bot 0, complete deals only: 0 → deal 6; ½ → 4; 1 → 1; 1½ → 3; 2 → 2 and 7.
    assert pentanomial([r for r in rows if r["entry"] == 0]) == (1, 1, 1, 1, 2)
    # Bot 1 mirrors it.
    assert pentanomial([r for r in rows if r["entry"] == 1]) == (2, 1, 1, 1, 1)


def test_pentanomial_rejects_two_bots_rows():
    rows = [{"deal": 1, "entry": 0, "points": 1.0, "games": 2},
            {"deal": 1, "entry": 1, "points": 1.0, "games": 2}]
    with pytest.raises(ValueError):
        pentanomial(rows)


# ---------------------------------------------------------------------------------------------
# A hand-checked Swiss stage: 6 bots, 3 rounds, 2 games per match

SWISS = {
    # (a, b, game points of a, game points of b)
    1: [(0, 1, 2.0, 0.0),    # 0 wins
        (2, 3, 1.0, 1.0),    # draw
        (4, 5, 1.5, 0.5)],   # 4 wins
    2: [(0, 4, 0.5, 1.5),    # 4 wins
        (2, 5, 0.5, 1.5),    # 5 wins
        (3, 1, 2.0, 0.0)],   # 3 wins
    3: [(0, 3, 2.0, 0.0),    # 0 wins
        (4, 2, 0.0, 2.0),    # 2 wins
        (5, 1, 1.0, 1.0)],   # draw
}
# Match points:  0: 1+0+1 = 2    1: 0+0+½ = ½    2: ½+0+1 = 1½
#                3: ½+1+0 = 1½  4: 1+1+0 = 2    5: 0+1+½ = 1½
# Game points:   0: 2+½+2 = 4½  1: 0+0+1 = 1    2: 1+½+2 = 3½
#                3: 1+2+0 = 3   4: 1½+1½+0 = 3  5: ½+1½+1 = 3
# Buchholz (opponents' final match points) and cut-1 (minus the smallest):
#   0: 1 (½) + 4 (2) + 3 (1½) = 4    cut 3½
#   1: 0 (2) + 3 (1½) + 5 (1½) = 5   cut 3½
#   2: 3 (1½) + 5 (1½) + 4 (2) = 5   cut 3½
#   3: 2 (1½) + 1 (½) + 0 (2) = 4    cut 3½
#   4: 5 (1½) + 0 (2) + 2 (1½) = 5   cut 3½
#   5: 4 (2) + 2 (1½) + 1 (½) = 4    cut 3½
# Sonneborn–Berger (beaten opponents' scores + ½ drawn ones'):
#   0: 1 (½) + 3 (1½) = 2            1: ½ × 5 (1½) = ¾
#   2: ½ × 3 (1½) + 4 (2) = 2¾       3: ½ × 2 (1½) + 1 (½) = 1¼
#   4: 5 (1½) + 0 (2) = 3½           5: 2 (1½) + ½ × 1 (½) = 1¾
SWISS_VALUES = {  # entry: (match points, game points, buchholz, cut-1, SB, W, D, L)
    0: (2.0, 4.5, 4.0, 3.5, 2.0, 2, 0, 1),
    1: (0.5, 1.0, 5.0, 3.5, 0.75, 0, 1, 2),
    2: (1.5, 3.5, 5.0, 3.5, 2.75, 1, 1, 1),
    3: (1.5, 3.0, 4.0, 3.5, 1.25, 1, 1, 1),
    4: (2.0, 3.0, 5.0, 3.5, 3.5, 2, 0, 1),
    5: (1.5, 3.0, 4.0, 3.5, 1.75, 1, 1, 1),
}


def test_swiss_example_values_and_default_order():
    rows = standings(6, history_of(SWISS))
    for e, (mp, gp, bh, cut, sb, w, d, l) in SWISS_VALUES.items():  # noqa: E741
        row = by_entry(rows)[e]
        assert (row.match_points, row.game_points, row.buchholz, row.buchholz_cut1,
                row.sonneborn_berger) == (mp, gp, bh, cut, sb), e
        assert (row.wins, row.draws, row.losses, row.matches, row.byes) == (w, d, l, 3, 0), e
    # 2 points: all cut-1 are 3½, Buchholz 4 (bot 0) v 5 (bot 4) → 4, 0.
    # 1½ points: cut-1 equal, Buchholz 5 (bot 2) v 4 (bots 3, 5); SB 1¾ (5) v 1¼ (3) → 2, 5, 3.
    assert [r.entry for r in rows] == [4, 0, 2, 5, 3, 1]
    assert [r.rank for r in rows] == [1, 2, 3, 4, 5, 6]
    # Every group level up to SB has one member, so direct encounter is 0 everywhere.
    assert all(r.direct_encounter == 0 for r in rows)


def test_swiss_example_round_robin_order_uses_direct_encounter():
    rows = standings(6, history_of(SWISS), tiebreaks=ROUND_ROBIN_TIEBREAKS)
    # Direct encounter groups by match points only:
    #   {0, 4} at 2: 4 beat 0 → 4: 1, 0: 0.
    #   {2, 3, 5} at 1½: 2–3 drawn (½ each), 5 beat 2 (5: 1), 3 and 5 never met → 2: ½, 3: ½, 5: 1.
    #   {1}: alone → 0.
    assert {r.entry: r.direct_encounter for r in rows} == {0: 0, 1: 0, 2: 0.5, 3: 0.5, 4: 1, 5: 1}
    # 4 before 0; 5 first of its group, then 2 and 3 by SB (2¾ v 1¼).
    assert [r.entry for r in rows] == [4, 0, 5, 2, 3, 1]


def test_tiebreak_order_changes_the_ranking():
    history = history_of(SWISS)
    # Game points first: bot 0 (4½) passes bot 4 (3); at 1½, bot 2 (3½) leads 3 and 5 (3 each),
    # who are then separated by SB (5: 1¾ over 3: 1¼).
    by_points = standings(6, history, tiebreaks=("game_points", "sonneborn_berger"))
    assert [r.entry for r in by_points] == [0, 4, 2, 5, 3, 1]
    # SB first: 4 (3½) over 0 (2); 2 (2¾), 5 (1¾), 3 (1¼).
    by_sb = standings(6, history, tiebreaks=("sonneborn_berger", "game_points"))
    assert [r.entry for r in by_sb] == [4, 0, 2, 5, 3, 1]


def test_direct_encounter_groups_follow_the_preceding_tiebreaks():
    # Buchholz before it: 0 (4) and 4 (5) split, 2 (5) splits from 3 and 5 (4 each), who are
    # level but never met, so every direct encounter is 0.
    rows = standings(6, history_of(SWISS), tiebreaks=("buchholz", "direct_encounter"))
    assert all(r.direct_encounter == 0 for r in rows)
    # Cut-1 before it is 3½ for all, so the groups are those of match points (as above).
    rows = standings(6, history_of(SWISS), tiebreaks=("buchholz_cut1", "direct_encounter"))
    assert {r.entry: r.direct_encounter for r in rows} == {0: 0, 1: 0, 2: 0.5, 3: 0.5, 4: 1, 5: 1}
    # 2 and 3 (direct ½ each) are then separated by game points, 3½ v 3.
    assert [r.entry for r in rows] == [4, 0, 5, 2, 3, 1]


def test_upto_round_counts_only_earlier_rounds():
    rows = by_entry(standings(6, history_of(SWISS), upto_round=1))
    # After round 1: 0 and 4 won, 2 and 3 drew, 1 and 5 lost.
    assert {e: r.match_points for e, r in rows.items()} == {0: 1, 1: 0, 2: 0.5, 3: 0.5, 4: 1, 5: 0}
    # Buchholz after round 1 uses the scores after round 1: 0's opponent 1 has 0, 2's opponent 3 ½.
    assert rows[0].buchholz == 0 and rows[2].buchholz == 0.5 and rows[1].buchholz == 1
    assert all(r.matches == 1 for r in rows.values())
    assert standings(6, history_of(SWISS), upto_round=3) == standings(6, history_of(SWISS))
    before = standings(6, history_of(SWISS), upto_round=0)
    assert all(r.matches == 0 and r.rank == 1 for r in before)


# ---------------------------------------------------------------------------------------------
# Byes, shared ranks, errors

BYES = {1: [(0, 1, 2.0, 0.0)],   # 0 wins; 2 has a bye
        2: [(1, 2, 1.0, 1.0)],   # draw; 0 has a bye
        3: [(0, 2, 0.5, 1.5)]}   # 2 wins; 1 has a bye
BYE_OF = {1: (2,), 2: (0,), 3: (1,)}


def test_byes_score_bye_points_and_contribute_zero_to_buchholz():
    rows = by_entry(standings(3, history_of(BYES, BYE_OF)))
    # Match points: 0: 1 + bye 1 + 0 = 2; 1: 0 + ½ + bye 1 = 1½; 2: bye 1 + ½ + 1 = 2½.
    assert {e: r.match_points for e, r in rows.items()} == {0: 2, 1: 1.5, 2: 2.5}
    # Contributions: 0: [1's 1½, bye 0, 2's 2½] → Buchholz 4, cut-1 removes the bye's 0 → 4.
    #                1: [0's 2, 2's 2½, bye 0] → 4½, 4½.   2: [bye 0, 1's 1½, 0's 2] → 3½, 3½.
    assert {e: (r.buchholz, r.buchholz_cut1) for e, r in rows.items()} == {
        0: (4, 4), 1: (4.5, 4.5), 2: (3.5, 3.5)}
    # Byes are neither matches nor wins.
    assert {e: (r.matches, r.byes, r.wins, r.draws, r.losses) for e, r in rows.items()} == {
        0: (2, 1, 1, 0, 1), 1: (2, 1, 0, 1, 1), 2: (2, 1, 1, 1, 0)}
    assert [r.entry for r in standings(3, history_of(BYES, BYE_OF))] == [2, 0, 1]


def test_bye_points_and_upto_round_with_byes():
    half = by_entry(standings(3, history_of(BYES, BYE_OF), bye_points=0.5))
    assert {e: r.match_points for e, r in half.items()} == {0: 1.5, 1: 1.0, 2: 2.0}
    two = by_entry(standings(3, history_of(BYES, BYE_OF), upto_round=2))
    # After round 2: 0: 1 + bye = 2; 1: 0 + ½ = ½; 2: bye + ½ = 1½.
    assert {e: r.match_points for e, r in two.items()} == {0: 2, 1: 0.5, 2: 1.5}
    # 0: [1's ½, bye 0] → ½, cut-1 ½ − 0 = ½; 1: [0's 2, 2's 1½] → 3½, cut 2; 2: [bye 0, 1's ½].
    assert {e: (r.buchholz, r.buchholz_cut1) for e, r in two.items()} == {
        0: (0.5, 0.5), 1: (3.5, 2.0), 2: (0.5, 0.5)}
    assert {e: (r.matches, r.byes) for e, r in two.items()} == {0: (1, 1), 1: (2, 0), 2: (1, 1)}


def test_competition_ranking_shares_ranks():
    # 0 beats 1; 2 and 3 draw: 2 and 3 are level on every key (½, Buchholz ½, SB ¼, direct ½).
    rows = standings(4, history_of({1: [(0, 1, 2.0, 0.0), (2, 3, 1.0, 1.0)]}))
    assert [(r.entry, r.rank) for r in rows] == [(0, 1), (2, 2), (3, 2), (1, 4)]
    assert by_entry(rows)[2].direct_encounter == 0.5


def test_unknown_tiebreak_is_a_config_error():
    with pytest.raises(ConfigError, match="'median'") as info:
        standings(2, History(), tiebreaks=("buchholz", "median"))
    assert "\n" not in str(info.value)


def test_default_tiebreaks_per_format():
    assert default_tiebreaks("swiss") == DEFAULT_TIEBREAKS
    assert default_tiebreaks("round_robin") == ROUND_ROBIN_TIEBREAKS
    assert default_tiebreaks("gauntlet") == ROUND_ROBIN_TIEBREAKS
    with pytest.raises(ConfigError, match="knockout"):
        default_tiebreaks("knockout")


def test_multi_seat_standings_count_pairwise_results():
    # One 3-seat table (the example above: 0 ahead of both, 1 and 2 level) and a bye for 3.
    def game(r0, r1, r2):
        return [{"entry": e, "team": e, "rank": r} for e, r in zip((0, 1, 2), (r0, r1, r2))]

    m = score_match(1, 1, [0, 1, 2], [game(1, 2, 3), game(2, 1, 1), game(1, 3, 2)])
    history = History((Round(1, (Table(1, 1, (0, 1, 2)),), (3,)),), (m,))
    rows = by_entry(standings(4, history))
    assert {e: (r.wins, r.draws, r.losses) for e, r in rows.items()} == {
        0: (2, 0, 0), 1: (0, 1, 1), 2: (0, 1, 1), 3: (0, 0, 0)}
    # Match points 1, ¼, ¼ and the bye's 1. Buchholz of 0 = mean(¼, ¼) = ¼; of 1 = mean(1, ¼) = ⅝.
    assert rows[0].buchholz == 0.25 and rows[1].buchholz == 0.625
    # SB of 0: (1 × ¼ + 1 × ¼) / 2 = ¼; of 1: (0 × 1 + ½ × ¼) / 2 = 1/16.
    assert rows[0].sonneborn_berger == 0.25 and rows[1].sonneborn_berger == 0.0625
    # Direct encounter (round-robin order): {0, 3} at 1 never met; {1, 2} drew → ½ each.
    rr = by_entry(standings(4, history, tiebreaks=ROUND_ROBIN_TIEBREAKS))
    assert {e: r.direct_encounter for e, r in rr.items()} == {0: 0, 1: 0.5, 2: 0.5, 3: 0}


def test_team_standings_never_compare_partners():
    team = {0: 0, 2: 0, 1: 1, 3: 1}
    games = [[{"entry": e, "team": team[e], "rank": 1 if team[e] == 0 else 2} for e in range(4)]]
    m = score_match(1, 1, [0, 1, 2, 3], games)
    rows = by_entry(standings(4, History((), (m,))))
    # Each bot has two opponents: 0 and 2 win both, 1 and 3 lose both; partners give no result.
    assert {e: (r.wins, r.draws, r.losses) for e, r in rows.items()} == {
        0: (2, 0, 0), 1: (0, 0, 2), 2: (2, 0, 0), 3: (0, 0, 2)}
    # Buchholz of 0: mean final score of 1 and 3 = 0; of 1: mean of 0 and 2 = 1.
    assert (rows[0].buchholz, rows[1].buchholz) == (0, 1)
    assert (rows[0].rank, rows[2].rank, rows[1].rank, rows[3].rank) == (1, 1, 3, 3)


# ---------------------------------------------------------------------------------------------
# Properties over random stages


@st.composite
def random_stage(draw):
    """(entrants, History) of random 2- to 4-seat tables with byes and random game results."""
    n = draw(st.integers(2, 7))
    rng = random.Random(draw(st.integers(0, 10**6)))
    size = draw(st.sampled_from([s for s in (2, 3, 4) if s <= n]))
    rounds, matches = [], []
    for r in range(1, draw(st.integers(1, 4)) + 1):
        order = list(range(n))
        rng.shuffle(order)
        cut = len(order) - len(order) % size
        tables = tuple(Table(r, t + 1, tuple(order[i:i + size]))
                       for t, i in enumerate(range(0, cut, size)))
        rounds.append(Round(r, tables, tuple(order[cut:])))
        for table in tables:
            games = [[{"entry": e, "team": e, "rank": rng.randint(1, size)} for e in table.bots]
                     for _ in range(rng.randint(0, 3))]
            matches.append(score_match(r, table.number, table.bots, games))
    return n, History(tuple(rounds), tuple(matches))


TIEBREAK_ORDERS = st.sampled_from([DEFAULT_TIEBREAKS, ROUND_ROBIN_TIEBREAKS, (),
                                   ("direct_encounter", "buchholz"), ("game_points",)])


@settings(max_examples=60, deadline=None)
@given(random_stage(), TIEBREAK_ORDERS)
def test_ranks_are_competition_ranks_of_the_sort_keys(stage, order):
    n, history = stage
    rows = standings(n, history, tiebreaks=order)
    assert sorted(r.entry for r in rows) == list(range(n))

    def key(row: StandingRow):
        return (row.match_points, *(row.tiebreak(name) for name in order), row.game_points)

    for row in rows:
        assert row.rank == 1 + sum(1 for other in rows if key(other) > key(row))
    assert [(r.rank, r.entry) for r in rows] == sorted((r.rank, r.entry) for r in rows)
    assert all(key(a) >= key(b) for a, b in zip(rows, rows[1:]))


@settings(max_examples=60, deadline=None)
@given(random_stage(), TIEBREAK_ORDERS, st.randoms(use_true_random=False))
def test_order_of_matches_does_not_change_standings(stage, order, rng):
    n, history = stage
    shuffled = list(history.matches)
    rng.shuffle(shuffled)
    assert standings(n, History(history.rounds, tuple(shuffled)), tiebreaks=order) == \
        standings(n, history, tiebreaks=order)


@settings(max_examples=40, deadline=None)
@given(random_stage())
def test_match_points_add_up(stage):
    n, history = stage
    rows = standings(n, history, bye_points=1.0)
    # A table of k bots that played hands out k/2 match points; each bye 1.
    expected = sum(len(m.bots) / 2 for m in history.matches if m.games) + \
        sum(len(r.byes) for r in history.rounds)
    assert sum(r.match_points for r in rows) == pytest.approx(expected)


# ---------------------------------------------------------------------------------------------
# Multi-game events


def row(entry, rank, match_points, game_points, matches=4, byes=0):
    """A stage row with only the fields overall standings read filled in."""
    return StandingRow(entry=entry, rank=rank, match_points=match_points, game_points=game_points,
                       matches=matches, wins=0, draws=0, losses=0, byes=byes, buchholz=0.0,
                       buchholz_cut1=0.0, sonneborn_berger=0.0, direct_encounter=0.0)


def shares(out, entry):
    """(rank, points, maximum, weight, share, contribution) per stage of one bot (None: absent)."""
    return tuple(None if s is None else (s.rank, s.points, s.maximum, s.weight, s.share,
                                         s.contribution)
                 for s in by_entry(out)[entry].stages)


def test_overall_standings_with_a_left_out_bot():
    a = [row(1, 1, 3.0, 5.0), row(0, 2, 2.0, 4.0), row(2, 3, 1.0, 3.0)]
    b = [row(0, 1, 2.0, 3.0), row(1, 2, 1.0, 1.0)]  # bot 2 left out of stage B
    out = overall_standings([("A", a, ()), ("B", b, (2,))], 3)
    # Both stages' maximum is 4 (4 matches). Scores, the mean share over the stages played:
    # 0: (2/4 + 2/4) / 2 = 1/2, 1: (3/4 + 1/4) / 2 = 1/2, 2: 1/4 (A only). Stage wins: 0 one (B),
    # 1 one (A). Game points decide: 0: 7 over 1: 6.
    assert [(r.entry, r.rank, r.score, r.stage_wins, r.game_points, r.best_rank) for r in out] == [
        (0, 1, 0.5, 1, 7.0, 1), (1, 2, 0.5, 1, 6.0, 1), (2, 3, 0.25, 0, 3.0, 3)]
    assert shares(out, 2) == ((3, 1.0, 4.0, 1.0, 0.25, 0.25), None)
    assert shares(out, 0) == ((2, 2.0, 4.0, 1.0, 0.5, 0.25), (1, 2.0, 4.0, 1.0, 0.5, 0.25))


def test_overall_tiebreaks_stage_wins_then_best_rank():
    # 0 and 1 level on score; 0 won a stage, 1 did not, though 1 has more game points.
    a = [row(0, 1, 2.0, 2.0), row(1, 2, 2.0, 5.0)]
    b = [row(0, 3, 1.0, 1.0), row(1, 3, 1.0, 1.0)]
    out = overall_standings([("A", a, ()), ("B", b, ())], 2)
    assert [(r.entry, r.stage_wins) for r in out] == [(0, 1), (1, 0)]
    # Level on score, wins and game points: the better best rank goes first (2 v 3).
    a = [row(0, 2, 1.0, 1.0), row(1, 3, 1.0, 1.0)]
    b = [row(0, 4, 1.0, 1.0), row(1, 3, 1.0, 1.0)]
    out = overall_standings([("A", a, ()), ("B", b, ())], 2)
    assert [(r.entry, r.rank, r.best_rank) for r in out] == [(0, 1, 2), (1, 2, 3)]
    # Fully level: a shared rank.
    out = overall_standings([("A", [row(0, 1, 1.0, 1.0), row(1, 1, 1.0, 1.0)], ())], 2)
    assert [r.rank for r in out] == [1, 1]


def test_overall_stage_not_played_yet_and_stage_rows_from_standings():
    # A stage's rows from standings, remapped to event entries 0 and 2 (1 was left out).
    local = standings(2, history_of({1: [(0, 1, 2.0, 0.0)]}))
    event = [dataclasses.replace(r, entry=(0, 2)[r.entry]) for r in local]
    out = by_entry(overall_standings([("A", event, (1,)), ("B", None, ())], 3))
    assert [(s.rank, s.points, s.maximum) for s in out[0].stages[:1]] == [(1, 1.0, 1.0)]
    assert [(s.rank, s.points, s.contribution) for s in out[2].stages[:1]] == [(2, 0.0, 0.0)]
    assert out[0].stages[1] is None and out[2].stages[1] is None and out[0].score == 1.0
    assert out[1].stages == (None, None) and out[1].best_rank is None and out[1].rank == 3
    with pytest.raises(ValueError, match="left out"):
        overall_standings([("A", event, (0,))], 3)


# -- stage weights ----------------------------------------------------------------------------------
# A random bot scores 15 of 21 match points in a long stage (21 matches per bot) and 0 of 4 in a
# short one; a strong bot 10 of 21 and 4 of 4. Summing raw match points made the random bot win
# (15 > 14); shares of each stage's maximum do not.
LONG = [row(0, 1, 15.0, 30.0, matches=21), row(1, 2, 10.0, 20.0, matches=21)]
SHORT = [row(1, 1, 4.0, 8.0, matches=4), row(0, 2, 0.0, 0.0, matches=4)]


def test_a_long_stage_no_longer_outweighs_a_short_one():
    out = overall_standings([("long", LONG, ()), ("short", SHORT, ())], 2)
    # Bot 1: (10/21 + 4/4) / 2 = 31/42; bot 0 (random): (15/21 + 0/4) / 2 = 15/42.
    assert [(r.entry, r.rank) for r in out] == [(1, 1), (0, 2)]
    assert by_entry(out)[1].score == pytest.approx(31 / 42)
    assert by_entry(out)[0].score == pytest.approx(15 / 42)
    assert [s.maximum for s in by_entry(out)[0].stages] == [21.0, 4.0]


def test_default_weights_count_every_stage_equally():
    # Winning every match of a stage gives a share of 1, however many matches the stage has.
    out = overall_standings([("long", [row(0, 1, 21.0, 42.0, matches=21),
                                       row(1, 2, 0.0, 0.0, matches=21)], ()),
                             ("short", [row(1, 1, 4.0, 8.0, matches=4),
                                        row(0, 2, 0.0, 0.0, matches=4)], ())], 2)
    assert [r.score for r in out] == [0.5, 0.5]
    assert {(s.weight, s.contribution) for r in out for s in r.stages} == {(1.0, 0.5), (1.0, 0.0)}
    config = parse_config({"name": "e", "bots": [{"name": "a", "command": ["x"]},
                                                  {"name": "b", "command": ["y"]}],
                           "stages": [{"game": "xeri"}, {"game": "crossfire"}]})
    assert [s.weight for s in config.stages] == [1.0, 1.0]


def test_explicit_weights_change_the_order_as_computed_by_hand():
    out = overall_standings([("long", LONG, (), 5.0), ("short", SHORT, (), 1.0)], 2)
    # Weighted means, weights 5 and 1: bot 0: (5 × 15/21 + 1 × 0/4) / 6 = 25/42 ≈ 0.595;
    # bot 1: (5 × 10/21 + 1 × 4/4) / 6 = 71/126 ≈ 0.563.
    assert [(r.entry, r.rank) for r in out] == [(0, 1), (1, 2)]
    assert by_entry(out)[0].score == pytest.approx(25 / 42)
    assert by_entry(out)[1].score == pytest.approx(71 / 126)
    assert [s.contribution for s in by_entry(out)[1].stages] == pytest.approx([50 / 126, 1 / 6])
    # A stage of weight 0 is shown but adds nothing: the short stage alone decides.
    out = overall_standings([("long", LONG, (), 0.0), ("short", SHORT, ())], 2)
    assert [(r.entry, r.score) for r in out] == [(1, 1.0), (0, 0.0)]


def test_byes_count_towards_the_stage_maximum_and_an_empty_stage_gives_nothing():
    # Swiss of 3 rounds: bot 2 had a bye worth ½ (bye_points), so the most anyone could score is 3.
    swiss = [row(0, 1, 3.0, 6.0, matches=3), row(1, 2, 1.0, 2.0, matches=3),
             row(2, 3, 1.5, 2.0, matches=2, byes=1)]
    out = overall_standings([("swiss", swiss, (), 1.0, 0.5)], 3)
    assert [s.maximum for s in by_entry(out)[2].stages] == [3.0]
    assert by_entry(out)[2].score == pytest.approx(0.5)
    out = overall_standings([("none", [row(0, 1, 0.0, 0.0, matches=0),
                                       row(1, 1, 0.0, 0.0, matches=0)], ())], 2)
    assert [r.score for r in out] == [0.0, 0.0]


def test_a_bot_left_out_of_stages_is_scored_on_the_stages_it_plays():
    # Four one-stage specialists each win their game (3 of 3), a random bot plays all four and
    # scores half in each: it has the most match points (6 to 3), but the specialists lead.
    stages = [(f"s{s}", [row(s, 1, 3.0, 6.0, matches=3), row(4, 2, 1.5, 3.0, matches=3)],
               tuple(b for b in range(4) if b != s)) for s in range(4)]
    out = overall_standings(stages, 5)
    assert [(r.entry, r.rank, r.score) for r in out] == [
        (0, 1, 1.0), (1, 1, 1.0), (2, 1, 1.0), (3, 1, 1.0), (4, 5, 0.5)]
    assert [s.contribution for s in by_entry(out)[4].stages] == [0.125] * 4
    # A stage not played yet counts for nobody.
    out = overall_standings([*stages, ("later", None, ())], 5)
    assert by_entry(out)[4].score == 0.5 and by_entry(out)[4].stages[-1] is None


@pytest.mark.parametrize("weight", [-1.0, float("nan"), float("inf"), "2", True])
def test_overall_standings_refuse_a_bad_weight(weight):
    with pytest.raises(ValueError, match="weight must be a finite number"):
        overall_standings([("long", LONG, (), weight)], 2)

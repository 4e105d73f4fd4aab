"""Incremental Elo over recorded games.

Elo treats a table of N sides as the N(N-1)/2 pairwise games given by the finishing order, each
update computed from the ratings before the game and scaled by K/(N-1). A team is rated by its
members' mean rating and every member receives the team's change. Games are counted in ordinal order
(the tournament's fixed schedule), never in completion order, so every executor gives the same
ratings.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.ratings.defaults import DEFAULT_K, DEFAULT_RATING  # noqa: F401  (re-exported)


def expected_score(rating: float, opponent: float) -> float:
    """The Elo expected score of `rating` against `opponent` (400 points = 10:1 odds)."""
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / 400.0))


def pairwise_score(rank: int, other: int) -> float:
    """1 for a better (lower) rank, 0.5 for a shared rank, 0 for a worse one."""
    return 1.0 if rank < other else 0.5 if rank == other else 0.0


@dataclass(frozen=True)
class Side:
    """One side of a table: its members (bot names) and its finishing rank."""

    members: tuple[str, ...]
    rank: int


def sides_of(seats: Sequence[dict]) -> list[Side]:
    """Group a game's seats ({bot, team, rank}) into sides, in team order."""
    teams: dict[int, list[dict]] = defaultdict(list)
    for s in seats:
        teams[s["team"]].append(s)
    return [Side(tuple(s["bot"] for s in members), members[0]["rank"])
            for _, members in sorted(teams.items())]


def elo_deltas(ratings: dict[str, float], sides: Sequence[Side], k: float) -> dict[str, float]:
    """Each bot's rating change from one game, computed from the ratings before it."""
    n = len(sides)
    if n < 2:
        return {}
    strength = [sum(ratings[m] for m in side.members) / len(side.members) for side in sides]
    delta = [0.0] * n
    scale = k / (n - 1)
    for i in range(n):
        for j in range(i + 1, n):
            d = scale * (pairwise_score(sides[i].rank, sides[j].rank)
                         - expected_score(strength[i], strength[j]))
            delta[i] += d
            delta[j] -= d
    return {m: delta[i] for i, side in enumerate(sides) for m in side.members}


def elo(games: Iterable[dict], k: float = DEFAULT_K, initial: float = DEFAULT_RATING,
        bots: Iterable[str] = ()) -> tuple[list[dict], list[dict]]:
    """Elo table and per-game history from games in ordinal order (each: id, ordinal, seats)."""
    ratings: dict[str, float] = {b: initial for b in bots}
    stats: dict[str, dict[str, float]] = {}
    history: list[dict] = []

    def stat(bot: str) -> dict[str, float]:
        return stats.setdefault(bot, {"games": 0, "wins": 0.0, "draws": 0.0, "losses": 0.0})

    for game in sorted(games, key=lambda g: g["ordinal"]):
        sides = sides_of(game["seats"])
        for side in sides:
            for m in side.members:
                ratings.setdefault(m, initial)
                st = stat(m)
                st["games"] += 1
                for other in sides:
                    if other is side:
                        continue
                    s = pairwise_score(side.rank, other.rank)
                    st["wins" if s == 1 else "draws" if s == 0.5 else "losses"] += 1
        for bot, d in elo_deltas(ratings, sides, k).items():
            before = ratings[bot]
            ratings[bot] = before + d
            history.append({"ordinal": game["ordinal"], "game_id": game["id"], "bot": bot,
                            "before": round(before, 4), "after": round(ratings[bot], 4)})
    table = []
    for bot, rating in ratings.items():
        st = stat(bot)
        encounters = st["wins"] + st["draws"] + st["losses"]
        points = st["wins"] + st["draws"] / 2
        table.append({
            "bot": bot, "rating": round(rating, 4), "games": int(st["games"]),
            "wins": st["wins"], "draws": st["draws"], "losses": st["losses"], "points": points,
            "score_pct": round(100 * points / encounters, 2) if encounters else 0.0,
        })
    table.sort(key=lambda r: (-r["rating"], r["bot"]))
    return table, history

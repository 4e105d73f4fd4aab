"""Match scoring and stage standings as pure functions of recorded games and a stage's History.

This module is the project's definition of how games, matches and stages are scored.

Game points (one game)
    A game's seats ({team, rank}; a lower rank is better, equal ranks tie) form sides by team; a
    side's rank is its best member's rank (the members of a team normally share one). With S sides,
    a side scores (sides finishing behind it + ½ × sides tied with it) / (S − 1) and every member
    gets the side's points: with two sides 1 win, ½ draw, 0 loss. A game with one side scores 0.

Match (one table)
    A bot's game points are summed over the match's games. Bots that played on one team in any game
    of the match are partners and are never compared. Against its other table-mates (its
    "opponents" at that table) a bot's match points are (opponents with fewer game points + ½ ×
    opponents with equal game points) / (number of opponents), in [0, 1]: with two bots 1 win,
    ½ draw, 0 loss. A match with no games scores 0 for everyone.

Pairwise result
    In a match, a bot's result against one opponent is 1 if it has more game points, ½ if equal,
    0 if fewer. Wins, draws and losses count these pairwise results, one per opponent per match:
    a two-bot match is one win, draw or loss; a four-bot free-for-all gives each bot three results.
    (A recorded match without games compares 0 with 0, so it counts as pairwise draws although it
    scored no match points.)

Stage standings
    - Match points: the sum of the bot's match points over its matches, plus `bye_points` per bye
      (a bot listed in a Round's byes). Byes are counted in `byes`, not as wins or as matches.
    - Buchholz: one contribution per played match, the mean final match points of the bot's
      opponents there (two bots: the opponent's final score), and one contribution of 0 per bye.
      Buchholz is their sum.
    - Buchholz cut-1: Buchholz minus the smallest single contribution (so a bye is the first thing
      cut); equal to Buchholz when the bot has fewer than 2 contributions.
    - Sonneborn–Berger: the sum over the bot's matches and over each opponent j there of (the
      bot's pairwise result against j) × (j's final match points) / (number of opponents at that
      table). With two bots: the standard sum of beaten opponents' scores plus half the drawn ones'.
    - Direct encounter: within a group of bots level on match points and on every tie-break that
      precedes "direct_encounter" in the tie-break order, the sum of the bot's pairwise results
      against the group's other members over all matches between them (not scaled by table size).
      0 when it never met them or the group has one member.
    - Order: match points, then each tie-break in order, then game points, all descending. Bots
      equal on all of these share a rank (competition ranking, "1224") and are listed by entry.

Multi-game events (`overall_standings`)
    Each stage counts by a bot's share of it, so a stage of 21 matches per bot weighs no more than
    one of 4:
    - A stage's maximum is the most match points a bot of it could have scored in what has been
      played: the largest, over the stage's bots, of matches + byes × `bye_points` (a match is
      worth at most 1 match point). When every bot has played every round, that is the stage's
      rounds per bot (a gauntlet's candidates play more matches than its field, and set it).
    - A bot's share of a stage is its match points / the stage's maximum, in [0, 1].
    - Its overall score is the weighted mean of its shares over the stages it plays (weights:
      each stage's `weight`, default 1), in [0, 1]. A bot left out of a stage (its manifest does
      not list the game) is scored over the stages it plays, so a bot that plays one game is
      compared on that game; a stage not played yet (or with a maximum of 0) counts for nobody,
      and a bot whose stages all weigh 0 scores 0. Its contribution from a stage is weight ×
      share / the sum of the weights of its stages; the contributions add up to the score.
    Ties are broken by stage wins (stages it ranked 1st, shared firsts included), then by the sum
    of its stage game points, then by its best stage rank; bots equal on all of these share a
    rank. Within one stage the share orders bots exactly as its match points do.

All arithmetic is exact (fractions), so the order in which matches are listed never changes a
result or a tie; the rows report floats.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from arena.errors import ConfigError
from arena.scheduling.base import History, MatchScore, exact_points

TIEBREAKS = ("buchholz", "buchholz_cut1", "sonneborn_berger", "direct_encounter", "game_points")
DEFAULT_TIEBREAKS = ("buchholz_cut1", "buchholz", "sonneborn_berger", "direct_encounter")
ROUND_ROBIN_TIEBREAKS = ("direct_encounter", "sonneborn_berger", "game_points")

_FORMAT_TIEBREAKS = {
    "swiss": DEFAULT_TIEBREAKS,
    "round_robin": ROUND_ROBIN_TIEBREAKS,
    # Every candidate meets the same field, as in a round robin.
    "gauntlet": ROUND_ROBIN_TIEBREAKS,
}

_HALF = Fraction(1, 2)
# Recorded scores arrive as floats; exact_points snaps them to the nearest small-denominator
# fraction, so 1/3 + 1/3 + 1/3 equals 1 and sums do not depend on the order of the matches.


def _pairwise(mine: Fraction, theirs: Fraction) -> Fraction:
    return Fraction(1) if mine > theirs else _HALF if mine == theirs else Fraction(0)


def default_tiebreaks(format: str) -> tuple[str, ...]:
    """The tie-break order a stage of `format` uses unless its config names one."""
    try:
        return _FORMAT_TIEBREAKS[format]
    except KeyError:
        raise ConfigError(f"no default tie-breaks for format {format!r} "
                          f"(choose {', '.join(_FORMAT_TIEBREAKS)})") from None


def check_tiebreaks(names: Iterable[str]) -> tuple[str, ...]:
    """The tie-break names as a tuple; ConfigError (one line, naming it) for an unknown one."""
    names = tuple(names)
    for name in names:
        if name not in TIEBREAKS:
            raise ConfigError(f"unknown tie-break {name!r} (choose {', '.join(TIEBREAKS)})")
    return names


# ---------------------------------------------------------------------------------------------
# Games and matches


def _exact_game_points(seats: Sequence[dict]) -> list[Fraction]:
    """`game_points` as exact fractions, which the standings add up without rounding."""
    side_rank: dict[object, int] = {}
    for seat in seats:
        team = seat["team"]
        side_rank[team] = min(seat["rank"], side_rank.get(team, seat["rank"]))
    others = len(side_rank) - 1
    if others < 1:
        return [Fraction(0)] * len(seats)
    points: dict[object, Fraction] = {}
    for team, rank in side_rank.items():
        behind = sum(1 for r in side_rank.values() if r > rank)
        tied = sum(1 for r in side_rank.values() if r == rank) - 1
        points[team] = (behind + _HALF * tied) / others
    return [points[seat["team"]] for seat in seats]


def game_points(seats: Sequence[dict]) -> list[float]:
    """Each seat's game points in one game (seats are dicts with "team" and "rank")."""
    return [float(p) for p in _exact_game_points(seats)]


def _match_points(points: Sequence[Fraction],
                  partners: frozenset[tuple[int, int]]) -> list[Fraction]:
    out = []
    for i, mine in enumerate(points):
        opponents = [points[j] for j in range(len(points))
                     if j != i and (min(i, j), max(i, j)) not in partners]
        out.append(sum((_pairwise(mine, theirs) for theirs in opponents), Fraction(0))
                   / len(opponents) if opponents else Fraction(0))
    return out


def score_of_row(row: dict) -> MatchScore:
    """A MatchScore from a stored row (`Store.match_scores`): the one conversion driver and reports share."""
    return MatchScore(row["round"], row["table"], tuple(row["bots"]), tuple(row["game_points"]),
                      tuple(row["match_points"]), row["games"],
                      frozenset(tuple(p) for p in row["partners"]),
                      tuple((games, tuple(points)) for games, points in row.get("deals", ())))


def score_match(round_no: int, table_no: int, bots: Sequence[int],
                games: Sequence[Sequence[dict]]) -> MatchScore:
    """A table's MatchScore from its games (each a list of seat dicts with entry, team, rank)."""
    bots = tuple(bots)
    position = {bot: i for i, bot in enumerate(bots)}
    if len(position) != len(bots):
        raise ValueError(f"table {round_no}.{table_no}: a bot is seated twice in {bots}")
    points = [Fraction(0)] * len(bots)
    partners: set[tuple[int, int]] = set()
    for game in games:
        teams: dict[object, list[int]] = defaultdict(list)
        for seat, p in zip(game, _exact_game_points(game)):
            if seat["entry"] not in position:
                raise ValueError(f"table {round_no}.{table_no}: entry {seat['entry']} "
                                 f"is not one of its bots {bots}")
            i = position[seat["entry"]]
            points[i] += p
            teams[seat["team"]].append(i)
        for members in teams.values():
            partners.update((min(a, b), max(a, b)) for a in members for b in members if a != b)
    frozen = frozenset(partners)
    match = (_match_points(points, frozen) if games else [Fraction(0)] * len(bots))
    return MatchScore(round=round_no, table=table_no, bots=bots,
                      game_points=tuple(float(p) for p in points),
                      match_points=tuple(float(m) for m in match),
                      games=len(games), partners=frozen)


def deal_scores(games: Sequence[dict]) -> list[dict]:
    """Per deal and bot of ONE match: {deal, entry, points, games}, ordered by deal then entry."""
    totals: dict[tuple[int, int], list] = {}
    for game in games:
        for seat, p in zip(game["seats"], _exact_game_points(game["seats"])):
            tally = totals.setdefault((game["deal"], seat["entry"]), [Fraction(0), 0])
            tally[0] += p
            tally[1] += 1
    return [{"deal": deal, "entry": entry, "points": float(p), "games": n}
            for (deal, entry), (p, n) in sorted(totals.items())]


def deal_points(rows: Sequence[dict], bots: Sequence[int]) -> tuple[tuple[int, tuple[float, ...]], ...]:
    """`deal_scores` rows of one match as MatchScore.deals: per deal, (games, points by position)."""
    position = {bot: i for i, bot in enumerate(bots)}
    by_deal: dict[int, list] = {}
    for row in rows:
        entry = by_deal.setdefault(row["deal"], [0, [0.0] * len(bots)])
        entry[0] = max(entry[0], row["games"])
        entry[1][position[row["entry"]]] = float(row["points"])
    return tuple((games, tuple(points)) for _, (games, points) in sorted(by_deal.items()))


def pentanomial(rows_for_a_pair: Iterable[dict]) -> tuple[int, int, int, int, int]:
    """Counts of deals scoring 0, ½, 1, 1½, 2 among one bot's two-game deal rows of a 2-bot match.

    Rows with another number of games (an unfinished deal) are skipped, as SPRT tools count only
    complete game pairs.
    """
    counts = [0] * 5
    entries = set()
    for row in rows_for_a_pair:
        entries.add(row["entry"])
        if row["games"] != 2:
            continue
        halves = exact_points(row["points"]) * 2
        if halves.denominator != 1 or not 0 <= halves <= 4:
            raise ValueError(f"deal {row['deal']}: {row['points']} points is not a 2-game score")
        counts[int(halves)] += 1
    if len(entries) > 1:
        raise ValueError(f"pentanomial of one bot's rows, got entries {sorted(entries)}")
    return tuple(counts)  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# Stage standings


@dataclass(frozen=True)
class StandingRow:
    """One bot's line in a stage's standings (see the module docstring for every value)."""

    entry: int
    rank: int
    match_points: float
    game_points: float
    matches: int
    wins: int
    draws: int
    losses: int
    byes: int
    buchholz: float
    buchholz_cut1: float
    sonneborn_berger: float
    direct_encounter: float

    def tiebreak(self, name: str) -> float:
        """The value of the tie-break `name` (one of TIEBREAKS)."""
        return getattr(self, check_tiebreaks((name,))[0])


@dataclass
class _Tally:
    match_points: Fraction = Fraction(0)
    game_points: Fraction = Fraction(0)
    matches: int = 0
    results: list[int] = field(default_factory=lambda: [0, 0, 0])  # wins, draws, losses
    byes: int = 0
    contributions: list[Fraction] = field(default_factory=list)
    sonneborn_berger: Fraction = Fraction(0)
    direct_encounter: Fraction = Fraction(0)

    def value(self, name: str) -> Fraction:
        if name == "buchholz":
            return sum(self.contributions, Fraction(0))
        if name == "buchholz_cut1":
            total = sum(self.contributions, Fraction(0))
            return total - min(self.contributions) if len(self.contributions) >= 2 else total
        return getattr(self, name)


def _opponents(match: MatchScore, i: int) -> list[int]:
    return [j for j in range(len(match.bots))
            if j != i and (min(i, j), max(i, j)) not in match.partners]


def standings(entrants: int, history: History, tiebreaks: Sequence[str] = DEFAULT_TIEBREAKS,
              bye_points: float = 1.0, upto_round: int | None = None) -> list[StandingRow]:
    """The stage's standings after `upto_round` (default: every recorded round), best first."""
    order = check_tiebreaks(tiebreaks)

    def counted(round_no: int) -> bool:
        return upto_round is None or round_no <= upto_round

    def check(bot: int, where: str) -> int:
        if not 0 <= bot < entrants:
            raise ValueError(f"{where}: entry {bot} is outside 0..{entrants - 1}")
        return bot

    matches = [m for m in history.matches if counted(m.round)]
    tally = [_Tally() for _ in range(entrants)]
    # (bot, opponent, pairwise result), one per ordered opponent pair per match.
    encounters: list[tuple[int, int, Fraction]] = []

    for rnd in history.rounds:
        if counted(rnd.number):
            for bot in rnd.byes:
                t = tally[check(bot, f"round {rnd.number} bye")]
                t.byes += 1
                t.match_points += exact_points(bye_points)
                t.contributions.append(Fraction(0))

    for m in matches:
        where = f"match {m.round}.{m.table}"
        points = [exact_points(p) for p in m.game_points]
        for i, bot in enumerate(m.bots):
            t = tally[check(bot, where)]
            t.matches += 1
            t.game_points += points[i]
            t.match_points += exact_points(m.match_points[i])
            for j in _opponents(m, i):
                result = _pairwise(points[i], points[j])
                t.results[0 if result == 1 else 1 if result == _HALF else 2] += 1
                encounters.append((bot, m.bots[j], result))

    # Buchholz and Sonneborn–Berger need every bot's final match points, hence a second pass.
    final = [t.match_points for t in tally]
    for m in matches:
        points = [exact_points(p) for p in m.game_points]
        for i, bot in enumerate(m.bots):
            opponents = _opponents(m, i)
            if not opponents:
                continue
            scores = [final[m.bots[j]] for j in opponents]
            tally[bot].contributions.append(sum(scores, Fraction(0)) / len(opponents))
            tally[bot].sonneborn_berger += sum(
                (_pairwise(points[i], points[j]) * final[m.bots[j]] for j in opponents),
                Fraction(0)) / len(opponents)

    before_direct = order[:order.index("direct_encounter")] if "direct_encounter" in order else ()
    group_of = [(t.match_points, *(t.value(n) for n in before_direct)) for t in tally]
    for bot, other, result in encounters:
        if group_of[bot] == group_of[other]:
            tally[bot].direct_encounter += result

    keys = [(t.match_points, *(t.value(n) for n in order), t.game_points) for t in tally]
    ranked = sorted(range(entrants), key=lambda e: (tuple(-k for k in keys[e]), e))
    rows = []
    for position, entry in enumerate(ranked):
        shares = position > 0 and keys[ranked[position - 1]] == keys[entry]
        rank = rows[-1].rank if shares else position + 1
        t = tally[entry]
        rows.append(StandingRow(
            entry=entry, rank=rank, match_points=float(t.match_points),
            game_points=float(t.game_points), matches=t.matches,
            wins=t.results[0], draws=t.results[1], losses=t.results[2],
            byes=t.byes, buchholz=float(t.value("buchholz")),
            buchholz_cut1=float(t.value("buchholz_cut1")),
            sonneborn_berger=float(t.sonneborn_berger),
            direct_encounter=float(t.direct_encounter)))
    return rows


# ---------------------------------------------------------------------------------------------
# Multi-game events


@dataclass(frozen=True)
class StageShare:
    """What one stage gives one bot in an event's overall standing (see the module docstring)."""

    rank: int
    points: float  # its match points in the stage
    maximum: float  # the stage's maximum (0: nothing played, the stage does not count)
    weight: float
    share: float  # points / maximum
    contribution: float  # weight × share / the weights of the bot's counted stages


@dataclass(frozen=True)
class OverallRow:
    """One bot's line in an event's overall standings; `stages` is aligned with the given stages."""

    entry: int
    rank: int
    score: float
    stage_wins: int
    game_points: float
    best_rank: int | None
    stages: tuple[StageShare | None, ...]


def check_weight(weight: float) -> float:
    """A stage weight as given; ValueError (one line, naming it) unless finite and ≥ 0."""
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) \
            or weight != weight or weight in (float("inf"), float("-inf")) or weight < 0:
        raise ValueError(f"weight must be a finite number ≥ 0 (got {weight!r})")
    return weight


def stage_maximum(rows: Iterable[StandingRow], bye_points: float = 1.0) -> Fraction:
    """The most match points a bot of the stage could have scored so far (see the module docstring)."""
    bye = exact_points(bye_points)
    return max((row.matches + row.byes * bye for row in rows), default=Fraction(0))


def overall_standings(stages: Sequence[tuple], entrants: int) -> list[OverallRow]:
    """The event's overall standings, best first, from its stages.

    Each stage is (name, rows, left-out entries[, weight[, bye_points]]); weight and bye_points
    default to 1. Rows use event-level entry indices. A stage whose rows are None (not played
    yet) and a bot without a row in a stage (left out of it) give None for that stage.
    """
    # Per bot and stage: (row, weight, share) while the weights of its stages are summed.
    cells: list[list[tuple[StandingRow, Fraction, Fraction, Fraction] | None]] = \
        [[] for _ in range(entrants)]
    weights = [Fraction(0)] * entrants
    games = [Fraction(0)] * entrants
    wins = [0] * entrants
    best: list[int | None] = [None] * entrants
    for stage in stages:
        name, rows, left_out, *rest = stage
        weight = exact_points(check_weight(rest[0] if rest else 1.0))
        bye_points = rest[1] if len(rest) > 1 else 1.0
        by_entry: dict[int, StandingRow] = {}
        for row in rows or ():
            if not 0 <= row.entry < entrants:
                raise ValueError(f"stage {name!r}: entry {row.entry} is outside 0..{entrants - 1}")
            if row.entry in by_entry:
                raise ValueError(f"stage {name!r}: entry {row.entry} has two rows")
            by_entry[row.entry] = row
        clash = sorted(set(by_entry) & set(left_out))
        if clash:
            raise ValueError(f"stage {name!r}: entries {clash} are both left out and ranked")
        maximum = stage_maximum(by_entry.values(), bye_points)
        for entry in range(entrants):
            row = by_entry.get(entry)
            if row is None:
                cells[entry].append(None)
                continue
            share = exact_points(row.match_points) / maximum if maximum else Fraction(0)
            cells[entry].append((row, maximum, weight, share))
            if maximum:
                weights[entry] += weight
            games[entry] += exact_points(row.game_points)
            wins[entry] += row.rank == 1
            best[entry] = row.rank if best[entry] is None else min(best[entry], row.rank)

    score = [Fraction(0)] * entrants
    per_stage: list[tuple[StageShare | None, ...]] = []
    for entry in range(entrants):
        shares = []
        for cell in cells[entry]:
            if cell is None:
                shares.append(None)
                continue
            row, maximum, weight, share = cell
            part = weight * share / weights[entry] if maximum and weights[entry] else Fraction(0)
            score[entry] += part
            shares.append(StageShare(row.rank, row.match_points, float(maximum), float(weight),
                                     float(share), float(part)))
        per_stage.append(tuple(shares))

    def key(entry: int) -> tuple:
        # A bot that played no stage has no best rank; it sorts after every ranked one.
        worst = float("inf") if best[entry] is None else best[entry]
        return (-score[entry], -wins[entry], -games[entry], worst)

    ranked = sorted(range(entrants), key=lambda e: (key(e), e))
    out: list[OverallRow] = []
    for position, entry in enumerate(ranked):
        level = position > 0 and key(ranked[position - 1]) == key(entry)
        out.append(OverallRow(
            entry=entry, rank=out[-1].rank if level else position + 1,
            score=float(score[entry]), stage_wins=wins[entry],
            game_points=float(games[entry]), best_rank=best[entry],
            stages=per_stage[entry]))
    return out


# ---------------------------------------------------------------------------------------------
# Crosstables


@dataclass(frozen=True)
class CrossCell:
    """One bot's pairwise record against one opponent: wins, draws, losses, points, games."""

    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        """Pairwise games between the two."""
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        """Wins plus half the draws."""
        return self.wins + self.draws / 2


def crosstable(games: Iterable[dict], bots: Sequence[str]) -> dict[str, dict[str, CrossCell]]:
    """Every bot's pairwise record against every other, from games' finishing ranks.

    A game of N sides gives each pair of sides in it one pairwise result (the better rank wins,
    equal ranks draw); partners are not each other's opponents. Bots without games still get
    their row (all zero), so the table is square over `bots` plus any bot seen in a game.
    """
    tally: dict[tuple[str, str], list[int]] = {}
    order = list(dict.fromkeys(bots))
    for game in games:
        seats = game["seats"]
        for a in seats:
            if a["bot"] not in order:
                order.append(a["bot"])
            for b in seats:
                if a["bot"] == b["bot"] or a["team"] == b["team"]:
                    continue
                cell = tally.setdefault((a["bot"], b["bot"]), [0, 0, 0])
                cell[0 if a["rank"] < b["rank"] else 1 if a["rank"] == b["rank"] else 2] += 1
    return {a: {b: CrossCell(*tally.get((a, b), (0, 0, 0))) for b in order if b != a}
            for a in order}

"""The scheduler interface: the next round's tables as a pure function of the stage and its history.

A scheduler never sees the database. The driver gives it the stage's `Pairing` (entrants, seats,
seed, format settings) and the `History` of the rounds played so far (tables, byes and each
recorded match's scores), and gets back the next `Round`, or None when the stage is over. The same
inputs always give the same round, so a resumed run re-derives the rounds it already played and a
test can compare them.

Bots are stage-local entry indices 0..entrants-1 (in config order); tables, rounds and matches are
numbered from 1.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from fractions import Fraction

# Point values are small fractions (halves, thirds, sixths; a config's bye points) stored as floats.
_MAX_DENOMINATOR = 1_000_000


def exact_points(points: float | Fraction) -> Fraction:
    """The fraction a stored point value stands for (1/3 for 0.333…), for exact sums and ties."""
    return Fraction(points).limit_denominator(_MAX_DENOMINATOR)


@dataclass(frozen=True)
class Table:
    """One match to play: its round, its number within the round, and its bots in starting seat order.

    The match rotates the seats (duplicate deals), so `bots[0]` is the bot in seat 0 in the first
    game of each deal: the "first player" that seat balancing counts.
    """

    round: int
    number: int
    bots: tuple[int, ...]


@dataclass(frozen=True)
class Round:
    """A round: its tables and the bots given a bye (scored as `Pairing.bye_points`)."""

    number: int
    tables: tuple[Table, ...]
    byes: tuple[int, ...] = ()


@dataclass(frozen=True)
class MatchScore:
    """A recorded match as standings and schedulers see it.

    `game_points[i]` is the total over the match's games of bot `bots[i]`'s game points (per game:
    1 win, ½ draw, 0 loss for two sides; with more sides, the share of opposing sides it finished
    ahead of, ties counting half). `match_points[i]` is its place points in [0, 1] by game points
    against the table's other bots (2 bots: 1 win, ½ draw, 0 loss). `partners` lists the pairs
    (as positions into `bots`) that played on one team, which are never compared.
    """

    round: int
    table: int
    bots: tuple[int, ...]
    game_points: tuple[float, ...]
    match_points: tuple[float, ...]
    games: int = 0
    partners: frozenset[tuple[int, int]] = frozenset()
    #: Per deal, in deal order: (games played of it, each position's points over them).
    deals: tuple[tuple[int, tuple[float, ...]], ...] = ()


@dataclass(frozen=True)
class History:
    """A stage's rounds so far (each complete) and its recorded matches."""

    rounds: tuple[Round, ...] = ()
    matches: tuple[MatchScore, ...] = ()


@dataclass(frozen=True)
class Pairing:
    """What a scheduler needs to know of a stage."""

    entrants: int
    seats: int
    seed: int
    rounds: int | None = None  # swiss: rounds to play (None: the format's default)
    cycles: int = 1  # round robin: repetitions
    candidates: tuple[int, ...] = ()  # gauntlet: the bots that play the rest of the field
    seeding: tuple[int, ...] = ()  # swiss: initial order, strongest first (empty: from the seed)
    bye_points: float = 1.0  # match points of a bye
    sprt: tuple | None = None  # gauntlet: (elo0, elo1, alpha, beta, model) stops a decided candidate
    extra: dict = field(default_factory=dict, compare=False, hash=False)


class Scheduler(ABC):
    """One tournament format."""

    name: str = ""
    #: False when the rounds do not depend on results, so the driver may start round r+1 before
    #: round r has finished (round robin, gauntlet); True for Swiss.
    depends_on_results: bool = True

    def depends_on(self, pairing: Pairing) -> bool:
        """Whether this stage's next round depends on the results so far (no prefetch then)."""
        return self.depends_on_results

    @abstractmethod
    def next_round(self, pairing: Pairing, history: History) -> Round | None:
        """The next round (numbered len(history.rounds) + 1), or None when the stage is over."""

    @abstractmethod
    def total_rounds(self, pairing: Pairing) -> int:
        """How many rounds the stage will have (for progress and validation)."""

    def validate(self, pairing: Pairing) -> None:  # noqa: B027 (optional: most accept any)
        """Raise ConfigError (one line, naming the value) if the stage cannot be played."""

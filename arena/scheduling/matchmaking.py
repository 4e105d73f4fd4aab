"""The ladder's matchmaker: the next table, chosen to learn the ranking fast while staying fair.

Model. Every bot version has a Gaussian belief N(μ, σ²) about its strength, updated online after
each game by Weng & Lin's (2011) Bayesian approximation with Bradley–Terry full-pair likelihoods
(the update behind openskill): every pair of sides (i, q) contributes a logistic comparison with
c² = σ_i² + σ_q² + 2β², score 1 / ½ / 0 by finishing rank (a tie is half a win), a mean shift
σ_i²/c · (s − p̂) and a variance shrink factor. Internally strengths are natural log-odds with
2β² = 1, so when σ → 0 the model is exactly Bradley–Terry on the Elo scale (P = 1 / (1 + 10^(−d/400)))
and μ is comparable with `arena.ratings`' fits; `rating()` reports 1500 + θ · 400 / ln 10.
A team's strength is its members' *mean* (as in `arena.ratings`), so its variance is Σσ²/n²;
each member shares the team's update in proportion to its σ² (the linear-Gaussian projection of
the team's change onto the member). σ never grows: a bot version never changes. The prior is
N(1500, prior_sigma²). These beliefs steer the matchmaking only: they are order dependent and,
under assortative tables, stretched (a cluster that mostly plays itself drifts together), so
leaderboards should come from `arena.ratings`' fits over the recorded games. The update is
written here rather than taken from the `openskill` package: it is ~40 lines, it must be exactly
reproducible for replay, and it needs the mean-team convention, which openskill does not use.

Strategy ("info"). Each `choose` picks, in order:
1. the format with the largest deficit (weight share × (tables + 1) − its count; ties by index),
   so the mix follows the weights within one table;
2. priority seats: versions still in placement (fewer than `placement_games` tables scheduled and
   σ above `placement_sigma`; at most half the seats), then starved bots (see fairness), most
   starved first;
3. else, when the top meetings (tables of top_k bots by μ as far as the seats allow, however
   chosen) are behind `top_share` of all tables (a deficit rather than a seeded coin, so the
   share holds exactly rather than in expectation), a table among the `top_k` bots by μ,
   deferred while one of them is in a pending table;
4. the remaining seats by expected information: `candidates` tables are sampled around a seed bot
   (a fixed priority bot, else drawn ∝ σ² / (1 + tables)), opponents drawn near the seed's μ
   (spread ~ its σ) with an occasional uniform pick, and scored by `objective`:
   - "doubt" (default): Σ over pairs of sides of P(their order is wrong) = Φ(−|Δμ|/√v) (v with a
     floor, DOUBT_FLOOR, against the beliefs' overconfidence about order) times the
     share vI/(1 + vI) of the difference's variance v that one game of Fisher information
     I = p(1 − p) removes; a side with a bot in the focus weighs (1 + top_focus), since the top
     of a leaderboard is what is read first. The focus is the top_k by μ and their challengers
     (LUCB-like): the next bots whose μ + s reaches the k-th's μ − s, s = √(σ² + floor/2);
   - "variance": the reduction of Σσ² that the Weng–Lin update would make (it does not depend on
     the outcome, so it is exact), which spreads precision evenly instead;
   a team table is scored at its best partnership split. The best wins; ties by the seeded rng.
Seat order: the bot furthest below its share of firsts (Σ 1/seats over its tables) takes
position 0, then the rest likewise; in team formats partners take positions 0 & 2 and 1 & 3.
"random" draws uniform tables and "round_robin" walks every group of the field (in a seeded
affine order of their lexicographic ranks, restarted when the field changes); both are baselines
for the benchmark and skip steps 2–4.

Fairness. Over the last `window` tables (or since it joined, if later) a bot's fair share is
Σ seats / active bots over those tables; it counts as starved when its tables there (pending ones
included) would fall below `min_share` × that share without this table. A bot in a pending table
(chosen but not yet fed back) is not seated again while enough free bots remain.

Determinism. The state is a pure function of the calls made: every random draw comes from a
`random.Random` seeded by (seed, number), iteration follows join order or explicit sorts, and no
clock or global state is read, so replaying a ladder's recorded calls reproduces its choices.
Per-bot state is incremental: `choose` costs O(active bots + candidates × seats²).
"""

from __future__ import annotations

import heapq
import math
import random
from bisect import bisect_left, insort
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb

from arena.errors import ConfigError
from arena.scheduling.round_robin import unrank_combination

STRATEGIES = ("info", "random", "round_robin")

#: Natural log-odds per Elo point: θ = (R − 1500) · ELO.
ELO = math.log(10) / 400
#: Weng–Lin's performance variance, 2β² = 1 in natural units: exact Bradley–Terry as σ → 0.
TWO_BETA2 = 1.0
#: The least factor a variance is multiplied by in one game (Weng–Lin's κ).
KAPPA = 1e-4
#: Variance (natural units) added to a pair's difference when judging its doubt: the online
#: beliefs are overconfident about order (factorised, and stretched by assortative tables), and a
#: floor keeps genuinely close pairs, such as the top's neighbours, in doubt.
DOUBT_FLOOR = 2 * (40.0 * ELO) ** 2
#: Share of opponent draws that ignore the seed's μ (keeps candidates diverse).
UNIFORM_PICK = 0.1


@dataclass(frozen=True)
class Format:
    """One kind of table the ladder plays, and its share of tables."""

    game: str
    seats: int
    weight: float = 1.0
    teams: bool = False  # 4 seats as two partnerships: positions 0 & 2 vs 1 & 3


@dataclass(frozen=True)
class MatchmakingConfig:
    """How the matchmaker chooses tables (see the module docstring)."""

    strategy: str = "info"  # "info", "random" or "round_robin"
    placement_games: int = 8  # a new version is prioritised until it has played this many tables...
    placement_sigma: float = 100.0  # ...or its σ (Elo units) fell below this
    min_share: float = 0.5  # every active bot gets >= min_share × its fair share in every window
    window: int = 100  # tables per fairness window
    top_k: int = 4  # the top bots (by μ) ...
    top_share: float = 0.1  # ... meet each other in at least this share of tables
    candidates: int = 64  # tables scored per choice (bounded work for big fields)
    prior_sigma: float = 200.0  # a new version's σ (Elo): about the spread of a typical field
    objective: str = "doubt"  # "doubt" (pairs whose order is in doubt) or "variance" (Σσ² drop)
    top_focus: float = 1.0  # extra weight of sides with a bot of the top_k or a challenger


@dataclass(frozen=True)
class Choice:
    """A table to play: its number, format index, bots in seat order and why it was chosen."""

    number: int
    format: int
    bots: tuple[str, ...]
    reason: str  # "placement", "starved", "top", "info", "random", "round_robin"


@dataclass(frozen=True)
class TableResult:
    """A finished table: per game, each position's finishing rank (1 best; ties and teams equal)."""

    number: int
    format: int
    bots: tuple[str, ...]
    games: tuple[tuple[int, ...], ...]


class _Bot:
    """One version's rating and counters (all incremental)."""

    __slots__ = ("name", "mu", "var", "scheduled", "finished", "pending", "first", "due_first",
                 "active", "joined", "recent")

    def __init__(self, name: str, prior_sigma: float) -> None:
        self.name = name
        self.mu = 0.0
        self.var = (prior_sigma * ELO) ** 2
        self.scheduled = 0
        self.finished = 0
        self.pending = 0
        self.first = 0  # tables at position 0
        self.due_first = 0.0  # Σ 1 / seats over its tables: its pro-rata share of firsts
        self.active = False
        self.joined = 0  # the table index it (last) joined at
        self.recent: deque[int] = deque()  # indices of its scheduled tables in the window


def side_positions(fmt: Format) -> list[tuple[int, ...]]:
    """The positions of each side of a table of `fmt` (partners together in team formats)."""
    if fmt.teams:
        return [(0, 2), (1, 3)]
    return [(p,) for p in range(fmt.seats)]


def _side_stats(sides: Sequence[Sequence[_Bot]]) -> tuple[list[float], list[float], list[float]]:
    """Each side's mean μ, its variance (Σσ²/n²) and its members' Σσ²."""
    mus, vars_, totals = [], [], []
    for side in sides:
        n = len(side)
        total = sum(b.var for b in side)
        mus.append(sum(b.mu for b in side) / n)
        vars_.append(total / (n * n))
        totals.append(total)
    return mus, vars_, totals


def _pair_terms(mus: list[float], vars_: list[float], scores: list[list[float]] | None):
    """Weng–Lin full-pair Ω (mean shift) and Δ (variance shrink) of every side."""
    n = len(mus)
    omega = [0.0] * n
    delta = [0.0] * n
    for i in range(n):
        for q in range(i + 1, n):
            c2 = vars_[i] + vars_[q] + TWO_BETA2
            c = math.sqrt(c2)
            p = 1.0 / (1.0 + math.exp((mus[q] - mus[i]) / c))  # P(i ahead of q)
            pq = p * (1.0 - p)
            if scores is not None:
                s = scores[i][q]
                omega[i] += vars_[i] / c * (s - p)
                omega[q] += vars_[q] / c * (p - s)
            delta[i] += math.sqrt(vars_[i]) / c * vars_[i] / c2 * pq
            delta[q] += math.sqrt(vars_[q]) / c * vars_[q] / c2 * pq
    return omega, delta


def expected_gain(sides: Sequence[Sequence[_Bot]]) -> float:
    """The reduction of Σσ² (natural units) one game of these sides makes under Weng–Lin."""
    mus, vars_, totals = _side_stats(sides)
    _, delta = _pair_terms(mus, vars_, None)
    gain = 0.0
    for side, d, total in zip(sides, delta, totals):
        for b in side:
            gain += b.var * min(b.var / total * d, 1.0 - KAPPA)
    return gain


def doubt_gain(sides: Sequence[Sequence[_Bot]], focus: frozenset[str], boost: float) -> float:
    """Σ over pairs of sides of P(their order is wrong) × the share of that doubt one game removes.

    P(order wrong) = Φ(−|Δμ| / √v) with v the variance of the difference; one comparison of
    Fisher information I = p(1 − p) removes the share vI / (1 + vI) of v. A side with a member
    in `focus` (the top of the table) weighs 1 + boost.
    """
    mus, vars_, _ = _side_stats(sides)
    weights = [1.0 + boost if any(b.name in focus for b in side) else 1.0 for side in sides]
    gain = 0.0
    n = len(sides)
    for i in range(n):
        for q in range(i + 1, n):
            v = vars_[i] + vars_[q] + DOUBT_FLOOR
            d = mus[i] - mus[q]
            p = 1.0 / (1.0 + math.exp(-d / math.sqrt(v + TWO_BETA2)))
            info = v * p * (1.0 - p)
            gain += 0.5 * math.erfc(abs(d) / math.sqrt(2.0 * v)) * info / (1.0 + info) \
                * weights[i] * weights[q]
    return gain


def update(sides: Sequence[Sequence[_Bot]], ranks: Sequence[int]) -> None:
    """Apply one game's Weng–Lin update (ranks per side, 1 best, equal = tie) in place."""
    n = len(sides)
    if n < 2:
        return
    scores = [[1.0 if ranks[i] < ranks[q] else 0.5 if ranks[i] == ranks[q] else 0.0
               for q in range(n)] for i in range(n)]
    mus, vars_, totals = _side_stats(sides)
    omega, delta = _pair_terms(mus, vars_, scores)
    for side, om, d, total in zip(sides, omega, delta, totals):
        size = len(side)
        for b in side:
            share = b.var / total
            # The member's share of the team mean's shift (the team mean moves by Ω; the member
            # by Cov/Var · Ω = n σ_j² / Σσ² · Ω) and of its variance reduction.
            b.mu += size * share * om
            b.var *= max(1.0 - share * d, KAPPA)


def _placing_key(b: _Bot) -> tuple:
    return b.scheduled, b.joined, b.name


class Matchmaker:
    """Chooses the ladder's tables one at a time and keeps online ratings (see module docstring)."""

    def __init__(self, formats: Sequence[Format], config: MatchmakingConfig, seed: int) -> None:
        if not formats:
            raise ConfigError("the ladder needs at least one format")
        for f in formats:
            if not 2 <= f.seats <= 4:
                raise ConfigError(f"format {f.game!r}: seats must be 2-4, got {f.seats}")
            if f.teams and f.seats != 4:
                raise ConfigError(f"format {f.game!r}: teams need 4 seats, got {f.seats}")
            if not f.weight > 0:
                raise ConfigError(f"format {f.game!r}: weight must be positive, got {f.weight}")
        if config.strategy not in STRATEGIES:
            raise ConfigError(f"unknown matchmaking strategy {config.strategy!r} "
                              f"(choose {', '.join(STRATEGIES)})")
        if config.objective not in ("doubt", "variance"):
            raise ConfigError(f"unknown matchmaking objective {config.objective!r} "
                              "(choose doubt or variance)")
        if config.window < 1 or config.candidates < 1:
            raise ConfigError("window and candidates must be at least 1")
        self.formats = tuple(formats)
        self.config = config
        self.seed = seed
        total = sum(f.weight for f in formats)
        self._shares = [f.weight / total for f in formats]
        self._bots: dict[str, _Bot] = {}
        self._active: dict[str, _Bot] = {}  # join order
        self._tables = 0  # tables chosen so far
        self._format_counts = [0] * len(formats)
        self._top_tables = 0
        self._reasons: Counter[str] = Counter()
        self._pending: dict[int, tuple[str, ...]] = {}
        # Cumulative fair share Σ seats / active over tables 0..t-1, for the last window + 1 t's.
        self._cum: deque[float] = deque([0.0], maxlen=config.window + 1)
        self._focus: frozenset[str] = frozenset()  # the top_k and challengers, for doubt_gain
        self._by_mu: list[_Bot] = []  # this choice's best active bots by μ (2 top_k + 2 of them)
        self._top: frozenset[str] = frozenset()  # and the top_k of them
        self._rr: dict[int, list] = {}  # round robin: format -> [field, next rank, a, b, size]
        # Bots that may still be in placement: leaving it is for good (`scheduled` only grows,
        # σ never does), so those that left are dropped and a choice scans only the rest.
        self._may_place: dict[str, _Bot] = {}
        # (−μ, name) of every active bot, sorted: the order `sorted(active, key=(−μ, name))`
        # gives, kept up to date on join, retire and each result instead of sorted per choice.
        self._mu_order: list[tuple[float, str]] = []
        # The fairness window, kept as tables come and go rather than recounted over the field
        # at every choice (see _settle): an active bot that joined at or before the window's
        # start ("settled") sits in _buckets under its count of tables in the window, sorted by
        # (joined, name); one that joined inside the window is in _young.
        self._buckets: dict[int, list[tuple[int, str]]] = {}
        self._bucket_of: dict[str, int] = {}
        self._young: dict[str, _Bot] = {}
        self._in_window: deque[tuple[int, tuple[str, ...]]] = deque()  # (index, bots) per table

    # -- the field ---------------------------------------------------------------------------

    def _bot(self, name: str) -> _Bot:
        """The state of `name`, created with the prior if it is new."""
        bot = self._bots.get(name)
        if bot is None:
            bot = self._bots[name] = _Bot(name, self.config.prior_sigma)
            self._may_place[name] = bot
        return bot

    def join(self, bot: str) -> None:
        """Make a version active (idempotent); a rejoin restarts its fairness window."""
        b = self._bot(bot)
        if not b.active:
            b.active = True
            b.joined = self._tables
            b.recent.clear()
            self._active[bot] = b
            insort(self._mu_order, (-b.mu, bot))
            self._young[bot] = b  # settled by _settle once the window starts at or after it

    def retire(self, bot: str) -> None:
        """Stop giving `bot` tables; its results stay in the ratings."""
        b = self._bots.get(bot)
        if b is not None and b.active:
            b.active = False
            del self._active[bot]
            self._unorder(b)
            if self._young.pop(bot, None) is None:
                self._unbucket(bot)

    def rating(self, bot: str) -> tuple[float, float]:
        """(μ, σ) of `bot` on the Elo scale (the prior 1500 ± prior_sigma if it has no results)."""
        b = self._bots.get(bot) or _Bot(bot, self.config.prior_sigma)
        return 1500.0 + b.mu / ELO, math.sqrt(b.var) / ELO

    # -- results -----------------------------------------------------------------------------

    def add_result(self, result: TableResult) -> None:
        """Update the ratings from a finished table's games and release its pending seats."""
        bots = self._pending.pop(result.number, None)
        if bots is not None:
            for name in bots:
                self._bots[name].pending -= 1
        fmt = self.formats[result.format]
        members = [self._bot(name) for name in result.bots]
        sides = [[members[p] for p in side] for side in side_positions(fmt)]
        for game in result.games:
            if len(game) != len(members):
                raise ValueError(f"table {result.number}: a game has {len(game)} ranks "
                                 f"for {len(members)} bots")
        ordered = [b for b in members if b.active]
        for b in ordered:
            self._unorder(b)
        for game in result.games:
            update(sides, [game[side[0]] for side in side_positions(fmt)])
        for b in ordered:
            insort(self._mu_order, (-b.mu, b.name))
        for b in members:
            b.finished += 1

    def _unorder(self, b: _Bot) -> None:
        """Take an active bot's entry out of _mu_order (before its μ changes, or it retires)."""
        i = bisect_left(self._mu_order, (-b.mu, b.name))
        del self._mu_order[i]

    # -- fairness ----------------------------------------------------------------------------

    def _window_counts(self, b: _Bot) -> tuple[int, float]:
        """`b`'s tables among the window's earlier tables and its fair share of those tables."""
        start = self._tables + 1 - self.config.window
        while b.recent and b.recent[0] < start:
            b.recent.popleft()
        since = max(start, b.joined)
        # _cum holds the cumulative shares of tables T-len+1..T; this table's is added by callers.
        cum = self._cum
        base = cum[since - (self._tables - len(cum) + 1)]
        return len(b.recent), cum[-1] - base

    def _bucket(self, b: _Bot, count: int) -> None:
        insort(self._buckets.setdefault(count, []), (b.joined, b.name))
        self._bucket_of[b.name] = count

    def _unbucket(self, name: str) -> None:
        count = self._bucket_of.pop(name, None)
        if count is None:
            return
        bucket = self._buckets[count]
        del bucket[bisect_left(bucket, (self._bots[name].joined, name))]
        if not bucket:
            del self._buckets[count]

    def _settle(self, start: int) -> None:
        """Bring the buckets to a window starting at table `start`: the tables before it leave
        (their bots' counts drop), and young bots that joined at or before it settle."""
        window = self._in_window
        while window and window[0][0] < start:
            for name in window.popleft()[1]:
                b = self._bots[name]
                count = self._bucket_of.get(name)
                if count is None:
                    continue  # young or inactive: counted directly, or not at all
                recent = b.recent
                while recent and recent[0] < start:
                    recent.popleft()
                if len(recent) != count:
                    self._unbucket(name)
                    self._bucket(b, len(recent))
        for name in [n for n, b in self._young.items() if b.joined <= start]:
            b = self._young.pop(name)
            recent = b.recent
            while recent and recent[0] < start:
                recent.popleft()
            self._bucket(b, len(recent))

    def _starved(self, free: list[_Bot], seats: int, limit: int | None = None) -> list[_Bot]:
        """Free bots whose window share would fall below min_share × fair, most starved first
        (the first `limit` of them only, when given).

        With `limit`, from the window kept by _settle: a settled bot's lack is the same
        expression of its count alone (its fair share runs from the window's start), so they
        come in (count, joined, name) order from the buckets, the least count first, and only
        the first `limit` of them in the pool are looked at; young bots are computed one by
        one, as all bots are without `limit` (the order and the floats are the same).
        """
        if limit is not None:
            return self._starved_head(free, seats, limit)
        extra = seats / len(self._active)
        start = self._tables + 1 - self.config.window
        cum = self._cum
        last = cum[-1]
        offset = self._tables - len(cum) + 1
        share = self.config.min_share
        out = []
        for b in free:
            recent = b.recent
            while recent and recent[0] < start:
                recent.popleft()
            joined = b.joined
            # As _window_counts: fair = cum[-1] − the cumulative share at max(start, joined).
            lack = share * ((last - cum[(start if start > joined else joined) - offset]) + extra) \
                - len(recent)
            if lack > 1e-9:
                out.append((-lack, joined, b.name, b))
        # Ordered by (−lack, joined, name): compared as whole tuples, which never reaches the bot
        # (names are distinct).
        out.sort()
        return [t[3] for t in out]

    def _starved_head(self, pool: list[_Bot], seats: int, limit: int) -> list[_Bot]:
        """The first `limit` of _starved(pool, seats), from the buckets (see _starved)."""
        extra = seats / len(self._active)
        start = self._tables + 1 - self.config.window
        self._settle(start)
        cum = self._cum
        last = cum[-1]
        offset = self._tables - len(cum) + 1
        share = self.config.min_share
        everyone = len(pool) == len(self._active)  # else the pool is the free bots
        out = []
        # Young bots, as _starved computes every bot.
        for b in self._young.values():
            if not everyone and b.pending:
                continue
            recent = b.recent
            while recent and recent[0] < start:
                recent.popleft()
            joined = b.joined
            lack = share * ((last - cum[(start if start > joined else joined) - offset]) + extra) \
                - len(recent)
            if lack > 1e-9:
                out.append((-lack, joined, b.name, b))
        # Settled bots: since = start for all of them, so lack = head − count, the same floats
        # (there are none while the window reaches back before table 0).
        head = share * ((last - cum[start - offset]) + extra) if self._buckets else 0.0
        taken = 0
        for count in sorted(self._buckets):
            lack = head - count
            if not lack > 1e-9 or taken >= limit:
                break  # a larger count lacks less
            for joined, name in self._buckets[count]:
                b = self._bots[name]
                if not everyone and b.pending:
                    continue
                out.append((-lack, joined, name, b))
                taken += 1
                if taken >= limit:
                    break
        return [t[3] for t in heapq.nsmallest(limit, out)]

    def _placing(self, b: _Bot) -> bool:
        """Whether `b` is still in placement."""
        return (b.scheduled < self.config.placement_games
                and math.sqrt(b.var) / ELO > self.config.placement_sigma)

    # -- choosing ----------------------------------------------------------------------------

    def _pick_format(self) -> int | None:
        """The playable format with the largest deficit (ties: lowest index)."""
        best, best_deficit = None, -math.inf
        for i, f in enumerate(self.formats):
            if f.seats > len(self._active):
                continue
            deficit = self._shares[i] * (self._tables + 1) - self._format_counts[i]
            if deficit > best_deficit + 1e-12:
                best, best_deficit = i, deficit
        return best

    def choose(self, number: int) -> Choice | None:
        """The next table (counted as scheduled and pending), or None if no format can be filled."""
        fi = self._pick_format()
        if fi is None:
            return None
        fmt = self.formats[fi]
        rng = random.Random(f"arena-matchmaking:{self.seed}:{number}")
        active = list(self._active.values())
        free = [b for b in active if b.pending == 0]
        # Seat busy bots only when the free ones cannot fill the table.
        pool = free if len(free) >= fmt.seats else active
        strategy = self.config.strategy
        # Only the head is read (top_k and the challengers after them), from the active bots
        # kept in (−μ, name) order as results come (see _mu_order).
        self._by_mu = [self._active[name] for _, name in
                       self._mu_order[:2 * self.config.top_k + 2]]
        self._top = frozenset(b.name for b in self._by_mu[:self.config.top_k])
        if strategy == "random":
            group, reason = rng.sample(pool, fmt.seats), "random"
        elif strategy == "round_robin":
            group, reason = self._round_robin(fi, fmt), "round_robin"
        else:
            group, reason = self._info_table(fmt, pool, rng)
        # A top meeting is a table filled with top_k bots as far as its seats allow, whatever
        # chose it (then all of them meet at 4 seats, and pairs of them at 2).
        if sum(b.name in self._top for b in group) >= min(fmt.seats, len(self._top)):
            self._top_tables += 1
        bots = self._seat(fmt, group, rng)
        self._commit(number, fi, fmt, bots, reason)
        return Choice(number, fi, tuple(b.name for b in bots), reason)

    def _info_table(self, fmt: Format, pool: list[_Bot], rng: random.Random):
        """Priority seats, then a top table, then the most informative candidate."""
        cfg = self.config
        seats = fmt.seats
        fixed: list[_Bot] = []
        by_mu = self._by_mu
        self._focus = self._challengers(by_mu)
        games, sigma = cfg.placement_games, cfg.placement_sigma
        may = self._may_place
        for name in [n for n, b in may.items()
                     if not (b.scheduled < games and math.sqrt(b.var) / ELO > sigma)]:
            del may[name]  # the test is _placing's, inlined
        # The pool's bots in placement: the pool is every active bot, or the free ones.
        everyone = len(pool) == len(self._active)
        placing = heapq.nsmallest(  # = sorted(...)[:n]: the keys are distinct
            max(1, seats // 2),
            (b for b in may.values() if b.active and (everyone or b.pending == 0)),
            key=_placing_key)
        fixed.extend(placing)
        reason = "placement" if fixed else ""
        if len(fixed) < seats:
            # The first `seats` suffice: at most len(fixed) of them are dropped here.
            starved = [b for b in self._starved(pool, seats, limit=seats) if b not in fixed]
            if starved and not reason:
                reason = "starved"
            fixed.extend(starved[:seats - len(fixed)])
        if not fixed and cfg.top_k >= 2 and cfg.top_share > 0 \
                and self._top_tables < cfg.top_share * (self._tables + 1):
            top = by_mu[:cfg.top_k]
            in_pool = {b.name for b in pool}
            # A busy top bot defers the top table: the deficit brings it back once it is free.
            if all(b.name in in_pool for b in top):
                if len(top) >= seats:
                    return self._best(fmt, [list(c) for c in combinations(top, seats)],
                                      rng), "top"
                fixed, reason = list(top), "top"
        if len(fixed) >= seats:
            return self._best(fmt, [fixed[:seats]], rng), reason
        return self._best(fmt, self._candidates(fmt, pool, fixed, rng), rng), reason or "info"

    def _challengers(self, by_mu: list[_Bot]) -> frozenset[str]:
        """The top_k by μ and every bot whose optimistic μ reaches the k-th's pessimistic one."""
        k = self.config.top_k
        if len(by_mu) <= k:
            return frozenset(b.name for b in by_mu)
        edge = by_mu[k - 1]
        bar = edge.mu - math.sqrt(edge.var + DOUBT_FLOOR / 2)
        out = [b.name for b in by_mu[:k]]
        for b in by_mu[k:2 * k + 2]:
            if b.mu + math.sqrt(b.var + DOUBT_FLOOR / 2) >= bar:
                out.append(b.name)
        return frozenset(out)

    def _candidates(self, fmt: Format, pool: list[_Bot], fixed: list[_Bot],
                    rng: random.Random) -> list[list[_Bot]]:
        """Up to `candidates` distinct tables around a seed bot (fixed, or drawn ∝ σ²/(1+tables))."""
        seats = fmt.seats
        ordered = sorted(pool, key=lambda b: (b.mu, b.name))
        mus = [b.mu for b in ordered]
        cum, total = [], 0.0
        for b in pool:
            total += b.var / (1 + b.scheduled)
            cum.append(total)
        seen, out = set(), []
        for _ in range(self.config.candidates):
            table = list(fixed)
            if not table:
                table.append(pool[min(bisect_left(cum, rng.random() * total), len(pool) - 1)])
            seed = table[0]
            spread = math.sqrt(seed.var + TWO_BETA2)
            while len(table) < seats:
                if rng.random() < UNIFORM_PICK:
                    pick = ordered[rng.randrange(len(ordered))]
                    if pick in table:
                        continue
                else:
                    pick = self._nearest(ordered, mus, seed.mu + rng.gauss(0.0, spread), table)
                table.append(pick)
            key = frozenset(b.name for b in table)
            if key not in seen:
                seen.add(key)
                out.append(table)
        return out

    @staticmethod
    def _nearest(ordered: list[_Bot], mus: list[float], target: float,
                 taken: list[_Bot]) -> _Bot:
        """The bot nearest `target` in μ that is not in `taken`."""
        hi = bisect_left(mus, target)
        lo = hi - 1
        while True:
            # Step towards whichever side is closer to the target.
            if hi < len(ordered) and (lo < 0 or mus[hi] - target <= target - mus[lo]):
                b, hi = ordered[hi], hi + 1
            else:
                b, lo = ordered[lo], lo - 1
            if b not in taken:
                return b

    def _best(self, fmt: Format, tables: list[list[_Bot]], rng: random.Random) -> list[_Bot]:
        """The candidate (in team formats: the partnership split) with the highest expected gain."""
        best, best_key = None, None
        for table in tables:
            if fmt.teams:
                a, b, c, d = table
                options = [[a, c, b, d], [a, b, c, d], [a, b, d, c]]  # partners at 0 & 2
            else:
                options = [table]
            for option in options:
                sides = [[option[p] for p in side] for side in side_positions(fmt)]
                key = (self._gain(sides), rng.random())
                if best_key is None or key > best_key:
                    best, best_key = option, key
        return best

    def _gain(self, sides: list[list[_Bot]]) -> float:
        """The configured objective's value of one game of these sides."""
        if self.config.objective == "variance":
            return expected_gain(sides)
        return doubt_gain(sides, self._focus, self.config.top_focus)

    def _round_robin(self, fi: int, fmt: Format) -> list[_Bot]:
        """The next group of the current round-robin cycle of format `fi` (restarted on changes)."""
        names = tuple(self._active)
        state = self._rr.get(fi)
        if state is None or state[0] != names or state[1] >= state[4]:
            size = comb(len(names), fmt.seats)
            # An affine permutation of the ranks: every group once per cycle, well mixed,
            # with nothing of size C(N, seats) built.
            a = self._coprime(size, 1 + (self.seed * 7919 + len(names) * 104729) % max(size, 1))
            state = self._rr[fi] = [names, 0, a, self.seed % max(size, 1), size]
        _, k, a, b, size = state
        state[1] += 1
        group = unrank_combination(len(names), fmt.seats, (a * k + b) % size)
        return [self._active[names[i]] for i in group]

    @staticmethod
    def _coprime(n: int, start: int) -> int:
        """The first number from `start` that is coprime with n and not 1 (unless n is tiny)."""
        if n <= 2:
            return 1
        a = max(2, start % n)
        while math.gcd(a, n) != 1:
            a = a % (n - 1) + 1
        return a

    def _seat(self, fmt: Format, group: list[_Bot], rng: random.Random) -> list[_Bot]:
        """Seat order: furthest below its share of firsts first; team partners (0&2, 1&3) kept."""
        keys = {b.name: (b.first - b.due_first, rng.random()) for b in group}
        if not fmt.teams:
            return sorted(group, key=lambda b: keys[b.name])
        team_a = sorted((group[0], group[2]), key=lambda b: keys[b.name])
        team_b = sorted((group[1], group[3]), key=lambda b: keys[b.name])
        if keys[team_b[0].name] < keys[team_a[0].name]:
            team_a, team_b = team_b, team_a
        return [team_a[0], team_b[0], team_a[1], team_b[1]]

    def _commit(self, number: int, fi: int, fmt: Format, bots: list[_Bot], reason: str) -> None:
        """Count the table as scheduled and pending."""
        index = self._tables
        for b in bots:
            b.scheduled += 1
            b.pending += 1
            b.recent.append(index)
            b.due_first += 1 / fmt.seats
            count = self._bucket_of.get(b.name)
            if count is not None:
                self._unbucket(b.name)
                self._bucket(b, count + 1)
        self._in_window.append((index, tuple(b.name for b in bots)))
        bots[0].first += 1
        self._pending[number] = tuple(b.name for b in bots)
        self._format_counts[fi] += 1
        self._reasons[reason] += 1
        self._cum.append(self._cum[-1] + fmt.seats / len(self._active))
        self._tables += 1

    # -- reporting ---------------------------------------------------------------------------

    def stats(self) -> dict:
        """Counters per bot (tables, window share, placement) and per format, and reasons."""
        bots = {}
        for name, b in self._bots.items():
            mu, sigma = self.rating(name)
            bots[name] = {"scheduled": b.scheduled, "finished": b.finished, "pending": b.pending,
                          "placed": not self._placing(b), "active": b.active, "first": b.first,
                          "mu": mu, "sigma": sigma}
        return {"tables": self._tables, "formats": list(self._format_counts),
                "top_tables": self._top_tables, "reasons": dict(self._reasons),
                "pending": len(self._pending), "bots": bots}

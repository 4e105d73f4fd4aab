"""`arena bot check`: play a bot against the random bot in every game and seat count it claims.

Each (game, seat count) is one match of real games with the tournament's time limits, the bot in
every seat in turn. Every forfeit it causes becomes a problem in plain words, with its evidence and
the tail of its stderr; the report also gives the median and worst time the bot took per move.
"""

from __future__ import annotations

import signal
import statistics
import threading
import time as _time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from arena.config import TimeConfig
from arena.errors import ConfigError
from arena.failures import Termination
from arena.games import game_names, get_game
from arena.match import GamePlan, MatchSpec, run_match
from arena.players.base import BotSpec, random_bot
from arena.players.process import STALE_NOTE
from arena.protocol import TimeControl

DEFAULT_DEALS = 2  # deals per (game, seats); each deal is played once with the bot in every seat
STDERR_LINES = 12  # lines of the bot's stderr shown with a problem
EVIDENCE_KEEP = 300  # characters of evidence shown per problem
SLOW_SHARE = 0.5  # a move slower than this share of the limit earns a warning (load adds noise)

# What each forfeit reason means for the bot's author.
_WORDS = {
    Termination.STARTUP_FAILURE.value: "handshake failed: the bot must answer `hello` with "
    "{{\"type\":\"ready\",\"name\":…,\"version\":…}} within {startup} ms",
    Termination.TIMEOUT.value: "timeout: no `action` within the move time of {move} ms, or "
    "the bot stopped reading its stdin (a message it did not take in that time)",
    Termination.CRASH.value: "crash: the bot exited or closed its stdout during the game",
    Termination.BAD_MESSAGE.value: "bad message: a line that is not a valid arena/2 message "
    "(not JSON, not an object, an unknown type, a missing field, or an answer to a request "
    "never sent)",
    Termination.ILLEGAL_ACTION.value: "illegal action: the answer is not one of `legal_actions` "
    "(send one element back unchanged)",
}


@dataclass
class Problem:
    """One thing the bot did wrong in one (game, seats) match."""

    game: str
    seats: int
    reason: str
    words: str
    detail: str
    evidence: str
    game_id: str


@dataclass
class Combo:
    """The outcome of one (game, seats) match."""

    game: str
    seats: int
    games: int
    clean_games: int
    moves: int
    seconds: float


@dataclass
class CheckReport:
    """The whole check: per-combination results, problems, move times, the stderr tail."""

    bot: str
    combos: list[Combo] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    move_ms: list[float] = field(default_factory=list)
    stderr_tail: str = ""
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """True when every game was played to its end without a fault of the bot."""
        return not self.problems and bool(self.combos)

    @property
    def median_ms(self) -> float | None:
        """Median time per move of the bot (runner-measured, ms)."""
        return statistics.median(self.move_ms) if self.move_ms else None

    @property
    def worst_ms(self) -> float | None:
        """The slowest move of the bot (ms)."""
        return max(self.move_ms) if self.move_ms else None


class CheckStopped(KeyboardInterrupt):
    """SIGTERM or SIGINT stopped a check; `signum` says which.

    A KeyboardInterrupt because asyncio passes only those (and SystemExit) out of its tasks: the
    match then unwinds like on Ctrl-C, and closing its players stops every bot it started.
    """

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, the first SIGTERM or SIGINT raises CheckStopped; later ones are ignored
    while the bots are stopped. Does nothing outside the main thread.

    The handler must be explicit: as the first process of a PID namespace (a container without an
    init, `unshare --pid --fork`) the kernel drops every signal that has no handler, which is why
    a check waiting on a stuck bot used to ignore SIGTERM.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopping = []

    def handler(signum, frame):
        if not stopping:
            stopping.append(signum)
            raise CheckStopped(signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def combinations(claimed: list[str], game: str | None = None) -> list[tuple[str, int]]:
    """The (game, seats) pairs to check: the claimed games (all when none), each seat count."""
    games = [game] if game else (list(claimed) or game_names())
    if game and claimed and game not in claimed:
        raise ConfigError(f"the bot's manifest does not list {game} "
                          f"(it lists: {', '.join(claimed)})")
    for g in games:
        get_game(g)  # an unknown game is a ConfigError naming the known ones
    return [(g, n) for g in games for n in get_game(g).game_type.seat_counts]


def check_bot(spec: BotSpec, claimed: list[str], game: str | None = None,
              time: TimeControl | None = None, deals: int = DEFAULT_DEALS,
              seed: int = 1, expected: tuple[str, str] | None = None) -> CheckReport:
    """Play `spec` against the random bot in every claimed game and seat count; report problems.

    `expected`: the manifest's (name, version); a `ready` that names another is warned about once.
    """
    defaults = TimeConfig()
    time = time or TimeControl(startup_ms=defaults.startup_ms, move_ms=defaults.move_ms)
    report = CheckReport(spec.name)
    started = _time.perf_counter()
    logs: list[str] = []
    for game_name, seats in combinations(claimed, game):
        opponents = tuple(
            random_bot(_opponent_name(spec.name, i), seed=seed + i) for i in range(1, seats))
        plans = tuple(
            GamePlan(game_id=f"check-{game_name}-{seats}p-d{deal}-s{rot}", ordinal=k, deal=deal,
                     rotation=rot, seed=seed * 1000 + deal,
                     # Seat `rot` holds the bot (index 0); the random bots fill the others.
                     seating=tuple((s - rot) % seats for s in range(seats)))
            for k, (deal, rot) in enumerate((d, r) for d in range(deals) for r in range(seats)))
        # One failure ends the match: the rest would repeat it, each costing a full timeout.
        match = MatchSpec(match_id=f"check-{game_name}-{seats}p", game=game_name, options={},
                          bots=(spec, *opponents), games=plans, time=time, max_failures=1)
        t0 = _time.perf_counter()
        result = run_match(match)
        said = (getattr(result, "ready", None) or {}).get(spec.name)
        if expected is not None and said is not None:
            from arena.tournament import ready_mismatch

            mismatch = ready_mismatch(expected, tuple(said))
            expected = None  # once: every match of the check would say the same
            if mismatch:
                report.warnings.append(mismatch)
        clean = moves = 0
        for g in result.games:
            seat = g.seats.index(spec.name)
            mine = [m.ms for m in g.moves if m.seat == seat]
            moves += len(mine)
            report.move_ms.extend(mine)
            if g.termination == Termination.NORMAL.value:
                clean += 1
            elif g.culprit == seat and g.termination != Termination.FAILURE_BUDGET.value:
                words = _WORDS.get(g.termination, g.termination).format(
                    startup=time.startup_ms, move=time.move_ms)
                report.problems.append(Problem(game_name, seats, g.termination, words, g.detail,
                                               (g.evidence or "")[:EVIDENCE_KEEP], g.game_id))
            elif g.culprit is not None and g.culprit != seat:
                report.problems.append(Problem(
                    game_name, seats, "opponent", "the random opponent failed (not this bot's "
                    "fault; the check cannot vouch for this game)", g.detail,
                    (g.evidence or "")[:EVIDENCE_KEEP], g.game_id))
        stale = (result.logs.get(spec.name) or "").count(STALE_NOTE)
        if stale:
            report.problems.append(Problem(
                game_name, seats, "stale_answer", f"late answers: {stale} action(s) answered a "
                "request that had already timed out or been answered (never applied; answer each "
                "`act` once, with its own request_id)", "", "", ""))
        report.combos.append(Combo(game_name, seats, len(result.games), clean, moves,
                                   _time.perf_counter() - t0))
        if result.logs.get(spec.name):
            logs.append(result.logs[spec.name])
    report.stderr_tail = "\n".join("".join(logs).rstrip("\n").splitlines()[-STDERR_LINES:])
    if report.move_ms and report.worst_ms > SLOW_SHARE * time.move_ms:
        # Not a failure yet, but a loaded tournament machine may turn it into a timeout.
        report.warnings.append(
            f"the slowest move took {report.worst_ms:.0f} ms, over {SLOW_SHARE:.0%} of the "
            f"{time.move_ms} ms limit")
    report.seconds = _time.perf_counter() - started
    return report


def _opponent_name(name: str, i: int) -> str:
    # Names key a match's logs: the random opponents must never share the checked bot's name.
    base = f"random-{i}"
    return base if base != name else f"random-opponent-{i}"


def resolve_target(target: str, db: Path | None,
                   sandbox: str | None = None) -> tuple[BotSpec, list[str], tuple[str, str]]:
    """`NAME[@V]` in the registry of `db`, or a folder/manifest PATH: its BotSpec, games and the
    (name, version) its manifest gives."""
    from arena.players.launch import SANDBOXES
    from arena.registry import Registry, manifest_spec

    # Checked here, before any bot starts: the launcher's own check is a ValueError mid-match.
    if sandbox is not None and sandbox not in SANDBOXES:
        raise ConfigError(f"unknown sandbox {sandbox!r} (choose {', '.join(SANDBOXES)})")
    path = Path(target)
    if path.exists():
        spec, manifest = manifest_spec(path, sandbox)
        return spec, list(manifest.games), (manifest.name, manifest.version)
    if db is None or not Path(db).exists():
        raise ConfigError(f"{target!r} is neither a bot folder nor a manifest, and there is no "
                          f"database {db} to look it up in")
    registry = Registry(db)
    version = registry.lookup(target)
    return (registry.spec(version, sandbox=sandbox), list(version.games),
            registry.manifest_ref(version))

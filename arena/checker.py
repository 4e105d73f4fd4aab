"""`arena bot check`: play a bot against the random bot in every game, seat count and option set
that changes what it is sent.

Each (game, seat count, option set) is one match of real games with the tournament's time limits,
the bot in every seat in turn. The option sets are the defaults and each value of each option a game
declares in `GameType.protocol_options` (Crossfire's open rows, Battlefield Cribbage's teams), where
the seat count allows it; `-o key=value` checks one set instead. Every forfeit the bot causes becomes
a problem in plain words, with its evidence and the usual mistake behind it (arena.hints); the report
also gives the median and worst time per move (a timed-out move counts at least its deadline), the
games a match's failure budget left unplayed, and the bot's stderr: its size, last lines and
warnings, clean or not.
"""

from __future__ import annotations

import json
import re
import signal
import statistics
import threading
import time as _time
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import Any

from arena.config import TimeConfig
from arena.errors import ConfigError, GameOptionsError
from arena.failures import Termination
from arena.games import game_names, get_game, new_game
from arena.games.base import parse_options
from arena.hints import hint, stderr_size, stderr_warnings
from arena.match import GamePlan, MatchSpec, run_match
from arena.players.base import BotSpec, random_bot
from arena.players.process import STALE_NOTE
from arena.protocol import TimeControl

DEFAULT_DEALS = 2  # deals per (game, seats); each deal is played once with the bot in every seat
STDERR_LINES = 12  # last lines of the bot's stderr shown
EVIDENCE_KEEP = 300  # characters of evidence shown per problem
SLOW_SHARE = 0.5  # a move slower than this share of the limit earns a warning (load adds noise)
# A timeout's evidence says how long the runner waited: that is the move's time.
_WAITED = re.compile(r"no answer in (\d+) ms")

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
    options: dict = field(default_factory=dict)
    hint: str = ""  # the usual mistake behind it (arena.hints), when one fits


@dataclass
class Combo:
    """The outcome of one (game, seats, option set) match."""

    game: str
    seats: int
    games: int
    clean_games: int
    moves: int
    seconds: float
    options: dict = field(default_factory=dict)
    not_played: int = 0  # games the failure budget left unplayed after the bot's first failure
    timeouts: int = 0  # moves of the bot that timed out

    @property
    def label(self) -> str:
        """`crossfire with 2 seats, open_rows=true`."""
        return f"{self.game} with {self.seats} seats" + (
            f", {options_label(self.options)}" if self.options else "")


@dataclass
class CheckReport:
    """The whole check: per-combination results, problems, move times, the stderr tail."""

    bot: str
    combos: list[Combo] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    move_ms: list[float] = field(default_factory=list)  # timed-out moves count their wait
    stderr_tail: str = ""
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    stderr_bytes: int = 0
    # Lines of the bot's stderr that look like warnings or errors, with how often each came.
    stderr_warnings: list[tuple[str, int]] = field(default_factory=list)
    attempts: int = 1  # checks played: more when only the random opponents failed (check_vouched)

    @property
    def opponents_only(self) -> bool:
        """True when it failed and every problem is a random opponent's, none the bot's."""
        return bool(self.problems) and all(p.reason == "opponent" for p in self.problems)

    @property
    def timeouts(self) -> int:
        """Moves of the bot that timed out."""
        return sum(c.timeouts for c in self.combos)

    @property
    def not_played(self) -> int:
        """Games not played because a match's failure budget ran out."""
        return sum(c.not_played for c in self.combos)

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


def options_label(options: dict) -> str:
    """`open_rows=true, target=61`: an option set as `-o` takes it."""
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in options.items()) or "default options"


def protocol_option_sets(game: str) -> list[dict]:
    """{} and, for each option `game` declares in `protocol_options`, each of its other values."""
    game_type = get_game(game).game_type
    sets: list[dict] = [{}]
    for name in game_type.protocol_options:
        info = game_type.options_model.model_fields[name]
        sets += [{name: v} for v in _option_values(game, name, info.annotation)
                 if not (type(v) is type(info.default) and v == info.default)]
    return sets


def _option_values(game: str, name: str, annotation: Any) -> list:
    if annotation is bool:
        return [False, True]
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    raise ValueError(f"{game}: protocol option {name} must be a bool or a Literal, "
                     f"not {annotation}")


def _seat_counts(game: str, options: dict) -> list[int]:
    """The seat counts of `game` whose rules accept `options` (GameOptionsError on a bad value)."""
    cls = get_game(game)
    parsed = parse_options(cls.game_type.options_model, options, game)
    counts = []
    for n in cls.game_type.seat_counts:
        try:
            cls.validate_options(parsed, n)
        except GameOptionsError:
            continue
        counts.append(n)
    return counts


def combinations(claimed: list[str], game: str | None = None, options: dict | None = None,
                 seats: int | None = None) -> list[tuple[str, int, dict]]:
    """The (game, seats, options) to check: the claimed games (all when none), each seat count
    (only `seats` when given), and each option set that changes what a bot is sent; with
    `options`, only that set (in the games whose options it names)."""
    found = _combinations(claimed, game, options)
    return found if seats is None else [c for c in found if c[1] == seats]


def _combinations(claimed: list[str], game: str | None,
                  options: dict | None) -> list[tuple[str, int, dict]]:
    games = [game] if game else (list(claimed) or game_names())
    if game and claimed and game not in claimed:
        raise ConfigError(f"the bot's manifest does not list {game} "
                          f"(it lists: {', '.join(claimed)})")
    for g in games:
        get_game(g)  # an unknown game is a ConfigError naming the known ones
    if options is not None:
        return _chosen(games, options)
    return [(g, n, opts) for g in games for n in get_game(g).game_type.seat_counts
            for opts in protocol_option_sets(g) if n in _seat_counts(g, opts)]


def _chosen(games: list[str], options: dict) -> list[tuple[str, int, dict]]:
    """The one option set of `-o` in each game that has all its options, at each seat count."""
    fitting = [g for g in games
               if set(options) <= set(get_game(g).game_type.options_model.model_fields)]
    if not fitting:
        names = ", ".join(sorted(options))
        raise ConfigError(f"-o {names}: no game checked here has "
                          f"{'this option' if len(options) == 1 else 'all these options'} "
                          f"(games: {', '.join(games)}; see `arena games` for each one's options)")
    out = []
    for g in fitting:
        counts = _seat_counts(g, options)
        if not counts:
            # Let the game say why, e.g. team_mode=true needs 4 seats.
            cls = get_game(g)
            parsed = parse_options(cls.game_type.options_model, options, g)
            for n in cls.game_type.seat_counts:
                cls.validate_options(parsed, n)
        out += [(g, n, dict(options)) for n in counts]
    return out


VOUCH_ATTEMPTS = 3  # checks check_vouched plays at most while only the opponents fail


def check_bot(spec: BotSpec, claimed: list[str], game: str | None = None,
              time: TimeControl | None = None, deals: int = DEFAULT_DEALS,
              seed: int = 1, expected: tuple[str, str] | None = None,
              options: dict | None = None, language: str = "",
              seats: int | None = None) -> CheckReport:
    """Play `spec` against the random bot in every claimed game, seat count and option set that
    changes what it is sent (only `options` when given); report problems, times and its stderr.

    The defaults (and `options`) are played `deals` deals; each further option set half as many
    (at least one), which keeps the check short. `expected`: the manifest's (name, version); a
    `ready` that names another is warned about once. `language`: the manifest's, for the hints.
    """
    defaults = TimeConfig()
    time = time or TimeControl(startup_ms=defaults.startup_ms, move_ms=defaults.move_ms)
    report = CheckReport(spec.name)
    started = _time.perf_counter()
    logs: list[str] = []
    answered: list[float] = []
    for game_name, table_seats, opts in combinations(claimed, game, options, seats):
        opponents = tuple(
            random_bot(_opponent_name(spec.name, i), seed=seed + i) for i in range(1, table_seats))
        set_deals = deals if (options is not None or not opts) else max(1, deals // 2)
        tag = "".join(f"-{k}={json.dumps(v)}" for k, v in opts.items()).replace(" ", "")
        plans = tuple(
            GamePlan(game_id=f"check-{game_name}-{table_seats}p{tag}-d{deal}-s{rot}", ordinal=k,
                     deal=deal, rotation=rot, seed=seed * 1000 + deal,
                     # Seat `rot` holds the bot (index 0); the random bots fill the others.
                     seating=tuple((s - rot) % table_seats for s in range(table_seats)))
            for k, (deal, rot) in enumerate(
                (d, r) for d in range(set_deals) for r in range(table_seats)))
        # One failure ends the match: the rest would repeat it, each costing a full timeout.
        match = MatchSpec(match_id=f"check-{game_name}-{table_seats}p{tag}", game=game_name,
                          options=dict(opts), bots=(spec, *opponents), games=plans, time=time,
                          max_failures=1)
        t0 = _time.perf_counter()
        result = run_match(match)
        said = (getattr(result, "ready", None) or {}).get(spec.name)
        if expected is not None and said is not None:
            from arena.tournament import ready_mismatch

            mismatch = ready_mismatch(expected, tuple(said))
            expected = None  # once: every match of the check would say the same
            if mismatch:
                report.warnings.append(mismatch)
        combo = Combo(game_name, table_seats, len(result.games), 0, 0, 0.0, dict(opts))
        for g in result.games:
            seat = g.seats.index(spec.name)
            mine = [m.ms for m in g.moves if m.seat == seat]
            combo.moves += len(mine)
            answered.extend(mine)
            report.move_ms.extend(mine)
            if g.termination == Termination.NORMAL.value:
                combo.clean_games += 1
            elif g.culprit == seat and g.termination == Termination.FAILURE_BUDGET.value:
                combo.not_played += 1
            elif g.culprit == seat:
                if g.termination == Termination.TIMEOUT.value:
                    # The move that timed out took at least its deadline: it counts.
                    waited = _WAITED.search(g.evidence or "")
                    report.move_ms.append(max(float(time.move_ms),
                                              float(waited.group(1)) if waited else 0.0))
                    combo.moves += 1
                    combo.timeouts += 1
                words = _WORDS.get(g.termination, g.termination).format(
                    startup=time.startup_ms, move=time.move_ms)
                legal = (_legal_at_failure(game_name, opts, g, seat)
                         if g.termination == Termination.ILLEGAL_ACTION.value else None)
                report.problems.append(Problem(
                    game_name, table_seats, g.termination, words, g.detail,
                    (g.evidence or "")[:EVIDENCE_KEEP], g.game_id, dict(opts),
                    hint(g.termination, g.detail, g.evidence or "", legal, language) or ""))
            elif g.culprit is not None and g.culprit != seat:
                report.problems.append(Problem(
                    game_name, table_seats, "opponent", "the random opponent failed (not this bot's "
                    "fault; the check cannot vouch for this game)", g.detail,
                    (g.evidence or "")[:EVIDENCE_KEEP], g.game_id, dict(opts)))
        stale = (result.logs.get(spec.name) or "").count(STALE_NOTE)
        if stale:
            report.problems.append(Problem(
                game_name, table_seats, "stale_answer", f"late answers: {stale} action(s) answered a "
                "request that had already timed out or been answered (never applied; answer each "
                "`act` once, with its own request_id)", "", "", "", dict(opts)))
        combo.seconds = _time.perf_counter() - t0
        report.combos.append(combo)
        if result.logs.get(spec.name):
            logs.append(result.logs[spec.name])
    log = "".join(logs)
    report.stderr_bytes = sum(stderr_size(part) for part in logs)
    report.stderr_tail = "\n".join(log.rstrip("\n").splitlines()[-STDERR_LINES:])
    report.stderr_warnings = stderr_warnings(log)
    if answered and max(answered) > SLOW_SHARE * time.move_ms:
        # Not a failure yet, but a loaded tournament machine may turn it into a timeout.
        report.warnings.append(
            f"the slowest answered move took {max(answered):.0f} ms, over {SLOW_SHARE:.0%} of "
            f"the {time.move_ms} ms limit")
    report.seconds = _time.perf_counter() - started
    return report


def _legal_at_failure(game: str, options: dict, record: Any, seat: int) -> list | None:
    """The legal actions `seat` was offered when it failed: the game replayed from its moves."""
    try:
        state = new_game(game, options, len(record.seats), record.seed)
        for _step, moves in groupby(record.moves, key=lambda m: m.step):
            state.apply_validated({m.seat: m.action for m in moves})
        return state.legal_actions(seat)
    except Exception:  # noqa: BLE001 - a hint is a nicety: no replay, no hint, never a crash
        return None


def check_vouched(spec: BotSpec, claimed: list[str], *, attempts: int = VOUCH_ATTEMPTS,
                  **settings) -> CheckReport:
    """`check_bot`, played again (up to `attempts` times in all, same seed) while the only
    problems are the random opponents': those say nothing of the bot (a house bot that could not
    start on a loaded machine), and a server or ladder must not reject an author's bot for them."""
    report = check_bot(spec, claimed, **settings)
    attempt = 1
    while report.opponents_only and attempt < attempts:
        attempt += 1
        report = check_bot(spec, claimed, **settings)
    report.attempts = attempt
    return report


def _opponent_name(name: str, i: int) -> str:
    # Names key a match's logs: the random opponents must never share the checked bot's name.
    base = f"random-{i}"
    return base if base != name else f"random-opponent-{i}"


def resolve_target(target: str, db: Path | None, sandbox: str | None = None
                   ) -> tuple[BotSpec, list[str], tuple[str, str], str]:
    """`NAME[@V]` in the registry of `db`, or a folder/manifest PATH: its BotSpec, games, the
    (name, version) its manifest gives and its language ("" when not given)."""
    from arena.players.launch import SANDBOXES
    from arena.registry import Registry, manifest_spec

    # Checked here, before any bot starts: the launcher's own check is a ValueError mid-match.
    if sandbox is not None and sandbox not in SANDBOXES:
        raise ConfigError(f"unknown sandbox {sandbox!r} (choose {', '.join(SANDBOXES)})")
    path = Path(target)
    if path.exists():
        spec, manifest = manifest_spec(path, sandbox)
        return spec, list(manifest.games), (manifest.name, manifest.version), manifest.language
    if db is None or not Path(db).exists():
        raise ConfigError(f"{target!r} is neither a bot folder nor a manifest, and there is no "
                          f"database {db} to look it up in")
    registry = Registry(db)
    version = registry.lookup(target)
    return (registry.spec(version, sandbox=sandbox), list(version.games),
            registry.manifest_ref(version), version.language or "")

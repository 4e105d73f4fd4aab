"""A match: the games of one table of bots, each deal played once per seat rotation.

`run_match(spec)` is a pure function of the spec (plus the bots' behaviour): it starts the players,
plays every game, turns bot failures into forfeits, and returns a picklable MatchResult that the
driver records. It never touches the database, so it can run in a Ray worker.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from arena.errors import BotError, BotFailureBudget, BotIllegalAction, BotInputStalled, BotTimeout
from arena.failures import Termination
from arena.games import forfeit_ranks, make_options, new_game
from arena.players import make_player
from arena.players.base import UNFINISHED, BotSpec, Player, exchange
from arena.players.gamelog import GameLog
from arena.protocol import ActRequest, GameEnd, GameStart, TimeControl, short_repr


@dataclass(frozen=True)
class GamePlan:
    """One game of a match: which deal, which rotation, which bot (by table index) in each seat."""

    game_id: str
    ordinal: int  # position in the tournament's fixed order (ratings are computed in this order)
    deal: int
    rotation: int
    seed: int
    seating: tuple[int, ...]  # seating[seat] = index into MatchSpec.bots


@dataclass(frozen=True)
class MatchSpec:
    """Everything needed to play a match anywhere: picklable, no database handles."""

    match_id: str
    game: str
    options: dict
    bots: tuple[BotSpec, ...]
    games: tuple[GamePlan, ...]
    time: TimeControl
    max_failures: int = 3  # failures of one bot in this match before it forfeits the rest


class Move(NamedTuple):
    """One action by one seat at one step of a game.

    A named tuple, not a dataclass: a match's result carries ~50 a game back from its worker,
    and a tuple unpickles in a third of the time (bench/driver_bench.py).
    """

    step: int
    seat: int
    action: Any
    ms: float


@dataclass
class GameRecord:
    """The outcome of one game, with every move (enough to replay it from its seed)."""

    game_id: str
    ordinal: int
    deal: int
    rotation: int
    seed: int
    seats: list[str]  # bot name per seat
    teams: list[list[int]]
    scores: list[float]
    ranks: list[int]
    termination: str
    culprit: int | None
    detail: str
    evidence: str
    duration_ms: float
    moves: list[Move] = field(default_factory=list)
    # Each bot's stderr lines in this game, `(seat, ply, line_no, text)`, bounded per seat (the
    # head and tail of arena.players.gamelog), and per seat that logged
    # `(seat, lines, bytes, dropped_lines, dropped_bytes)`; in-process bots have none.
    logs: list[tuple[int, int, int, str]] = field(default_factory=list)
    log_counts: list[tuple[int, int, int, int, int]] = field(default_factory=list)


@dataclass
class MatchResult:
    """All games of a match plus each bot's stderr log."""

    match_id: str
    games: list[GameRecord]
    logs: dict[str, str]
    duration_ms: float
    worker: str = ""  # host:pid of the process that ran it (on Ray: node ip:pid)
    node: str = ""  # the Ray node id that ran it ("" outside Ray)
    host: str = ""  # the host name of the machine that ran it
    # Per bot name: the (name, version) its first `ready` of the match gave.
    ready: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass
class MatchFailure:
    """A match that failed for a reason that is not a bot's fault."""

    match_id: str
    error: str  # traceback text, bounded (keep head+tail, ≤ 16 KiB)
    # "error" (exception in the runner) | "worker_died" (the worker process or node was lost) |
    # "host" (a bot cannot run on that node: its files or runtime missing there; HostFault)
    kind: str
    worker: str = ""
    node: str = ""
    host: str = ""


Outcome = MatchResult | MatchFailure


def run_match(spec: MatchSpec) -> MatchResult:
    """Play every game of a match (blocking) and return its result."""
    result = asyncio.run(MatchRunner(spec).run())
    result.host = socket.gethostname()
    result.worker = f"{result.host}:{os.getpid()}"
    return result


class MatchRunner:
    """Plays the games of one match with one set of players, restarting failed bots."""

    def __init__(self, spec: MatchSpec, wrap: Callable[[Player], Player] | None = None,
                 game_logs: bool = True):
        self.spec = spec
        # Whether each game keeps its bots' stderr lines with their ply (off: only the match's
        # log, as before; bench/logs_bench.py measures the difference).
        self.keep_game_logs = game_logs
        self.game_logs: dict[int, GameLog] = {}  # by bot (table index): the current game's
        self.opened: list[tuple[GameRecord, dict[int, GameLog]]] = []  # by seat, per game
        self.wrap = wrap  # e.g. a transcript recorder around each player
        self.options = make_options(spec.game, spec.options)
        self.options_json = self.options.model_dump(mode="json")
        self.players: list[Player | None] = [None] * len(spec.bots)
        self.failures = [0] * len(spec.bots)
        self.logs: dict[str, list[str]] = {b.name: [] for b in spec.bots}
        self.banks = [0.0] * len(spec.bots)  # ms of time bank each bot has left in its current game
        self.ready: dict[str, tuple[str, str]] = {}
        self.request_id = 0

    async def run(self) -> MatchResult:
        """Play all games, then shut every player down."""
        started = time.perf_counter()
        games = []
        try:
            for plan in self.spec.games:
                games.append(await self.play(plan))
        finally:
            for i in range(len(self.players)):
                await self._retire(i)
        self._seal_logs()
        logs = {name: "".join(parts) for name, parts in self.logs.items() if "".join(parts)}
        return MatchResult(self.spec.match_id, games, logs, (time.perf_counter() - started) * 1000,
                           ready=self.ready)

    async def play(self, plan: GamePlan) -> GameRecord:
        """Play one game; a bot failure ends it as that seat's forfeit."""
        spec = self.spec
        names = [spec.bots[b].name for b in plan.seating]
        state = new_game(spec.game, self.options, len(plan.seating), plan.seed)
        record = GameRecord(
            plan.game_id, plan.ordinal, plan.deal, plan.rotation, plan.seed, names,
            state.teams(), [], [], Termination.NORMAL.value, None, "", "", 0.0,
        )
        t0 = time.perf_counter()
        failure: tuple[int, BotError] | None = None
        told: list[int] = []  # the bots that got this game's game_start, and so get its game_end
        logs = self._open_logs(plan, record)
        for b in plan.seating:  # the bank is per game: every game starts with a full one
            self.banks[b] = float(spec.time.bank_ms)
        # Start (or restart) the players this game needs, in seat order, so failures are stable.
        starting = 0.0  # seconds spent starting bots: not the game's own time
        for seat, b in enumerate(plan.seating):
            try:
                t_start = time.perf_counter()
                await self._ensure_started(b)
                starting += time.perf_counter() - t_start
                await self.players[b].game_start(GameStart(
                    game_id=plan.game_id, game=spec.game, options=self.options_json,
                    seat=seat, players=names,
                ))
                told.append(b)
            except BotError as exc:
                failure = (seat, exc)
                break
        step = 0
        while failure is None and (acting := state.to_act()):
            failure = await self._step(state, plan, acting, step, record, logs)
            step += 1
        for seat, log in logs.items():  # what comes from now on: after the last move
            self._log_at(plan.seating[seat], log, len(record.moves))
        record.duration_ms = (time.perf_counter() - t0 - starting) * 1000
        scores = state.scores()
        if failure is None:
            result = state.result()
            record.scores, record.ranks = list(result.scores), list(result.ranks)
        else:
            seat, exc = failure
            record.scores = list(scores)
            record.ranks = forfeit_ranks(scores, seat, record.teams)
            record.termination = exc.reason
            record.culprit = seat
            record.detail = str(exc)
            record.evidence = exc.evidence
            await self._fail(plan.seating[seat])
        end = GameEnd(
            game_id=plan.game_id, scores=record.scores, ranks=record.ranks,
            termination=record.termination, culprit=record.culprit,
        )
        for b in told:
            player = self.players[b]
            if player is not None:
                try:
                    await player.game_end(end)
                except BotError:
                    await self._fail(b)  # it will be restarted for its next game if allowed
        return record

    async def _step(self, state, plan: GamePlan, acting: list[int], step: int, record: GameRecord,
                    logs: dict[int, GameLog]):
        """Ask every acting seat at once; apply the actions or return the first failure by seat."""
        legal = {seat: state.legal_actions(seat) for seat in acting}
        requests = {}
        for index, seat in enumerate(acting):
            if seat in logs:
                self._log_at(plan.seating[seat], logs[seat], len(record.moves) + index)
            self.request_id += 1
            requests[seat] = ActRequest(
                plan.game_id, self.request_id, state.observation_json(seat), legal[seat],
                self._time_left(plan.seating[seat]),
            )
        answers = await self._ask([plan.seating[seat] for seat in acting],
                                  [requests[seat] for seat in acting])
        actions, moves = {}, []
        for seat, answer in zip(acting, answers):
            if isinstance(answer, BaseException):
                if isinstance(answer, BotError):
                    return seat, answer
                raise answer
            action, ms = answer
            try:
                # Record the runner's own copy: JSON equality admits e.g. `true` for `1`.
                found = legal[seat].index(action)
            except Exception:  # not there, or a value that cannot even be compared: the bot's
                found = None
            if found is None:
                # Evidence is the line the bot sent (bounded), when the player has one.
                sent = self.players[plan.seating[seat]].last_line or _short(action)
                return seat, BotIllegalAction(f"illegal action {_short(action)}", sent)
            action = legal[seat][found]
            actions[seat] = action
            moves.append(Move(step, seat, action, round(ms, 3)))
        state.apply_validated(actions)  # validated above against the legal actions of exactly these seats
        record.moves.extend(moves)
        return None

    def _time_left(self, bot: int) -> int:
        """What the bot really has for this move: the move limit plus what is left of its bank."""
        return self.spec.time.move_ms + int(self.banks[bot])

    async def _ask(self, bots: list[int], requests: list[ActRequest]) -> list:
        """Each bot's (action, ms) or BotError; time over move_ms is charged to its bank.

        The runner measures on its own side, from sending the request to reading the answer. The
        deadline it enforces is move_ms + bank + grace_ms: the grace absorbs scheduling noise (a
        loaded machine wakes the runner late), so an answer inside the bot's own time is never
        lost to it. Time over move_ms, grace included, comes out of the bank, which never goes
        below zero. The requests go out together and the answers are read as they come, without
        the event loop (`exchange`); what it hands back is finished by awaiting act().
        """
        tc = self.spec.time
        players = [self.players[b] for b in bots]
        limits = [(tc.move_ms + self.banks[b] + tc.grace_ms) / 1000 for b in bots]
        started = time.perf_counter()
        results = exchange(players, requests, limits, started)
        later = [i for i, r in enumerate(results) if r is UNFINISHED]
        if later:
            async def finish(i: int):
                left = max(0.0, started + limits[i] - time.perf_counter())
                action = await players[i].act(requests[i], left)
                return action, time.perf_counter()

            done = await asyncio.gather(*(finish(i) for i in later), return_exceptions=True)
            for i, r in zip(later, done):
                results[i] = r
        answers = []
        for b, request, result in zip(bots, requests, results):
            bank = self.banks[b]
            if isinstance(result, BotTimeout):
                elapsed = (time.perf_counter() - started) * 1000
                self.banks[b] = 0.0
                limit = f"limit {tc.move_ms} ms + bank {int(bank)} ms + grace {tc.grace_ms} ms"
                if isinstance(result, BotInputStalled):  # its evidence says how much it took
                    result = BotInputStalled(
                        f"did not read its request within the move time ({limit})",
                        result.evidence)
                else:
                    result = BotTimeout(
                        f"no action within the move time ({limit})",
                        f"no answer in {elapsed:.0f} ms ({limit}); request_id {request.request_id}",
                    )
            if isinstance(result, BaseException):
                answers.append(result)
                continue
            action, at = result
            ms = (at - started) * 1000
            self.banks[b] = max(0.0, bank - max(0.0, ms - tc.move_ms))
            answers.append((action, ms))
        return answers

    async def _ensure_started(self, b: int) -> None:
        if self.players[b] is not None:
            return
        if self.failures[b] >= self.spec.max_failures:
            raise BotFailureBudget(
                f"{self.failures[b]} failures in this match: forfeits its remaining games",
                f"max_failures={self.spec.max_failures}",
            )
        player = make_player(self.spec.bots[b], self.spec.time)
        if self.wrap:
            player = self.wrap(player)
        self.players[b] = player
        player.log_to(self.game_logs.get(b))  # its start-up lines belong to the game it starts for
        ready = await player.start()
        if ready is not None:
            self.ready.setdefault(self.spec.bots[b].name, (ready.name, ready.version))

    async def _fail(self, b: int) -> None:
        self.failures[b] += 1
        await self._retire(b)

    async def _retire(self, b: int) -> None:
        player = self.players[b]
        if player is None:
            return
        self.players[b] = None
        await player.close()
        text = player.log()
        if text:
            self.logs[player.name].append(text)


    def _open_logs(self, plan: GamePlan, record: GameRecord) -> dict[int, GameLog]:
        """A fresh GameLog per seat of this game, by seat; each running bot's lines go there now.

        A bot's lines since its last game's end (what it wrote on game_end) are taken first and
        stay with that game.
        """
        if not self.keep_game_logs:
            return {}
        logs = {}
        for seat, b in enumerate(plan.seating):
            if self.spec.bots[b].in_process:
                continue  # no stderr: nothing to keep, nothing to pay per move
            player = self.players[b]
            if player is not None:
                player.drain_log()
            logs[seat] = self.game_logs[b] = GameLog()
            if player is not None:
                player.log_to(logs[seat])
        self.opened.append((record, logs))
        return logs

    def _log_at(self, b: int, log: GameLog, ply: int) -> None:
        """Lines of bot `b` from now on are at `ply`; what it wrote so far stays at the ply before.

        The one point a log's ply moves: a bot's lines written while it thought (read now, or
        during the wait for its answer) stay with the move it thought about, and lines written
        while others were asked (at game_start, say) with the ply they came in.
        """
        if log.ply != ply:
            player = self.players[b]
            if player is not None:
                player.drain_log()
            log.ply = ply

    def _seal_logs(self) -> None:
        """Put each game's kept lines and counts into its record (every player is closed now)."""
        for record, logs in self.opened:
            for seat, log in logs.items():
                log.finish()
                if not log.lines:
                    continue
                record.logs.extend((seat, ply, number, text) for number, ply, text in log.rows())
                record.log_counts.append((seat, log.lines, log.bytes, log.dropped_lines,
                                          log.dropped_bytes))
        self.opened = []


def _short(value: Any, limit: int = 200) -> str:
    # Bounded in length and depth, never raising: the value is the bot's, whatever it is.
    return short_repr(value, limit)

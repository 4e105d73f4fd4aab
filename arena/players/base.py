"""The Player interface and BotSpec, the picklable description of how to start a bot."""

from __future__ import annotations

import select
import sys
import time as _time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import BotError, BotTimeout
from arena.players.limits import Limits
from arena.protocol import ActRequest, GameEnd, GameStart, Ready, TimeControl


@dataclass(frozen=True)
class BotSpec:
    """How to start one bot: a subprocess `command` run in `workdir`, or a Python `factory`.

    `factory` is a zero-argument callable returning an object with `choose(observation,
    legal_actions)` (and optionally `game_start(msg)`, `game_end(msg)`); it must be picklable to run
    on Ray (a module-level function or class is).
    """

    name: str
    command: tuple[str, ...] = ()
    workdir: str = "."
    version: str = ""
    factory: Callable[[], Any] | None = None
    env: tuple[tuple[str, str], ...] = field(default=())
    # Resource limits (None: the defaults of limits.py) and the sandbox ("none", "bwrap" or "auto":
    # bwrap when it works here). Configs default to "auto"; a bare spec runs unsandboxed.
    limits: Limits | None = None
    sandbox: str = "none"
    # Who the bot runs as when the runner is root (users.py): "seat" (a uid of its own per running
    # process), "bot" (one per program) or "runner". Not root: always the runner.
    user: str = "seat"
    # The folder a run snapshots for this bot (a manifest bot's folder; empty: its workdir).
    source: str = ""

    @property
    def in_process(self) -> bool:
        """True for a Python bot run inside the runner."""
        return self.factory is not None


class Player(ABC):
    """The runner's handle on one bot for a whole match (many games)."""

    def __init__(self, spec: BotSpec, time: TimeControl):
        self.spec = spec
        self.time = time
        self.ready: Ready | None = None

    @property
    def name(self) -> str:
        """The bot's registered name."""
        return self.spec.name

    @abstractmethod
    async def start(self) -> Ready:
        """Start the bot and complete the hello/ready handshake; raise BotError on failure."""

    @abstractmethod
    async def game_start(self, message: GameStart) -> None:
        """Tell the bot a game begins."""

    @abstractmethod
    async def act(self, request: ActRequest, timeout: float) -> Any:
        """Send an `act` request and return the bot's action; raise BotError on failure."""

    # -- the hot path: every act of a move goes through these, without the event loop (`exchange`)
    def begin_act(self, request: ActRequest, timeout: float) -> Any:
        """Start an act without the event loop: the action when the player answers at once,
        PENDING when the request is out (`poll_act` takes the answer), or UNFINISHED (the default)
        to hand the request over to act(), which the runner then awaits."""
        return UNFINISHED

    def poll_act(self, request_id: int) -> Any:
        """After a PENDING begin_act(): the action if it came, PENDING while it has not, or
        UNFINISHED for what only act() can finish; may raise BotError."""
        return UNFINISHED

    def wait_fds(self) -> tuple[int, ...]:
        """The descriptors a waiter must watch while an act of this player is PENDING."""
        return ()

    def wake(self, ready: list[int], now: float) -> None:  # noqa: B027 (optional hook)
        """After the waiter's select() (`ready`: the descriptors that woke it, `now`: when)."""

    @property
    def poll_interval(self) -> float | None:
        """The longest a waiter may sleep before calling wake() (None: until an fd or a deadline)."""
        return None

    @property
    def last_line(self) -> str:
        """The bot's last line as it sent it (bounded), for evidence; "" when it sends none."""
        return ""

    @abstractmethod
    async def game_end(self, message: GameEnd) -> None:
        """Tell the bot a game is over."""

    @abstractmethod
    async def close(self) -> None:
        """Shut the bot down; safe to call twice."""

    def log(self) -> str:
        """What the bot wrote to stderr so far (bounded)."""
        return ""

    def log_to(self, game_log: Any) -> None:  # noqa: B027 (optional hook)
        """Send the bot's stderr lines from now on to `game_log` too (a GameLog; None: stop).

        A player without stderr (an in-process bot) ignores it.
        """

    def drain_log(self) -> None:  # noqa: B027 (optional hook)
        """Take what the bot has written to stderr so far, without waiting (before a ply ends)."""


class _Unfinished:
    """The marker of an act the hot path hands over to act() (it needs the event loop)."""

    def __repr__(self) -> str:
        return "UNFINISHED"


UNFINISHED = _Unfinished()


class _Pending:
    """The marker of an answer that has not come yet."""

    def __repr__(self) -> str:
        return "PENDING"


PENDING = _Pending()


def _outcome(action: Any) -> Any:
    """What `exchange` returns for one player: a BotError or UNFINISHED as it is, an action with
    the moment it was read."""
    if action is UNFINISHED or isinstance(action, BotError):
        return action
    return action, _time.perf_counter()


def exchange(players: list[Player], requests: list[ActRequest], limits: list[float],
             started: float) -> list[Any]:
    """Ask every player at once and wait for the answers in select(), not in the event loop.

    Every act of a move goes through here: a subprocess bot's answer then costs one write and one
    select, with no task wake-ups (on one core the loop's rounds cost as much as the pipe itself).
    Returns, per player, (action, perf_counter() when it was read), a BotError, or UNFINISHED for
    what only act() can finish (a wrapper without a hot path, a full or broken pipe, an ended
    output); the caller then awaits act() with the time left. `limits` are seconds from `started`.
    """
    results: list[Any] = [UNFINISHED] * len(players)
    waiting = []
    for i, (player, request) in enumerate(zip(players, requests)):
        try:
            action = player.begin_act(request, limits[i])
        except BotError as exc:
            action = exc
        if action is PENDING:
            waiting.append(i)
        else:
            results[i] = _outcome(action)
    while waiting:
        for i in list(waiting):
            try:
                action = players[i].poll_act(requests[i].request_id)
            except BotError as exc:
                action = exc
            if action is PENDING:
                continue
            waiting.remove(i)
            results[i] = _outcome(action)
        if not waiting:
            break
        now = _time.perf_counter()
        for i in list(waiting):
            if now >= started + limits[i]:
                waiting.remove(i)
                results[i] = BotTimeout(f"no action within {limits[i] * 1000:.0f} ms",
                                        f"request_id {requests[i].request_id}")
        if not waiting:
            break
        wait = min(started + limits[i] for i in waiting) - now
        intervals = [p for i in waiting if (p := players[i].poll_interval) is not None]
        if intervals:
            wait = min(wait, *intervals)
        fds = [fd for i in waiting for fd in players[i].wait_fds()]
        ready, _, _ = select.select(fds, (), (), max(wait, 0.0))
        now = _time.perf_counter()
        for i in waiting:
            players[i].wake(ready, now)
    return results


# The built-in bots ship inside the package (arena/bots/), so an installed Arena has them.
BUILTIN_BOTS = Path(__file__).resolve().parents[1] / "bots"


def random_bot(name: str = "random", seed: int = 1) -> BotSpec:
    """The built-in stdlib random bot (arena/bots/random_bot.py) as a subprocess spec."""
    return BotSpec(name=name, command=(sys.executable, "random_bot.py", str(seed)),
                   workdir=str(BUILTIN_BOTS))

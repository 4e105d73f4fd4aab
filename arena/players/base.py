"""The Player interface and BotSpec, the picklable description of how to start a bot."""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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

    def act_blocking(self, request: ActRequest, timeout: float) -> Any:
        """act() without the event loop, for a player that can: the action, or UNFINISHED.

        UNFINISHED (the default) hands the request over: the runner then awaits act().
        """
        return UNFINISHED

    @abstractmethod
    async def game_end(self, message: GameEnd) -> None:
        """Tell the bot a game is over."""

    @abstractmethod
    async def close(self) -> None:
        """Shut the bot down; safe to call twice."""

    def log(self) -> str:
        """What the bot wrote to stderr so far (bounded)."""
        return ""


class _Unfinished:
    """The marker of an act_blocking() that needs the event loop to finish."""

    def __repr__(self) -> str:
        return "UNFINISHED"


UNFINISHED = _Unfinished()

# The example bots shipped beside the package (present in a source checkout).
BOTS_DIR = Path(__file__).resolve().parents[2] / "bots"


def random_bot(name: str = "random", seed: int = 1) -> BotSpec:
    """The shipped stdlib random bot (bots/random_bot.py) as a subprocess spec."""
    return BotSpec(name=name, command=(sys.executable, "random_bot.py", str(seed)),
                   workdir=str(BOTS_DIR))


def make_player(spec: BotSpec, time: TimeControl) -> Player:
    """The right Player for a spec: in process or subprocess."""
    from arena.players.local import LocalPlayer
    from arena.players.process import ProcessPlayer

    return LocalPlayer(spec, time) if spec.in_process else ProcessPlayer(spec, time)

"""In-process Python bots, for tests and for trusted bots that need no isolation."""

from __future__ import annotations

import time as _time
from typing import Any

from arena.errors import BotCrashed, BotStartupError, BotTimeout
from arena.players.base import Player
from arena.protocol import ActRequest, GameEnd, GameStart, Ready


class LocalPlayer(Player):
    """A Python object with `choose(observation, legal_actions)` playing in the runner's process.

    It cannot be interrupted, so a slow move is judged after it returns: over the limit is a timeout.
    """

    bot: Any = None

    async def start(self) -> Ready:
        """Create the bot object from its factory."""
        try:
            self.bot = self.spec.factory()
        except Exception as exc:  # a bot's own bug is a failure of that bot, not of the runner
            raise BotStartupError(f"factory raised {exc!r}", repr(exc)) from None
        self.ready = Ready(type="ready", name=self.spec.name, version=self.spec.version)
        return self.ready

    async def game_start(self, message: GameStart) -> None:
        """Call the bot's optional `game_start(msg)`."""
        hook = getattr(self.bot, "game_start", None)
        if hook:
            self._call(hook, message.model_dump(mode="json"))

    async def act(self, request: ActRequest, timeout: float) -> Any:
        """Call `choose` on a decoded copy of the request and time it."""
        return self.begin_act(request, timeout)

    def begin_act(self, request: ActRequest, timeout: float) -> Any:
        """Call `choose` on a decoded copy of the request and time it: it answers at once."""
        started = _time.perf_counter()
        choose = self.bot.choose if hasattr(self.bot, "choose") else self.bot
        message = request.message()
        action = self._call(choose, message["observation"], message["legal_actions"])
        elapsed = _time.perf_counter() - started
        if elapsed > timeout:
            raise BotTimeout(
                f"answered after {elapsed * 1000:.0f} ms, limit {timeout * 1000:.0f} ms",
                f"overrun {1000 * (elapsed - timeout):.0f} ms",
            )
        return action

    async def game_end(self, message: GameEnd) -> None:
        """Call the bot's optional `game_end(msg)`."""
        hook = getattr(self.bot, "game_end", None)
        if hook:
            self._call(hook, message.model_dump(mode="json"))

    async def close(self) -> None:
        """Drop the bot object (safe twice)."""
        self.bot = None

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except Exception as exc:
            raise BotCrashed(f"raised {type(exc).__name__}: {exc}", repr(exc)) from None

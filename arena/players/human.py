"""A person playing one seat in the terminal (`arena play`): the observation drawn as text, the
legal actions numbered, a number typed back.

The player reads from any text stream and writes to any rich Console, so tests drive it with
scripted input. It has no move time: the runner's limits apply to the bots, not to a person.
Quitting (`q`, Ctrl-C at the prompt, or the input ending) is a resignation: the game ends as this seat's forfeit.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape

from arena.errors import Resigned
from arena.games.text import TextView, number, text_view
from arena.players.base import BotSpec, Player
from arena.protocol import ActRequest, GameEnd, GameStart, Ready, TimeControl

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
HELP = "type an action's number and Enter; ? for help and the actions again; q to resign"


class HumanPlayer(Player):
    """A seat played by a person: reads choices from `stream`, draws the game on `console`."""

    def __init__(self, spec: BotSpec, time: TimeControl, stream: TextIO, console: Console):
        super().__init__(spec, time)
        self.stream = stream
        self.console = console
        self.view: TextView | None = None
        self.seat: int | None = None
        self.players: list[str] = []
        self.last_seen: dict | None = None

    async def start(self) -> Ready:
        """Nothing to start: a person is ready."""
        self.ready = Ready(type="ready", name=self.spec.name, version=self.spec.version)
        return self.ready

    async def game_start(self, message: GameStart) -> None:
        """Say which seat the person plays and against whom."""
        self.view = text_view(message.game)
        self.seat = message.seat
        self.players = list(message.players)
        self.last_seen = None
        others = ", ".join(f"seat {s} {_safe(name)}" for s, name in enumerate(message.players)
                           if s != message.seat)
        self._say(f"[bold]{_safe(message.game)}[/bold]: you play seat {message.seat} "
                  f"against {others}.")
        self._say(HELP)

    async def act(self, request: ActRequest, timeout: float) -> Any:
        """Draw the observation and the numbered actions; read until a valid choice (or quit)."""
        message = request.message()
        observation, legal = message["observation"], message["legal_actions"]
        self._draw(observation, legal)
        while True:
            self.console.print("your move (number, ? or q): ", end="", highlight=False)
            try:
                line = self.stream.readline()
            except KeyboardInterrupt:  # Ctrl-C at the prompt: as `q`, and the game is recorded
                self._say("\ninterrupted: you resign")
                raise Resigned("the player interrupted the game", "Ctrl-C") from None
            if not line:  # the input ended: nobody is left to play this seat
                self._say("input ended: you resign")
                raise Resigned("the player's input ended", "end of input")
            choice = line.strip()
            if choice.lower() in ("q", "quit"):
                self._say("you resign")
                raise Resigned("the player quit", f"typed {choice!r}")
            if choice in ("?", "h", "help"):
                self._say(HELP)
                self._draw(observation, legal)
                continue
            if choice.isascii() and choice.isdigit() and 1 <= int(choice) <= len(legal):
                self.last_seen = observation
                return legal[int(choice) - 1]
            self._say(f"[red]'{_safe(choice[:40])}' is not an action: type 1 to {len(legal)}, "
                      "? for help or q to quit[/red]")

    async def game_end(self, message: GameEnd) -> None:
        """Say how the game ended for the person."""
        scores = ", ".join(f"seat {s} {number(v)}" for s, v in enumerate(message.scores))
        mine = message.ranks[self.seat] if self.seat is not None else None
        ending = "" if message.termination == "normal" else (
            f" ({message.termination} by seat {message.culprit})")
        self._say(f"game over{ending}: scores {scores}; you rank {mine} of "
                  f"{len(message.ranks)}")

    async def close(self) -> None:
        """Nothing to shut down."""

    def _draw(self, observation: dict, legal: list) -> None:
        view = self.view
        self._say("")
        if self.last_seen is not None:
            happened = view.events(self.last_seen, observation)
            if happened:
                self._say("since your last move:")
                for line in happened:
                    self._say("  " + _safe(line))
        for line in view.observation(observation):
            self._say(_safe(line))
        for i, action in enumerate(legal, 1):
            self._say(f"  {i:>2}. {_safe(view.action(action))}")

    def _say(self, text: str) -> None:
        self.console.print(text, highlight=False)


def _safe(value: object) -> str:
    """Untrusted text (bot names, what a person typed) for rich: control characters made
    visible, markup escaped."""
    return escape(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value)))

"""Protocol transcripts: every message between the runner and each bot in one real game.

`protocol/transcripts/<game>.jsonl` are samples for bot authors, recorded with `arena transcript`
and checked in tests against the engine, so the documentation cannot drift from the code. The
first line is a header (game, options, seats, seed); each further line is
`{"seat": s, "bot": name, "from": "runner"|"bot", "message": {...}}`.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.games import make_options, new_game
from arena.match import GamePlan, MatchRunner, MatchSpec
from arena.players.base import BotSpec, Player, random_bot
from arena.protocol import PROTOCOL_VERSION, ActRequest, GameEnd, GameStart, Hello, TimeControl


class RecordingPlayer(Player):
    """A Player that forwards to another and logs every message both ways."""

    def __init__(self, inner: Player, log: list[dict]):
        super().__init__(inner.spec, inner.time)
        self.inner = inner
        self.entries = log
        self.seat: int | None = None
        self.closed = False

    def _log(self, source: str, message: dict) -> None:
        self.entries.append({"seat": self.seat, "bot": self.name, "from": source, "message": message})

    async def start(self):
        """Start the inner player, logging hello and ready."""
        self._log("runner", Hello(bot=self.name, time=self.time).model_dump(mode="json"))
        ready = await self.inner.start()
        self._log("bot", ready.model_dump(mode="json", exclude_none=True))
        return ready

    async def game_start(self, message: GameStart) -> None:
        """Forward and log game_start."""
        self.seat = message.seat
        for entry in self.entries:  # hello/ready were logged before the seat was known
            if entry["bot"] == self.name and entry["seat"] is None:
                entry["seat"] = message.seat
        self._log("runner", message.model_dump(mode="json"))
        await self.inner.game_start(message)

    async def act(self, request: ActRequest, timeout: float) -> Any:
        """Forward and log an act request and its answer."""
        self._log("runner", request.message())
        action = await self.inner.act(request, timeout)
        self._log("bot", {"type": "action", "request_id": request.request_id, "action": action})
        return action

    async def game_end(self, message: GameEnd) -> None:
        """Forward and log game_end."""
        self._log("runner", message.model_dump(mode="json"))
        await self.inner.game_end(message)

    async def close(self) -> None:
        """Log bye and close the inner player."""
        if not self.closed:
            self.closed = True
            self._log("runner", {"type": "bye"})
        await self.inner.close()

    @property
    def last_line(self) -> str:
        """The inner player's last line (evidence of an illegal action)."""
        return self.inner.last_line

    def log(self) -> str:
        """The inner player's stderr."""
        return self.inner.log()

    def log_to(self, game_log) -> None:
        """The inner player's stderr lines go to `game_log`."""
        self.inner.log_to(game_log)

    def drain_log(self) -> None:
        """Take the inner player's stderr so far."""
        self.inner.drain_log()


def record_transcript(game: str, bots: list[BotSpec], options: dict | None = None,
                      seed: int = 1, time: TimeControl | None = None) -> list[dict]:
    """Play one game between `bots` (one per seat) and return its transcript lines."""
    opts = make_options(game, options).model_dump(mode="json")
    spec = MatchSpec(
        match_id="sample", game=game, options=opts, bots=tuple(bots),
        games=(GamePlan("sample-game", 0, 0, 0, seed, tuple(range(len(bots)))),),
        time=time or TimeControl(startup_ms=10_000, move_ms=5_000), max_failures=1,
    )
    entries: list[dict] = []
    runner = MatchRunner(spec, wrap=lambda p: RecordingPlayer(p, entries))
    result = asyncio.run(runner.run())
    if result.games[0].termination != "normal":
        raise ArenaError(f"sample game ended by {result.games[0].termination}: {result.games[0].detail}")
    header = {"transcript": PROTOCOL_VERSION, "game": game, "options": opts, "seats": len(bots), "seed": seed}
    return [header, *entries]


def random_bots(seats: int) -> list[BotSpec]:
    """The stdlib random bot as a subprocess, once per seat (seeds 1..seats)."""
    return [random_bot(f"random-{i}", i) for i in range(1, seats + 1)]


def write_transcript(lines: list[dict], path: Path) -> None:
    """Write transcript lines as JSON lines (a whole file or, on failure, the old one untouched)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
    # Beside the target and then renamed over it: a full disk or a kill midway leaves no
    # half-written transcript where a complete one was.
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def check_transcript(lines: list[dict]) -> int:
    """Replay a transcript against the engine; raise ArenaError at the first disagreement.

    Returns the number of act requests checked.
    """
    header, entries = lines[0], lines[1:]
    state = new_game(header["game"], header["options"], header["seats"], header["seed"])
    requests = [e for e in entries if e["message"]["type"] == "act"]
    answers = {e["message"]["request_id"]: e["message"]["action"]
               for e in entries if e["from"] == "bot" and e["message"]["type"] == "action"}
    # Requests sent together form one step: all seats in to_act() at that moment.
    checked = 0
    pending = list(requests)
    while pending:
        acting = state.to_act()
        step, pending = pending[:len(acting)], pending[len(acting):]
        if sorted(e["seat"] for e in step) != acting:
            raise ArenaError(f"transcript asks seats {[e['seat'] for e in step]}, engine expects {acting}")
        actions = {}
        for e in step:
            msg, seat = e["message"], e["seat"]
            if msg["observation"] != state.observation(seat):
                raise ArenaError(f"request {msg['request_id']}: observation differs from the engine's")
            if msg["legal_actions"] != state.legal_actions(seat):
                raise ArenaError(f"request {msg['request_id']}: legal actions differ from the engine's")
            actions[seat] = answers[msg["request_id"]]
            checked += 1
        state.apply(actions)
    ends = [e["message"] for e in entries if e["message"]["type"] == "game_end"]
    result = state.result()
    if not state.is_over() or any(m["ranks"] != result.ranks for m in ends):
        raise ArenaError("transcript's game_end disagrees with the engine's result")
    return checked

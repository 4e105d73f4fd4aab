"""Arena bot kit: the arena/2 protocol loop for Python bots, standard library only.

A bot is one function from (observation, legal_actions) to one of the legal actions:

    from arenabot import run
    run(lambda obs, legal: legal[0], name="first", version="1")

The optional `on_game_start(msg)` and `on_game_end(msg)` callbacks see the game_start and game_end
messages. Log to stderr (`log(...)`): stdout belongs to the protocol.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

PROTOCOL = "arena/2"


def log(*parts: Any) -> None:
    """Write a line to stderr, which Arena keeps as the bot's log."""
    print(*parts, file=sys.stderr, flush=True)


def send(message: dict) -> None:
    """Write one protocol message to stdout as a JSON line."""
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def run(
    choose: Callable[[dict, list], Any],
    name: str,
    version: str = "1",
    on_game_start: Callable[[dict], None] | None = None,
    on_game_end: Callable[[dict], None] | None = None,
) -> None:
    """Serve the protocol on stdin/stdout until `bye` or end of input."""
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            send({"type": "ready", "name": name, "version": version})
        elif kind == "game_start":
            if on_game_start:
                on_game_start(msg)
        elif kind == "act":
            action = choose(msg["observation"], msg["legal_actions"])
            send({"type": "action", "request_id": msg["request_id"], "action": action})
        elif kind == "game_end":
            if on_game_end:
                on_game_end(msg)
        elif kind == "bye":
            return
        # Unknown message types are ignored, as the protocol requires.

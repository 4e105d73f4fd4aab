#!/usr/bin/env python3
"""ISMCTS as a subprocess bot (arena/2 protocol): needs the `arena` package importable.

Run it with Arena's interpreter (the manifest's `python3` must be one that has Arena installed).
Usage: ismcts_bot.py [TIME_MS] [SEED] [ITERATIONS]; each move searches ITERATIONS iterations (no
limit if absent or 0) but for no longer than min(TIME_MS, about half of the act's time_left_ms).
The game's options come once, in game_start, which also picks the exploration constant and
playout profile of the shipped bot for that game and seat count (arena.search.bot.shipped_settings).
"""

from __future__ import annotations

import json
import sys

from arenabot import log, send

try:
    from arena.search.bot import ISMCTSBot
except ImportError as exc:  # the bot kit is stdlib-only, the search is not
    log(f"ismcts_bot needs the arena package: {exc}")
    raise SystemExit(2) from None


def main(argv: list[str]) -> None:
    """Serve the protocol until `bye` or end of input."""
    time_ms = float(argv[0]) if argv else 100.0
    seed = int(argv[1]) if len(argv) > 1 else 0
    iterations = int(argv[2]) if len(argv) > 2 and int(argv[2]) > 0 else None
    # Each game's exploration and playout profile as the shipped in-process bots use them.
    bot = ISMCTSBot(iterations=iterations, time_ms=time_ms, seed=seed, per_game=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            send({"type": "ready", "name": "ismcts", "version": "1"})
        elif kind == "game_start":
            bot.game_start(msg)
        elif kind == "act":
            action = bot.choose(msg["observation"], msg["legal_actions"], msg.get("time_left_ms"))
            send({"type": "action", "request_id": msg["request_id"], "action": action})
        elif kind == "bye":
            return


if __name__ == "__main__":
    main(sys.argv[1:])

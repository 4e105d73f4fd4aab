#!/usr/bin/env python3
"""ISMCTS as a subprocess bot (arena/1 protocol): needs the `arena` package importable.

Run it with Arena's interpreter (the manifest's `python3` must be one that has Arena installed).
Usage: ismcts_bot.py [TIME_MS] [SEED]; each move searches for min(TIME_MS, about half of the
act's time_left_ms).
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
    bot = ISMCTSBot(iterations=None, time_ms=time_ms, seed=seed)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            send({"type": "ready", "name": "ismcts", "version": "1"})
        elif kind == "act":
            action = bot.choose(msg["observation"], msg["legal_actions"], msg.get("time_left_ms"))
            send({"type": "action", "request_id": msg["request_id"], "action": action})
        elif kind == "bye":
            return


if __name__ == "__main__":
    main(sys.argv[1:])

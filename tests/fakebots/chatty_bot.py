#!/usr/bin/env python3
"""A bot that logs to stderr at known moments, for the per-game log tests.

Usage: chatty_bot.py [FLOOD_BYTES [CRASH_GAME [DELAY_MS]]]. Plays the first legal action. At each act it
writes `game G move K` to stderr (G: its count of game_start, from 1; K: its acts in that game,
from 1) before answering; at game_start `start G ID` (ID: the game's id), at game_end `end G`.
With FLOOD_BYTES, it also writes that many bytes of 100-byte lines `flood G …` at its first act
of each game. With CRASH_GAME, it writes `dying in game ID` and exits 3 at its first act of its
game G (a restarted bot counts from 1 again).
"""

import json
import sys
import time

flood = int(sys.argv[1]) if len(sys.argv) > 1 else 0
crash = int(sys.argv[2]) if len(sys.argv) > 2 else 0
delay = int(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0
game = move = 0
game_id = ""
err = sys.stderr

for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        print(json.dumps({"type": "ready", "name": "chatty", "version": "1"}), flush=True)
    elif kind == "game_start":
        game += 1
        move = 0
        game_id = msg["game_id"]
        err.write(f"start {game} {game_id}\n")
        err.flush()
    elif kind == "act":
        move += 1
        if move == 1 and game == crash:
            err.write(f"dying in game {game_id}\n")
            err.flush()
            sys.exit(3)
        if move == 1 and flood:
            line = f"flood {game} ".ljust(99, "x") + "\n"
            err.write(line * (flood // 100))
        err.write(f"game {game} move {move}\n")
        err.flush()
        time.sleep(delay)
        print(json.dumps({"type": "action", "request_id": msg["request_id"],
                          "action": msg["legal_actions"][0]}), flush=True)
    elif kind == "game_end":
        err.write(f"end {game}\n")
        err.flush()
    elif kind == "bye":
        break

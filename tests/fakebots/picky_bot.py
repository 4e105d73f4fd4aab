#!/usr/bin/env python3
"""A bot that plays the first legal action but makes one bot author's mistake, for `arena bot check`.

Usage: picky_bot.py MODE. MODE:
  open_rows     crashes in a game whose options have open_rows true (Crossfire's open rows)
  teams         crashes in a game whose options have team_mode true (Battlefield Cribbage teams)
  three_seats   crashes in a game of 3 players
  unflushed     never flushes its stdout (Python block-buffers a pipe): no `ready` ever arrives
  stdout_log    prints a log line on stdout before its first action
  string_int    sends the integers of its action as strings ({"slot": "4"} for {"slot": 4})
  warnings      plays well, but writes a Perl-like warning to stderr at every move
"""

import json
import sys

mode = sys.argv[1]
game = {}


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    if mode != "unflushed":
        sys.stdout.flush()


def stringify(value):
    if isinstance(value, dict):
        return {k: stringify(v) for k, v in value.items()}
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        send({"type": "ready", "name": "picky", "version": "1"})
    elif msg["type"] == "game_start":
        game = msg
        options = msg.get("options") or {}
        if ((mode == "open_rows" and options.get("open_rows"))
                or (mode == "teams" and options.get("team_mode"))
                or (mode == "three_seats" and len(msg["players"]) == 3)):
            sys.stderr.write(f"picky: cannot handle {mode}\n")
            sys.exit(4)
    elif msg["type"] == "act":
        action = msg["legal_actions"][0]
        if mode == "stdout_log":
            sys.stdout.write(f"thinking about request {msg['request_id']}\n")
            sys.stdout.flush()
        if mode == "string_int":
            action = stringify(action)
        if mode == "warnings":
            sys.stderr.write("Use of uninitialized value $best in numeric gt (>) at bot.pl line 313, "
                             "<STDIN> line 4.\n")
            sys.stderr.write(f"chose {json.dumps(action)}\n")
        send({"type": "action", "request_id": msg["request_id"], "action": action})
    elif msg["type"] == "bye":
        break

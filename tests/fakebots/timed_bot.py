#!/usr/bin/env python3
"""A bot that takes a set time over each move, for the time-control tests.

Usage: timed_bot.py MS [FROM]. From its FROM-th act request on (default 1), it waits MS
milliseconds (measured from reading the request) before answering with the first legal action;
earlier requests are answered at once. Each act's `time_left_ms` is logged to stderr as
`time_left_ms=N`, so tests can read what the runner told it.
"""

import json
import sys
import time

ms = float(sys.argv[1])
start_at = int(sys.argv[2]) if len(sys.argv) > 2 else 1
acts = 0


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    received = time.monotonic()
    msg = json.loads(line)
    if msg["type"] == "hello":
        send({"type": "ready", "name": "timed", "version": str(ms)})
    elif msg["type"] == "act":
        acts += 1
        sys.stderr.write(f"time_left_ms={msg['time_left_ms']}\n")
        sys.stderr.flush()
        if acts >= start_at:
            # Sleep to an absolute point so the bot's own parsing time does not add to MS.
            left = received + ms / 1000 - time.monotonic()
            if left > 0:
                time.sleep(left)
        send({"type": "action", "request_id": msg["request_id"], "action": msg["legal_actions"][0]})
    elif msg["type"] == "bye":
        break

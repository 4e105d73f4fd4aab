#!/usr/bin/env python3
"""A seeded random bot that takes DELAY_MS per move, so a test can stop a run in the middle.

Usage: slow_random.py SEED DELAY_MS. The same seed gives the same moves whatever the delay. It
needs nothing but the standard library and its own folder, so it runs inside the sandbox too.
"""

import json
import random
import sys
import time

rng = random.Random(sys.argv[1])
delay = int(sys.argv[2]) / 1000

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "slow-random", "version": "1"}), flush=True)
    elif msg["type"] == "act":
        time.sleep(delay)
        action = rng.choice(msg["legal_actions"])
        print(json.dumps({"type": "action", "request_id": msg["request_id"], "action": action}),
              flush=True)
    elif msg["type"] == "bye":
        break

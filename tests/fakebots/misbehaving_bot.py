#!/usr/bin/env python3
"""A scripted bot that misbehaves on purpose, for the failure-handling tests.

Usage: misbehaving_bot.py MODE [N]. Plays the first legal action until its N-th act request
(default 1), then does what MODE says:
  ok            never misbehaves
  crash         exits with code 3
  no_ready      never answers hello
  garbage       prints a line that is not JSON
  illegal       answers with an action that is not legal
  sleep         never answers (sleeps)
  stale_then_ok answers with an old request_id first, then correctly
  wrong_type    sends a `ready` instead of an action
  spawn         starts a child that sleeps forever, then plays normally (tests cleanup)
  stderr        writes a lot to stderr at each move, then plays normally
"""

import json
import os
import subprocess
import sys
import time

mode = sys.argv[1]
when = int(sys.argv[2]) if len(sys.argv) > 2 else 1
acts = 0


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        if mode == "no_ready":
            time.sleep(60)
        if mode == "spawn":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            with open(os.environ["ARENA_TEST_PIDFILE"], "a") as fh:
                fh.write(f"{child.pid}\n")
        send({"type": "ready", "name": "misbehaving", "version": mode})
    elif msg["type"] == "act":
        acts += 1
        action = msg["legal_actions"][0]
        if mode == "stderr":
            sys.stderr.write("x" * 50_000 + "\n")
        if acts >= when:
            if mode == "crash":
                sys.exit(3)
            if mode == "garbage":
                sys.stdout.write("this is not json\n")
                sys.stdout.flush()
                continue
            if mode == "illegal":
                action = {"type": "no_such_move"}
            if mode == "sleep":
                time.sleep(60)
            if mode == "stale_then_ok":
                send({"type": "action", "request_id": msg["request_id"] - 1, "action": action})
            if mode == "wrong_type":
                send({"type": "ready"})
                continue
        send({"type": "action", "request_id": msg["request_id"], "action": action})
    elif msg["type"] == "bye":
        break

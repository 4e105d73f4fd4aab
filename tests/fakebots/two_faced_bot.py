#!/usr/bin/env python3
"""A bot that behaves while it is checked and turns hostile in a ladder, for the server's tests.

Usage: two_faced_bot.py MODE [TARGET...]. Standard library only (it is uploaded as it is). It
plays the first legal action. Its marker: `arena bot check` seats it only against the random bot
(players named `random-N` or `random-opponent-N`); a game with any other opponent is a ladder's,
and there, at its first act request, it does what MODE says:
  xss        prints hostile HTML to stderr at every message and answers an illegal action whose
             text is hostile HTML (its failure's evidence); in the check, only the stderr lines
  checkfail  in the check too: prints hostile HTML to stderr, then exits (a failed check)
  forkbomb   every process forks without end
  killall    kill(-1, SIGKILL): every process it may signal
  write      writes a file into each TARGET folder (outside its own), then plays on
  read       lists and reads each TARGET (another bot's folder, the database), then plays on
Each attack is reported on stderr as `hostile: KEY=VALUE` lines.
"""

import json
import os
import re
import signal
import sys

PAYLOAD = '<script>alert(1)</script>"><img src=x onerror=alert(2)>javascript:alert(3)'
CHECKER = re.compile(r"random(-opponent)?-\d+")
mode = sys.argv[1]
targets = sys.argv[2:]
me = None
in_ladder = False
attacked = False


def report(key, value):
    """One `hostile: KEY=VALUE` line on stderr."""
    sys.stderr.write(f"hostile: {key}={value}\n")
    sys.stderr.flush()


def send(obj):
    """One protocol message on stdout."""
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def attack():
    """Do what MODE says, once."""
    if mode == "forkbomb":
        report("forkbomb", "started")
        while True:
            try:
                os.fork()
            except OSError:
                pass
    if mode == "killall":
        report("killall", "sent")
        os.kill(-1, signal.SIGKILL)
    if mode == "write":
        for folder in targets:
            try:
                with open(os.path.join(folder, "two-faced-was-here"), "w") as fh:
                    fh.write("escaped")
                report(f"write {folder}", "written")
            except OSError as exc:
                report(f"write {folder}", f"refused ({exc.strerror})")
    if mode == "read":
        for path in targets:
            try:
                if os.path.isdir(path):
                    names = os.listdir(path)
                    report(f"read {path}", f"listed {len(names)} names")
                else:
                    with open(path, "rb") as fh:
                        report(f"read {path}", f"read {len(fh.read(4096))} bytes")
            except OSError as exc:
                report(f"read {path}", f"refused ({exc.strerror})")


for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if mode in ("xss", "checkfail"):
        sys.stderr.write(f"{kind}: {PAYLOAD}\n")
        sys.stderr.flush()
    if kind == "hello":
        me = msg.get("bot")
        send({"type": "ready", "name": PAYLOAD if mode == "xss" else "two-faced", "version": "1"})
    elif kind == "game_start":
        players = msg.get("players", [])
        in_ladder = any(p != me and not CHECKER.fullmatch(p) for p in players)
        if mode == "checkfail":
            sys.exit(3)
    elif kind == "act":
        action = msg["legal_actions"][0]
        if in_ladder and mode == "xss":
            action = PAYLOAD
        elif in_ladder and not attacked:
            attacked = True
            attack()
        send({"type": "action", "request_id": msg["request_id"], "action": action})

#!/usr/bin/env python3
"""A bot that attacks the runner on purpose: stalled input, hostile JSON, odd answer timing.

Usage: hostile_bot.py MODE [N [MARK]]. Plays the first legal action until its N-th act request
(default 1), then does what MODE says. MARK (ignored) lets tests find its processes by name.

Stalled input (the bot fills its own stdin through /proc/self/fd/0 and never reads again; under a
uid other than the runner's the reopen is refused, and the bot stalls instead):
  fill_ready    just before `ready`: the runner's game_start cannot be written
  fill_act      after answering its N-th act: the next act line cannot be written
  fill_last     after answering the last act of its xeri game (one round): game_end cannot be
                written; the games before and after are played normally
Hostile answers at the N-th act:
  deep          an action nested 990 levels deep (a list; legal JSON for orjson, ~2 KB)
  deep_object   an action nested 990 levels deep as objects {"a": {"a": …}}
  nested30      an action nested 30 levels deep (under the decode bound: an illegal action)
  bigint        an action holding a 10,000-digit integer
  int25         an action holding a 25-digit integer (a float to orjson: an illegal action)
  inf           an action holding 1e999
  nan           an action holding NaN
  bad_utf8      a line with an invalid UTF-8 byte
  nul           a line with a raw NUL byte
  nul_escaped   a legal-looking action whose card is "\\u0000" (valid JSON: an illegal action)
  surrogate     an action holding a lone surrogate "\\ud800"
  twice         answers every act twice (the second copy is stale: ignored)
  early         with its N-th answer also sends the answer to its next request, unasked (a
                bad_message when read)
  split         writes half of its N-th answer, sleeps past the deadline, writes the rest
"""

import json
import os
import sys
import time

mode = sys.argv[1]
when = int(sys.argv[2]) if len(sys.argv) > 2 else 1
acts = 0
out = sys.stdout.buffer


def send_raw(data: bytes) -> None:
    out.write(data)
    out.flush()


def send(obj) -> None:
    send_raw(json.dumps(obj).encode() + b"\n")


def fill_stdin() -> None:
    """Fill our own stdin pipe through a second write end (non-blocking); we never read it again.

    Run under a uid of its own (a root runner's bot_user), the bot may not reopen the runner's
    pipe: it says so and stalls without reading or answering, which is a plain timeout.
    """
    try:
        fd = os.open("/proc/self/fd/0", os.O_WRONLY | os.O_NONBLOCK)
    except PermissionError as exc:
        sys.stderr.write(f"hostile: cannot reopen stdin for writing: {exc}\n")
        sys.stderr.flush()
        stall()
    chunk = b"x" * 4096
    while True:
        try:
            os.write(fd, chunk)
        except BlockingIOError:
            try:
                os.write(fd, b"x")  # the last few bytes that a 4 KiB write would not fit
                continue
            except BlockingIOError:
                break
    sys.stderr.write("hostile: stdin filled\n")
    sys.stderr.flush()


def stall() -> None:
    while True:
        time.sleep(600)


def nested(depth: int, leaf: str, as_object: bool = False) -> str:
    return ('{"a":' * depth + leaf + "}" * depth) if as_object else ("[" * depth + leaf + "]" * depth)


for line in sys.stdin.buffer:
    msg = json.loads(line)
    if msg["type"] == "hello":
        if mode == "fill_ready":
            fill_stdin()  # before `ready`: the runner writes game_start as soon as it reads it
        send({"type": "ready", "name": "hostile", "version": mode})
        if mode == "fill_ready":
            stall()
    elif msg["type"] == "act":
        acts += 1
        rid = msg["request_id"]
        action = msg["legal_actions"][0]
        head = f'{{"type": "action", "request_id": {rid}, "action": '
        if acts >= when:
            raw = {
                "deep": nested(990, "1"),
                "deep_object": nested(990, "1", as_object=True),
                "nested30": nested(30, '"play"'),
                "bigint": '{"type": "play", "card": ' + "9" * 10_000 + "}",
                "int25": '{"type": "play", "card": ' + "9" * 25 + "}",
                "inf": '{"type": "play", "card": 1e999}',
                "nan": '{"type": "play", "card": NaN}',
                "nul_escaped": '{"type": "play", "card": "\\u0000"}',
                "surrogate": '{"type": "play", "card": "\\ud800"}',
            }.get(mode)
            if raw is not None:
                send_raw((head + raw + "}\n").encode())
                continue
            if mode == "bad_utf8":
                send_raw(head.encode() + b'{"type": "play", "card": "\xff\xfe"}}\n')
                continue
            if mode == "nul":
                send_raw(head.encode() + b'{"type": "play", "card": "\x00"}}\n')
                continue
            if mode == "split":
                whole = (head + json.dumps(action) + "}\n").encode()
                send_raw(whole[:len(whole) // 2])
                time.sleep(msg["time_left_ms"] / 1000 + 1.0)
                send_raw(whole[len(whole) // 2:])
                continue
            if mode == "early":
                # Two seats: the opponent's request comes between, ours is two ids on.
                send_raw((head + json.dumps(action) + "}\n").encode()
                         + json.dumps({"type": "action", "request_id": rid + 2,
                                       "action": action}).encode() + b"\n")
                continue
        obs = msg["observation"]
        fill = ((mode == "fill_act" and acts >= when) or (mode == "fill_last" and obs.get(
            "stock_count") == 0 and len(obs.get("my_hand", ())) == 1))
        if fill:
            fill_stdin()  # before the answer: the runner writes on as soon as it reads it
        send({"type": "action", "request_id": rid, "action": action})
        if mode == "twice":
            send({"type": "action", "request_id": rid, "action": action})
        if fill:
            stall()
    elif msg["type"] == "bye":
        break

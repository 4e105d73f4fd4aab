"""A protocol test double: a scripted arena/2 bot on pipes, with no process behind them.

In the spirit of python-chess's `MockTransport`: the runner's side is the real `ProcessPlayer`
(its reads, writes, deadlines, line limit, stale-answer rule and shutdown), and only the spawn is
replaced (`ProcessPlayer._spawn`, the seam): `ScriptedPlayer` opens three pipes and runs a
`Script` on their far ends in a thread. A script is a list of steps the fake bot takes in order:

    script = Script().expect("hello", READY).expect("act", answer({"type": "play"}))
    player = ScriptedPlayer(script)
    ...
    script.assert_done()  # every step was taken, and every message had the expected type

Steps: `expect(type, *replies, delay=)` reads the runner's next line, checks its `type` and
writes the replies (a dict is one JSON line, bytes are written as they are, a callable gets the
decoded message and returns either); `send` writes unprompted; `sleep`; `log` writes to stderr;
`stall` stops reading for good (the runner's writes then fill the pipe); `exit(code)` closes the
bot's output and ends it with that exit status. After the last step the bot reads on, answering
nothing, until `bye` or the end of its input, and exits 0.

A thread, not a task: the runner's hot path (`exchange`) waits in select() outside the event
loop, so a bot on the same loop would never get to answer.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from arena.players.base import BotSpec
from arena.players.launch import Launch
from arena.players.process import ProcessPlayer
from arena.protocol import TimeControl

# Above the kernel's PID_MAX_LIMIT (4,194,304): a signal the runner sends to the fake process finds
# no process (ESRCH), whatever runs on this machine.
FAKE_PID = 1 << 30
READY = {"type": "ready", "name": "scripted", "version": "1"}
QUICK = TimeControl(startup_ms=2_000, move_ms=1_000)
_tags = itertools.count()

Reply = dict | bytes | Callable[[dict], Any]


def answer(action: Any) -> Callable[[dict], dict]:
    """A reply to an `act`: `action` for the request's own request_id."""
    return lambda msg: {"type": "action", "request_id": msg["request_id"], "action": action}


def first_legal(msg: dict) -> dict:
    """A reply to an `act`: its first legal action."""
    return {"type": "action", "request_id": msg["request_id"], "action": msg["legal_actions"][0]}


class Script:
    """The fake bot's steps (see the module docstring); builder methods return the script."""

    def __init__(self) -> None:
        self.steps: list[tuple] = []
        self.received: list[dict] = []  # every message the runner sent, decoded, in order
        self.errors: list[str] = []
        self.finished = threading.Event()

    # -- building --------------------------------------------------------------------------------
    def expect(self, type_: str, *replies: Reply, delay: float = 0.0) -> Script:
        self.steps.append(("expect", type_, replies, delay))
        return self

    def send(self, *replies: Reply) -> Script:
        self.steps.append(("send", replies))
        return self

    def sleep(self, seconds: float) -> Script:
        self.steps.append(("sleep", seconds))
        return self

    def log(self, text: str) -> Script:
        self.steps.append(("log", text))
        return self

    def stall(self) -> Script:
        self.steps.append(("stall",))
        return self

    def exit(self, code: int = 0) -> Script:
        self.steps.append(("exit", code))
        return self

    def handshake(self, ready: Reply = READY) -> Script:
        """hello → ready."""
        return self.expect("hello", ready)

    # -- checking --------------------------------------------------------------------------------
    @property
    def types(self) -> list[str]:
        """The types of the messages the runner sent, in order."""
        return [m.get("type", "?") for m in self.received]

    def assert_done(self, timeout: float = 2.0) -> None:
        """Every step was taken and every expectation met (waits for the bot to finish)."""
        assert self.finished.wait(timeout), f"the scripted bot did not finish: {self.types}"
        assert not self.errors, self.errors

    # -- running (the bot's thread) ---------------------------------------------------------------
    def _run(self, bot: _Bot) -> None:
        try:
            for step in self.steps:
                kind = step[0]
                if kind == "expect":
                    _, type_, replies, delay = step
                    msg = bot.read()
                    if msg is None:
                        self.errors.append(f"expected {type_}, the runner closed the input")
                        return
                    if msg.get("type") != type_:
                        self.errors.append(f"expected {type_}, got {msg.get('type')}")
                    if delay:
                        time.sleep(delay)
                    bot.write(replies, msg)
                elif kind == "send":
                    bot.write(step[1], {})
                elif kind == "sleep":
                    time.sleep(step[1])
                elif kind == "log":
                    bot.write_err(step[1].encode())
                elif kind == "stall":
                    bot.wait_closed()
                    return
                elif kind == "exit":
                    bot.exit(step[1])
                    return
            while (msg := bot.read()) is not None and msg.get("type") != "bye":
                pass
        except OSError as exc:  # the runner closed its ends: the bot is gone
            self.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            bot.exit(0)
            self.finished.set()


class _Bot:
    """The far ends of the three pipes, used by the script's thread (blocking I/O)."""

    def __init__(self, player: ScriptedPlayer, stdin: int, stdout: int, stderr: int) -> None:
        self.player = player
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.buf = bytearray()
        self.script = player.script

    def read(self) -> dict | None:
        """The runner's next message (decoded), or None at the end of its input."""
        while (end := self.buf.find(b"\n")) < 0:
            chunk = os.read(self.stdin, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line = bytes(self.buf[:end])
        del self.buf[:end + 1]
        msg = json.loads(line)
        self.script.received.append(msg)
        return msg

    def write(self, replies: tuple, msg: dict) -> None:
        for reply in replies:
            if callable(reply):
                reply = reply(msg)
            data = reply if isinstance(reply, bytes) else json.dumps(reply).encode() + b"\n"
            view = memoryview(data)
            while view:
                view = view[os.write(self.stdout, view):]

    def write_err(self, data: bytes) -> None:
        if self.stderr >= 0:
            os.write(self.stderr, data)

    def wait_closed(self) -> None:
        """Take no input until the runner closes its end (what killing a stuck bot comes to)."""
        while self.player._stdin >= 0 and not self.player._closed:
            time.sleep(0.005)

    def exit(self, code: int) -> None:
        """End the bot: its exit status first (as a reaped process has it), then its pipes."""
        if self.stdout < 0:
            return
        self.player.proc.exit_soon(code)
        for fd in (self.stdout, self.stderr, self.stdin):
            os.close(fd)
        self.stdout = self.stderr = self.stdin = -1


class FakeProcess:
    """What ProcessPlayer uses of an asyncio subprocess: pid, returncode, wait()."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.pid = FAKE_PID
        self.returncode: int | None = None
        self._loop = loop
        self._done = loop.create_future()

    def exit_soon(self, code: int) -> None:
        """From the bot's thread: the process ends with `code` (set at once, noticed by wait())."""
        if self.returncode is None:
            self.returncode = code
            try:
                self._loop.call_soon_threadsafe(self._settle)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass

    def _settle(self) -> None:
        if not self._done.done():
            self._done.set_result(self.returncode)

    async def wait(self) -> int:
        return await asyncio.shield(self._done)


class ScriptedPlayer(ProcessPlayer):
    """A ProcessPlayer whose bot is a `Script` on pipes instead of a process."""

    def __init__(self, script: Script, time: TimeControl = QUICK, name: str = "scripted",
                 spec: BotSpec | None = None) -> None:
        super().__init__(spec or BotSpec(name=name, command=("scripted",), workdir="/"), time)
        self.script = script
        self.thread: threading.Thread | None = None

    async def _spawn(self, command: list[str]) -> None:
        self._loop = asyncio.get_running_loop()
        child_in, self._stdin = os.pipe()
        self._stdout, child_out = os.pipe()
        self._stderr_fd, child_err = os.pipe()
        for fd in (self._stdin, self._stdout, self._stderr_fd):
            os.set_blocking(fd, False)
        self.launch = Launch([], "/", {}, "", f"scripted-{os.getpid()}-{next(_tags)}", "double",
                             self.limits)
        self.proc = FakeProcess(self._loop)
        bot = _Bot(self, child_in, child_out, child_err)
        self.thread = threading.Thread(target=self.script._run, args=(bot,), daemon=True,
                                       name=f"scripted-bot-{self.spec.name}")
        self.thread.start()

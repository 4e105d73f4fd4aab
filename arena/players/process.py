"""Subprocess bots speaking arena/1 over stdin/stdout, driven by asyncio.

Each bot runs in its own session (process group), so that shutdown reaches every process it
started: `bye`, then SIGTERM to the group, then SIGKILL, each under a deadline.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

from arena.errors import BadMessage, BotCrashed, BotError, BotStartupError, BotTimeout
from arena.players.base import BotSpec, Player
from arena.protocol import (
    Action,
    GameEnd,
    GameStart,
    Hello,
    Ready,
    TimeControl,
    decode_bot_message,
    encode,
    encode_dict,
)

MAX_LINE_BYTES = 1 << 20  # a longer line from a bot is a bad message
STDERR_KEEP = 64 * 1024  # bytes of a bot's stderr kept (head and tail)
BYE_GRACE = 0.5  # seconds a bot gets to exit after `bye`
TERM_GRACE = 0.5  # seconds after SIGTERM before SIGKILL
PYTHON_ALIASES = {"python", "python3"}


def resolve_command(command: tuple[str, ...]) -> list[str]:
    """The command to run; a leading `python`/`python3` means the interpreter running Arena."""
    cmd = list(command)
    if cmd and cmd[0] in PYTHON_ALIASES:
        cmd[0] = sys.executable
    return cmd


class _StderrBuffer:
    """Keeps the first and last part of a stream, so a flood cannot exhaust memory."""

    def __init__(self, keep: int = STDERR_KEEP):
        self.head = bytearray()
        self.tail = bytearray()
        self.keep = keep
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        """Keep a chunk: the head fills first, then the tail keeps the newest bytes."""
        room = self.keep // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > self.keep // 2:
            cut = len(self.tail) - self.keep // 2
            self.dropped += cut
            del self.tail[:cut]

    def text(self) -> str:
        """The kept bytes as text, with a marker where bytes were dropped."""
        middle = f"\n[… {self.dropped} bytes dropped …]\n".encode() if self.dropped else b""
        return bytes(self.head + middle + self.tail).decode("utf-8", "replace")


class ProcessPlayer(Player):
    """A bot in a subprocess; one process serves a whole match unless it fails."""

    def __init__(self, spec: BotSpec, time: TimeControl):
        super().__init__(spec, time)
        self.proc: asyncio.subprocess.Process | None = None
        self._stderr = _StderrBuffer()
        self._stderr_task: asyncio.Task | None = None
        self._closed = False

    async def start(self) -> Ready:
        """Spawn the process and wait for `ready` within startup_ms."""
        env = dict(os.environ)
        env.update(dict(self.spec.env))
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *resolve_command(self.spec.command),
                cwd=self.spec.workdir,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                limit=MAX_LINE_BYTES,
                env=env,
            )
        except OSError as exc:
            raise BotStartupError(f"cannot start {list(self.spec.command)}: {exc}", str(exc)) from None
        self._stderr_task = asyncio.create_task(self._drain_stderr())
        await self._send(encode(Hello(bot=self.spec.name, time=self.time)), BotStartupError)
        try:
            msg = await asyncio.wait_for(self._read(), self.time.startup_ms / 1000)
        except asyncio.TimeoutError:
            raise BotStartupError(
                f"no ready within {self.time.startup_ms} ms", "no reply to hello"
            ) from None
        except BotError as exc:
            raise BotStartupError(f"handshake failed: {exc}", exc.evidence) from None
        if not isinstance(msg, Ready):
            raise BotStartupError(f"expected ready, got {msg.type}", msg.model_dump_json())
        self.ready = msg
        return msg

    async def game_start(self, message: GameStart) -> None:
        """Send game_start."""
        await self._send(encode(message))

    async def act(self, request: dict, timeout: float) -> Any:
        """Send `act` and wait for the action with the same request_id; stale answers are dropped."""
        request_id = request["request_id"]
        await self._send(encode_dict(request))
        try:
            # asyncio.timeout, unlike wait_for, needs no extra task per read: cheaper per move.
            async with asyncio.timeout(timeout):
                return await self._await_action(request_id)
        except TimeoutError:
            raise BotTimeout(
                f"no action within {timeout * 1000:.0f} ms", f"request_id {request_id}"
            ) from None

    async def _await_action(self, request_id: int) -> Any:
        while True:
            msg = await self._read()
            if isinstance(msg, Action):
                if msg.request_id == request_id:
                    return msg.action
                if msg.request_id > request_id:
                    raise BadMessage(
                        f"answer to request {msg.request_id}, which was never sent",
                        msg.model_dump_json(),
                    )
                continue  # a late answer to an earlier request: never applied
            raise BadMessage(f"expected action, got {msg.type}", msg.model_dump_json())

    async def game_end(self, message: GameEnd) -> None:
        """Send game_end."""
        await self._send(encode(message))

    async def close(self) -> None:
        """bye → SIGTERM → SIGKILL to the whole process group, under deadlines; safe twice."""
        if self._closed or self.proc is None:
            self._closed = True
            return
        self._closed = True
        proc = self.proc
        if proc.returncode is None:
            try:
                proc.stdin.write(encode_dict({"type": "bye"}))
                await asyncio.wait_for(proc.stdin.drain(), BYE_GRACE)
                proc.stdin.close()
            except (OSError, asyncio.TimeoutError, RuntimeError):
                pass
            if not await self._wait(BYE_GRACE):
                self._signal_group(signal.SIGTERM)
                if not await self._wait(TERM_GRACE):
                    self._signal_group(signal.SIGKILL)
                    await self._wait(5)
        # Children the bot left behind are in its process group: none may outlive the match.
        self._signal_group(signal.SIGKILL)
        if self._stderr_task:
            try:
                await asyncio.wait_for(self._stderr_task, 1)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self._stderr_task.cancel()

    def log(self) -> str:
        """The bot's stderr so far: head and tail, bounded."""
        return self._stderr.text()

    # -- internals ------------------------------------------------------------------------------
    async def _send(self, data: bytes, error: type[BotError] = BotCrashed) -> None:
        try:
            self.proc.stdin.write(data)
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
            raise error(f"cannot write to the bot: {exc}", self._exit_evidence()) from None

    async def _read(self):
        try:
            line = await self.proc.stdout.readline()
        except (ValueError, asyncio.LimitOverrunError):
            raise BadMessage(
                f"line longer than {MAX_LINE_BYTES} bytes", f"over {MAX_LINE_BYTES} bytes"
            ) from None
        if not line:
            await self._wait(1)
            raise BotCrashed("the bot closed its output or exited", self._exit_evidence())
        return decode_bot_message(line)

    def _exit_evidence(self) -> str:
        code = self.proc.returncode if self.proc else None
        if code is None:
            return "stdout closed, process still running"
        if code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        return f"exit code {code}"

    async def _wait(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self.proc.wait(), seconds)
            return True
        except asyncio.TimeoutError:
            return False

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    async def _drain_stderr(self) -> None:
        while True:
            chunk = await self.proc.stderr.read(65536)
            if not chunk:
                return
            self._stderr.add(chunk)

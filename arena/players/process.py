"""Subprocess bots speaking arena/1 over stdin/stdout, driven by asyncio.

How a bot is started (environment, rlimits, sandbox) is the Launcher's policy (launch.py); this
module spawns what it prepares, reads lines under the line limit, and turns what the bot does into
BotErrors. Shutdown: `bye`, then SIGTERM to the group, then SIGKILL, each under a deadline, then
SIGKILL to every process of the bot that is left (by tree, session, group and tag).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

from arena.errors import (
    BadMessage,
    BotCrashed,
    BotError,
    BotResourceLimit,
    BotStartupError,
    BotTimeout,
)
from arena.players.base import BotSpec, Player
from arena.players.launch import (
    REAPER_SIGNAL,
    Launch,
    Launcher,
    find_processes,
    kill_all,
    proc_stat,
    unwatch,
    watch,
)
from arena.players.limits import DEFAULT_LIMITS, describe
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
    evidence,
)
from arena.protocol import MAX_EVIDENCE

MAX_LINE_BYTES = DEFAULT_LIMITS.line_bytes  # a longer line from a bot is a resource_limit failure
READ_CHUNK = 1 << 16
STDOUT_CHECK = 0.2  # bwrap: seconds between checks that the bot still holds its stdout
EXIT_WAIT = 0.1  # seconds to let a bot that closed stdout finish exiting, for its exit status
STDERR_KEEP = 64 * 1024  # bytes of a bot's stderr kept (head and tail)
BYE_GRACE = 0.5  # seconds a bot gets to exit after `bye`
TERM_GRACE = 0.5  # seconds after SIGTERM before the hard stop
REAP_GRACE = 2.0  # seconds the reaper gets to kill the bot's tree before it is SIGKILLed itself
PYTHON_ALIASES = {"python", "python3"}
STALE_NOTE = "arena: ignored an answer to request"  # written to a bot's log for each stale answer


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


# Words in a dead bot's stderr that say which limit stopped it (RLIMIT failures surface this way).
LIMIT_MARKERS = (
    ("memory_mb", ("MemoryError", "Cannot allocate memory", "out of memory", "std::bad_alloc",
                   "Failed to reserve virtual memory", "Fatal process OOM")),
    ("file_size_mb", ("File too large",)),
    ("open_files", ("Too many open files",)),
    ("processes", ("arena: processes limit", "can't start new thread", "fork: Resource temporarily unavailable",
                   "BlockingIOError: [Errno 11]")),
)
LIMIT_SIGNALS = {signal.SIGXCPU: "cpu_s", signal.SIGXFSZ: "file_size_mb"}


class ProcessPlayer(Player):
    """A bot in a subprocess; one process serves a whole match unless it fails."""

    def __init__(self, spec: BotSpec, time: TimeControl):
        super().__init__(spec, time)
        self.limits = spec.limits or DEFAULT_LIMITS
        self.proc: asyncio.subprocess.Process | None = None
        self.launch: Launch | None = None
        self.last_line: str = ""  # the bot's last answer as it sent it (bounded), for evidence
        self._root_start = ""
        self._buf = bytearray()
        self._scan = 0
        self._stderr = _StderrBuffer()
        self._stderr_task: asyncio.Task | None = None
        self._closed = False

    async def start(self) -> Ready:
        """Spawn the process and wait for `ready` within startup_ms."""
        command = resolve_command(self.spec.command)
        try:
            self.launch = Launcher(self.spec.sandbox, self.limits).prepare(
                command, self.spec.workdir, dict(self.spec.env))
            self.proc = await asyncio.create_subprocess_exec(
                *self.launch.argv,
                cwd=self.launch.cwd,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                preexec_fn=self.launch.preexec,
                limit=READ_CHUNK * 4,
                env=self.launch.env,
            )
        except OSError as exc:
            if self.launch:
                self.launch.cleanup()
            raise BotStartupError(f"cannot start {list(self.spec.command)}: {exc}", str(exc)) from None
        # Its start time tells the bot from a later process that reuses its pid.
        st = proc_stat(self.proc.pid)
        self._root_start = st[3] if st else ""
        if self.launch.mode == "plain":
            watch(self.launch.tag, self.proc.pid, self._root_start)
        self._stderr_task = asyncio.create_task(self._drain_stderr())
        await self._send(encode(Hello(bot=self.spec.name, time=self.time)), BotStartupError)
        try:
            msg = await asyncio.wait_for(self._read(), self.time.startup_ms / 1000)
        except asyncio.TimeoutError:
            raise BotStartupError(
                f"no ready within {self.time.startup_ms} ms", "no reply to hello"
            ) from None
        except BotResourceLimit:
            raise
        except BotError as exc:
            raise BotStartupError(f"handshake failed: {exc}", exc.evidence) from None
        if not isinstance(msg, Ready):
            raise BotStartupError(f"expected ready, got {msg.type}", self.last_line)
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
                        f"answer to request {msg.request_id}, which was never sent", self.last_line
                    )
                # A late answer to an earlier request: never applied. Say so in the bot's log,
                # where its author (and `arena bot check`) will look.
                self._stderr.add(f"\n{STALE_NOTE} {msg.request_id} while waiting for "
                                 f"{request_id}\n".encode())
                continue
            raise BadMessage(f"expected action, got {msg.type}", self.last_line)

    async def game_end(self, message: GameEnd) -> None:
        """Send game_end."""
        await self._send(encode(message))

    async def close(self) -> None:
        """bye → SIGTERM → SIGKILL, then every process of the bot is killed; safe twice."""
        if self._closed or self.proc is None:
            self._closed = True
            return
        self._closed = True
        proc = self.proc
        # While the bot lives it is a subreaper, so its whole family is in its tree: note it now.
        family = self._family()
        if proc.returncode is None:
            try:
                proc.stdin.write(encode_dict({"type": "bye"}))
                await asyncio.wait_for(proc.stdin.drain(), BYE_GRACE)
                proc.stdin.close()
            except (OSError, asyncio.TimeoutError, RuntimeError):
                pass
            if not await self._wait(BYE_GRACE):
                self._signal(signal.SIGTERM)  # the reaper passes it on to the bot's group
                if not await self._wait(TERM_GRACE):
                    self._signal(REAPER_SIGNAL)  # the reaper kills the whole tree and exits
                    if not await self._wait(REAP_GRACE):
                        self._signal_group(signal.SIGKILL)
                        await self._wait(5)
        # No process a bot started may outlive its match, whatever group or session it is in.
        self._signal_group(signal.SIGKILL)
        kill_all(proc.pid if self._root_start else -1, self.launch.tag, family,
                 root_start=self._root_start or None)
        if self.launch.mode == "plain":
            unwatch(self.launch.tag)
        await self._wait(2)  # reap it, so its transport closes inside this event loop
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()  # a pipe paused on unread data (a long line) never sees EOF
        if self._stderr_task:
            try:
                await asyncio.wait_for(self._stderr_task, 1)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self._stderr_task.cancel()
        self.launch.cleanup()

    def log(self) -> str:
        """The bot's stderr so far: head and tail, bounded."""
        return self._stderr.text()

    def pids(self) -> dict[int, str]:
        """The live processes of this bot now ({pid: start time}), for tests and diagnostics."""
        return self._family()

    # -- internals ------------------------------------------------------------------------------
    def _family(self) -> dict[int, str]:
        if self.proc is None or not self._root_start:
            return {}
        found = find_processes(self.proc.pid, self.launch.tag)
        if found.get(self.proc.pid, self._root_start) != self._root_start:
            return {}  # the pid was reused by another process after the bot was reaped
        return found

    async def _send(self, data: bytes, error: type[BotError] = BotCrashed) -> None:
        try:
            self.proc.stdin.write(data)
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
            if error is BotCrashed:
                await self._wait(EXIT_WAIT)
                raise await self._crash(f"cannot write to the bot: {exc}") from None
            raise error(f"cannot write to the bot: {exc}", self._exit_evidence()) from None

    async def _readline(self) -> bytes:
        """One line from stdout (b"" at EOF); a line over the limit is a resource_limit failure."""
        limit = self.limits.line_bytes
        while True:
            end = self._buf.find(b"\n", self._scan)
            if end >= 0:
                line = bytes(self._buf[:end + 1])
                del self._buf[:end + 1]
                self._scan = 0
                return line
            if len(self._buf) > limit:
                head = bytes(self._buf[:1200]).decode("utf-8", "replace")[:MAX_EVIDENCE]
                raise BotResourceLimit(f"stdout line over {limit} bytes",
                                       f"{head}… (line over {limit} bytes)")
            self._scan = len(self._buf)
            if self.launch.mode == "bwrap":
                chunk = await self._read_watching()
            else:
                chunk = await self.proc.stdout.read(READ_CHUNK)
            if not chunk:
                return b""
            self._buf += chunk

    async def _read_watching(self) -> bytes:
        """A read that also ends (b"") when the sandboxed bot closed its stdout.

        bwrap's own processes keep a copy of the pipe, so the bot closing it gives no EOF: while
        no data comes, check every STDOUT_CHECK s that the bot's fd 1 is still that pipe.
        """
        while True:
            try:
                return await asyncio.wait_for(self.proc.stdout.read(READ_CHUNK), STDOUT_CHECK)
            except asyncio.TimeoutError:
                if not self._sandboxed_stdout_open():
                    return b""

    def _sandboxed_stdout_open(self) -> bool:
        try:
            bwrap = _children(self.proc.pid)  # the reaper → bwrap → its pid-1 init → the bot
            if not bwrap:
                return True  # still starting up
            pipe = os.readlink(f"/proc/{bwrap[0]}/fd/1")
            init = _children(bwrap[0])
            bot = _children(init[0]) if init else None
            if not bot:
                return True
            return os.readlink(f"/proc/{bot[0]}/fd/1") == pipe
        except (OSError, IndexError):
            return False

    async def _read(self):
        line = await self._readline()
        if not line:
            # EOF is a crash at once: give the process a moment to exit, for its status.
            await self._wait(EXIT_WAIT)
            raise await self._crash("the bot closed its output or exited")
        self.last_line = evidence(line)
        return decode_bot_message(line)

    async def _crash(self, message: str) -> BotError:
        """A crash, or a resource_limit failure when the exit or stderr says a limit stopped it."""
        code = self.proc.returncode
        if code is not None and self._stderr_task:
            try:  # the stderr pipe ends when the process does: read its last words
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 0.3)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        sig = self._exit_signal()
        key = LIMIT_SIGNALS.get(sig) if sig else None
        if key is None and code is not None:
            tail = self._stderr.text()[-4000:]
            key = next((k for k, words in LIMIT_MARKERS if any(w in tail for w in words)), None)
        if key is not None:
            said = [ln for ln in self._stderr.text()[-4000:].splitlines() if ln.startswith("arena: ")]
            how = said[-1].removeprefix("arena: ") if said else self._exit_evidence()
            return BotResourceLimit(f"{describe(self.limits, key)} exceeded",
                                    f"limit {describe(self.limits, key)}: {how}")
        return BotCrashed(message, self._exit_evidence())

    def _exit_signal(self) -> int | None:
        code = self.proc.returncode if self.proc else None
        if code is None:
            return None
        if code < 0:
            return -code
        if self.launch and self.launch.mode == "bwrap" and 128 < code < 128 + 65:
            return code - 128  # bwrap exits 128+N when its child is killed by signal N
        return None

    def _exit_evidence(self) -> str:
        code = self.proc.returncode if self.proc else None
        if code is None:
            return "stdout closed, process still running"
        sig = self._exit_signal()
        if sig:
            try:
                return f"killed by signal {signal.Signals(sig).name}"
            except ValueError:
                return f"killed by signal {sig}"
        return f"exit code {code}"

    async def _wait(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self.proc.wait(), seconds)
            return True
        except asyncio.TimeoutError:
            return False

    def _signal(self, sig: int) -> None:
        if self.proc.returncode is None:
            try:
                os.kill(self.proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

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


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as fh:
        return [int(p) for p in fh.read().split()]

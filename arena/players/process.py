"""Subprocess bots speaking arena/2 over stdin/stdout, driven by asyncio.

How a bot is started (environment, rlimits, sandbox) is the Launcher's policy (launch.py); this
module spawns what it prepares, reads lines under the line limit, and turns what the bot does into
BotErrors. Shutdown: `bye`, then SIGTERM to the group, then SIGKILL, each under a deadline, then
SIGKILL to every process of the bot that is left (by tree, session, group and tag).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import sys
import time
from typing import Any

from arena.errors import (
    BadMessage,
    BotCrashed,
    BotError,
    BotInputStalled,
    BotResourceLimit,
    BotStartupError,
    BotTimeout,
    HostFault,
)

# `exchange` is the hot path every player takes part in; imported here for the callers of old.
from arena.players.base import PENDING, UNFINISHED, BotSpec, Player, exchange  # noqa: F401
from arena.players.gamelog import GameLog
from arena.players.launch import (
    REAPER_SIGNAL,
    SAFE_PATH,
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
    MAX_EVIDENCE,
    Action,
    ActRequest,
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


def check_runtime(command: list[str], workdir: str, name: str) -> None:
    """HostFault when this host cannot start the bot through no fault of its own: its working
    folder missing, or the program (or a script's `#!` interpreter) it runs absent, where that
    program is not one of the bot's own files. A missing file of the bot's own folder is its own
    failure, said when the start fails."""
    if not os.path.isdir(workdir):
        raise HostFault(f"bot {name!r}: its working folder {workdir} is missing on host "
                        f"{socket.gethostname()}")
    if not command:
        return
    program = _locate(command[0], workdir)
    if program is None:
        if os.sep in command[0]:
            path = os.path.normpath(os.path.join(workdir, command[0]))
            if path.startswith(os.path.normpath(workdir) + os.sep):
                return  # its own file: the start fails as the bot's
        raise HostFault(f"bot {name!r}: {command[0]} is not installed on host "
                        f"{socket.gethostname()}")
    try:
        with open(program, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return  # unreadable to us: the exec says why, as the bot's start failure
    if not head.startswith(b"#!"):
        return
    words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if not words:
        return
    needed = words[1] if os.path.basename(words[0]) == "env" and len(words) > 1 else words[0]
    if needed.startswith("-"):
        return  # `env -S …`: too clever to second-guess; the exec says
    if _locate(words[0], workdir) is None or _locate(needed, workdir) is None:
        raise HostFault(f"bot {name!r}: {command[0]} needs {needed}, which is not installed on "
                        f"host {socket.gethostname()}")


def _locate(program: str, workdir: str) -> str | None:
    """The file `program` runs as from `workdir` (a path, or looked up on the launcher's PATH)."""
    if os.sep in program:
        path = os.path.join(workdir, program)
        return path if os.path.isfile(path) else None
    # The PATH the launcher looks the program up on (the bot's environment is minimal).
    return shutil.which(program, path=SAFE_PATH + os.pathsep + os.path.dirname(sys.executable))


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
    ("memory_mb", ("arena: memory limit", "MemoryError", "Cannot allocate memory", "out of memory", "std::bad_alloc",
                   "Failed to reserve virtual memory", "Fatal process OOM")),
    ("tmp_mb", ("arena: /tmp limit",)),
    ("file_size_mb", ("File too large",)),
    ("open_files", ("Too many open files",)),
    ("processes", ("arena: processes limit", "can't start new thread", "fork: Resource temporarily unavailable",
                   "BlockingIOError: [Errno 11]")),
)
LIMIT_SIGNALS = {signal.SIGXCPU: "cpu_s", signal.SIGXFSZ: "file_size_mb"}


class ProcessPlayer(Player):
    """A bot in a subprocess; one process serves a whole match unless it fails.

    The player owns the bot's three pipes (non-blocking file descriptors, no asyncio streams), so
    one buffer holds everything read from the bot's stdout and both ways of waiting share it: the
    event loop (start-up, and whatever the hot path hands over) and `exchange`, the hot path of
    every move, which waits in select() and so costs no event-loop round.
    """

    def __init__(self, spec: BotSpec, time: TimeControl):
        super().__init__(spec, time)
        self.limits = spec.limits or DEFAULT_LIMITS
        self.proc: asyncio.subprocess.Process | None = None
        self.launch: Launch | None = None
        self._last_raw = b""  # the bot's last line as it sent it, for evidence
        self._root_start = ""
        self._buf = bytearray()
        self._scan = 0
        self._eof = False  # the bot's stdout is closed (or it was seen to close it in the sandbox)
        self._stdin = self._stdout = self._stderr_fd = -1
        self._stderr = _StderrBuffer()
        self._game_log: GameLog | None = None  # where stderr lines also go, with their ply
        self._stderr_done: asyncio.Future | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sent = 0  # request_id of the last act sent (`exchange` may hand it to act())
        self._checked = 0.0  # when the sandboxed stdout was last checked
        self._closed = False
        self._taken = 0  # bytes of the message being written that the bot's pipe took so far
        self._early = 0  # bytes at the head of _buf read before the pending request was sent
        self._line_early = False  # the line just taken began before its request was sent

    @property
    def last_line(self) -> str:
        """The bot's last line as it sent it (bounded), for evidence."""
        return evidence(self._last_raw) if self._last_raw else ""

    async def start(self) -> Ready:
        """Spawn the process and wait for `ready` within startup_ms.

        HostFault (not the bot's failure) when this host lacks what the bot needs to start: its
        working folder, or the program or script interpreter it names outside its own folder.
        """
        await self._spawn(resolve_command(self.spec.command))
        self._stderr_done = self._loop.create_future()
        self._loop.add_reader(self._stderr_fd, self._drain_stderr)
        await self._send(encode(Hello(bot=self.spec.name, time=self.time)), BotStartupError,
                         self.time.startup_ms / 1000)
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

    async def _spawn(self, command: list[str]) -> None:
        """Start the bot's process with its three pipes (our ends non-blocking) and note it.

        The seam a protocol test double overrides to speak arena/2 over pipes without a process
        (tests/support/transport.py): everything after it (handshake, moves, shutdown) is shared.
        """
        check_runtime(command, self.spec.workdir, self.spec.name)
        self._loop = asyncio.get_running_loop()
        child_ends = []
        try:
            self.launch = Launcher(self.spec.sandbox, self.limits, self.spec.user).prepare(
                command, self.spec.workdir, dict(self.spec.env),
                key=f"{self.spec.name}@{self.spec.version}")
            child_in, self._stdin = os.pipe()
            self._stdout, child_out = os.pipe()
            self._stderr_fd, child_err = os.pipe()
            child_ends = [child_in, child_out, child_err]
            for fd in (self._stdin, self._stdout, self._stderr_fd):
                os.set_blocking(fd, False)
            self.proc = await asyncio.create_subprocess_exec(
                *self.launch.argv,
                cwd=self.launch.cwd,
                stdin=child_in,
                stdout=child_out,
                stderr=child_err,
                start_new_session=True,
                preexec_fn=self.launch.preexec,
                pass_fds=self.launch.pass_fds,
                env=self.launch.env,
            )
        except (OSError, ValueError) as exc:
            if self.launch:
                self.launch.cleanup()
            self._close_fds()
            raise BotStartupError(f"cannot start {list(self.spec.command)}: {exc}", str(exc)) from None
        finally:
            for fd in child_ends:  # the child has its copies; ours would hide its EOF from us
                os.close(fd)
        # Its start time tells the bot from a later process that reuses its pid.
        st = proc_stat(self.proc.pid)
        self._root_start = st[3] if st else ""
        if self.launch.mode == "plain":
            watch(self.launch.tag, self.proc.pid, self._root_start)

    async def game_start(self, message: GameStart) -> None:
        """Send game_start; the bot must take it within one move's time (see `message_deadline`)."""
        await self._send(encode(message), timeout=self.message_deadline)

    @property
    def message_deadline(self) -> float:
        """Seconds the bot gets to take game_start or game_end off its stdin: move_ms + grace_ms.

        Only a bot that left its stdin pipe full ever waits on it (the pipe holds 64 KiB): a bot
        busy with its last move is not hurt, one that stopped reading is a timeout.
        """
        return (self.time.move_ms + self.time.grace_ms) / 1000

    async def act(self, request: ActRequest, timeout: float) -> Any:
        """Send `act` and wait for the action with the same request_id; stale answers are dropped.

        Writing the line counts against the move's time: a bot that does not take its input
        within `timeout` is a timeout (BotInputStalled) like one that does not answer.
        """
        request_id = request.request_id
        started = time.perf_counter()
        try:
            # asyncio.timeout, unlike wait_for, needs no extra task per read: cheaper per move.
            async with asyncio.timeout(timeout):
                if self._sent != request_id:  # not already sent by an `exchange` that handed over
                    if not request.skip:
                        self._mark_early()
                    await self._send(request.line(), skip=request.skip)
                    self._sent = request_id
                    # Let the other seats of a simultaneous step send theirs before any answer is
                    # read: a read can finish without waiting when the bot has already answered.
                    await asyncio.sleep(0)
                return await self._await_action(request_id)
        except TimeoutError:
            if self._sent != request_id:
                raise self._stalled(request.line(), f"act (request_id {request_id})",
                                    started, timeout) from None
            raise BotTimeout(
                f"no action within {timeout * 1000:.0f} ms", f"request_id {request_id}"
            ) from None

    # -- the hot path: no event loop (see `exchange`) ---------------------------------------------
    def begin_act(self, request: ActRequest, timeout: float) -> Any:
        """Send the act line now: PENDING (poll_act() takes the answer), or UNFINISHED when the
        pipe did not take it all (act() finishes the write and reports what happens)."""
        return PENDING if self.send_now(request) else UNFINISHED

    def poll_act(self, request_id: int) -> Any:
        """The action if the bot has sent it, PENDING while not, UNFINISHED at its output's end."""
        return self.answer_now(request_id)

    @property
    def poll_interval(self) -> float | None:
        """In the sandbox, how often wake() must check its stdout (bwrap holds a copy: no EOF)."""
        return STDOUT_CHECK if self.launch is not None and self.launch.mode == "bwrap" else None

    def send_now(self, request: ActRequest) -> bool:
        """Write the act line without the loop; False hands it to act() (a full or broken pipe)."""
        line = request.line()
        self._mark_early()
        try:
            written = os.write(self._stdin, line) if self._stdin >= 0 else 0
        except OSError:
            return False  # act() writes again and reports what happens
        if written < len(line):
            request.skip = written  # a bot not reading its input: act() waits for room
            return False
        self._sent = request.request_id
        return True

    def answer_now(self, request_id: int) -> Any:
        """The action if the bot has sent it, PENDING while it has not, UNFINISHED when its output
        ended (only act() can wait for its exit status and last words)."""
        while True:
            line = self._take_line()
            if line is None:
                if self._eof:
                    return UNFINISHED
                if not self._fill():
                    continue  # the output ended, maybe after a last line read with its end
                if self._take_pending():
                    continue
                return PENDING
            self._last_raw = line
            action = self._answer(decode_bot_message(line), request_id)
            if action is not _STALE:
                return action

    def wait_fds(self) -> tuple[int, ...]:
        """The descriptors a waiter must watch for this bot: stdout, and stderr while open."""
        return (self._stdout, self._stderr_fd) if self._stderr_fd >= 0 else (self._stdout,)

    def wake(self, ready: list[int], now: float) -> None:
        """After a select(): keep its stderr; in the sandbox, notice a closed stdout (no EOF there)."""
        if self._stderr_fd in ready:
            self._drain_stderr()
        if self.launch.mode == "bwrap" and self._stdout not in ready:
            if now - self._checked >= STDOUT_CHECK:
                self._checked = now
                if not self._sandboxed_stdout_open():
                    self._eof = True

    def _mark_early(self) -> None:
        """Before a request is sent: what the bot wrote so far cannot answer it (one read)."""
        if self._stdout >= 0 and not self._eof:
            self._fill()
        self._early = len(self._buf)

    def _take_pending(self) -> bool:
        """True when the buffer now holds a whole line or is over the line limit."""
        return self._buf.find(b"\n", self._scan) >= 0 or len(self._buf) > self.limits.line_bytes

    async def _await_action(self, request_id: int) -> Any:
        while True:
            action = self._answer(await self._read(), request_id)
            if action is not _STALE:
                return action

    def _answer(self, msg, request_id: int) -> Any:
        """The action a message answers `request_id` with, or _STALE for a late answer to an earlier one."""
        if isinstance(msg, Action):
            if msg.request_id == request_id:
                if self._line_early:
                    raise BadMessage(f"answer to request {request_id} sent before the request",
                                     self.last_line)
                return msg.action
            if msg.request_id > request_id:
                raise BadMessage(
                    f"answer to request {msg.request_id}, which was never sent", self.last_line
                )
            # A late answer to an earlier request: never applied. Say so in the bot's log,
            # where its author (and `arena bot check`) will look.
            self._note(f"{STALE_NOTE} {msg.request_id} while waiting for {request_id}")
            return _STALE
        raise BadMessage(f"expected action, got {msg.type}", self.last_line)

    async def game_end(self, message: GameEnd) -> None:
        """Send game_end; the bot must take it within one move's time (see `message_deadline`)."""
        await self._send(encode(message), timeout=self.message_deadline)

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
                await asyncio.wait_for(self._write(encode_dict({"type": "bye"})), BYE_GRACE)
            except (OSError, asyncio.TimeoutError):
                pass
            self._close_stdin()
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
        self.launch.kill_everything()  # its cgroup and its own uid: whatever escaped the tree
        if self.launch.mode == "plain":
            unwatch(self.launch.tag)
        await self._wait(2)  # reap it, so nothing of it is left to this event loop
        if self._stderr_done is not None:
            try:  # every writer of the stderr pipe is dead now: its end comes at once
                await asyncio.wait_for(asyncio.shield(self._stderr_done), 1)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        self._close_fds()
        self.launch.cleanup()

    def log(self) -> str:
        """The bot's stderr so far: head and tail, bounded."""
        return self._stderr.text()

    def log_to(self, game_log: GameLog | None) -> None:
        """Send the bot's stderr lines from now on to `game_log` too, at its current ply."""
        self._game_log = game_log

    def drain_log(self) -> None:
        """Take what the bot has written to stderr so far, without waiting.

        Called when a ply's answer is in: a bot that logs, then answers, has its lines in the pipe
        by then, so they go to that ply and not the next.
        """
        if self._stderr_fd >= 0:
            self._drain_stderr()

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

    async def _send(self, data: bytes, error: type[BotError] = BotCrashed,
                    timeout: float | None = None, skip: int = 0) -> None:
        """Write `data` (from byte `skip` on) within `timeout` seconds, or raise the bot's failure.

        A bot that does not take its input in time is BotInputStalled (a timeout), or `error`
        when that is BotStartupError (hello); without a timeout the caller bounds the wait.
        """
        started = time.perf_counter()
        try:
            async with asyncio.timeout(timeout):
                await self._write(data, skip)
        except TimeoutError:
            stalled = self._stalled(data, _message_type(data), started, timeout)
            if error is BotStartupError:
                raise BotStartupError(str(stalled), stalled.evidence) from None
            raise stalled from None
        except (BrokenPipeError, ConnectionResetError, OSError) as exc:
            if error is BotCrashed:
                await self._wait(EXIT_WAIT)
                raise await self._crash(f"cannot write to the bot: {exc}") from None
            raise error(f"cannot write to the bot: {exc}", self._exit_evidence()) from None

    def _stalled(self, data: bytes, what: str, started: float, limit: float) -> BotInputStalled:
        """The failure of a bot that left `data` unread, noted in its log for its author."""
        ms = (time.perf_counter() - started) * 1000
        said = (f"did not read its input: {self._taken:,} of {len(data):,} bytes of {what} "
                f"taken in {ms:,.0f} ms")
        self._note(f"arena: {said}")
        return BotInputStalled(f"did not read {what.split()[0]} within {limit * 1000:,.0f} ms "
                               f"(its stdin pipe stayed full)", said)

    async def _write(self, data: bytes, skip: int = 0) -> None:
        """Write all of `data` (from byte `skip` on) to the bot's stdin, waiting (in the loop)
        while its pipe is full; `_taken` counts the bytes of `data` written so far."""
        self._taken = skip
        if self._stdin < 0:
            raise BrokenPipeError("the bot's input is closed")
        view = memoryview(data)[skip:]
        while view:
            try:
                written = os.write(self._stdin, view)
                self._taken += written
                view = view[written:]
                continue
            except BlockingIOError:
                pass
            room = self._loop.create_future()
            self._loop.add_writer(self._stdin, _set_done, room)
            try:
                await room
            finally:
                self._loop.remove_writer(self._stdin)

    def _fill(self) -> bool:
        """Read what the bot has written so far into the buffer, without blocking; False at EOF."""
        limit = self.limits.line_bytes
        while len(self._buf) <= limit:
            try:
                chunk = os.read(self._stdout, READ_CHUNK)
            except BlockingIOError:
                return True
            except OSError:
                self._eof = True
                return False
            if not chunk:
                self._eof = True
                return False
            self._buf += chunk
        return True

    def _take_line(self) -> bytes | None:
        """The next whole line in the buffer, or None; a line over the limit is a resource_limit failure."""
        end = self._buf.find(b"\n", self._scan)
        if end >= 0:
            line = bytes(self._buf[:end + 1])
            del self._buf[:end + 1]
            self._scan = 0
            self._line_early = self._early > 0
            self._early = max(0, self._early - end - 1)
            return line
        limit = self.limits.line_bytes
        if len(self._buf) > limit:
            head = bytes(self._buf[:1200]).decode("utf-8", "replace")[:MAX_EVIDENCE]
            raise BotResourceLimit(f"stdout line over {limit} bytes",
                                   f"{head}… (line over {limit} bytes)")
        self._scan = len(self._buf)
        return None

    async def _readline(self) -> bytes:
        """One line from stdout (b"" at EOF), waiting in the event loop."""
        while True:
            line = self._take_line()
            if line is not None:
                return line
            if self._eof:
                return b""
            if not self._fill():
                continue  # the output ended, maybe after a last line read with its end
            if self._take_pending():
                continue
            readable = self._loop.create_future()
            self._loop.add_reader(self._stdout, _set_done, readable)
            try:
                if self.launch.mode == "bwrap":
                    await self._await_watching(readable)
                else:
                    await readable
            finally:
                self._loop.remove_reader(self._stdout)

    async def _await_watching(self, readable: asyncio.Future) -> None:
        """Wait for output, also ending when the sandboxed bot closed its stdout.

        bwrap's own processes keep a copy of the pipe, so the bot closing it gives no EOF: while
        no data comes, check every STDOUT_CHECK s that the bot's fd 1 is still that pipe.
        """
        while True:
            try:
                await asyncio.wait_for(asyncio.shield(readable), STDOUT_CHECK)
                return
            except asyncio.TimeoutError:
                if not self._sandboxed_stdout_open():
                    self._eof = True
                    return

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
        self._last_raw = line
        return decode_bot_message(line)

    async def _crash(self, message: str) -> BotError:
        """A crash, or a resource_limit failure when the exit or stderr says a limit stopped it."""
        code = self.proc.returncode
        if code is not None and self._stderr_done is not None:
            try:  # the stderr pipe ends when the process does: read its last words
                await asyncio.wait_for(asyncio.shield(self._stderr_done), 0.3)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        sig = self._exit_signal()
        key = LIMIT_SIGNALS.get(sig) if sig else None
        cgroup_said = self._cgroup_limit()
        if key is None and cgroup_said is not None:
            key, how = cgroup_said
            return BotResourceLimit(f"{describe(self.limits, key)} exceeded",
                                    f"limit {describe(self.limits, key)}: {how}")
        if key is None and code is not None:
            tail = self._stderr.text()[-4000:]
            key = next((k for k, words in LIMIT_MARKERS if any(w in tail for w in words)), None)
        if key is not None:
            said = [ln for ln in self._stderr.text()[-4000:].splitlines() if ln.startswith("arena: ")]
            how = said[-1].removeprefix("arena: ") if said else self._exit_evidence()
            return BotResourceLimit(f"{describe(self.limits, key)} exceeded",
                                    f"limit {describe(self.limits, key)}: {how}")
        return BotCrashed(message, self._exit_evidence())

    def _cgroup_limit(self) -> tuple[str, str] | None:
        """(limit key, evidence) when the bot's cgroup saw it hit its memory or pids limit."""
        cgroup = self.launch.cgroup if self.launch else None
        if cgroup is None:
            return None
        try:
            stats = cgroup.stats()
        except OSError:
            return None
        peak = stats.get("memory_peak")
        peak_text = f", peak {peak / (1 << 20):.0f} MiB" if peak else ""
        if stats.get("oom_kills", 0) > 0:
            return "memory_mb", f"the kernel killed it at its cgroup's memory limit{peak_text}"
        if stats.get("pids_limit_hits", 0) > 0:
            return "processes", (f"{stats['pids_limit_hits']} forks refused at its cgroup's "
                                 f"pids limit")
        return None

    def stats(self) -> dict[str, int]:
        """The bot's cgroup figures (peak memory, pids, limit hits), where it has a cgroup."""
        cgroup = self.launch.cgroup if self.launch else None
        try:
            return cgroup.stats() if cgroup is not None else {}
        except OSError:
            return {}

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

    def _drain_stderr(self) -> None:
        """Keep what the bot wrote to stderr (called when the pipe is readable); note its end."""
        while self._stderr_fd >= 0:
            try:
                chunk = os.read(self._stderr_fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._loop.remove_reader(self._stderr_fd)
                os.close(self._stderr_fd)
                self._stderr_fd = -1
                if self._stderr_done is not None and not self._stderr_done.done():
                    self._stderr_done.set_result(None)
                return
            self._stderr.add(chunk)
            if self._game_log is not None:
                self._game_log.feed(chunk)

    def _note(self, text: str) -> None:
        """A line of the runner's own in the bot's log (the match's and the game's)."""
        self._stderr.add(f"\n{text}\n".encode())
        if self._game_log is not None:
            self._game_log.note(text)

    def _close_stdin(self) -> None:
        if self._stdin >= 0:
            os.close(self._stdin)
            self._stdin = -1

    def _close_fds(self) -> None:
        """Close the pipes still open (safe twice)."""
        self._close_stdin()
        if self._stdout >= 0:
            os.close(self._stdout)
            self._stdout = -1
        if self._stderr_fd >= 0:
            if self._loop is not None:
                self._loop.remove_reader(self._stderr_fd)
            os.close(self._stderr_fd)
            self._stderr_fd = -1


class _Stale:
    """The marker of a late answer to an earlier request."""


_STALE = _Stale()


def _message_type(line: bytes) -> str:
    """The `type` of one of the runner's own message lines, for evidence ("game_start")."""
    head = line[:40]
    start = head.find(b'"type":"')
    if start < 0:
        return "message"
    start += len(b'"type":"')
    end = head.find(b'"', start)
    return head[start:end].decode("ascii", "replace") if end > 0 else "message"


def _set_done(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as fh:
        return [int(p) for p in fh.read().split()]

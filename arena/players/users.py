"""Which user a bot runs as: never the runner's root, but an unprivileged uid of its own.

When the runner is root, each bot process gets a uid from a pool (`ARENA_BOT_UIDS`, default
61000-61999, no /etc/passwd entry needed) and the same number as its gid, with no supplementary
groups. Policies (`bot_user` in a config):
- "seat" (the default): every running bot process has a uid no other running process has, so a bot
  cannot signal, trace or read the /proc files of another bot, and RLIMIT_NPROC on its uid counts
  exactly its own processes;
- "bot": the running processes of one bot program (same name and version) share a uid, different
  programs never do (their files in a shared folder stay their own);
- "runner": the bot runs as the runner. As root this must be asked for explicitly.
A runner that is not root cannot change uid: every policy runs bots as the runner, and says so.

A claim is a lock (fcntl.flock) on a file per uid in a root-only folder, held by the runner process
while the bot lives and by the bot's reaper until the bot's tree is gone: it ends with those two
processes however they die, so no claim outlives them, and none ends while the reaper may still
kill what runs as its uid.
"""

from __future__ import annotations

import fcntl
import os
import signal
import stat
from dataclasses import dataclass

USER_POLICIES = ("seat", "bot", "runner")
DEFAULT_UIDS = (61000, 61999)
UIDS_VAR = "ARENA_BOT_UIDS"
LOCK_DIRS = ("/run/arena-bot-uids", "/tmp/arena-bot-uids-0")


class UidPoolExhausted(OSError):
    """Every uid of the pool is held by a running bot."""


@dataclass
class BotUser:
    """The uid a bot runs as (None: the runner's own) and the claim that reserves it."""

    uid: int | None
    fd: int = -1

    @property
    def gid(self) -> int | None:
        """The bot's gid: the same number as its uid."""
        return self.uid

    def release(self) -> None:
        """Give the uid back to the pool (safe twice)."""
        if self.fd >= 0:
            os.close(self.fd)  # closing drops the flock
            self.fd = -1


def uid_range() -> tuple[int, int]:
    """The pool's first and last uid, from ARENA_BOT_UIDS ("first-last") or the default."""
    raw = os.environ.get(UIDS_VAR, "")
    if not raw:
        return DEFAULT_UIDS
    try:
        first, last = (int(part) for part in raw.split("-"))
    except ValueError:
        raise ValueError(f"{UIDS_VAR}={raw!r}: give a range such as 61000-61999") from None
    if not 1000 <= first <= last < 2**31 - 1 or last - first > 1_000_000:
        raise ValueError(f"{UIDS_VAR}={raw!r}: uids from 1000 up, at most 1,000,000 of them")
    return first, last


def drops_privileges(policy: str) -> bool:
    """True when bots under `policy` run as a uid of their own here (the runner is root)."""
    if policy not in USER_POLICIES:
        raise ValueError(f"unknown bot_user {policy!r} (choose {', '.join(USER_POLICIES)})")
    return os.geteuid() == 0 and policy != "runner"


def describe(policy: str) -> str:
    """What `policy` means on this machine, for the run's first line."""
    if os.geteuid() != 0:
        return f"as the runner's uid {os.geteuid()} (not root: no uid to drop)"
    if policy == "runner":
        return "as root (bot_user = \"runner\")"
    first, last = uid_range()
    return f"uid per {policy} from {first}-{last}, no capabilities"


def _lock_dir() -> str:
    for path in LOCK_DIRS:
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            info = os.lstat(path)
        except OSError:
            continue
        # Only a folder of root's that nobody else can write holds claims we may trust.
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022:
            return path
    raise OSError(f"no private folder for bot uid claims (tried {', '.join(LOCK_DIRS)})")


def claim(policy: str, key: str) -> BotUser:
    """A uid for one bot process under `policy` (`key` names the bot program for "bot")."""
    if not drops_privileges(policy):
        return BotUser(None)
    first, last = uid_range()
    folder = _lock_dir()
    mutex = os.open(os.path.join(folder, ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(mutex, fcntl.LOCK_EX)
        free = None
        for uid in range(first, last + 1):
            fd = os.open(os.path.join(folder, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                         0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                # Held: shared by the running processes of one program under "bot".
                if policy == "bot" and _read(fd) == f"bot {key}":
                    fcntl.flock(fd, fcntl.LOCK_SH)
                    return BotUser(uid, fd)
                os.close(fd)
                continue
            if free is None and policy == "seat":
                free = (uid, fd)
                break
            if free is None:
                free = (uid, fd)  # the first free one, if no running process of `key` is found
            else:
                os.close(fd)
        if free is None:
            raise UidPoolExhausted(f"all {last - first + 1} bot uids ({first}-{last}) are in use")
        uid, fd = free
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{policy} {key}".encode() if policy == "bot" else b"seat", 0)
        if policy == "bot":
            fcntl.flock(fd, fcntl.LOCK_SH)  # later processes of the same program join it
        # A process left by an earlier holder (a runner killed mid-match) must not meet this bot.
        kill_uid(uid)
        return BotUser(uid, fd)
    finally:
        os.close(mutex)


def _read(fd: int) -> str:
    try:
        return os.pread(fd, 512, 0).decode("utf-8", "replace")
    except OSError:
        return ""


def kill_uid(uid: int) -> int:
    """SIGKILL every process whose real or effective uid is `uid`; how many a scan of /proc found
    (0 when kill(-1) did it).

    As root: kill(-1) sent as that uid, one pass over the kernel's process list that a fork bomb
    cannot outrun. Only when that cannot be sent (or without root) is /proc scanned."""
    if os.geteuid() == 0:
        from arena.players.reaper import kill_as  # the reaper's own, stdlib-only helper

        if kill_as(uid):
            return 0
    found = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as fh:
                for line in fh:
                    if line.startswith(b"Uid:"):
                        real, effective = (int(v) for v in line.split()[1:3])
                        break
                else:
                    continue
        except (OSError, ValueError):
            continue
        if uid in (real, effective):
            found += 1
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
    return found


def remove_files_of(uid: int, folders) -> int:
    """Remove what `uid` owns directly in `folders` (world-writable host folders a bot may have
    filled); how many entries were removed. Entries are never followed through links."""
    import shutil

    removed = 0
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
                if info.st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
                removed += 1
            except OSError:
                pass
    return removed


def cannot_read(path: str, uid: int, gid: int) -> str | None:
    """Why `uid` cannot read `path` itself (a folder: list and enter it; a file: read it), or
    None. Only its own mode bits: the folders above it are `blocked_folders`' concern."""
    try:
        info = os.stat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    need = 0o5 if stat.S_ISDIR(info.st_mode) else 0o4
    if all(_allowed(info, uid, gid, bit) for bit in (0o4, 0o1) if need & bit):
        return None
    return f"{path} (mode {stat.S_IMODE(info.st_mode):04o}, owner uid {info.st_uid})"


def blocked_folders(path: str, uid: int, gid: int) -> list[tuple[str, str]] | None:
    """The folders on `path` that `uid` may not enter, each with the next step inside it (what it
    must be shown of that folder), outermost first; None when it can reach `path` (and read or
    run it). A missing path is OSError."""
    path = os.path.abspath(path)
    parts = path.split(os.sep)[1:]
    current = "/"
    blocked = []
    for part in parts:
        info = os.stat(current)
        if not _allowed(info, uid, gid, 0o1):
            blocked.append((current, os.path.join(current, part)))
        current = os.path.join(current, part)
    info = os.stat(current)
    need = 0o1 if stat.S_ISDIR(info.st_mode) else 0o4
    if not (_allowed(info, uid, gid, need) or _allowed(info, uid, gid, 0o1)):
        raise PermissionError(f"{current} (mode {stat.S_IMODE(info.st_mode):04o}) cannot be read "
                              f"by uid {uid}")
    return blocked or None


def _allowed(info: os.stat_result, uid: int, gid: int, bits: int) -> bool:
    mode = info.st_mode
    if info.st_uid == uid:
        return bool(mode & (bits << 6))
    if info.st_gid == gid:
        return bool(mode & (bits << 3))
    return bool(mode & bits)

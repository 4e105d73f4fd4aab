"""Run an `arena` command against hostile bots inside a PID namespace of its own.

Whatever a hostile bot manages to start or leave behind dies with the namespace, so a regression
cannot hurt the machine running the tests. The command runs in-process as the namespace's first
process (pid 1), exactly as in a container without an init: there the kernel drops every signal
the process installed no handler for. After the command returns, the same process lists every
bot process still alive in the namespace (found by the tag Arena puts in each bot's environment)
and reports it with the exit code.

    result = run_isolated(["run", str(config), "--db", str(db), "--executor", "serial", "-q"])
    assert result.returncode == 0 and result.leftovers == []
    check_database(db)

Needs root or unprivileged user namespaces for `unshare --pid`; `ISOLATION` says which is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from arena.players import users
from tests.support.paths import ROOT

RESULT = "hostile-result: "  # the driver's last stdout line: this, then JSON

# pid 1 of the namespace: runs `arena ARGS` in-process, then reports the tagged processes left.
DRIVER = r"""
import json, os, sys, time
sys.path[:0] = [sys.argv[1]]
from arena.players.launch import TAG_VAR

def tagged():
    found = []
    marker = f"{TAG_VAR}=".encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            with open(f"/proc/{name}/environ", "rb") as fh:
                if marker not in fh.read():
                    continue
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmdline = fh.read()[:200].replace(bytes(1), b" ").decode(errors="replace")
            found.append(f"{name} {cmdline}")
        except (OSError, IndexError):
            pass
    return found

sys.argv = ["arena", *sys.argv[2:]]
code = 0
try:
    from arena.cli import main
    main()
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
except BaseException as exc:
    import traceback
    traceback.print_exc()
    code = 99
deadline = time.time() + 3  # a bot being killed may take a moment to go
left = tagged()
while left and time.time() < deadline:
    time.sleep(0.05)
    left = tagged()
sys.stdout.flush()
print("\n" + "hostile-result: " + json.dumps({"returncode": code, "leftovers": left}), flush=True)
"""

# The bot uids of the hostile-bot isolation tests' drivers, which no other test takes
# (tests/conftest.py gives the xdist workers 62000-62799): those tests run one at a time (their
# xdist group), so the check that an attack left no process sees only their own bots.
HOSTILE_UIDS = "62800-62999"


def hostile_uid_range() -> tuple[int, int]:
    """HOSTILE_UIDS as (first, last)."""
    first, last = HOSTILE_UIDS.split("-")
    return int(first), int(last)


def isolation_missing() -> str:
    """Why a PID namespace cannot be made here ("" when it can)."""
    if not shutil.which("unshare"):
        return "no unshare(1)"
    probe = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"],
                           capture_output=True, text=True)
    return "" if probe.returncode == 0 else f"unshare --pid failed: {probe.stderr.strip()}"


ISOLATION = isolation_missing()


@dataclass
class Isolated:
    """What an isolated `arena` command did."""

    returncode: int | None  # the command's exit code; None when it never reported (killed)
    stdout: str  # without the result line
    stderr: str
    seconds: float  # wall time until the namespace ended
    leftovers: list[str]  # "pid command" of each bot process alive after the command returned
    signalled_at: float | None = None  # seconds after the start when `signal_after` was sent

    @property
    def output(self) -> str:
        """stdout and stderr together."""
        return self.stdout + self.stderr


def reveal_script(paths: list[str], uid: int, keep: Path) -> str:
    """Shell lines (run as root in a private mount namespace) that let `uid` reach `paths`
    through folders closed to it: each such folder is covered by a tmpfs showing only the path
    (held meanwhile under `keep`)."""
    lines = ["mount --make-rprivate /"]
    done = set()
    for path in paths:
        for folder, inner in users.blocked_folders(path, uid, uid) or ():
            if (folder, inner) in done:
                continue
            done.add((folder, inner))
            hold = f"{keep}/{len(done)}"
            is_folder = os.path.isdir(inner)
            lines += [f"mkdir -p {hold}" if is_folder else f"touch {hold}",
                      f"mount --bind {inner} {hold}",
                      f"mount -t tmpfs -o mode=0755 tmpfs {folder}",
                      f"mkdir -p {inner}" if is_folder else f"touch {inner}",
                      f"mount --bind {hold} {inner}"]
    return "\n".join(lines)


def shell_quote(text: str) -> str:
    """`text` as one single-quoted word for sh."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def run_isolated(args: list[str], timeout: float = 60, cwd: Path | None = None,
                 signal_after: tuple[float, int] | None = None,
                 ready: str | None = None, as_uid: int | None = None) -> Isolated:
    """Run `arena ARGS` as pid 1 of a new PID namespace (mount of /proc included).

    `signal_after=(seconds, sig)` sends `sig` to the command that many seconds after it started,
    or, with `ready`, that many seconds after a file of that path first exists. The
    namespace is killed at `timeout` (the result then has returncode None). The worktree's own
    arena is imported, whatever is installed. `as_uid` (root only) runs the command as that
    user, with the folders it needs (Python, the worktree, `cwd`) revealed to it.
    """
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, "-c", DRIVER, str(ROOT), *args]
    work = None
    if as_uid is None:
        argv = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", *command]
    else:
        work = Path(tempfile.mkdtemp(prefix="arena-hostile-"))
        needed = [os.path.realpath(sys.executable), os.path.dirname(os.__file__), sys.prefix,
                  str(ROOT), *([str(cwd)] if cwd else [])]
        script = (f"{reveal_script(needed, as_uid, work)}\n"
                  f"exec setpriv --reuid={as_uid} --regid={as_uid} --clear-groups "
                  + " ".join(shell_quote(part) for part in command))
        argv = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "--mount",
                "sh", "-c", script]
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    signalled_at = None
    try:
        if signal_after is not None:
            wait_s, sig = signal_after
            if ready is not None:
                while not os.path.exists(ready) and time.monotonic() - started < timeout:
                    time.sleep(0.05)
            time.sleep(wait_s)
            target = _namespace_init(proc.pid)
            if target is not None:
                os.kill(target, sig)
                signalled_at = time.monotonic() - started
        out, err = proc.communicate(timeout=max(1.0, timeout - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # unshare dies; --kill-child ends the namespace
        out, err = proc.communicate()
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    seconds = time.monotonic() - started
    head, _, tail = out.rpartition(RESULT)
    if not _:
        return Isolated(None, out, err, seconds, [], signalled_at)
    report = json.loads(tail.splitlines()[0])
    return Isolated(report["returncode"], head, err, seconds, report["leftovers"], signalled_at)


def _namespace_init(unshare_pid: int) -> int | None:
    """The host pid of the namespace's first process: the child that unshare forked."""
    for _ in range(100):
        try:
            with open(f"/proc/{unshare_pid}/task/{unshare_pid}/children") as fh:
                children = fh.read().split()
            if children:
                return int(children[0])
        except OSError:
            return None
        time.sleep(0.02)
    return None


def check_database(db: Path) -> sqlite3.Connection:
    """Open `db` and assert `PRAGMA integrity_check` is ok; the connection, for more queries."""
    conn = sqlite3.connect(db)
    assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    return conn

"""Who a bot runs as, and what the run says it enforces: the uid pool, folders a bot uid cannot
enter, the seccomp program, the run's first line and the refusal of unbounded plain mode as root."""

from __future__ import annotations

import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.errors import ConfigError
from arena.players import launch, reaper, users
from arena.registry import registry_dir
from arena.session import isolation_check
from tests.support.config import write_config
from tests.support.paths import BOTS

runner = CliRunner()
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs a root runner")


@ROOT_ONLY
def test_seat_claims_are_exclusive_and_released(monkeypatch):
    monkeypatch.setenv(users.UIDS_VAR, "61990-61991")
    first = users.claim("seat", "a@1")
    second = users.claim("seat", "a@1")
    try:
        assert {first.uid, second.uid} == {61990, 61991}
        with pytest.raises(users.UidPoolExhausted, match="61990-61991"):
            users.claim("seat", "b@1")
        first.release()
        first.release()  # safe twice
        third = users.claim("seat", "c@1")
        assert third.uid == 61990  # given back, taken again
        third.release()
    finally:
        first.release()
        second.release()


@ROOT_ONLY
def test_bot_claims_share_a_uid_per_program_only(monkeypatch):
    monkeypatch.setenv(users.UIDS_VAR, "61980-61983")
    a1, a2, b1 = users.claim("bot", "a@1"), users.claim("bot", "a@1"), users.claim("bot", "b@1")
    try:
        assert a1.uid == a2.uid and b1.uid != a1.uid
    finally:
        for claim in (a1, a2, b1):
            claim.release()


def test_a_runner_that_is_not_root_keeps_its_uid(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert users.claim("seat", "a@1").uid is None
    assert "not root" in users.describe("seat")


@pytest.mark.parametrize("raw", ["abc", "10-5", "0-100", "61000"])
def test_a_bad_uid_range_is_named(monkeypatch, raw):
    monkeypatch.setenv(users.UIDS_VAR, raw)
    with pytest.raises(ValueError, match=repr(raw).replace("'", ".")):
        users.uid_range()


def test_blocked_folders_name_each_closed_folder_with_its_next_step(tmp_path):
    closed = tmp_path / "closed"
    inner = closed / "open" / "prog"
    inner.parent.mkdir(parents=True)
    inner.write_text("x")
    os.chmod(tmp_path, 0o755)
    os.chmod(closed, 0o700)
    uid = 61999
    blocked = users.blocked_folders(str(inner), uid, uid)
    assert blocked is not None and (str(closed), str(closed / "open")) in blocked
    os.chmod(closed, 0o755)
    assert (str(closed), str(closed / "open")) not in (users.blocked_folders(str(inner), uid, uid)
                                                        or [])


def test_the_seccomp_program_refuses_new_user_namespaces_only():
    program = reaper.no_userns_filter("x86_64")
    assert program is not None and len(program) % 8 == 0
    insns = [struct.unpack("HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    # Every jump lands inside the program; the last three instructions return.
    for index, (code, jt, jf, _) in enumerate(insns):
        if code & 0x07 == 0x05:  # BPF_JMP
            assert index + 1 + max(jt, jf) < len(insns)
    assert all(code == 0x06 for code, *_ in insns[-3:])
    assert reaper.no_userns_filter("sparc") is None


@pytest.mark.skipif(os.uname().machine not in reaper.ARCHES, reason="no filter for this CPU")
def test_a_confined_process_can_fork_but_not_unshare_a_user_namespace():
    code = (f"import sys, os, ctypes; sys.path.insert(0, {str(Path(reaper.__file__).parent)!r}); "
            "import reaper; reaper.become(None); "
            "libc = ctypes.CDLL(None, use_errno=True); "
            "pid = os.fork(); os._exit(0) if pid == 0 else os.waitpid(pid, 0); "
            "print('fork ok'); print('unshare', libc.unshare(0x10000000), ctypes.get_errno())")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    assert "fork ok" in run.stdout and "unshare -1 1" in run.stdout  # EPERM


def test_run_says_what_bounds_each_bot_on_its_first_line(tmp_path, monkeypatch):
    from arena.cli._app import console

    monkeypatch.setattr(console, "_width", 1000)  # one line, however long
    out = runner.invoke(app, ["run", str(write_config(tmp_path)), "--db", str(tmp_path / "a.db"),
                              "-q"])
    assert out.exit_code == 0, out.output
    first = out.output.splitlines()[0]
    assert "bots run " in first and "/tmp" in first
    assert ("cgroup v" in first) or ("no cgroups" in first)
    if os.geteuid() == 0:
        assert "uid per seat" in first


@ROOT_ONLY
def test_plain_mode_as_root_with_nothing_to_bound_bots_is_refused(tmp_path, monkeypatch):
    from arena.players import cgroups

    monkeypatch.setattr(cgroups, "support",
                        lambda: cgroups.CgroupSupport("none", (), "/sys/fs/cgroup is read-only"))
    monkeypatch.setattr(launch, "tmpfs_mounts_work", lambda: False)
    with pytest.raises(ConfigError, match="no writable cgroups"):
        isolation_check("none", "seat", False)
    assert "no cgroups" in isolation_check("none", "seat", True)  # said so explicitly
    config = write_config(tmp_path)
    config.write_text('sandbox = "none"\n' + config.read_text())
    db = tmp_path / "a.db"
    out = runner.invoke(app, ["run", str(config), "--db", str(db), "-q"])
    assert out.exit_code == 2 and not db.exists()
    assert len(out.output.strip().splitlines()) == 1
    assert "allow_unconfined = true" in out.output


@ROOT_ONLY
def test_bot_user_runner_as_root_is_refused_in_plain_mode_unless_allowed():
    with pytest.raises(ConfigError, match="runs every bot as root"):
        isolation_check("none", "runner", False)
    assert "as root" in isolation_check("none", "runner", True)


@ROOT_ONLY
def test_a_bot_folder_closed_to_other_users_runs_from_its_readable_snapshot(tmp_path):
    # The run copies the folder (the runner can read it) into a snapshot every bot uid can read.
    folder = tmp_path / "closed"
    folder.mkdir(mode=0o700)
    (folder / "bot.py").write_text((BOTS / "random_bot.py").read_text())
    (folder / "arenabot.py").write_text((BOTS / "arenabot.py").read_text())
    tmp_path.chmod(0o755)
    config = tmp_path / "t.toml"
    config.write_text(write_config(tmp_path).read_text() + f'''
[[bots]]
name = "closed"
command = ["python", "bot.py"]
workdir = "{folder}"
''')
    db = tmp_path / "a.db"
    out = runner.invoke(app, ["run", str(config), "--db", str(db), "-q"])
    assert out.exit_code == 0, out.output
    with sqlite3.connect(db) as conn:
        workdir, digest = conn.execute(
            "select workdir, content_hash from bots where name = 'closed'").fetchone()
        forfeits = conn.execute("select count(*) from games where culprit_bot = 'closed'").fetchone()
    assert digest and workdir == str(registry_dir(db) / digest) and forfeits == (0,)


def _execed(parent: int, args: list[bytes]) -> bool:
    """Whether a child of `parent` has exec'd the program given `args` (after its argv[0]; the
    reaper's own command line, which a child has until then, holds them later on)."""
    for child in reaper.children(parent):
        try:
            if Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")[1:1 + len(args)] == args:
                return True
        except OSError:
            pass
    return False


@ROOT_ONLY
def test_the_reaper_keeps_the_uid_claimed_until_the_bots_tree_is_gone(monkeypatch):
    # A runner that dies drops its claim at once; its bot's reaper still kills every process of
    # the uid. Were the uid free meanwhile, a bot another runner started as it would die too.
    monkeypatch.setenv(users.UIDS_VAR, "61970-61970")
    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    folder.chmod(0o755)
    prepared = launch.Launcher("none", user="seat").prepare(
        ["python3", "-c", "import time; time.sleep(60)"], str(folder), {})
    proc = subprocess.Popen(prepared.argv, cwd=prepared.cwd, env=prepared.env,
                            preexec_fn=prepared.preexec, pass_fds=prepared.pass_fds,
                            start_new_session=True, stdin=subprocess.DEVNULL)
    try:
        assert prepared.user.uid == 61970
        deadline = time.monotonic() + 30
        while not _execed(proc.pid, [b"-c", b"import time; time.sleep(60)"]) \
                and time.monotonic() < deadline:
            time.sleep(0.02)  # until exec: before it, the forked reaper still holds every fd
        (bot,) = reaper.children(proc.pid)
        held = [os.readlink(f"/proc/{bot}/fd/{fd}") for fd in os.listdir(f"/proc/{bot}/fd")]
        assert not [path for path in held if "arena-bot-uids" in path], held  # the reaper's only
        prepared.user.release()  # the runner's copy gone, as when the runner dies
        with pytest.raises(users.UidPoolExhausted):
            users.claim("seat", "next@1").release()
        proc.send_signal(launch.REAPER_SIGNAL)  # the hard stop: kill the tree, then exit
        proc.wait(timeout=30)
        again = users.claim("seat", "next@1")
        assert again.uid == 61970
        again.release()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        prepared.cleanup()
        shutil.rmtree(folder, ignore_errors=True)

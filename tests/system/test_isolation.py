"""Hostile bots against the host, as root and as another user, in plain mode and under bwrap.

Every tournament here runs in a driver process inside its own PID namespace (`unshare --pid
--fork --mount-proc`), so a fork bomb or a kill(-1) that gets through cannot hurt the machine.
Each test checks: the tournament finishes, the bot's own failure (if any) is recorded with its
reason, no process of it is left, the database is intact, and the attack did not reach the host.
The peak memory and task figures of each bot's cgroup are printed (`pytest -s` shows them).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from arena.players import cgroups, users
from arena.players.launch import sandbox_status
from tests.support.hostile import HOSTILE_UIDS, hostile_uid_range, reveal_script, shell_quote
from tests.support.paths import FAKES, ROOT

BOTS = ROOT / "bots"
BWRAP_OK = sandbox_status()[0] == "bwrap"
MODES = ["none", pytest.param("bwrap", marks=pytest.mark.skipif(
    not BWRAP_OK, reason=f"bwrap cannot run here: {sandbox_status()[1]}"))]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs a root runner")
HAS_UNSHARE = shutil.which("unshare") is not None and os.geteuid() == 0
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not HAS_UNSHARE, reason="needs root and unshare for a PID namespace per test")]
CGROUPS = cgroups.support()
NEEDS_CGROUPS = pytest.mark.skipif(CGROUPS.version == "none", reason=f"no cgroups: {CGROUPS.why}")
OTHER_UID = 65534

CONFIG = """
name = "isolation"
game = "xeri"
seed = 5
deals = 1
sandbox = "{sandbox}"
[options]
rounds = 1
[time]
move_ms = {move_ms}
[limits]
memory_mb = {memory_mb}
processes = {processes}
tmp_mb = {tmp_mb}
[[bots]]
name = "bad"
command = ["python", "{fakes}/attack_bot.py", "{mode}", "{arg}"]
workdir = "{fakes}"
[[bots]]
manifest = "{bots}/random.toml"
args = ["1"]
"""

DRIVER = """
import json, sys
from arena.config import load_config
from arena.executors import SerialExecutor
from arena.players import process
from arena.store import Store
from arena.tournament import run_tournament

peaks = {}
close = process.ProcessPlayer.close

async def noting_close(self):
    if self.launch is not None and not self._closed:
        figures = self.stats()
        mine = peaks.setdefault(self.spec.name, {})
        for key, value in figures.items():
            mine[key] = max(mine.get(key, 0), value)
    await close(self)

process.ProcessPlayer.close = noting_close
config, bots, rows = load_config(sys.argv[1])
store = Store(sys.argv[2])
run = run_tournament(config, bots, rows, store, SerialExecutor())
status = store.db.execute("select status from tournaments where id = ?",
                          [run.tournament_id]).fetchone()[0]
print(json.dumps({"status": status, "peaks": peaks}))
"""


def run_isolated(mode: str, sandbox: str, *, arg: str = "", as_uid: int | None = None,
                 memory_mb: int = 2048, processes: int = 64, tmp_mb: int = 256,
                 move_ms: int = 5000, timeout: float = 120) -> dict:
    """Run a two-bot tournament with the hostile bot in `mode`, its driver in a PID namespace of
    its own (as `as_uid` when given); the summary, the games and the bad bot's log."""
    work = Path(tempfile.mkdtemp(prefix="arena-isolation-"))
    os.chmod(work, 0o777)
    config = work / "t.toml"
    config.write_text(textwrap.dedent(CONFIG).format(
        sandbox=sandbox, mode=mode, arg=arg, fakes=FAKES, bots=BOTS, memory_mb=memory_mb,
        processes=processes, tmp_mb=tmp_mb, move_ms=move_ms))
    db = work / "arena.db"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT),
           "HOME": str(work), "LANG": "C.UTF-8"}
    # Bot uids no other test takes (tests/conftest.py): the check that the attack left no process
    # must not see a bot of another test of this worker that a SIGKILLed driver left dying.
    env[users.UIDS_VAR] = HOSTILE_UIDS
    driver = f"{sys.executable} -c {shell_quote(DRIVER)} {config} {db}"
    if as_uid is None:
        script = driver
    else:
        needed = [os.path.realpath(sys.executable), os.path.dirname(os.__file__), sys.prefix,
                  str(ROOT), str(FAKES)]
        keep = work / "keep"
        script = (f"{reveal_script(needed, as_uid, keep)}\n"
                  f"exec setpriv --reuid={as_uid} --regid={as_uid} --clear-groups {driver}")
    try:
        run = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "--mount", "sh", "-c",
                              script], capture_output=True, text=True, timeout=timeout, env=env,
                             cwd=work)
        assert run.returncode == 0, run.stderr[-3000:]
        summary = json.loads(run.stdout.strip().splitlines()[-1])
        with sqlite3.connect(db) as conn:
            assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
            games = [dict(zip(("termination", "culprit", "detail", "evidence"), row))
                     for row in conn.execute("select termination, culprit_bot, detail, evidence "
                                             "from games order by ordinal")]
            log = "".join(r[0] for r in conn.execute(
                "select stderr from bot_logs where bot = 'bad'"))
        print(f"{mode}/{sandbox}/uid {as_uid or 0}: peaks {summary['peaks'].get('bad', {})}")
        summary.update(games=games, log=log, work=work)
        return summary
    finally:
        shutil.rmtree(work, ignore_errors=True)


def said(log: str, key: str) -> str:
    """The value the hostile bot reported for `key` (its last report)."""
    values = [ln.split("=", 1)[1] for ln in log.splitlines() if ln.startswith(f"hostile: {key}=")]
    assert values, f"the bot never reported {key}: {log[-2000:]}"
    return values[-1]


def no_bot_uid_process_left() -> None:
    """No process of the hostile tests' bot uids is alive (the attack left nothing behind)."""
    first, last = hostile_uid_range()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/status") as fh:
                    uid = int(next(ln for ln in fh if ln.startswith("Uid:")).split()[1])
            except (OSError, StopIteration, ValueError):
                continue
            assert not first <= uid <= last, f"process {name} of bot uid {uid} is left"


@ROOT_ONLY
@pytest.mark.parametrize("sandbox", MODES)
def test_a_root_runners_bot_runs_as_an_unprivileged_uid(sandbox):
    result = run_isolated("whoami", sandbox)
    assert result["status"] == "finished"
    first, last = hostile_uid_range()
    uid = int(said(result["log"], "uid"))
    assert first <= uid <= last and int(said(result["log"], "gid")) == uid
    assert said(result["log"], "groups") in ("-", str(uid))  # no supplementary group (not 0)
    assert int(said(result["log"], "caps"), 16) == 0
    no_bot_uid_process_left()


@pytest.mark.parametrize("sandbox", MODES)
def test_another_users_bot_runs_as_that_user(sandbox):
    result = run_isolated("whoami", sandbox, as_uid=OTHER_UID)
    assert result["status"] == "finished"
    assert int(said(result["log"], "uid")) == OTHER_UID
    assert int(said(result["log"], "caps"), 16) == 0


@pytest.mark.parametrize("as_uid", [None, OTHER_UID], ids=["root", "user"])
@pytest.mark.parametrize("sandbox", MODES)
def test_no_bot_writes_a_kernel_setting(sandbox, as_uid):
    before = Path("/proc/sys/kernel/core_pattern").read_text()
    result = run_isolated("sysctl", sandbox, as_uid=as_uid)
    assert result["status"] == "finished"
    assert said(result["log"], "core_pattern").startswith("refused")
    assert said(result["log"], "drop_caches").startswith("refused")
    assert Path("/proc/sys/kernel/core_pattern").read_text() == before


@pytest.mark.parametrize("as_uid", [None, OTHER_UID], ids=["root", "user"])
@pytest.mark.parametrize("sandbox", MODES)
def test_no_bot_creates_a_user_namespace(sandbox, as_uid):
    result = run_isolated("userns", sandbox, as_uid=as_uid)
    assert result["status"] == "finished"
    assert said(result["log"], "unshare").startswith("refused")
    assert said(result["log"], "unshare_cmd").startswith("refused")


@pytest.mark.parametrize("as_uid", [None, OTHER_UID], ids=["root", "user"])
@pytest.mark.parametrize("sandbox", MODES)
def test_a_fork_bomb_is_a_resource_limit_and_leaves_nothing(sandbox, as_uid):
    result = run_isolated("forkbomb", sandbox, as_uid=as_uid, processes=32)
    assert result["status"] == "finished"
    bad = [g for g in result["games"] if g["culprit"] == "bad"]
    assert bad and all(g["termination"] == "resource_limit" for g in bad), result["games"]
    assert all("processes" in g["evidence"] for g in bad), bad
    if as_uid is None:
        no_bot_uid_process_left()


@pytest.mark.parametrize("as_uid", [None, OTHER_UID], ids=["root", "user"])
@pytest.mark.parametrize("sandbox", MODES)
def test_kill_minus_one_reaches_only_the_bot_itself(sandbox, as_uid):
    if sandbox == "none" and as_uid is not None:
        pytest.skip("plain mode as another user: the bot shares the runner's uid (documented)")
    result = run_isolated("killall", sandbox, as_uid=as_uid)
    # The runner and the opponent survived: every game recorded, the tournament ended.
    assert result["status"] == "finished" and len(result["games"]) == 2
    assert said(result["log"], "killall") == "sent"
    # Plain mode: kill(-1) spares its caller, and the bot's uid owns nothing else. bwrap: it also
    # ends the bot's own sandbox, which is the bot's crash, never the opponent's.
    for game in result["games"]:
        assert game["termination"] == "normal" or (game["termination"] == "crash"
                                                   and game["culprit"] == "bad"), game
    if as_uid is None:
        no_bot_uid_process_left()


@ROOT_ONLY
@pytest.mark.parametrize("sandbox", MODES)
def test_a_bot_cannot_kill_its_reaper_or_outlive_its_match(sandbox):
    result = run_isolated("escape", sandbox)
    assert result["status"] == "finished"
    assert said(result["log"], "parent").startswith("refused")
    no_bot_uid_process_left()


@ROOT_ONLY
@NEEDS_CGROUPS
@pytest.mark.parametrize("sandbox", MODES)
def test_memory_of_the_whole_tree_is_bounded(sandbox):
    # Ten children of 60 MiB each: every process is far below RLIMIT_AS, the tree is not.
    result = run_isolated("children", sandbox, arg="60", memory_mb=256)
    assert result["status"] == "finished"
    bad = [g for g in result["games"] if g["culprit"] == "bad"]
    assert bad and bad[0]["termination"] == "resource_limit", result["games"]
    assert "memory" in bad[0]["evidence"]
    peak = result["peaks"]["bad"].get("memory_peak", 0)
    assert peak <= (256 + 64) << 20, f"peak {peak >> 20} MiB over 256 MiB + slack"
    no_bot_uid_process_left()


@pytest.mark.parametrize("as_uid", [None, OTHER_UID], ids=["root", "user"])
@pytest.mark.parametrize("sandbox", MODES)
def test_tmp_is_bounded(sandbox, as_uid):
    result = run_isolated("shm", sandbox, arg="200", tmp_mb=32, memory_mb=2048, as_uid=as_uid)
    assert result["status"] == "finished"
    if sandbox == "none" and as_uid is not None:
        # A host folder, measured by the reaper: the bot is stopped soon after it is over. Its
        # /dev/shm is the host's and its files are the runner's user's: documented, removed here.
        for name in os.listdir("/dev/shm"):
            if name.startswith("fill-") and os.stat(f"/dev/shm/{name}").st_uid == as_uid:
                os.unlink(f"/dev/shm/{name}")
        bad = [g for g in result["games"] if g["culprit"] == "bad"]
        assert bad and bad[0]["termination"] == "resource_limit", result["games"]
        assert "/tmp 32 MiB" in bad[0]["evidence"], bad[0]
        return
    tmp = said(result["log"], "tmp")
    assert tmp.startswith("32 MiB then") or tmp.startswith("31 MiB then"), tmp
    if sandbox == "bwrap":
        shm = said(result["log"], "shm")
        assert shm.startswith("32 MiB then") or shm.startswith("31 MiB then"), shm
    # Nothing the bot wrote is left in the host's shared folders.
    for folder in ("/dev/shm", "/tmp"):
        left = [n for n in os.listdir(folder) if n.startswith("fill-")]
        assert not left, f"left in {folder}: {left}"
    no_bot_uid_process_left()


@ROOT_ONLY
@NEEDS_CGROUPS
@pytest.mark.parametrize("sandbox", MODES)
def test_a_bot_cannot_widen_its_cpuset(sandbox):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: nothing to widen to")
    result = run_isolated("affinity", sandbox)
    assert result["status"] == "finished"
    assert len(said(result["log"], "affinity").split(",")) == 1  # the match's one pinned core


@ROOT_ONLY
@pytest.mark.parametrize("sandbox", MODES)
def test_a_bot_cannot_change_its_own_program(sandbox):
    program = FAKES / "attack_bot.py"
    before = program.read_bytes()
    result = run_isolated("selfwrite", sandbox)
    assert result["status"] == "finished"
    assert said(result["log"], "program").startswith("refused")
    assert said(result["log"], "folder").startswith("refused")
    assert program.read_bytes() == before and not (FAKES / "planted.txt").exists()

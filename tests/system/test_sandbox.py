"""Misbehaving bots in real tournaments, with the sandbox off and on: limits, isolation, cleanup.

Each case runs a round robin of the bad bot and two random bots into a database file, and checks
the recorded reason and evidence, that the random bots' own match was normal, and that no process
of the bot is left afterwards (found by a mark in the command line of the bot and its children).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from arena.config import load_config
from arena.executors import SerialExecutor
from arena.players.launch import (
    ARENA_PACKAGE,
    TMP_PREFIX,
    held_tmpdir,
    sandbox_status,
    sweep_leftovers,
)
from arena.store import Store
from arena.tournament import run_tournament
from tests.support.paths import BOTS, FAKES, ROOT

BWRAP_OK = sandbox_status()[0] == "bwrap"
MODES = ["none", pytest.param("bwrap", marks=pytest.mark.skipif(
    not BWRAP_OK, reason=f"bwrap cannot run here: {sandbox_status()[1]}"))]

CONFIG = """
name = "sandbox"
game = "xeri"
seed = 3
deals = 1
sandbox = "{sandbox}"
[options]
rounds = 1
[time]
move_ms = {move_ms}
startup_ms = {startup_ms}
[limits]
memory_mb = {memory_mb}
cpu_s = {cpu_s}
processes = {processes}
[[bots]]
name = "bad"
command = ["python", "{fakes}/misbehaving_bot.py", "{mode}", "{when}", "{mark}", "{probe}"]
workdir = "{fakes}"
[[bots]]
manifest = "{bots}/random.toml"
args = ["1"]
[[bots]]
manifest = "{bots}/random.toml"
name = "random-b"
args = ["2"]
"""


def marked(mark: str) -> list[int]:
    """Live (non-zombie) processes whose command line holds `mark`."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                if mark.encode() in fh.read():
                    pids.append(int(name))
        except OSError:
            pass
    return pids


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def tournament(tmp_path: Path, sandbox: str, mode: str, when: int = 1, move_ms: int = 5000,
               memory_mb: int = 2048, probe: str = "env", cpu_s: int = 600,
               startup_ms: int = 10_000, processes: int = 64):
    """Run the round robin; return (games rows, bad bot's stderr, mark, db path)."""
    mark = f"mark-{uuid.uuid4().hex}"
    path = tmp_path / "t.toml"
    path.write_text(textwrap.dedent(CONFIG).format(
        sandbox=sandbox, move_ms=move_ms, startup_ms=startup_ms, memory_mb=memory_mb, cpu_s=cpu_s,
        processes=processes,
        fakes=FAKES, bots=BOTS, mode=mode,
        when=when, mark=mark, probe=probe))
    db = tmp_path / "arena.db"
    store = Store(str(db))
    config, bots, rows = load_config(path)
    run_tournament(config, bots, rows, store, SerialExecutor())
    cols = ("id", "termination", "culprit_bot", "detail", "evidence", "duration_ms", "bots")
    games = [dict(zip(cols, r)) for r in store.db.execute(
        "select g.id, g.termination, g.culprit_bot, g.detail, g.evidence, g.duration_ms, "
        "group_concat(s.bot) as bots from games g join game_seats s on s.game_id = g.id "
        "group by g.id order by g.ordinal")]
    # The database is consistent: every game of the round robin recorded, the file intact.
    assert len(games) == 6 and store.db.execute("pragma integrity_check").fetchone()[0] == "ok"
    log = "".join(r[0] for r in store.db.execute(
        "select stderr from bot_logs where bot = 'bad'"))
    return games, log, mark, db


def check_common(games, mark, reason=None, evidence=None):
    """Bad bot's games have `reason` (or are normal); the random bots' games are normal; no leftovers."""
    bad = [g for g in games if "bad" in g["bots"].split(",")]
    others = [g for g in games if "bad" not in g["bots"].split(",")]
    assert others and all(g["termination"] == "normal" for g in others)
    for g in bad:
        if reason is None:
            assert g["termination"] == "normal", g
        else:
            assert g["termination"] == reason and g["culprit_bot"] == "bad", g
            if evidence:
                assert re.search(evidence, g["evidence"]), g["evidence"]
    deadline = time.time() + 3
    while marked(mark) and time.time() < deadline:
        time.sleep(0.05)
    assert marked(mark) == [], "a process of the bot outlived its match"
    return bad


@pytest.mark.parametrize("sandbox", MODES)
def test_unbounded_allocation_is_a_resource_limit(tmp_path, sandbox):
    games, log, mark, _ = tournament(tmp_path, sandbox, "alloc", when=2, memory_mb=256)
    check_common(games, mark, "resource_limit", r"memory 256 MiB")
    held = [int(n) for n in re.findall(r"held (\d+) MiB", log)]
    assert held and max(held) < 256  # it never held more than its limit


@pytest.mark.exclusive  # a CPU-time limit of 1 s: no other test's load
@pytest.mark.parametrize("sandbox", MODES)
def test_cpu_time_limit(tmp_path, sandbox):
    games, _, mark, _ = tournament(tmp_path, sandbox, "spin", when=2, cpu_s=1, move_ms=6000)
    check_common(games, mark, "resource_limit", r"cpu time 1 s.*SIGXCPU")


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.parametrize("mode, when, reason, evidence, move_ms, startup_ms", [
    # A 400 ms move and an 800 ms start: exclusive, so that no other test's load decides them.
    pytest.param("sleep", 3, "timeout", r"^no answer in \d+ ms \(limit 400 ms", 400, 10_000,
                 marks=pytest.mark.exclusive),  # never answers
    pytest.param("no_ready", 1, "startup_failure", r"hello", 5000, 800,
                 marks=pytest.mark.exclusive),  # fails at start
    ("crash", 1, "crash", r"^exit code 3$", 5000, 10_000),  # crashes at its first move
    ("crash", 6, "crash", r"^exit code 3$", 5000, 10_000),  # crashes mid-game
    ("wrong_type", 2, "bad_message", r"ready", 5000, 10_000),
    ("stale_then_ok", 2, None, None, 5000, 10_000),  # an old request_id is ignored, not a failure
    ("stderr", 1, None, None, 5000, 10_000),  # floods stderr: kept bounded, the games are normal
])
def test_misbehaviour_is_recorded_with_its_reason_in_a_real_tournament(
        tmp_path, sandbox, mode, when, reason, evidence, move_ms, startup_ms):
    games, log, mark, _ = tournament(tmp_path, sandbox, mode, when=when, move_ms=move_ms,
                                     startup_ms=startup_ms)
    bad = check_common(games, mark, reason, evidence)
    assert len(bad) == 4  # two matches of two games each, all recorded
    if mode == "stderr":
        assert 0 < len(log) <= 4 * 64 * 1024 + 1000  # head and tail kept per process, never all


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.parametrize("mode, reason, line", [
    ("illegal", "illegal_action", r'^\{"type": "action", "request_id": \d+, "action": \{"type": "no_such_move"\}\}$'),
    ("garbage", "bad_message", r"^this is not json$"),
])
def test_evidence_is_the_line_the_bot_sent(tmp_path, sandbox, mode, reason, line):
    games, _, mark, _ = tournament(tmp_path, sandbox, mode, when=2)
    check_common(games, mark, reason, line)


@pytest.mark.parametrize("sandbox", MODES)
def test_twenty_children_are_all_killed(tmp_path, sandbox):
    games, log, mark, _ = tournament(tmp_path, sandbox, "fork20")
    check_common(games, mark)
    lines = re.findall(r"children: ([\d ]+)", log)
    assert lines and all(len(line.split()) == 20 for line in lines)
    if sandbox == "none":  # by PID too (in bwrap the pids are of its own namespace)
        assert not any(alive(int(p)) for line in lines for p in line.split())


@pytest.mark.parametrize("sandbox", MODES)
def test_setsid_double_fork_child_is_killed(tmp_path, sandbox):
    games, log, mark, _ = tournament(tmp_path, sandbox, "setsid_fork")
    assert "double-forked" in log
    check_common(games, mark)


@pytest.mark.parametrize("sandbox", MODES)
def test_orphan_with_scrubbed_environment_dies_with_its_crashed_bot(tmp_path, sandbox):
    # The escaped sleeper is in no tree, session or group of the bot and carries no tag: only the
    # reaper (whose tree it was re-parented to) or the PID namespace can find it.
    games, log, mark, _ = tournament(tmp_path, sandbox, "setsid_crash", when=2)
    assert "environment scrubbed" in log
    check_common(games, mark, "crash", r"exit code 3")


@pytest.mark.parametrize("sandbox", MODES)
def test_process_limit_holds_even_for_root(tmp_path, sandbox):
    games, log, mark, _ = tournament(tmp_path, sandbox, "fork_many", processes=20)
    # A root runner's bot runs as a uid of its own, so RLIMIT_NPROC holds for it as for any
    # user's: the kernel refuses the 21st task and the bot dies of it, or the reaper's count sees
    # it over the limit first and kills the tree; both are the processes limit, with evidence.
    check_common(games, mark, "resource_limit",
                 r"limit processes 20: (processes limit 20 exceeded \(2\d|exit code 1)")


@pytest.mark.parametrize("sandbox", MODES)
def test_closed_stdout_is_a_crash_at_once(tmp_path, sandbox):
    games, _, mark, _ = tournament(tmp_path, sandbox, "close_stdout", when=2, move_ms=8000)
    bad = check_common(games, mark, "crash", r"stdout closed, process still running")
    assert all(g["duration_ms"] < 4000 for g in bad)  # not after the 8 s move time


@pytest.mark.parametrize("sandbox", MODES)
def test_100mb_line_evidence_is_its_first_300_chars(tmp_path, sandbox):
    games, _, mark, _ = tournament(tmp_path, sandbox, "bigline", when=2)
    head = ('{"type": "action", "pad": "' + "A" * 300)[:300]
    bad = check_common(games, mark, "resource_limit")
    for g in bad:
        assert g["evidence"].startswith(head + "…") and len(g["evidence"]) < 400
        assert "stdout line over 1048576 bytes" in g["detail"]


@pytest.fixture
def listener():
    """A TCP server on 127.0.0.1 that counts connections."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    yield server
    server.close()


@pytest.mark.parametrize("sandbox", MODES)
def test_tcp_to_localhost(tmp_path, sandbox, listener):
    port = listener.getsockname()[1]
    games, log, mark, _ = tournament(tmp_path, sandbox, "probe", probe=f"tcp:{port}")
    check_common(games, mark)
    if sandbox == "bwrap":
        assert "probe: failed tcp" in log and "probe: ok" not in log
    else:
        assert "probe: ok tcp" in log  # without the sandbox the network is the host's


@pytest.mark.parametrize("sandbox", MODES)
def test_reading_the_database(tmp_path, sandbox):
    db = tmp_path / "arena.db"
    games, log, mark, _ = tournament(tmp_path, sandbox, "probe", probe=f"read:{db}")
    check_common(games, mark)
    if sandbox == "bwrap" or os.geteuid() == 0:
        # bwrap shows no database; plain mode as root runs the bot as a uid of its own, which may
        # not enter the root-only folder the database is in.
        assert "probe: failed read" in log and "probe: ok" not in log
    else:
        assert "probe: ok read" in log  # documented: plain mode does not hide the file system


@pytest.mark.parametrize("sandbox", MODES)
def test_writing_outside_its_temp_folder(tmp_path, sandbox):
    target = tmp_path / "escaped.txt"
    games, log, mark, _ = tournament(tmp_path, sandbox, "probe", probe=f"write:{target}")
    check_common(games, mark)
    if sandbox == "bwrap" or os.geteuid() == 0:
        assert "probe: failed write" in log and not target.exists()
    else:
        assert target.exists()  # the runner's own uid: plain mode is not a sandbox


@pytest.mark.parametrize("sandbox", MODES)
def test_bot_folder_is_read_only_in_bwrap(tmp_path, sandbox):
    if sandbox == "none":
        pytest.skip("plain mode does not protect the bot's folder")
    target = FAKES / "written-by-bot.txt"
    games, log, mark, _ = tournament(tmp_path, sandbox, "probe", probe=f"write:{target}")
    check_common(games, mark)
    assert "probe: failed write" in log and not target.exists()


@pytest.mark.parametrize("sandbox", MODES)
def test_environment_has_no_runner_secrets(tmp_path, sandbox, monkeypatch):
    monkeypatch.setenv("RAY_AUTH_TOKEN", "s3cret")
    games, log, mark, _ = tournament(tmp_path, sandbox, "probe", probe="env")
    check_common(games, mark)
    assert "probe: ok env" in log and "s3cret" not in log


DRIVER = """
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests"]
from dataclasses import replace
from arena.match import MatchSpec, GamePlan, run_match
from arena.protocol import TimeControl
from tests.support.bots import misbehaving
mark, sandbox = sys.argv[2], sys.argv[3]
bots = []
for mode in ("fork20", "sleep"):
    spec = misbehaving(mode, 1)
    bots.append(replace(spec, name=mode, command=spec.command + (mark,), sandbox=sandbox))
plans = (GamePlan("g", 0, 0, 0, 1, (0, 1)),)
run_match(MatchSpec("m", "xeri", {}, tuple(bots), plans, TimeControl(startup_ms=10000, move_ms=60000)))
"""


@pytest.mark.exclusive  # waits for its bots to start within a deadline
@pytest.mark.parametrize("sandbox", MODES)
def test_bots_die_with_a_sigkilled_driver(tmp_path, sandbox):
    mark = f"mark-{uuid.uuid4().hex}"
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(ROOT), mark, sandbox],
                              start_new_session=True)
    try:
        deadline = time.time() + 20
        while len(marked(mark)) < 22 and time.time() < deadline:  # 2 bots + 20 children
            time.sleep(0.05)
        assert len(marked(mark)) >= 22, "the bots did not start"
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        deadline = time.time() + 5
        while marked(mark) and time.time() < deadline:
            time.sleep(0.05)
        assert marked(mark) == []
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
        if driver.poll() is None:
            driver.kill()


def test_limits_layer_tournament_then_manifest_then_entry(tmp_path):
    (tmp_path / "bot.toml").write_text(textwrap.dedent("""
        name = "m"
        command = ["python", "random_bot.py"]
        workdir = "%s"
        [limits]
        cpu_s = 20
        open_files = 64
        """ % BOTS))
    (tmp_path / "t.toml").write_text(textwrap.dedent("""
        name = "t"
        game = "xeri"
        sandbox = "none"
        [limits]
        memory_mb = 512
        cpu_s = 10
        line_bytes = 4096
        [[bots]]
        manifest = "bot.toml"
        limits = { open_files = 32 }
        [[bots]]
        name = "plain"
        command = ["python", "random_bot.py"]
        workdir = "%s"
        """ % BOTS))
    config, specs, _ = load_config(tmp_path / "t.toml")
    first, second = specs
    assert (first.limits.memory_mb, first.limits.cpu_s, first.limits.open_files,
            first.limits.line_bytes) == (512, 20, 32, 4096)
    assert (second.limits.memory_mb, second.limits.cpu_s, second.limits.open_files) == (512, 10, 256)
    assert first.sandbox == second.sandbox == "none"


# -- bot-to-bot and bot-to-host leaks (the probes of misbehaving_bot.py) ----------------------------
# "probe: ok …" means the bot got through. Each bwrap case would fail if its isolation were removed.


@pytest.mark.parametrize("sandbox", MODES)
def test_no_capabilities_even_for_a_root_runner(tmp_path, sandbox):
    # bwrap keeps every capability of a root runner unless told to drop them; with CAP_SYS_ADMIN
    # a bot remounted its read-only folder (or the arena package the runner imports) writable.
    games, log, mark, _ = tournament(tmp_path, sandbox, "probe", probe="caps")
    check_common(games, mark)
    # Plain mode too: a root runner's bot runs as an unprivileged uid (bot_user = "seat").
    assert "probe: failed caps" in log and "probe: ok" not in log


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.parametrize("which", ["bot folder", "arena package"])
def test_read_only_binds_cannot_be_remounted_writable(tmp_path, sandbox, which):
    if sandbox == "none":
        pytest.skip("plain mode has no read-only binds")
    path = str(FAKES) if which == "bot folder" else ARENA_PACKAGE
    target = Path(path) / "remounted-by-bot.txt"
    try:
        games, log, mark, _ = tournament(tmp_path, sandbox, "probe", probe=f"remount:{path}")
        check_common(games, mark)
        assert "probe: failed remount" in log and not target.exists()
    finally:
        target.unlink(missing_ok=True)


@pytest.fixture
def host_sleeper():
    """A host process with a unique word in its command line: what a bot must not see."""
    word = f"host-{uuid.uuid4().hex}"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", word])
    yield word
    proc.kill()
    proc.wait()


@pytest.mark.parametrize("sandbox", MODES)
def test_bot_sees_no_other_bot_and_no_host_process(tmp_path, sandbox, host_sleeper):
    # The opponent (random_bot.py) runs while the probe does: in plain mode the bot can open its
    # stdin pipe through /proc/<pid>/fd/0 and read its observations. Each bwrap bot has a PID
    # namespace of its own, so neither the opponent nor any host process is there to be seen.
    games, log, mark, _ = tournament(tmp_path, sandbox, "probe",
                                     probe=f"peers:random_bot.py,{host_sleeper}")
    check_common(games, mark)
    if sandbox == "bwrap":
        assert "probe: failed peers" in log and "probe: ok" not in log
    elif os.geteuid() == 0:
        # Plain mode as root: the processes are visible, but each bot has a uid of its own, so
        # it can neither read the opponent's stdin and environment nor signal it.
        assert "probe: ok peers" in log and "random_bot.py" in log and host_sleeper in log
        assert "'fd/0'" not in log and "'environ'" not in log and "'signal'" not in log
    else:
        assert "probe: ok peers" in log and "random_bot.py" in log and host_sleeper in log
        assert "'fd/0'" in log  # documented: plain mode does not isolate processes


@pytest.mark.parametrize("sandbox", MODES)
def test_no_inherited_file_descriptors(tmp_path, sandbox):
    # Bots of a match start one after another: none may inherit another's pipes or the runner's
    # database. Holds in both modes (close_fds, O_CLOEXEC pipes).
    games, log, mark, _ = tournament(tmp_path, sandbox, "probe", probe="fds")
    check_common(games, mark)
    assert "probe: failed fds" in log and "probe: ok" not in log


@pytest.fixture
def abstract_listener():
    """An abstract unix socket on the host (the network namespace holds these)."""
    name = f"arena-test-{uuid.uuid4().hex}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + name)
    server.listen(16)
    yield name
    server.close()


@pytest.mark.parametrize("sandbox", MODES)
def test_abstract_unix_socket_of_the_host(tmp_path, sandbox, abstract_listener):
    games, log, mark, _ = tournament(tmp_path, sandbox, "probe",
                                     probe=f"abstract:{abstract_listener}")
    check_common(games, mark)
    if sandbox == "bwrap":
        assert "probe: failed abstract" in log and "probe: ok" not in log
    else:
        assert "probe: ok abstract" in log


@pytest.fixture
def sysv_key():
    """A SysV shared memory segment and message queue of a fresh key, on the host."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    key = int(uuid.uuid4().int % (1 << 30)) + 1
    shm = libc.shmget(key, 4096, 0o1600)  # IPC_CREAT | 0600
    msg = libc.msgget(key, 0o1600)
    assert shm >= 0 and msg >= 0
    yield key
    libc.shmctl(shm, 0, None)  # IPC_RMID
    libc.msgctl(msg, 0, None)


@pytest.mark.parametrize("sandbox", MODES)
def test_sysv_ipc_of_the_host(tmp_path, sandbox, sysv_key):
    games, log, mark, _ = tournament(tmp_path, sandbox, "probe", probe=f"sysv:{sysv_key}")
    check_common(games, mark)
    if sandbox == "bwrap":
        assert "probe: failed sysv" in log and "probe: ok" not in log
    else:
        assert "probe: ok sysv" in log


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.parametrize("folder", ["/dev/shm", tempfile.gettempdir()])
def test_shared_folders_of_the_host(tmp_path, sandbox, folder):
    # /dev/shm (POSIX shared memory) and /tmp (the Ray session folder, other bots' temp folders):
    # a bwrap bot has a private /dev and /tmp, so it neither reads nor leaves a file there.
    if not os.path.isdir(folder):
        pytest.skip(f"no {folder} here")
    word = uuid.uuid4().hex
    planted, left = Path(folder, f"arena-planted-{word}"), Path(folder, f"arena-left-{word}")
    planted.write_text("host secret")
    try:
        games, log, mark, _ = tournament(tmp_path, sandbox, "probe", probe=f"read:{planted}")
        check_common(games, mark)
        (tmp_path / "w").mkdir()
        games, _, mark, _ = tournament(tmp_path / "w", sandbox, "probe", probe=f"write:{left}")
        check_common(games, mark)
        if sandbox == "bwrap":
            assert "probe: failed read" in log and not left.exists()
        elif os.geteuid() == 0:
            # Plain mode as root: the bot's uid of its own can write there, and what it leaves
            # is removed after its match.
            assert "probe: ok read" in log and not left.exists()
        else:
            assert "probe: ok read" in log and left.exists()
    finally:
        planted.unlink(missing_ok=True)
        left.unlink(missing_ok=True)


@pytest.mark.parametrize("sandbox", MODES)
def test_temp_folder_is_fresh_per_process_and_removed(tmp_path, sandbox):
    # Each process of the bad bot (two matches) leaves a file in its $TMPDIR: no later process
    # finds one, and no temp folder of the runner keeps it after the tournament.
    word = uuid.uuid4().hex
    games, log, mark, _ = tournament(tmp_path, sandbox, "probe", probe=f"tmpfresh:{word}")
    check_common(games, mark)
    assert log.count("probe: failed tmpfresh") >= 2 and "probe: ok" not in log
    assert list(Path(tempfile.gettempdir()).glob(f"arena-bot-*/arena-left-{word}")) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="a PID namespace of its own needs root")
def test_a_sweep_from_another_pid_namespace_spares_live_temp_folders():
    # A runner in another PID namespace sees none of this one's pids: the folder's lock, not the
    # pid in its name, says it is live. A folder nobody holds goes, whatever pid it names.
    live, lock = held_tmpdir()
    left = tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-")  # a live pid, but not held
    try:
        sweep_leftovers(older_than_s=3600)  # as a bot's start sweeps: nothing that young
        assert os.path.isdir(left)
        swept = subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c",
             "import os; from arena.players.launch import sweep_leftovers; "
             f"assert not os.path.exists('/proc/{os.getpid()}'); sweep_leftovers()"],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
            timeout=60)
        assert swept.returncode == 0, swept.stderr
        assert os.path.isdir(live) and not os.path.exists(left)
    finally:
        os.close(lock)
        shutil.rmtree(live, ignore_errors=True)
        shutil.rmtree(left, ignore_errors=True)


@pytest.mark.parametrize("sandbox", MODES)
def test_no_writable_host_mount_but_the_private_tmp(tmp_path, sandbox):
    games, log, mark, _ = tournament(tmp_path, sandbox, "probe", probe="mounts")
    check_common(games, mark)
    if sandbox == "bwrap":
        assert "probe: failed mounts" in log and "probe: ok" not in log
    else:
        assert "probe: ok mounts" in log

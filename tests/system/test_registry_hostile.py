"""Hostile bot folders, changed snapshots, look-alike names, huge manifests and dead leases.

Every hostile folder is refused by `arena bot add` in one line naming the path inside the folder
(exit 2, no traceback), and leaves the registry and the database as they were. Real files in
tmp_path; the cases that could block or exhaust memory on a broken Arena run in a subprocess with
a timeout.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena import registry as registry_module
from arena.cli import app
from arena.config import load_config, load_manifest
from arena.errors import ConfigError, LeaseError
from arena.registry import Registry, guard, registry_dir
from arena.session import Listener
from arena.store import Lease, Store, process_start
from arena.tournament import run_config
from tests.support.botfolders import CONFIG, MANIFEST, make_bot
from tests.support.paths import BOTS, ROOT
from tests.support.stops import query, start, swiss_config, wait_for

runner = CliRunner()


def state(db: Path) -> tuple:
    """What a refused add must leave alone: the database's bot rows and the registry's folders."""
    rows = []
    if db.exists():
        with sqlite3.connect(db) as conn:
            rows = conn.execute("select * from bots order by id").fetchall()
    reg = registry_dir(db)
    listing = sorted(str(p.relative_to(reg)) for p in reg.rglob("*")) if reg.exists() else None
    return db.exists(), rows, listing


@pytest.fixture
def db(tmp_path) -> Path:
    """A registry holding one good bot (so the database and the registry folder exist)."""
    path = tmp_path / "a.db"
    Registry(path).add(make_bot(tmp_path / "good", name="good"))
    return path


def add_subprocess(folder: Path, db: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """`arena bot add` in its own process: a hang or an OOM cannot take the test run with it."""
    return subprocess.run(
        [sys.executable, "-m", "arena", "bot", "add", str(folder), "--db", str(db)],
        capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT)})


def assert_refused(code: int, err: str, names: str, before: tuple, db: Path) -> None:
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert names in lines[0], lines[0]
    assert state(db) == before


# -- hostile folders -------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["outside", "database", "/proc/self/environ", "/dev/zero",
                                    "dangling", "inside"])
def test_a_symbolic_link_is_refused_naming_it(tmp_path, db, target, request):
    folder = make_bot(tmp_path / "evil", name="evil")
    # In a short folder: a long path (an xdist worker's tmp_path) would be cut in the message
    # inside the word "secret".
    short = Path(tempfile.mkdtemp(prefix="arena-"))
    request.addfinalizer(lambda: shutil.rmtree(short, ignore_errors=True))
    secret = short / "secret.txt"
    secret.write_text("the organiser's secret\n")
    pointee = {"outside": str(secret), "database": str(db), "dangling": str(tmp_path / "gone"),
               "inside": "random_bot.py"}.get(target, target)
    os.symlink(pointee, folder / "s")
    before = state(db)
    started = time.monotonic()
    out = add_subprocess(folder, db)
    assert time.monotonic() - started < 30
    assert_refused(out.returncode, out.stderr, "'s' is a symbolic link", before, db)
    assert "secret" not in out.stdout + out.stderr.replace("secret.txt", "")


def test_a_linked_manifest_is_refused_and_its_target_folder_not_taken(tmp_path, db):
    elsewhere = make_bot(tmp_path / "elsewhere", name="elsewhere")
    folder = tmp_path / "evil"
    folder.mkdir()
    os.symlink(elsewhere / "bot.toml", folder / "bot.toml")
    before = state(db)
    out = add_subprocess(folder, db)
    assert_refused(out.returncode, out.stderr, "'bot.toml' is a symbolic link", before, db)


def test_a_fifo_is_refused_without_blocking(tmp_path, db):
    folder = make_bot(tmp_path / "evil", name="evil")
    os.mkfifo(folder / "pipe")
    before = state(db)
    started = time.monotonic()
    out = add_subprocess(folder, db, timeout=60)  # a FIFO opened for reading would block forever
    assert time.monotonic() - started < 30
    assert_refused(out.returncode, out.stderr, "'pipe' is a FIFO", before, db)


def test_a_socket_in_a_subfolder_is_refused_naming_its_path(tmp_path, db):
    folder = make_bot(tmp_path / "evil", name="evil")
    (folder / "lib").mkdir()
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(folder / "lib" / "s.sock"))
        before = state(db)
        result = runner.invoke(app, ["bot", "add", str(folder), "--db", str(db)])
    finally:
        sock.close()
    assert_refused(result.exit_code, result.output, "'lib/s.sock' is a socket", before, db)


def test_a_sparse_gigabyte_is_refused_from_lstat_without_reading_it(tmp_path, db, monkeypatch):
    folder = make_bot(tmp_path / "evil", name="evil")
    subprocess.run(["truncate", "-s", "1G", str(folder / "big.bin")], check=True)
    opened = []
    real_open = os.open

    def spy(path, *args, **kwargs):
        opened.append(os.fsdecode(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    before = state(db)
    started = time.monotonic()
    result = runner.invoke(app, ["bot", "add", str(folder), "--db", str(db)])
    elapsed = time.monotonic() - started
    assert_refused(result.exit_code, result.output, "'big.bin' is 1,024.0 MiB", before, db)
    assert not any(p.endswith("big.bin") for p in opened)  # refused from its lstat alone
    assert elapsed < 5


def test_a_file_over_the_per_file_limit_is_refused(tmp_path, db, monkeypatch):
    monkeypatch.setattr(registry_module, "MAX_FILE_BYTES", 100_000)
    folder = make_bot(tmp_path / "evil", name="evil")
    (folder / "data").mkdir()
    (folder / "data" / "table.bin").write_bytes(b"\x01" * 100_001)
    before = state(db)
    result = runner.invoke(app, ["bot", "add", str(folder), "--db", str(db)])
    assert_refused(result.exit_code, result.output, "'data/table.bin' is 0.1 MiB (100,001 bytes)",
                   before, db)


def test_a_folder_over_the_total_limit_is_refused_before_reading(tmp_path, db, monkeypatch):
    monkeypatch.setattr(registry_module, "MAX_SNAPSHOT_BYTES", 150_000)
    monkeypatch.setattr(registry_module, "read_entries", None)  # nothing may be read
    folder = make_bot(tmp_path / "evil", name="evil")
    for i in range(3):
        (folder / f"part{i}.bin").write_bytes(b"\x02" * 60_000)
    before = state(db)
    result = runner.invoke(app, ["bot", "add", str(folder), "--db", str(db)])
    assert_refused(result.exit_code, result.output, "more than 150,000 bytes of files (at 'part2.bin')",
                   before, db)


def test_too_many_files_are_refused(tmp_path, db):
    folder = make_bot(tmp_path / "evil", name="evil")
    (folder / "many").mkdir()
    for i in range(10_001):
        (folder / "many" / f"{i:05}").touch()
    before = state(db)
    result = runner.invoke(app, ["bot", "add", str(folder), "--db", str(db)])
    assert_refused(result.exit_code, result.output, "more than 10,000 files and folders", before, db)


def test_a_refused_folder_creates_no_database_and_no_registry(tmp_path):
    folder = make_bot(tmp_path / "evil", name="evil")
    os.symlink("/proc/self/environ", folder / "e")
    db = tmp_path / "fresh.db"
    out = add_subprocess(folder, db)
    assert out.returncode == 2 and "'e' is a symbolic link" in out.stderr
    assert not db.exists() and not registry_dir(db).exists()


def test_a_file_that_grows_after_the_scan_is_refused_and_nothing_is_left(tmp_path, db,
                                                                         monkeypatch):
    folder = make_bot(tmp_path / "evil", name="evil")
    real_scan = registry_module.scan_folder

    def scan_then_grow(path, ignore=True):
        entries = real_scan(path, ignore)
        with open(folder / "random_bot.py", "a") as fh:
            fh.write("# grown after the scan\n")
        return entries

    monkeypatch.setattr(registry_module, "scan_folder", scan_then_grow)
    before = state(db)
    result = runner.invoke(app, ["bot", "add", str(folder), "--db", str(db)])
    assert_refused(result.exit_code, result.output, "'random_bot.py' changed size", before, db)


# -- read-only snapshots and changed ones ----------------------------------------------------------


def test_snapshot_files_and_folders_are_read_only(tmp_path):
    db = tmp_path / "a.db"
    folder = make_bot(tmp_path / "rb")
    (folder / "lib").mkdir()
    (folder / "lib" / "helper.py").write_text("X = 1\n")
    (folder / "run.sh").write_text("#!/bin/sh\nexec python3 random_bot.py\n")
    (folder / "run.sh").chmod(0o755)
    result = Registry(db).add(folder)
    snap = registry_dir(db) / result.content_hash
    modes = {str(p.relative_to(snap)): stat.S_IMODE(p.lstat().st_mode) for p in snap.rglob("*")}
    assert modes == {"random_bot.py": 0o444, "arenabot.py": 0o444, "bot.toml": 0o444,
                     "lib": 0o555, "lib/helper.py": 0o444, "run.sh": 0o555}
    assert stat.S_IMODE(snap.lstat().st_mode) == 0o555
    assert not [p for p in registry_dir(db).iterdir() if p.name.startswith(".")]  # no temp left


def _tamper(snapshot: Path) -> None:
    """Change a snapshot file's bytes as root would (the file is read-only)."""
    target = snapshot / "random_bot.py"
    target.chmod(0o644)
    with open(target, "a") as fh:
        fh.write("# tampered\n")
    target.chmod(0o444)


def _failures(db: Path, bot: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("select termination, detail, evidence from games where culprit_bot = ?",
                            [bot]).fetchall()


def _registry_config(tmp_path: Path) -> Path:
    config = tmp_path / "t.toml"
    config.write_text('sandbox = "none"\n' + textwrap.dedent(CONFIG).format(bots=BOTS))
    return config


def test_a_snapshot_changed_before_the_tournament_is_its_bots_start_failure(tmp_path):
    db = tmp_path / "a.db"
    rb = Registry(db).add(make_bot(tmp_path / "rb"))
    Registry(db).add(make_bot(tmp_path / "rb2", name="rb2", version="7"))
    snap = registry_dir(db) / rb.content_hash
    _tamper(snap)
    found = registry_module.content_hash(snap, ignore=False)
    outcome = run_config(_registry_config(tmp_path), db, executor="serial")
    assert outcome.games_played == 6
    failures = _failures(db, "rb")
    assert len(failures) == 4 and {f[0] for f in failures} == {"startup_failure"}
    for _, detail, evidence in failures:
        assert f"recorded {rb.content_hash}, found {found}" in evidence
        assert "rb@1" in detail and "\n" not in detail
    assert query(db, "select status from tournaments") == [("finished",)]
    # The other bots played their games between themselves normally.
    assert query(db, "select count(*) from games where culprit_bot is null") == [(2,)]


def test_a_snapshot_changed_during_the_tournament_is_refused_before_its_next_match(tmp_path):
    db = tmp_path / "a.db"
    rb = Registry(db).add(make_bot(tmp_path / "rb"))
    Registry(db).add(make_bot(tmp_path / "rb2", name="rb2", version="7"))
    snap = registry_dir(db) / rb.content_hash

    class TamperAfterFirstMatch(Listener):
        done = 0

        def match_done(self, result):
            self.done += 1
            if self.done == 1:
                _tamper(snap)

    outcome = run_config(_registry_config(tmp_path), db, executor="serial",
                         listener=TamperAfterFirstMatch())
    assert outcome.games_played == 6
    failures = _failures(db, "rb")
    assert failures and {f[0] for f in failures} == {"startup_failure"}
    assert all(f"recorded {rb.content_hash}, found " in f[2] for f in failures)
    assert query(db, "select status from tournaments") == [("finished",)]


def test_a_file_planted_in_a_snapshot_is_a_change(tmp_path):
    db = tmp_path / "a.db"
    rb = Registry(db).add(make_bot(tmp_path / "rb"))
    reg = Registry(db)
    snap = registry_dir(db) / rb.content_hash
    assert guard(reg.spec(reg.lookup("rb@1"))).factory is None
    snap.chmod(0o755)
    (snap / "__pycache__").mkdir()  # caches are not content of a bot folder, but a snapshot has none
    (snap / "__pycache__" / "random_bot.cpython-311.pyc").write_bytes(b"planted")
    spec = reg.spec(reg.lookup("rb@1"))
    assert spec.factory is not None and spec.command == ()
    with pytest.raises(Exception, match=f"snapshot of rb@1 changed since it was added: "
                                        f"recorded {rb.content_hash}, found "):
        spec.factory()


def test_the_snapshot_hash_is_cached_by_stat_and_redone_when_a_stat_changes(tmp_path,
                                                                             monkeypatch):
    db = tmp_path / "a.db"
    rb = Registry(db).add(make_bot(tmp_path / "rb"))
    snap = registry_dir(db) / rb.content_hash
    monkeypatch.setattr(registry_module, "RACY_S", 0.0)  # the files were written just now
    calls = []
    real = registry_module.read_entries

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(registry_module, "read_entries", counting)
    registry_module.verify_snapshot(snap, rb.content_hash, "rb@1")
    registry_module.verify_snapshot(snap, rb.content_hash, "rb@1")
    registry_module.verify_snapshot(snap, rb.content_hash, "rb@1")
    assert len(calls) <= 1  # the first look may hash; the next two only stat
    calls.clear()
    os.utime(snap / "random_bot.py")  # a new ctime: the content may have changed
    registry_module.verify_snapshot(snap, rb.content_hash, "rb@1")
    assert len(calls) == 1


def test_a_snapshot_changed_within_the_timestamp_granularity_is_hashed_again(tmp_path,
                                                                             monkeypatch):
    db = tmp_path / "a.db"
    rb = Registry(db).add(make_bot(tmp_path / "rb"))
    snap = registry_dir(db) / rb.content_hash
    calls = []
    real = registry_module.read_entries
    monkeypatch.setattr(registry_module, "read_entries",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    for _ in range(2):  # written just now: its stat tuple is not trusted yet
        registry_module.verify_snapshot(snap, rb.content_hash, "rb@1")
    assert len(calls) == 2


# -- names and manifests ---------------------------------------------------------------------------

HOSTILE_NAMES = {
    "zero-width space": "ra\u200bndom",
    "right-to-left override": "rand\u202emo",
    "cyrillic a": "r\u0430ndom",
    "100,000 characters": "r" * 100_000,
    "60,000 characters": "r" * 60_000,
    "control character": "ran\x1bdom",
    "newline": "ran\ndom",
}


@pytest.mark.parametrize("name", HOSTILE_NAMES.values(), ids=HOSTILE_NAMES.keys())
def test_a_hostile_manifest_name_is_refused_showing_it(tmp_path, name):
    db = tmp_path / "a.db"
    folder = make_bot(tmp_path / "evil")
    (folder / "bot.toml").write_text(MANIFEST.format(name=name.replace("\x1b", "\\u001b")
                                                     .replace("\n", "\\n"), version="1"))
    result = runner.invoke(app, ["bot", "add", str(folder), "--db", str(db)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 800, lines[0][:300]
    if len(name) > 64 * 1024:  # the manifest itself is too long, which is said first
        assert "over 64 KiB" in lines[0]
    else:
        assert ascii(name)[:40] in lines[0] and "only ASCII letters, digits and _-.+" in lines[0]
    assert not db.exists()


@pytest.mark.parametrize("name", HOSTILE_NAMES.values(), ids=HOSTILE_NAMES.keys())
def test_a_hostile_bot_name_in_a_config_is_refused(tmp_path, name):
    config = tmp_path / "t.toml"
    escaped = name.replace("\x1b", "\\u001b").replace("\n", "\\n")
    config.write_text(textwrap.dedent(f"""
        name = "t"
        game = "xeri"
        [[bots]]
        name = "{escaped}"
        manifest = "{BOTS}/random.toml"
        [[bots]]
        manifest = "{BOTS}/xeri_heuristic.toml"
        """))
    with pytest.raises(ConfigError) as info:
        load_config(config)
    message = str(info.value)
    assert "\n" not in message and len(message) < 800 and ascii(name)[:40] in message


@pytest.mark.parametrize("name", ["\u202etnemanruot", "t" * 201, "a\x07b"])
def test_a_hostile_tournament_name_is_refused(tmp_path, name):
    config = tmp_path / "t.toml"
    escaped = name.replace("\x07", "\\u0007")
    config.write_text(textwrap.dedent(f"""
        name = "{escaped}"
        game = "xeri"
        [[bots]]
        manifest = "{BOTS}/random.toml"
        [[bots]]
        manifest = "{BOTS}/xeri_heuristic.toml"
        """))
    with pytest.raises(ConfigError, match="tournament name"):
        load_config(config)


def test_a_ten_megabyte_manifest_is_refused_before_parsing(tmp_path):
    db = tmp_path / "a.db"
    folder = make_bot(tmp_path / "evil")
    text = MANIFEST.format(name="evil", version="1") + "# padding\n" * 1_000_000
    (folder / "bot.toml").write_text(text)
    assert (folder / "bot.toml").stat().st_size > 10_000_000
    result = runner.invoke(app, ["bot", "add", str(folder), "--db", str(db)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "over 64 KiB" in lines[0] and "bot.toml" in lines[0]
    assert not db.exists()
    # Straight from a config, too.
    with pytest.raises(ConfigError, match="over 64 KiB"):
        load_manifest(folder / "bot.toml")


def test_manifest_fields_are_bounded(tmp_path):
    folder = make_bot(tmp_path / "evil")
    base = MANIFEST.format(name="evil", version="1")
    for extra, field in ((f'description = "{"d" * 2001}"\n', "description"),
                         (f'language = "{"l" * 65}"\n', "language")):
        (folder / "bot.toml").write_text(base.replace('language = "python"\n', "") + extra)
        with pytest.raises(ConfigError, match=field) as info:
            load_manifest(folder / "bot.toml")
        assert len(str(info.value)) < 400
    long_command = base.replace('command = ["python3", "random_bot.py"]',
                                f'command = ["python3", "{"x" * 5000}"]')
    (folder / "bot.toml").write_text(long_command)
    with pytest.raises(ConfigError, match="command"):
        load_manifest(folder / "bot.toml")
    many = base.replace('command = ["python3", "random_bot.py"]',
                        "command = [" + ", ".join(['"x"'] * 300) + "]")
    (folder / "bot.toml").write_text(many)
    with pytest.raises(ConfigError, match="command"):
        load_manifest(folder / "bot.toml")
    (folder / "bot.toml").write_text(base.replace('version = "1"', f'version = "{"9" * 65}"'))
    with pytest.raises(ConfigError, match="version"):
        load_manifest(folder / "bot.toml")


# -- leases ----------------------------------------------------------------------------------------


def _tournament_with_lease(store: Store, lease: Lease) -> int:
    return store.create_tournament("t", "xeri", "round_robin", 2, 1, {}, {}, [], lease=lease)


def test_a_lease_whose_pid_now_names_another_process_is_taken_at_once(tmp_path):
    store = Store(tmp_path / "a.db")
    mine = Lease.mine()
    # The holder had this process's pid number, but started at another time: pid reuse (or a
    # driver of another run in a fresh PID namespace) — the holder itself is dead.
    namespace, boot, tick = mine.started.split("/", 2)
    reused = Lease("dead0", mine.pid, mine.host, f"{namespace}/{boot}/{int(tick) - 1}")
    tid = _tournament_with_lease(store, reused)
    store.acquire_lease(tid, mine, take_stale=True)
    assert store.lease(tid)["token"] == mine.token


def _is_zombie(pid: int) -> bool:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].startswith("Z")


def test_a_killed_driver_s_lease_is_taken_at_once_even_before_it_is_reaped(tmp_path):
    config = swiss_config(tmp_path, 30, bots=4)
    db = tmp_path / "a.db"
    first = start(config, db, "--executor", "serial", cwd=tmp_path)
    try:
        assert wait_for(lambda: query(db, "select count(*) from leases")[0][0] == 1, timeout=60)
        os.killpg(first.pid, signal.SIGKILL)
        # Not reaped: a zombie keeps its pid, and kill(pid, 0) still finds it.
        assert wait_for(lambda: _is_zombie(first.pid), timeout=10)
        second = subprocess.run(
            [sys.executable, "-m", "arena", "run", str(config), "--db", str(db), "--resume",
             "--executor", "serial", "-q"], capture_output=True, text=True, timeout=300,
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert second.returncode == 0, second.stderr[-2000:]
        assert query(db, "select status from tournaments") == [("finished",)]
    finally:
        first.wait()


def test_a_live_holder_is_respected_and_its_lease_freed_when_it_dies(tmp_path):
    store = Store(tmp_path / "a.db")
    holder = subprocess.Popen(["sleep", "60"])
    try:
        lease = Lease("live0", holder.pid, socket.gethostname(), process_start(holder.pid))
        tid = _tournament_with_lease(store, lease)
        with pytest.raises(LeaseError, match=f"is being run by pid {holder.pid}"):
            store.acquire_lease(tid, Lease.mine(), take_stale=True)
        assert store.lease(tid)["alive"] is True
    finally:
        holder.kill()
        holder.wait()
    mine = Lease.mine()
    store.acquire_lease(tid, mine, take_stale=True)
    assert store.lease(tid)["token"] == mine.token


def test_a_holder_on_another_host_keeps_the_sixty_second_rule(tmp_path):
    store = Store(tmp_path / "a.db")
    tid = _tournament_with_lease(store, Lease("far0", 1, "elsewhere.example", "x/y/1"))
    with pytest.raises(LeaseError, match="is being run by pid 1 on elsewhere.example"):
        store.acquire_lease(tid, Lease.mine(), take_stale=True)
    store.db.execute("update leases set heartbeat_ts = ?", [time.time() - 61])
    store.db.conn.commit()
    store.acquire_lease(tid, Lease.mine(), take_stale=True)


def test_a_version_6_database_migrates_and_its_old_leases_keep_the_old_rule(tmp_path):
    import sqlite_utils

    from arena.store import schema as store_module

    path = tmp_path / "v6.db"
    old = Store.__new__(Store)
    old.db = sqlite_utils.Database(sqlite3.connect(path))
    for number in range(1, 7):
        store_module.MIGRATIONS[number](old)
    db = old.db
    db["meta"].insert({"key": "schema_version", "value": "6"})
    for tid in (1, 2):
        db["tournaments"].insert({"id": tid, "name": f"t{tid}", "game": "xeri",
                                  "format": "round_robin", "seats": 2, "seed": 1, "options": "{}",
                                  "config": "{}", "status": "running"})
    # Tournament 1: held by this (live) process; tournament 2: by a pid that is gone.
    for tid, pid in ((1, os.getpid()), (2, 2 ** 22 + 12345)):
        db["leases"].insert({"tournament_id": tid, "token": f"old{tid}", "pid": pid,
                             "host": socket.gethostname(), "started_at": "",
                             "heartbeat_at": "", "heartbeat_ts": time.time(),
                             "cancel_requested": 0})
    db.conn.commit()
    db.conn.close()
    store = Store(path)
    assert store.db["meta"].get("schema_version")["value"] == str(store_module.SCHEMA_VERSION)
    assert store.lease(1)["pid_start"] is None and store.lease(1)["alive"] is True
    with pytest.raises(LeaseError):
        store.acquire_lease(1, Lease.mine(), take_stale=True)
    store.acquire_lease(2, Lease.mine(), take_stale=True)
    assert store.lease(2)["pid_start"] == Lease.mine().started

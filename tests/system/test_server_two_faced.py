"""A bot that behaves during its check and turns hostile in the ladder (tests/fakebots/
two_faced_bot.py: it attacks only when an opponent is not the checker's random bot), submitted
through a real `arena server` and played by a real `arena ladder`, both inside PID namespaces of
their own (`unshare --pid --fork --mount-proc`, as tests/system/test_hostile.py runs hostile
bots), in the bwrap sandbox the server checks with. Its checks are clean; in the ladder its fork
bomb, kill(-1), writes outside its folder and reads of another bot's folder and of the database
are contained as the sandbox contains any bot: each failure recorded as its own, the ladder plays
on to its last game, no bot process left, the host's files and the other bot untouched."""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import tarfile

import pytest

from arena.players.launch import sandbox_status
from arena.server.authors import add_author
from arena.store import Store
from tests.support.botfolders import make_bot
from tests.support.config import ladder_toml
from tests.support.hostile import ISOLATION, check_database, run_isolated
from tests.support.live_server import LiveServer
from tests.support.paths import FAKES, ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(ISOLATION), reason=f"no PID namespace here: {ISOLATION}"),
    pytest.mark.skipif(sandbox_status()[0] != "bwrap",
                       reason=f"the server checks in bwrap; not here: {sandbox_status()[1]}"),
]
MODES = ("forkbomb", "killall", "write", "read")
LADDER_GAMES = 24
LADDER = ladder_toml(name="two-faced", seed=5, in_flight=1, sandbox="bwrap",
                     time={"move_ms": 2000, "startup_ms": 20000}, limits={"processes": 32},
                     matchmaking={"placement_games": 2})


def two_faced_archive(mode: str, targets: list[str]) -> bytes:
    """A .tar.gz of the two-faced bot in `mode` (named after it: a ladder plays a bot's latest
    version only), its targets as arguments."""
    command = json.dumps(["python3", "two_faced_bot.py", mode, *targets])
    files = {"bot.toml": (f'name = "twoface-{mode}"\nversion = "1"\ncommand = {command}\n'
                          f'games = ["xeri"]\n').encode(),
             "two_faced_bot.py": (FAKES / "two_faced_bot.py").read_bytes()}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def tree_digest(folder) -> str:
    """A digest of every path and file content under `folder`."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def said(log: str, key: str) -> list[str]:
    """What the bot reported for `key` (`hostile: KEY=VALUE` lines)."""
    return [line.split("=", 1)[1] for line in log.splitlines()
            if line.startswith(f"hostile: {key}=")]


def test_a_bot_clean_in_its_check_and_hostile_in_the_ladder_is_contained(tmp_path):
    db = tmp_path / "arena.db"
    store = Store(db)
    token = add_author(store, "mallory")
    store.db.conn.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("r1", "r2"):
        added = subprocess.run([sys.executable, "-m", "arena", "bot", "add",
                                str(make_bot(tmp_path / name, name, "1")), "--db", str(db)],
                               capture_output=True, text=True, env=env)
        assert added.returncode == 0, added.stdout + added.stderr
    conn = sqlite3.connect(db)
    r1_folder = type(tmp_path)(conn.execute("select workdir from bots where name = 'r1'").fetchone()[0])
    conn.close()
    canary = tmp_path / "host-canary"
    canary.mkdir(mode=0o777)
    canary.chmod(0o777)  # open to every uid: only the sandbox stands between it and a bot
    secret = tmp_path / "host-secret.txt"
    secret.write_text("the organiser's secret\n")
    secret.chmod(0o644)
    targets = {"forkbomb": [], "killall": [],
               "write": [str(canary), str(r1_folder), str(tmp_path)],
               "read": [str(r1_folder), str(r1_folder / "random_bot.py"), str(db), str(secret)]}
    r1_before = tree_digest(r1_folder)

    namespace = ("unshare", "--pid", "--fork", "--mount-proc", "--kill-child")
    server = LiveServer.start(db, tmp_path, "--checkers", "2", "--sandbox", "bwrap",
                              prefix=namespace)
    try:
        ids = {}
        for mode in MODES:
            status, body = server.api("POST", "/api/submissions", token,
                                      two_faced_archive(mode, targets[mode]))
            assert status == 201, body
            ids[mode] = body["id"]
        for mode, sid in ids.items():
            checked = server.wait_checked(token, sid)
            assert checked["status"] == "clean", (mode, checked["reason"])  # it behaved
    finally:
        server.stop()

    config = tmp_path / "ladder.toml"
    config.write_text(LADDER)
    result = run_isolated(["ladder", "start", str(config), "--db", str(db), "--executor",
                           "serial", "--games", str(LADDER_GAMES), "-q"], timeout=900, cwd=tmp_path)
    assert result.returncode == 0, result.output[-3000:]
    assert result.leftovers == [], result.leftovers  # no bot process outlived the ladder

    conn = check_database(db)
    games = [dict(zip(("id", "termination", "culprit", "bots"), row)) for row in conn.execute(
        "select g.id, g.termination, g.culprit_bot, group_concat(s.bot) from games g "
        "join game_seats s on s.game_id = g.id group by g.id order by g.ordinal")]
    logs = {mode: "".join(r[0] for r in conn.execute(
        "select stderr from bot_logs where bot = ?", [f"twoface-{mode}@1"])) for mode in MODES}
    entries = dict(conn.execute("select key, status from ladder_entries"))
    conn.close()
    assert len(games) == LADDER_GAMES  # the ladder played on to its last game
    assert all(status == "active" for status in entries.values()), entries  # its checks passed
    for game in games:
        seated = game["bots"].split(",")
        hostile = [b for b in seated if b.startswith("twoface-")]
        if not hostile:
            assert game["termination"] == "normal", game  # r1 against r2: untouched
        elif game["termination"] != "normal":
            assert game["culprit"] in hostile, game  # the attacker's own failure, never r1's
    played = {b for g in games for b in g["bots"].split(",")}
    for mode in MODES:
        assert f"twoface-{mode}@1" in played, (mode, sorted(played))

    # The fork bomb: a resource limit, its own.
    bombs = [g for g in games if "twoface-forkbomb@1" in g["bots"].split(",")]
    assert said(logs["forkbomb"], "forkbomb")
    assert any(g["termination"] == "resource_limit" and g["culprit"] == "twoface-forkbomb@1"
               for g in bombs), bombs
    # kill(-1): it ends only its own sandbox (a crash of its own) or nothing.
    assert said(logs["killall"], "killall")
    # Writes outside: refused everywhere, nothing on the host.
    for folder in targets["write"]:
        answers = said(logs["write"], f"write {folder}")
        assert answers and all(a.startswith("refused") for a in answers), (folder, answers)
        assert not (type(tmp_path)(folder) / "two-faced-was-here").exists()
    # Reads of another bot's folder, the database and a host file: nothing seen.
    for path in targets["read"]:
        answers = said(logs["read"], f"read {path}")
        assert answers and all(a.startswith("refused") for a in answers), (path, answers)
    assert tree_digest(r1_folder) == r1_before  # the other bot's snapshot is as it was
    assert list(canary.iterdir()) == []

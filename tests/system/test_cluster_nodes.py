"""A two-node Ray cluster whose second node cannot see the driver's files plays exact tournaments.

The second node runs in a mount namespace of its own, with a tmpfs over the checkout and over the
folder that holds the configs, bots, databases and registries, and imports Arena from a wheel
installed in a venv of its own (Ray and the other dependencies come from the driver's venv through
a .pth file, which adds that folder only: the driver's editable install does not leak in). It gets
the bots only as Arena ships them: snapshots through Ray's object store, in-process bots' modules
pickled by value.

The tests share one cluster (head: the driver's venv, 1 CPU; node 2: 1 CPU). Each run is a fresh
executor, so a quarantine in one run does not carry over to the next. Teardown stops only the
processes this module started — never `ray stop`.

Which node played a match: its `worker` (`ip:pid`; both nodes share the ip) is mapped to a node by
the mount namespace of that actor process, sampled from /proc while the run goes on (the second
node's processes are the only ones in its namespace). `matches.node` (schema 8) is not filled in
yet; once it is, it is checked against that mapping (one Ray node id per side, two sides differ).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.nodes import bot_folder, node_venv  # noqa: F401 (node_venv: a fixture)
from tests.support.paths import ROOT
from tests.support.ray import RAY, free_ports, leftovers, start_head, stop, wait_for_line

BOTS = ROOT / "bots"
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"  # where Arena looks a bot's program up (launch.py)


def _why_not() -> str | None:
    if RAY is None:
        return "the `ray` command line is not installed"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root: the second node gets its own mount namespace with tmpfs mounts"
    if shutil.which("unshare") is None:
        return "needs util-linux `unshare` for the second node's mount namespace"
    probe = subprocess.run(["unshare", "--mount", "sh", "-c",
                            "mount --make-rprivate / && mount -t tmpfs tmpfs /mnt"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"`unshare --mount` with a tmpfs mount does not work here: {probe.stderr.strip()}"
    return None


WHY_NOT = _why_not()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")]


# -- the second node's own Arena -------------------------------------------------------------------


@dataclass
class Cluster:
    address: str
    env: dict  # the driver's environment (token authentication)
    covered: Path  # the folder node 2 cannot see: configs, bots, databases, registries
    cache: Path  # node 2's snapshot cache
    head_pid: int
    node2_pid: int


@pytest.fixture(scope="module")
def cluster(node_venv):
    """Head (driver's venv) and node 2 (own mount namespace, own venv), one CPU each."""
    base = Path(tempfile.mkdtemp(prefix="arena-cn-", dir="/tmp"))  # short: socket paths are bounded
    base.chmod(0o755)  # bots run as other uids: they must reach their snapshots
    home, covered = base / "home", base / "db"
    home.mkdir()
    covered.mkdir(mode=0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["HOME"] = str(home)
    env.pop("PYTHONPATH", None)
    head_port, dash, agent_a, agent_b = free_ports(4)
    procs: list[subprocess.Popen] = []
    try:
        head, address, token = start_head(base, env, head_port, dash, agent_a, cwd=base)
        procs.append(head)
        common = ["--num-cpus=1", "--block", "--disable-usage-stats"]
        python = node_venv / "bin" / "python"
        check = textwrap.dedent(f"""
            import os, arena.executors
            where = arena.executors.__file__  # arena is a namespace package: no arena.__file__
            assert where.startswith({str(node_venv) + os.sep!r}), where
            assert os.listdir({str(ROOT)!r}) == [] and os.listdir({str(covered)!r}) == []
            print("node 2: arena from", where, "; checkout and db folder empty", flush=True)
        """)
        script = (f"mount --make-rprivate / && mount -t tmpfs tmpfs {ROOT} && "
                  f"mount -t tmpfs tmpfs {covered} && {python} -c {shlex.quote(check)} && "
                  f"exec {node_venv}/bin/ray start --address {address} {' '.join(common)} "
                  f"--temp-dir {base / 'w'} --dashboard-agent-listen-port {agent_b}")
        node_log = base / "node2.log"
        cache = base / "cache2"
        procs.append(subprocess.Popen(
            ["unshare", "--mount", "sh", "-c", script],
            env={**env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token, "PYTHONPATH": "",
                 "ARENA_SNAPSHOT_CACHE": str(cache)},
            cwd=base, stdout=node_log.open("w"), stderr=subprocess.STDOUT, start_new_session=True))
        wait_for_line(node_log, "Ray runtime started", procs[1], timeout=120)
        assert "checkout and db folder empty" in node_log.read_text()
        yield Cluster(address, {**env, "RAY_AUTH_MODE": "token"}, covered, cache,
                      procs[0].pid, procs[1].pid)
    finally:
        for proc in reversed(procs):  # node 2 first, while the head can still drain it
            stop(proc)
        for pid in leftovers(str(base)):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        shutil.rmtree(base, ignore_errors=True)


# -- helpers ---------------------------------------------------------------------------------------


HEADER = """\
name = "{name}"
game = "xeri"
format = "round_robin"
seats = 2
seed = 2323
deals = {deals}

[options]
rounds = 1

[time]
startup_ms = 30000
move_ms = 10000
"""


def arena(args: list[str], cwd: Path, env: dict,
          timeout: float = 300) -> subprocess.CompletedProcess:
    """`arena ARGS` from this checkout, with `cwd` (in-process bots' modules) importable."""
    env = {**env, "PYTHONPATH": f"{ROOT}{os.pathsep}{cwd}"}
    return subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


class ActorNamespaces:
    """While running: the mount namespace of every Ray _MatchWorker process, by pid."""

    def __init__(self):
        self.seen: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _loop(self):
        while not self._stop.is_set():
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit() and int(entry.name) not in self.seen:
                    try:
                        if b"_MatchWorker" in (entry / "cmdline").read_bytes():
                            self.seen[int(entry.name)] = os.readlink(entry / "ns" / "mnt")
                    except OSError:
                        pass
            self._stop.wait(0.1)


def mount_ns(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/ns/mnt")


def nodes_of_matches(db: Path, spies: ActorNamespaces, cluster: Cluster) -> dict[str, str]:
    """match id -> "head" or "node2", for every finished match of the database."""
    con = sqlite3.connect(db)
    columns = {r[1] for r in con.execute("pragma table_info(matches)")}
    rows = con.execute("select id, worker" + (", node" if "node" in columns else "")
                       + " from matches where status = 'finished'").fetchall()
    head_ns, node2_ns = mount_ns(cluster.head_pid), mount_ns(cluster.node2_pid)
    assert head_ns != node2_ns
    names = {head_ns: "head", node2_ns: "node2"}
    out = {}
    for row in rows:
        pid = int(row[1].rpartition(":")[2])
        assert pid in spies.seen, f"match {row[0]}: worker {row[1]} is not a _MatchWorker seen"
        out[row[0]] = names[spies.seen[pid]]
    if "node" in columns and any(row[2] for row in rows):
        # The store records the Ray node id: one per side, and the two sides differ.
        by_side: dict[str, set] = {}
        for row in rows:
            by_side.setdefault(out[row[0]], set()).add(row[2])
        assert all(len(ids) == 1 for ids in by_side.values()), by_side
        assert len({next(iter(ids)) for ids in by_side.values()}) == len(by_side), by_side
    return out


QUERIES = {
    "tournaments": "select name, game, format, seats, seed, status from tournaments order by id",
    "rounds": "select stage, round, tables, byes from rounds order by stage, round",
    "matches": "select id, stage, round, table_no, bots, status from matches order by id",
    "match_bots": "select match_id, position, bot, entry, game_points, match_points "
                  "from match_bots order by match_id, position",
    "games": "select id, match_id, ordinal, deal, rotation, seed, termination, culprit_seat, "
             "culprit_bot, steps from games order by id",
    "game_seats": "select game_id, seat, bot, team, score, rank from game_seats "
                  "order by game_id, seat",
    "moves": "select game_id, ply, step, seat, action from moves order by game_id, ply",
    "ratings": "select stage, method, bot, round(rating, 9), games, wins, draws, losses, points "
               "from ratings order by stage, method, bot",
}


def dump(db: Path) -> dict[str, list]:
    con = sqlite3.connect(db)
    try:
        return {name: con.execute(sql).fetchall() for name, sql in QUERIES.items()}
    finally:
        con.close()


def assert_same_results(ray_db: Path, serial_db: Path) -> dict[str, list]:
    ours, serial = dump(ray_db), dump(serial_db)
    for table in QUERIES:
        assert ours[table] == serial[table], f"{table} differs from the serial run's"
    assert ours["games"] and ours["moves"] and ours["ratings"]
    return ours


def run_both(config: Path, folder: Path, cluster: Cluster) -> tuple[subprocess.CompletedProcess,
                                                                    subprocess.CompletedProcess,
                                                                    ActorNamespaces]:
    """The config on the cluster (ray.db) and serially (serial.db), side by side."""
    serial_env = {k: v for k, v in cluster.env.items() if not k.startswith("RAY_")}
    serial = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(config), "--db", str(folder / "serial.db"),
         "--executor", "serial", "-q"], cwd=folder,
        env={**serial_env, "PYTHONPATH": f"{ROOT}{os.pathsep}{folder}"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with ActorNamespaces() as spies:
            ray = arena(["run", str(config), "--db", str(folder / "ray.db"), "--executor", "ray",
                         "--ray-address", cluster.address, "-q"], folder, cluster.env)
        out, err = serial.communicate(timeout=300)
    finally:
        if serial.poll() is None:
            serial.kill()
            serial.wait()
    return ray, subprocess.CompletedProcess(serial.args, serial.returncode, out, err), spies


# -- the tests -------------------------------------------------------------------------------------

def test_a_node_that_sees_none_of_the_drivers_files_plays_part_of_an_exact_tournament(cluster):
    folder = cluster.covered / "mixed"
    folder.mkdir(mode=0o755)
    bot_folder(folder / "mbot", ["python3", "random_bot.py"], name="mbot")
    bot_folder(folder / "cbot", ["python3", "random_bot.py"], name="cbot")
    bot_folder(folder / "rbot", ["python3", "random_bot.py"], name="rbot")
    (folder / "mymodule.py").write_text(textwrap.dedent("""
        class FirstLegal:
            def choose(self, observation, legal_actions):
                return legal_actions[0]

        def factory():
            return FirstLegal()
    """))
    header = HEADER.format(name="cluster-mixed", deals=2)
    (folder / "t.toml").write_text(header + textwrap.dedent("""
        [[bots]]
        manifest = "mbot/bot.toml"
        args = ["1"]

        [[bots]]
        manifest = "mbot/bot.toml"
        name = "mbot-2"
        args = ["4"]

        [[bots]]
        name = "cmd"
        command = ["python3", "random_bot.py", "2"]
        workdir = "cbot"

        [[bots]]
        bot = "rbot@1"
        args = ["3"]

        [[bots]]
        name = "inproc"
        python = "mymodule:factory"
    """))
    for db in ("ray.db", "serial.db"):
        added = arena(["bot", "add", str(folder / "rbot"), "--db", str(folder / db)], folder,
                      cluster.env, timeout=120)
        assert added.returncode == 0, added.stdout + added.stderr

    ray, serial, spies = run_both(folder / "t.toml", folder, cluster)
    assert serial.returncode == 0, serial.stdout + serial.stderr
    assert ray.returncode == 0, ray.stdout + ray.stderr[-5000:]
    ours = assert_same_results(folder / "ray.db", folder / "serial.db")
    assert len(ours["matches"]) == 10 and {m[5] for m in ours["matches"]} == {"finished"}
    assert not [g for g in ours["games"] if g[7] is not None or g[8] is not None], "a forfeit"
    assert {s[2] for s in ours["game_seats"]} == {"mbot", "mbot-2", "cmd", "rbot", "inproc"}

    where = nodes_of_matches(folder / "ray.db", spies, cluster)
    played = {side: sum(1 for s in where.values() if s == side) for side in ("head", "node2")}
    print(f"matches per node: {played}")
    assert played["head"] and played["node2"], played
    # Node 2 got the subprocess bots as snapshots (one per distinct folder), through Ray.
    con = sqlite3.connect(folder / "ray.db")
    hashes = {r[0] for r in con.execute("select content_hash from bots "
                                        "where content_hash is not null")}
    cached = {p.name for p in cluster.cache.iterdir() if not p.name.startswith(".")}
    assert cached and cached <= hashes, (cached, hashes)
    # No runner error: every match ran once.
    assert con.execute("select count(*) from match_errors").fetchone()[0] == 0


def test_a_node_where_no_bot_can_start_is_quarantined_and_its_matches_replayed(cluster):
    folder = cluster.covered / "nopython"
    folder.mkdir(mode=0o755)
    # The bots' interpreter lives in the folder node 2 cannot see: there no bot can start. (Not in
    # a bin/ folder of its own: under bwrap a symlinked program's parent folders that no other
    # bind makes are created 0700 and the bot's uid cannot exec it — a launcher limitation.)
    interpreter = folder / "arena-test-python"
    interpreter.symlink_to(shutil.which("python3", path=SAFE_PATH))  # a bot uid can run it
    bot_folder(folder / "rb", [str(interpreter), "random_bot.py"])
    entries = "".join(f'\n[[bots]]\nmanifest = "rb/bot.toml"\nname = "r{i}"\nargs = ["{i}"]\n'
                      for i in range(1, 7))  # 15 matches: node 2 gets 3 before the head is done
    (folder / "t.toml").write_text(HEADER.format(name="cluster-quarantine", deals=1) + entries)

    ray, serial, spies = run_both(folder / "t.toml", folder, cluster)
    assert serial.returncode == 0, serial.stdout + serial.stderr
    said = ray.stdout + ray.stderr
    assert ray.returncode == 0, said[-5000:]
    assert "quarantined" in said, said[-5000:]
    ours = assert_same_results(folder / "ray.db", folder / "serial.db")
    assert len(ours["matches"]) == 15 and {m[5] for m in ours["matches"]} == {"finished"}
    assert not [g for g in ours["games"] if g[7] is not None or g[8] is not None], "a forfeit"

    con = sqlite3.connect(folder / "ray.db")
    errors = con.execute("select match_id, kind, error from match_errors").fetchall()
    print(f"runner errors: {len(errors)}, e.g. {errors[0][2][:200]!r}" if errors else "none")
    assert len(errors) >= 3, errors  # the quarantine takes 3 host faults in a row
    assert {e[1] for e in errors} == {"host"}, errors
    assert all("arena-test-python" in e[2] for e in errors), errors
    retried = {r[0]: r[1] for r in con.execute("select id, attempts from matches")}
    assert all(retried[e[0]] >= 2 for e in errors)
    # Every recorded result came from the head: node 2 failed each match it was given.
    where = nodes_of_matches(folder / "ray.db", spies, cluster)
    assert set(where.values()) == {"head"}, where
    # Node 2 ran an actor: the spy saw it, or (an actor quarantined within the spy's scan of /proc,
    # which load from other tests slows) its failed attempts carry a Ray node id not the head's.
    head_ids = {r[0] for r in con.execute("select node from matches where status = 'finished'")}
    error_ids = {r[0] for r in con.execute("select node from match_errors")} - {None, ""}
    assert node2_actor_was_used(spies, cluster) or error_ids - head_ids, \
        f"node 2 never ran an actor (errors on {error_ids}, results on {head_ids})"


def node2_actor_was_used(spies: ActorNamespaces, cluster: Cluster) -> bool:
    return mount_ns(cluster.node2_pid) in spies.seen.values()


SLOW_HEAD_DRIVER = textwrap.dedent("""
    import os, sys, time
    import arena.executors as executors

    class SlowHead(executors._MatchWorker):  # pickled by value: defined in __main__
        def __init__(self):
            if os.listdir(CHECKOUT):  # the head sees the checkout, node 2 does not
                time.sleep(4)
            super().__init__()

    CHECKOUT = sys.argv[1]
    executors._MatchWorker = SlowHead
    from arena.tournament import run_config
    run = run_config(sys.argv[2], sys.argv[3], executor="ray", ray_address=sys.argv[4])
    print("finished", run.games_played, run.errors)
""")


def test_a_node_ready_first_does_not_use_up_a_matchs_attempts_while_the_other_starts(cluster):
    # Node 2's actor is up seconds before the head's, and no bot can start there: its host faults
    # come back in milliseconds. The one match must wait for the head, not be replayed on node 2
    # until its attempts are spent (which stopped the tournament with status `error`).
    folder = cluster.covered / "slowhead"
    folder.mkdir(mode=0o755)
    interpreter = folder / "arena-test-python"
    interpreter.symlink_to(shutil.which("python3", path=SAFE_PATH))
    bot_folder(folder / "rb", [str(interpreter), "random_bot.py"])
    entries = "".join(f'\n[[bots]]\nmanifest = "rb/bot.toml"\nname = "r{i}"\nargs = ["{i}"]\n'
                      for i in range(1, 3))
    (folder / "t.toml").write_text(HEADER.format(name="cluster-slow-head", deals=1) + entries)
    out = subprocess.run([sys.executable, "-c", SLOW_HEAD_DRIVER, str(ROOT), str(folder / "t.toml"),
                          str(folder / "ray.db"), cluster.address], cwd=folder,
                         env={**cluster.env, "PYTHONPATH": f"{ROOT}{os.pathsep}{folder}"},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "finished 2 " in out.stdout, out.stdout[-3000:] + out.stderr[-3000:]
    con = sqlite3.connect(folder / "ray.db")
    assert con.execute("select status from tournaments").fetchall() == [("finished",)]
    errors = con.execute("select match_id, attempt, kind from match_errors").fetchall()
    assert errors == [("t1-st1-r1-m1", 1, "host")], errors  # one failure on node 2, then the head
    forfeits = con.execute("select count(*) from games where culprit_bot is not null").fetchone()
    assert forfeits == (0,)

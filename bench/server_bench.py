"""The competition server's speed with a ladder running: uploads, the public leaderboard, replays.

Prepares a database in a temporary folder (two registry bots copied from bots/random, a long
Xeri game of `--rounds` rounds recorded with `arena run` for a replay of about 1.7 MB, an organiser
token from `arena author add`), starts `arena ladder start` over it in the background and a real
`arena server` subprocess on 127.0.0.1, then measures over HTTP (threads + http.client):

- upload → registered: POST /api/submissions of a 1 MB bot (bots/random plus 1 MB of random
  bytes) until its 201 (validated, unpacked, registered, committed). Goal ≤ 1 s.
- upload → first ladder game: from the POST until the new version has a recorded ladder game,
  split into the check (until `clean`) and the rest. Goal: the rest ≤ one table of the ladder.
- GET /leaderboard/xeri (the public HTML page) under `--readers` concurrent readers (each a
  keep-alive connection). Goal p99 ≤ 200 ms.
- GET /api/games/{id}/replay of the long game under `--replay-clients` concurrent requests (each
  its own connection, all released at once, gzip accepted as browsers do), with the replay cache
  and — on a second server started with ARENA_REPLAY_CACHE_MB=0 — without it. Goal p99 ≤ 1 s.

    python bench/server_bench.py [--readers 50] [--replay-clients 200] [--rounds 13] [--uploads 3]
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

from arena.store import Store
from arena.store.queries import recent_games

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "bots"
LADDER = """
name = "bench-ladder"
seed = 4
deals = 1
in_flight = 1
[[formats]]
game = "xeri"
seats = 2
options = { rounds = 1 }
[leaderboard]
every_tables = 5
samples = 20
"""
LONG_GAME = """
name = "long-xeri"
game = "xeri"
seed = 1
deals = 1
[options]
rounds = {rounds}
[[bots]]
bot = "bench-a"
[[bots]]
bot = "bench-b"
"""
MANIFEST = """\
name = "{name}"
version = "{version}"
command = ["python3", "random_bot.py"]
language = "python"
games = ["xeri"]
"""


def arena(*args: str, cwd: Path, env: dict | None = None) -> str:
    """Run an arena command to completion; its stdout."""
    done = subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, **(env or {})})
    if done.returncode != 0:
        sys.exit(f"arena {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done.stdout


def bot_folder(folder: Path, name: str, version: str, extra_bytes: int = 0) -> Path:
    """bots/random under another name, with `extra_bytes` of random data beside it."""
    folder.mkdir(parents=True)
    for f in ("random_bot.py", "arenabot.py"):
        shutil.copy(BOTS / f, folder / f)
    (folder / "bot.toml").write_text(MANIFEST.format(name=name, version=version))
    if extra_bytes:
        (folder / "model.bin").write_bytes(os.urandom(extra_bytes))
    return folder


def archive(folder: Path) -> bytes:
    """The folder as a .tar.gz, as `arena submit` packs it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    return buffer.getvalue()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(db: Path, cwd: Path, env: dict | None = None) -> tuple[subprocess.Popen, int]:
    """`arena server` over `db` on a free port, once it answers."""
    port = free_port()
    log = open(cwd / f"server-{port}.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "arena", "server", "--db", str(db), "--port",
                             str(port), "--checkers", "1"], cwd=cwd, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, **(env or {})})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"arena server exited: {Path(log.name).read_text()[-2000:]}")
        try:
            status, _ = get(port, "/api/leaderboards")
            if status == 200:
                return proc, port
        except OSError:
            time.sleep(0.2)
    sys.exit("arena server did not start")


def stop(proc: subprocess.Popen) -> None:
    """Stop a process group started here: SIGINT, then SIGKILL after 30 s."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def request(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None = None,
            headers: dict | None = None) -> tuple[int, bytes]:
    """One request on `conn`: status and body."""
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    return response.status, response.read()


def get(port: int, path: str, token: str | None = None) -> tuple[int, dict | bytes]:
    """GET on a fresh connection; JSON decoded under /api."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        status, body = request(conn, "GET", path, headers=headers)
    finally:
        conn.close()
    return status, (json.loads(body) if path.startswith("/api") and body else body)


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50, p95 and p99 (nearest rank) of milliseconds."""
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]

    return {"p50": at(0.50), "p95": at(0.95), "p99": at(0.99), "n": len(ordered)}


def concurrent(clients: int, work, per_client: int) -> list[float]:
    """Milliseconds of each call of `work(conn)` by `clients` threads released together."""
    times: list[float] = []
    lock = threading.Lock()
    gate = threading.Barrier(clients)
    errors: list[str] = []

    def client() -> None:
        mine = []
        try:
            conn = work.connect()
            gate.wait()
            for _ in range(per_client):
                start = time.perf_counter()
                status = work(conn)
                mine.append((time.perf_counter() - start) * 1000)
                if status != 200:
                    errors.append(str(status))
            conn.close()
        except Exception as exc:  # noqa: BLE001 - reported with the figures
            errors.append(repr(exc))
        with lock:
            times.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        print(f"  ({len(errors)} failed requests, e.g. {errors[0]})")
    return times


class Getter:
    """GET one path per call on a connection of its own per client."""

    def __init__(self, port: int, path: str, headers: dict | None = None):
        self.port, self.path, self.headers = port, path, headers or {}

    def connect(self) -> http.client.HTTPConnection:
        """A new connection to the server."""
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)

    def __call__(self, conn: http.client.HTTPConnection) -> int:
        """The status of one GET (the body read in full)."""
        return request(conn, "GET", self.path, headers=self.headers)[0]


def upload(port: int, token: str, data: bytes) -> tuple[float, dict]:
    """POST an archive; milliseconds until the 201 and its body."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    start = time.perf_counter()
    status, body = request(conn, "POST", "/api/submissions", data,
                           {"Authorization": f"Bearer {token}",
                            "Content-Type": "application/gzip"})
    elapsed = (time.perf_counter() - start) * 1000
    conn.close()
    if status != 201:
        sys.exit(f"upload refused ({status}): {body[:300]!r}")
    return elapsed, json.loads(body)


def wait_for(what: str, check, timeout: float = 300, every: float = 0.1):
    """Poll `check()` until it returns something truthy; that value (exit after `timeout`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    sys.exit(f"timed out waiting for {what}")


def main() -> None:
    """Prepare, start the ladder and the server, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readers", type=int, default=50)
    parser.add_argument("--reads", type=int, default=20, help="leaderboard GETs per reader")
    parser.add_argument("--replay-clients", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=13, help="rounds of the long Xeri game")
    parser.add_argument("--uploads", type=int, default=3)
    parser.add_argument("--no-uncached", action="store_true",
                        help="skip the replay run without the cache (it takes a while)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="server-bench-"))
    db = tmp / "arena.db"
    env = {"PYTHONPATH": str(ROOT)}
    procs: list[subprocess.Popen] = []
    rows: list[tuple[str, str, str]] = []
    try:
        print(f"preparing {db} …")
        for name in ("bench-a", "bench-b"):
            arena("bot", "add", str(bot_folder(tmp / name, name, "1")), "--db", str(db), cwd=tmp)
        (tmp / "long.toml").write_text(LONG_GAME.format(rounds=args.rounds))
        arena("run", str(tmp / "long.toml"), "--db", str(db), "--executor", "serial", cwd=tmp)
        reader = Store.open_readonly(db)
        game_id = recent_games(reader, 1, 1)[0]["id"]  # the long game (tournament 1)
        reader.db.conn.close()
        token = arena("author", "add", "bench", "--organiser", "--db", str(db), cwd=tmp).strip()
        token = token.split()[-1]
        (tmp / "ladder.toml").write_text(LADDER)
        ladder_log = open(tmp / "ladder.log", "wb")
        ladder = subprocess.Popen([sys.executable, "-m", "arena", "ladder", "start",
                                   str(tmp / "ladder.toml"), "--db", str(db)], cwd=tmp,
                                  stdout=ladder_log, stderr=subprocess.STDOUT,
                                  start_new_session=True, env={**os.environ, **env})
        procs.append(ladder)
        server, port = start_server(db, tmp, env)
        procs.append(server)

        def ladder_games() -> int:
            if ladder.poll() is not None:
                sys.exit(f"the ladder exited: {(tmp / 'ladder.log').read_text()[-2000:]}")
            ids = [row["id"] for row in get(port, "/api/ladders")[1]["ladders"]
                   if row["name"] == "bench-ladder"]
            if not ids:
                return 0
            status, body = get(port, f"/api/ladders/{ids[0]}")
            return body.get("games_played", 0) if status == 200 else 0

        wait_for("the ladder's first games", lambda: ladder_games() >= 4, 120, 0.5)
        print(f"server on 127.0.0.1:{port}, ladder running ({ladder_games()} games so far)")

        # Uploads of a 1 MB bot: each a new version (its own random bytes and version).
        registered, checks, rests = [], [], []
        for i in range(args.uploads):
            folder = bot_folder(tmp / f"up{i}" / "bigbot", "bigbot", str(i + 1), 1_000_000)
            data = archive(folder)
            start = time.perf_counter()
            ms, body = upload(port, token, data)
            registered.append(ms)
            sid, version = body["id"], body["version"]

            def checked(sid=sid):
                return get(port, f"/api/submissions/{sid}", token)[1]["status"] in ("clean", "failed")

            wait_for(f"submission {sid}'s check", checked, 300)
            clean_at = time.perf_counter()
            state = get(port, f"/api/submissions/{sid}", token)[1]
            if state["status"] != "clean":
                sys.exit(f"submission {sid} failed its check: {state['reason']}")

            def played(version=version):
                status, body = get(port, f"/api/bots/bigbot?version={version}")
                return status == 200 and body["versions"][0]["games_played"] > 0

            wait_for(f"bigbot {version}'s first ladder game", played, 300, 0.1)
            checks.append((clean_at - start) * 1000)
            rests.append((time.perf_counter() - clean_at) * 1000)
            print(f"  upload {i + 1}: {len(data) / 1e6:.2f} MB archive, 201 after {ms:.0f} ms, "
                  f"clean after {checks[-1] / 1000:.1f} s, first ladder game "
                  f"{rests[-1] / 1000:.1f} s later")
        lad = get(port, f"/api/ladders/{get(port, '/api/ladders')[1]['ladders'][0]['id']}")[1]
        per_minute = lad.get("games_per_minute") or 0
        table_s = 2 * 60 / per_minute if per_minute else float("nan")  # 2 seats: 2 games a table
        rows.append(("upload → registered (1 MB bot), median / max",
                     f"{statistics.median(registered):.0f} / {max(registered):.0f} ms", "≤ 1,000 ms"))
        rows.append(("upload → clean (the check), median",
                     f"{statistics.median(checks) / 1000:.1f} s", "—"))
        rows.append(("clean → first ladder game, median / max",
                     f"{statistics.median(rests) / 1000:.1f} / {max(rests) / 1000:.1f} s",
                     f"≤ one table ({table_s:.1f} s at {per_minute} games/min)"))

        # The public leaderboard page under concurrent readers (keep-alive connections).
        assert get(port, "/leaderboard/xeri")[0] == 200
        times = concurrent(args.readers, Getter(port, "/leaderboard/xeri"), args.reads)
        p = percentiles(times)
        rows.append((f"/leaderboard/xeri, {args.readers} readers × {args.reads}: p50 / p95 / p99",
                     f"{p['p50']:.0f} / {p['p95']:.0f} / {p['p99']:.0f} ms", "p99 ≤ 200 ms"))

        # The long game's replay under concurrent first requests, with the cache and without.
        status, body = get(port, f"/api/games/{game_id}/replay")
        size = len(json.dumps(body, separators=(",", ":")))
        replay = Getter(port, f"/api/games/{game_id}/replay", {"Accept-Encoding": "gzip"})
        cached = concurrent(args.replay_clients, replay, 1)  # the first request computes it
        cold = percentiles(cached)
        warm = percentiles(concurrent(args.replay_clients, replay, 1))
        rows.append((f"replay {game_id} ({size / 1e6:.2f} MB JSON), {args.replay_clients} at once, "
                     "cached (restart: first wave) p50 / p95 / p99",
                     f"{cold['p50']:.0f} / {cold['p95']:.0f} / {cold['p99']:.0f} ms", "p99 ≤ 1,000 ms"))
        rows.append(("  the same, cache warm p50 / p95 / p99",
                     f"{warm['p50']:.0f} / {warm['p95']:.0f} / {warm['p99']:.0f} ms", "p99 ≤ 1,000 ms"))
        if not args.no_uncached:
            plain, plain_port = start_server(db, tmp, {**env, "ARENA_REPLAY_CACHE_MB": "0"})
            procs.append(plain)
            off = percentiles(concurrent(
                args.replay_clients,
                Getter(plain_port, f"/api/games/{game_id}/replay", {"Accept-Encoding": "gzip"}), 1))
            stop(plain)
            rows.append(("  the same without the cache p50 / p95 / p99",
                         f"{off['p50']:.0f} / {off['p95']:.0f} / {off['p99']:.0f} ms",
                         f"p99 ratio {off['p99'] / max(warm['p99'], 0.001):.0f}× the cached"))
    finally:
        for proc in reversed(procs):
            stop(proc)
    width = max(len(r[0]) for r in rows)
    print()
    print(f"{'measure':<{width}}  {'figure':>24}  goal")
    for name, figure, goal in rows:
        print(f"{name:<{width}}  {figure:>24}  {goal}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

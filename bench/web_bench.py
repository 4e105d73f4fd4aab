"""Web app speed: a leaderboard page of 1,000 bot versions (stored pooled ratings), HTML and JSON.

Builds a synthetic database (1,000 bot versions, one stored Bradley–Terry leaderboard of xeri
with intervals) in a temporary folder, then times GET /leaderboard/xeri and its JSON twin
through Starlette's TestClient (in process: no network, the full app with its middleware),
each request building the page (the page cache off, ARENA_PAGE_CACHE_S=0: a fresh read-only
connection per request), and then with the cache on (the database unchanged: every GET after the
first is served from memory). Prints the median of several runs beside the goal.

    python bench/web_bench.py [--bots N] [--runs R]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
from pathlib import Path
from time import perf_counter

from starlette.testclient import TestClient

from arena.store import Store, now
from arena.web import create_app

GOAL_MS = 200.0


def build(path: Path, bots: int, seed: int = 1) -> None:
    """A database with `bots` bot versions and a stored pooled leaderboard of xeri over them."""
    rng = random.Random(seed)
    store = Store(path)
    stamp = now()
    with store.transaction():
        conn = store.db.conn
        conn.executemany(
            "insert into bots (name, version, command, workdir, language, description, games, "
            "added_at) values (?, ?, '[]', '', 'python', '', '[\"xeri\"]', ?)",
            [(f"bot-{i // 4:04d}", str(i % 4 + 1), stamp) for i in range(bots)])
        ids = [r[0] for r in conn.execute("select id from bots order by id")]
        rows = []
        for bot_id in ids:
            name, version = conn.execute("select name, version from bots where id = ?",
                                         [bot_id]).fetchone()
            rating = rng.gauss(1500, 200)
            margin = rng.uniform(20, 120)
            games = rng.randint(20, 400)
            wins = rng.randint(0, games)
            rows.append(("game", "xeri", "bt", bot_id, name, version, rating, rating - margin,
                         rating + margin, games, wins, 0, games - wins, wins,
                         round(100 * wins / games, 2), None, stamp, stamp))
        conn.executemany(
            "insert into pooled_ratings (scope_kind, scope_id, method, bot_id, bot, version, "
            "rating, lo, hi, games, wins, draws, losses, points, score_pct, flag, last_played, "
            "computed_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    store.db.conn.close()


def timed(client: TestClient, url: str, runs: int) -> tuple[float, int]:
    """Median milliseconds of GET `url` over `runs` runs (after one warm-up), and the body size."""
    size = len(client.get(url).content)
    times = []
    for _ in range(runs):
        start = perf_counter()
        response = client.get(url)
        times.append(1000 * (perf_counter() - start))
        assert response.status_code == 200, response.text[:200]
    return statistics.median(times), size


def main() -> None:
    """Build the database, time the pages, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        build(path, args.bots)
        os.environ["ARENA_PAGE_CACHE_S"] = "0"  # the page built on every request
        with TestClient(create_app(path)) as client:
            html_ms, html_size = timed(client, "/leaderboard/xeri", args.runs)
            rows = client.get("/leaderboard/xeri").text.count('<svg class="ci"')
            json_ms, json_size = timed(client, "/api/leaderboard/xeri", args.runs)
        os.environ["ARENA_PAGE_CACHE_S"] = "3600"  # built once: the database does not change
        with TestClient(create_app(path)) as client:
            cached_html_ms, _ = timed(client, "/leaderboard/xeri", args.runs)
            cached_json_ms, _ = timed(client, "/api/leaderboard/xeri", args.runs)
    print(f"leaderboard of {rows} bot versions, median of {args.runs} GETs (TestClient):")
    verdict = "ok" if html_ms <= GOAL_MS else "SLOW"
    print(f"  HTML /leaderboard/xeri      {html_ms:7.1f} ms  ({html_size / 1024:.0f} KiB)   "
          f"goal <= {GOAL_MS:.0f} ms  {verdict}")
    print(f"  JSON /api/leaderboard/xeri  {json_ms:7.1f} ms  ({json_size / 1024:.0f} KiB)")
    print(f"  cached (page cache on): HTML {cached_html_ms:.1f} ms, JSON {cached_json_ms:.1f} ms")


if __name__ == "__main__":
    main()

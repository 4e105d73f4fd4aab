"""What a bot's snapshot costs: taking it at planning, sending it to a node, and per match after.

A bot folder with a model file of `--mb` MB (random bytes: incompressible, like a real model) and a
script goes through each step a cluster run takes, timed in one run:

1. plan      snapshot_bots: hash the folder and copy it beside the database (once per content).
2. replan    the same again: the snapshot is there, only hashed (a resumed or repeated run).
3. pack      the driver packs the snapshot (a tar in memory), once per run.
4. put       the driver puts it in Ray's object store, once per run.
5. node      a Ray actor that cannot see the driver's folder fetches it (ray.get), unpacks it
             into its node cache and verifies the hash: the cost per node, once per run. On one
             machine the object store is shared, so the network transfer a real cluster adds
             (the size over the link's bandwidth) is not in this figure: it is printed apart for
             1 and 10 Gbit/s.
6. match     the same actor's later matches with that bot: the cached copy is checked (by stat)
             and used, nothing fetched: the cost per match, measured over `--matches` calls
             (after the first check, which hashes a copy made in the last 2 s in full).
7. local     one machine (the planned folder visible): the per-match check alone.

    python bench/snapshot_bench.py [--mb 300] [--matches 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from arena.players.base import BotSpec
from arena.snapshots import materialise, pack, snapshot_bots, snapshot_of


class _Node:
    """A Ray actor standing for a node that does not see the driver's folders."""

    def __init__(self, cache: str):
        os.environ["ARENA_SNAPSHOT_CACHE"] = cache

    def fetch_once(self, spec: BotSpec, refs: dict) -> tuple[float, str]:
        """Materialise the bot (fetch, unpack, verify); (seconds, where it now runs from)."""
        import ray

        started = time.perf_counter()
        moved = materialise(spec, lambda digest: ray.get(refs[digest]))
        return time.perf_counter() - started, moved.workdir

    def per_match(self, spec: BotSpec, matches: int) -> float:
        """Mean seconds of materialise for a bot already in the cache (after the first check, which
        hashes a copy younger than registry.RACY_S in full)."""
        time.sleep(2.5)
        materialise(spec, None)
        started = time.perf_counter()
        for _ in range(matches):
            materialise(spec, None)
        return (time.perf_counter() - started) / matches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=300)
    parser.add_argument("--matches", type=int, default=20)
    args = parser.parse_args()
    import ray

    work = Path(tempfile.mkdtemp(prefix="arena-snapbench-"))
    try:
        folder = work / "bot"
        folder.mkdir()
        (folder / "bot.py").write_text("print('a bot with a model')\n")
        with open(folder / "model.bin", "wb") as fh:
            for _ in range(args.mb):
                fh.write(os.urandom(1 << 20))
        spec = BotSpec("model-bot", command=("python3", "bot.py"), workdir=str(folder))
        row = {"name": "model-bot", "version": "1"}
        db = work / "db" / "arena.db"
        db.parent.mkdir()

        t = time.perf_counter()
        (planned,), _ = snapshot_bots([spec], [row], db)
        plan_s = time.perf_counter() - t
        t = time.perf_counter()
        snapshot_bots([spec], [row], db)
        replan_s = time.perf_counter() - t
        digest, snap = snapshot_of(planned)

        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                 object_store_memory=max(2 * args.mb << 20, 200 << 20))
        try:
            t = time.perf_counter()
            data = pack(snap)
            pack_s = time.perf_counter() - t
            t = time.perf_counter()
            ref = ray.put(data)
            put_s = time.perf_counter() - t
            del data
            # The node sees another path: move the driver's snapshot out of its sight meanwhile.
            hidden = snap.with_name("hidden")
            snap.rename(hidden)
            node = ray.remote(num_cpus=1)(_Node).remote(str(work / "node-cache"))
            node_s, where = ray.get(node.fetch_once.remote(planned, {digest: ref}))
            match_s = ray.get(node.per_match.remote(planned, args.matches))
            hidden.rename(snap)
            time.sleep(2.5)  # the rename is a change: wait it out as the node did
            materialise(planned, None)
            t = time.perf_counter()
            for _ in range(args.matches):
                materialise(planned, None)
            local_s = (time.perf_counter() - t) / args.matches
        finally:
            ray.shutdown()
        size = sum(p.stat().st_size for p in folder.iterdir())
        print(f"bot folder: {size / 1e6:,.0f} MB ({args.mb} MiB model + a script); "
              f"node cache: {where}")
        print(f"{'step':<10} {'seconds':>9}  what")
        for step, secs, what in (
            ("plan", plan_s, "hash + copy beside the database (once per content)"),
            ("replan", replan_s, "hash only: the snapshot is there"),
            ("pack", pack_s, "tar in the driver's memory (once per run)"),
            ("put", put_s, "into Ray's object store (once per run)"),
            ("node", node_s, "fetch + unpack + verify on a node (once per node and run)"),
            ("match", match_s, f"per match after that, cached (mean of {args.matches})"),
            ("local", local_s, f"per match on one machine, nothing copied (mean of {args.matches})"),
        ):
            print(f"{step:<10} {secs:>9.4f}  {what}")
        for gbit in (1, 10):
            print(f"network transfer to a node at {gbit} Gbit/s (not measured here): "
                  f"{size * 8 / (gbit * 1e9):.2f} s")
        print(f"per node, one machine's share: {node_s:.2f} s = {node_s / max(plan_s, 1e-9):.2f}x "
              f"the planning copy; per match afterwards {match_s * 1000:.2f} ms")
    finally:
        for path, dirs, _ in os.walk(work):
            for d in dirs:
                os.chmod(os.path.join(path, d), 0o700)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

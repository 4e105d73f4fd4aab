"""How long validating and unpacking a submitted bot archive takes (arena/uploads.py).

Two bots of about `--mb` MB of archive each, as a zip and as a tar.gz, built in memory from
bots/random's files plus incompressible data (random bytes, so the archive is as large as the bot):

- one-file   the bot and one model file of `--mb` MB;
- many-files the bot and 500 files sharing `--mb` MB (the cost per member: names, headers, opens).

Each archive is unpacked `--repeat` times into a fresh folder on the same disk; the median and the
fastest run are printed, with the throughput over the archive's size.

    python bench/upload_bench.py [--mb 1] [--repeat 20]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

from arena.uploads import UploadLimits, unpack_submission

BOTS = Path(__file__).resolve().parents[1] / "bots"


def bot_files(mb: float, pieces: int) -> dict[str, bytes]:
    """bots/random as a folder holds it, plus `mb` MB of random bytes in `pieces` files."""
    files = {"bot.toml": (BOTS / "random.toml").read_bytes(),
             "random_bot.py": (BOTS / "random_bot.py").read_bytes(),
             "arenabot.py": (BOTS / "arenabot.py").read_bytes()}
    size = int(mb * 1_000_000) // pieces
    for i in range(pieces):
        files[f"data/part{i:03d}.bin" if pieces > 1 else "model.bin"] = os.urandom(size)
    return files


def as_zip(files: dict[str, bytes]) -> bytes:
    """The files in one top folder, deflated."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr("bot/" + name, data)
    return buf.getvalue()


def as_tgz(files: dict[str, bytes]) -> bytes:
    """The files in one top folder, as a gzipped tar."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo("bot/" + name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def time_unpack(data: bytes, repeat: int, work: Path) -> list[float]:
    """Seconds per unpack of `data`, each into a fresh folder (removed outside the timing)."""
    times = []
    for i in range(repeat):
        dest = work / f"dest{i}"
        start = time.perf_counter()
        unpack_submission(data, dest, UploadLimits())
        times.append(time.perf_counter() - start)
        shutil.rmtree(dest)
    return times


def main() -> None:
    """Print the unpack time of each archive kind and format."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0, help="archive size in MB (default 1)")
    parser.add_argument("--repeat", type=int, default=20, help="unpacks per archive (default 20)")
    args = parser.parse_args()
    print(f"{'bot':<11} {'format':<7} {'archive':>10} {'files':>6} {'median':>9} {'fastest':>9} "
          f"{'MB/s':>7}")
    with tempfile.TemporaryDirectory(prefix="upload-bench-") as work:
        for kind, pieces in (("one-file", 1), ("many-files", 500)):
            files = bot_files(args.mb, pieces)
            for fmt, build in (("zip", as_zip), ("tar.gz", as_tgz)):
                data = build(files)
                times = time_unpack(data, args.repeat, Path(work))
                median = statistics.median(times)
                print(f"{kind:<11} {fmt:<7} {len(data) / 1e6:>8.2f}MB {len(files):>6} "
                      f"{median * 1e3:>7.1f}ms {min(times) * 1e3:>7.1f}ms "
                      f"{len(data) / 1e6 / median:>7.0f}")


if __name__ == "__main__":
    main()

"""`arena run` in a subprocess for the stop/resume tests: a Swiss of slow bots, starting the run
in its own session, reading the database while it runs, waiting for a condition."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.support.paths import FAKES

SWISS = """
name = "stops"
game = "xeri"
format = "swiss"
seed = 3
deals = 1
[options]
rounds = 1
[time]
move_ms = 5000
{bots}
"""



def swiss_config(tmp_path: Path, delay_ms: int, bots: int = 6, text: str = SWISS) -> Path:
    entries = "".join(textwrap.dedent(f"""
        [[bots]]
        name = "slow-{i}"
        command = ["python3", "slow_random.py", "{i}", "{delay_ms}"]
        workdir = "{FAKES}"
        """) for i in range(bots))
    path = tmp_path / f"stops-{delay_ms}.toml"
    path.write_text(textwrap.dedent(text).format(bots=entries))
    return path



def start(config: Path, db: Path, *extra: str, cwd: Path) -> subprocess.Popen:
    """`arena run` in its own session, output to files (so a full pipe never blocks it)."""
    out = open(cwd / "out.txt", "ab")
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(config), "--db", str(db), "-q", *extra],
        stdout=out, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},  # the checkout
    )



def query(path: Path, sql: str, *args):
    conn = sqlite3.connect(path, timeout=30)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()



def wait_for(predicate, timeout: float = 60.0, every: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except sqlite3.OperationalError:
            pass  # the table may not exist yet
        time.sleep(every)
    return False

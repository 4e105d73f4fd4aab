"""The read side sits below the drivers: reports, rating reports, the web app and the CLI's
read-only commands never import the tournament driver, the ladder, the executors or the registry.

Checked in a fresh interpreter each time: in this one the other tests have imported everything.
That importing them loads none is checked by tests/unit/test_read_side_imports.py; here, running
them.
"""

from __future__ import annotations

import gc
import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from arena.cli import app
from tests.support.config import write_config
from tests.support.paths import ROOT

DRIVERS = ("arena.tournament", "arena.ladder", "arena.executors", "arena.registry", "ray")

# Read-only commands (the registry's own `bot list` and `bot show` excepted: they read it).
READERS = [["ratings"], ["leaderboard", "xeri"], ["crosstable"], ["h2h", "random", "random-b"],
           ["failures"], ["replay", "t1-st1-r1-m1-d0-s0"], ["tournament", "list"],
           ["tournament", "show"], ["tournament", "status"], ["tournament", "export", "1"],
           ["ladder", "status"], ["tournament", "show", "--format", "json"], ["ratings", "--los"],
           ["crosstable", "--format", "csv"]]
PAGES = ["/", "/leaderboard/xeri", "/tournaments", "/tournaments/1", "/ladders", "/bots",
         "/api/leaderboard/xeri", "/api/tournaments/1", "/bots/first", "/api/bots/first",
         "/games/t1-st1-r1-m1-d0-s0", "/api/games/t1-st1-r1-m1-d0-s0/replay?view=full"]


def loaded_drivers(code: str) -> list[str]:
    """The driver modules loaded after running `code` in a fresh interpreter."""
    probe = code + textwrap.dedent(f"""
        import json, sys
        print(json.dumps([m for m in {DRIVERS!r} if m in sys.modules]))
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A database of one small serial tournament, with its WAL folded into the file."""
    folder = tmp_path_factory.mktemp("read-side")
    db = folder / "real.db"
    out = CliRunner().invoke(app, ["run", str(write_config(folder)), "--db", str(db),
                                   "--executor", "serial", "-q"])
    assert out.exit_code == 0, out.output
    gc.collect()
    with sqlite3.connect(db) as conn:
        conn.execute("pragma wal_checkpoint(truncate)")
    conn.close()
    return db


def test_read_commands_and_pages_import_no_driver(recorded):
    code = textwrap.dedent(f"""
        from starlette.testclient import TestClient
        from typer.testing import CliRunner
        from arena.cli import app
        from arena.web import create_app
        for command in {READERS!r}:
            CliRunner().invoke(app, [*command, "--db", {str(recorded)!r}])
        with TestClient(create_app({str(recorded)!r}), raise_server_exceptions=False) as client:
            for page in {PAGES!r}:
                client.get(page)
    """)
    assert loaded_drivers(code) == []

"""The read side sits below the drivers: importing a report, the web app or the CLI loads no
driver (the tournament driver, the ladder, the executors), no registry and no Ray.

Checked in a fresh interpreter each time: in the test process the other tests have imported
everything. What the read commands and pages load when they run is checked by test_read_side.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("arena.tournament", "arena.ladder", "arena.executors", "arena.registry", "ray")
READ_SIDE = ("arena.reports", "arena.rating_reports", "arena.leaderboards", "arena.ladder_view",
             "arena.replay", "arena.store.views", "arena.store.queries", "arena.web",
             "arena.web.app", "arena.web.data", "arena.web.replay", "arena.cli",
             "arena.cli.tournament", "arena.cli.ratings", "arena.cli.ladder")


def loaded_after(code: str) -> list[str]:
    """The HEAVY modules loaded after running `code` in a fresh interpreter."""
    probe = code + textwrap.dedent(f"""
        import json, sys
        print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.parametrize("module", READ_SIDE)
def test_importing_a_read_module_loads_no_driver_registry_or_ray(module):
    assert loaded_after(f"import {module}\n") == []


def test_importing_the_whole_read_side_at_once_loads_none_either():
    assert loaded_after("".join(f"import {m}\n" for m in READ_SIDE)) == []

"""Arena as a wheel ships what `arena bot check` needs: the built-in random bot and the kits.

The wheel is built from this checkout and installed in a venv of its own outside it (test
cluster_nodes' `node_venv`: dependencies from the driver's venv through a .pth file, the editable
install left out); the check runs with PYTHONPATH cleared and its working folder outside the
checkout, so nothing of the checkout can stand in for what the package lacks.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.nodes import ROOT, bot_folder, node_venv, run  # noqa: F401 (node_venv: a fixture)

pytestmark = pytest.mark.slow


def test_an_installed_wheel_checks_a_bot_outside_the_checkout(node_venv, tmp_path):  # noqa: F811
    folder = bot_folder(tmp_path / "rnd", ["python3", "random_bot.py"])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = run([node_venv / "bin" / "python", "-c",
                 "import arena.players.base as b; print(b.BUILTIN_BOTS)"],
                timeout=120, cwd=tmp_path, env=env).stdout.strip()
    assert Path(where).is_relative_to(node_venv) and not Path(where).is_relative_to(ROOT), where
    done = subprocess.run([node_venv / "bin" / "arena", "bot", "check", str(folder), "--deals", "1"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "rnd: clean" in done.stdout and "ok  xeri with 2 seats" in done.stdout, done.stdout

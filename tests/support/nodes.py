"""A second node's own Arena: `node_venv` (a module fixture: a venv with Arena installed from a
wheel of this checkout), manifest bot folders, and a `run` that fails the test with the output."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from tests.support.paths import BOTS, ROOT


def run(args: list, **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run that fails the test with the command's output."""
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        pytest.fail(f"{args} exited {done.returncode}:\n{done.stdout[-3000:]}\n"
                    f"{done.stderr[-3000:]}")
    return done



@pytest.fixture(scope="module")
def node_venv():
    """A venv with Arena installed from a wheel built from this checkout; yields its folder."""
    base = Path(tempfile.mkdtemp(prefix="arena-nv-", dir="/tmp"))
    env = {**os.environ, "PYTHONPATH": ""}  # else pip finds this checkout's arena "installed"
    try:
        wheels = base / "wheels"
        run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, ROOT],
            timeout=600, cwd=base)
        (wheel,) = wheels.glob("arena-*.whl")
        venv = base / "venv"
        run([sys.executable, "-m", "venv", venv], timeout=300, env=env)
        python = venv / "bin" / "python"
        run([python, "-m", "pip", "install", "--no-deps", "-q", wheel], timeout=300, cwd=base,
            env=env)
        purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                      timeout=60, env=env).stdout.strip()
        # The driver venv's dependencies: the folder is added, its own .pth files are not run.
        (Path(purelib) / "arena-test-driver-deps.pth").write_text(
            sysconfig.get_paths()["purelib"] + "\n")
        ray = venv / "bin" / "ray"
        ray.write_text(f"#!{python}\nimport sys\nfrom ray.scripts.scripts import main\n"
                       f"sys.exit(main())\n")
        ray.chmod(0o755)
        where = run([python, "-c", "import arena.executors, ray; print(arena.executors.__file__)"],
                    timeout=120, cwd=base, env=env).stdout.strip()
        assert where.startswith(str(venv) + os.sep), where
        yield venv
    finally:
        shutil.rmtree(base, ignore_errors=True)



def bot_folder(folder: Path, command: list[str], name: str = "rnd") -> Path:
    """A manifest bot folder: the random bot and its helper, and a bot.toml running `command`."""
    folder.mkdir(parents=True)
    for script in ("random_bot.py", "arenabot.py"):
        shutil.copy(BOTS / script, folder / script)
    words = ", ".join(f'"{w}"' for w in command)
    (folder / "bot.toml").write_text(f'name = "{name}"\nversion = "1"\ncommand = [{words}]\n'
                                     f'games = ["xeri"]\n')
    return folder

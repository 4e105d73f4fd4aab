"""Bot folders for registry tests: the shipped random bot beside a bot.toml (`make_bot`),
its manifest template, and a config naming registry bots."""



from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.paths import BOTS

MANIFEST = """\
name = "{name}"
version = "{version}"
command = ["python3", "random_bot.py"]
language = "python"
author = "ada"
games = ["xeri"]
"""



def make_bot(folder: Path, name: str = "rb", version: str = "1") -> Path:
    """A bot folder: the shipped random bot and arenabot.py beside a bot.toml."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in ("random_bot.py", "arenabot.py"):
        shutil.copy(BOTS / f, folder / f)
    (folder / "bot.toml").write_text(MANIFEST.format(name=name, version=version))
    return folder


CONFIG = """
name = "reg"
game = "xeri"
seed = 3
deals = 1
[options]
rounds = 1
[[bots]]
bot = "rb@1"
[[bots]]
bot = "rb2"
[[bots]]
manifest = "{bots}/random.toml"
"""

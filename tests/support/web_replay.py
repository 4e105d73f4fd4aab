"""The replay tests' database: one small round robin of each game, with a bot named as an XSS
probe, and the in-process `Heuristic` bot (named in its configs)."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

from arena.config import load_config
from arena.executors import SerialExecutor
from arena.store import Store
from arena.tournament import run_tournament
from tests.support.paths import BOTS

XSS = "<script>alert(1)</script>"



CONFIG = """
name = "{name}"
game = "{game}"
seats = {seats}
seed = 7
deals = {deals}
[options]
{options}
[rating]
samples = 10
[[bots]]
name = "{xss}"
python = "tests.support.bots:SeededRandom"
[[bots]]
name = "heuristic"
python = "tests.support.web_replay:Heuristic"
[[bots]]
name = "rand"
python = "tests.support.bots:SeededRandom"
"""



# One small tournament per game; Crosswalk with 3 seats so every table has 3 bots.
TOURNAMENTS = [
    ("xeri", 2, "rounds = 1"),
    ("crossfire", 2, "open_rows = true"),
    ("crosswalk", 3, "rounds = 1"),
    ("battlefield_cribbage", 2, "target = 31"),
]



# Xeri's partnership form (4 seats, 0+2 against 1+3): a fourth bot, and recorded after the Xeri
# leaderboard, so that stays the two-seat one. game_ids() keys its games "xeri_4p".
XERI_4P = ("xeri", 4, "rounds = 1")



FOURTH_BOT = """
[[bots]]
name = "rand-4"
python = "tests.support.bots:SeededRandom"
"""



class Heuristic:
    """In-process bot: bots/xeri_bot.py's heuristic at Xeri (so ratings differ), else the first
    legal action."""

    def __init__(self):
        spec = importlib.util.spec_from_file_location("xeri_bot", BOTS / "xeri_bot.py")
        self.xeri = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.xeri)

    def choose(self, observation, legal_actions):
        """The heuristic's choice at Xeri, the first legal action elsewhere."""
        if observation.get("game") == "xeri":
            return self.xeri.choose(observation, legal_actions)
        return legal_actions[0]



def build_db(folder: Path) -> Path:
    """A database with one small round robin of each game, an XSS-named bot among the players."""
    db = folder / "web.db"
    for game, seats, options in TOURNAMENTS:
        path = folder / f"{game}.toml"
        path.write_text(textwrap.dedent(CONFIG).format(
            name=f"web-{game}", game=game, seats=seats, options=options, xss=XSS,
            deals=3 if game == "xeri" else 1))
        cfg, bots, rows = load_config(path)
        run_tournament(cfg, bots, rows, Store(db), SerialExecutor())
    # A stored Xeri leaderboard, with bootstrap intervals (the page then draws their bars).
    from arena.rating_reports import leaderboard

    leaderboard(Store(db), "xeri", samples=30)
    game, seats, options = XERI_4P
    path = folder / "xeri_4p.toml"
    path.write_text(textwrap.dedent(CONFIG + FOURTH_BOT).format(
        name="web-xeri-4p", game=game, seats=seats, options=options, xss=XSS, deals=1))
    cfg, bots, rows = load_config(path)
    run_tournament(cfg, bots, rows, Store(db), SerialExecutor())
    return db

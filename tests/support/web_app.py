"""The web app tests' database (module fixtures `db`, `client`, `store`: a round robin with
forfeits, a Swiss, an event, a leaderboard and a ladder) and page helpers (`_html`, `_json`, …)."""

from __future__ import annotations

import hashlib
import re
import shutil
import textwrap
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from arena import rating_reports
from arena.config import load_config, load_ladder_config
from arena.executors import SerialExecutor
from arena.ladder import Ladder
from arena.registry import Registry
from arena.store import Store
from arena.tournament import run_tournament
from arena.web import create_app
from tests.support.config import ladder_toml
from tests.support.paths import BOTS

XSS = "<script>alert(1)</script>"



XSS_ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"



CRASH_STDERR = "Traceback: <b>oops</b> in my move code"



TOURNAMENT = """
name = "web-rr"
game = "xeri"
seed = 11
deals = 2
max_failures = 1
[options]
rounds = 1
[rating]
samples = 20
[[bots]]
name = "first"
python = "tests.support.bots:FirstLegal"
[[bots]]
name = "{xss}"
python = "tests.support.bots:FirstLegal"
[[bots]]
name = "rand"
python = "tests.support.bots:SeededRandom"
[[bots]]
name = "crasher"
command = ["python3", "crash_bot.py"]
workdir = "{tmp}"
"""



CRASH_BOT = """
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "crasher"}), flush=True)
    elif msg["type"] == "act":
        sys.stderr.write(%r + "\\n")
        sys.exit(4)
""" % CRASH_STDERR



SWISS = """
name = "web-swiss"
game = "xeri"
format = "swiss"
rounds = 2
seed = 5
deals = 1
[options]
rounds = 1
[rating]
samples = 0
[[bots]]
name = "first"
python = "tests.support.bots:FirstLegal"
[[bots]]
name = "{xss}"
python = "tests.support.bots:FirstLegal"
[[bots]]
name = "rand"
python = "tests.support.bots:SeededRandom"
[[bots]]
name = "rand-2"
python = "tests.support.bots:SeededRandom"
[[bots]]
name = "rand-3"
python = "tests.support.bots:SeededRandom"
"""



EVENT = """
name = "web-event"
seed = 8
deals = 1
[[stages]]
name = "xeri-rr"
game = "xeri"
format = "round_robin"
[stages.options]
rounds = 1
[[stages]]
name = "crosswalk-4p"
game = "crosswalk"
format = "round_robin"
seats = 4
[rating]
samples = 0
[[bots]]
name = "first"
python = "tests.support.bots:FirstLegal"
[[bots]]
name = "rand"
python = "tests.support.bots:SeededRandom"
[[bots]]
name = "rand-2"
python = "tests.support.bots:SeededRandom"
[[bots]]
name = "rand-3"
python = "tests.support.bots:SeededRandom"
"""



# A patient clock: on a loaded CI machine a timed-out validation game would keep a bot out of
# the ladder and leave the pages' tests without ladder games.
LADDER = ladder_toml(name="web-lad", in_flight=1, matchmaking={"placement_games": 2, "window": 10},
                     leaderboard={"every_tables": 2, "samples": 0},
                     time={"startup_ms": 60000, "move_ms": 20000})



MANIFEST = """\
name = "{name}"
version = "1"
command = ["python3", "random_bot.py"]
language = "python"
games = ["xeri"]
"""



def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()



@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """A database with a round robin (with forfeits), a Swiss (with byes), a two-game event (one
    stage of 4 seats), the stored xeri leaderboard and a ladder."""
    tmp = tmp_path_factory.mktemp("web")
    tmp.chmod(0o755)  # the bot's folder: a root runner's bots run as uids of their own
    (tmp / "crash_bot.py").write_text(CRASH_BOT)
    path = tmp / "arena.db"
    cfg_path = tmp / "rr.toml"
    cfg_path.write_text(textwrap.dedent(TOURNAMENT).format(xss=XSS, tmp=tmp))
    cfg, bots, rows = load_config(cfg_path)
    run_tournament(cfg, bots, rows, Store(path), SerialExecutor())
    (tmp / "swiss.toml").write_text(textwrap.dedent(SWISS).format(xss=XSS))
    run_tournament(*load_config(tmp / "swiss.toml"), Store(path), SerialExecutor())
    (tmp / "event.toml").write_text(EVENT)
    run_tournament(*load_config(tmp / "event.toml"), Store(path), SerialExecutor())
    rating_reports.leaderboard(Store(path), "xeri", samples=10)  # the stored pooled leaderboard
    registry = Registry(path)
    for name in ("lad-a", "lad-b"):
        folder = tmp / name
        folder.mkdir()
        for f in ("random_bot.py", "arenabot.py"):
            shutil.copy(BOTS / f, folder / f)
        (folder / "bot.toml").write_text(MANIFEST.format(name=name))
        registry.add(folder)
    (tmp / "ladder.toml").write_text(LADDER)
    with SerialExecutor() as ex:
        run = Ladder(load_ladder_config(tmp / "ladder.toml"), Store(path), Registry(path), ex,
                     games=6).run(False)
    # The pages' ladder tests need both bots in: say why when a validation game kept one out.
    assert not run.rejected and run.games_played, (
        f"the fixture ladder played {run.games_played} games ({run.status}), rejected {run.rejected}")
    return path



@pytest.fixture(scope="module")
def client(db) -> TestClient:
    """A test client over the database (server errors come back as responses, not exceptions)."""
    with TestClient(create_app(db), raise_server_exceptions=False) as c:
        yield c



@pytest.fixture(scope="module")
def store(db) -> Store:
    """The same database, read-only, for expected values."""
    return Store.open_readonly(db)



def _html(client: TestClient, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.text[:500])
    assert response.headers["content-type"].startswith("text/html")
    assert "<h1>" in response.text or "<h1" in response.text
    assert XSS not in response.text, f"{url} shows a bot name unescaped"
    return response.text



def _json(client: TestClient, url: str, status: int = 200):
    response = client.get(url)
    assert response.status_code == status, (url, response.text[:500])
    assert response.headers["content-type"].startswith("application/json")
    return response.json()



def _tid(store: Store, name: str = "web-rr") -> int:
    return store.find_tournament(name)["id"]



def _lid(store: Store) -> int:
    return next(t["id"] for t in store.tournaments() if t["format"] == "ladder")



def _page_data(html: str) -> str:
    return re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html,
                     re.S).group(1)

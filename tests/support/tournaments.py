"""A tournament factory: plan and run a tournament of in-process bots into a store, in-process.

    run, store = play_tournament(tmp_path, format="swiss", rounds=2, bots=python_bots(5))

Serial executor, no subprocesses: fast enough for integration tests. Any `tournament_toml`
keyword is accepted; `store` defaults to a fresh in-memory one.
"""

from __future__ import annotations

from pathlib import Path

from arena.config import load_config
from arena.executors import SerialExecutor
from arena.store import Store
from arena.tournament import run_tournament
from tests.support.config import python_bots, write_tournament


def play_config(path: Path, store: Store, executor=None, resume: bool = False):
    """Load the config at `path` and run it into `store` (serial executor unless given)."""
    config, bots, rows = load_config(path)
    return run_tournament(config, bots, rows, store, executor or SerialExecutor(pin=False),
                          resume=resume)


def play_tournament(folder: Path, store: Store | None = None, executor=None, **fields):
    """Write a config from `fields` (see tournament_toml; bots default to four seeded random
    in-process bots, options to one round) into `folder`, run it: (the run, the store)."""
    store = store if store is not None else Store(":memory:")
    fields.setdefault("bots", python_bots(4))
    if fields.get("game", "xeri") == "xeri":
        fields.setdefault("options", {"rounds": 1})
    path = write_tournament(folder, **fields)
    return play_config(path, store, executor), store

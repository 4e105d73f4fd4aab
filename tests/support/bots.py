"""Bots for tests: in-process players (named in configs as `tests.support.bots:FirstLegal`), the
scripted misbehaving subprocess bot, and a time control that leaves slow machines room."""

from __future__ import annotations

import os
import random
import signal
import sys
import tempfile
from pathlib import Path

from arena.players.base import BotSpec
from arena.protocol import TimeControl
from tests.support.paths import FAKES


def misbehaving(mode: str, when: int = 1, name: str | None = None) -> BotSpec:
    """A scripted misbehaving subprocess bot (see fakebots/misbehaving_bot.py)."""
    return BotSpec(name=name or f"bad-{mode}",
                   command=(sys.executable, str(FAKES / "misbehaving_bot.py"), mode, str(when)),
                   workdir=str(FAKES))


class FirstLegal:
    """In-process bot: always the first legal action."""

    def choose(self, observation, legal_actions):
        return legal_actions[0]


class SeededRandom:
    """In-process bot: a seeded random legal action."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def choose(self, observation, legal_actions):
        return self.rng.choice(legal_actions)


FAST = TimeControl(startup_ms=10_000, move_ms=3_000)


# A fixed name a Ray worker finds without being told: the tests using it are in the "ray" xdist
# group, so no two of them run at once.
KILL_TRIGGER = Path(tempfile.gettempdir()) / "arena-test-kill-once"


class KillOnce:
    """In-process bot: while the trigger file exists, its first move SIGKILLs its own process.

    Run on Ray, that process is the worker running the match: a test of a worker dying mid-match.
    Removing the trigger is atomic, so exactly one move of one process kills.
    """

    def choose(self, observation, legal_actions):
        try:
            os.unlink(KILL_TRIGGER)
        except FileNotFoundError:
            return legal_actions[0]
        os.kill(os.getpid(), signal.SIGKILL)

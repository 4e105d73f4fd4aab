"""Players: the runner's side of a bot, in process or as a subprocess speaking arena/2."""

from arena.players.base import BotSpec, Player
from arena.players.local import LocalPlayer
from arena.players.process import ProcessPlayer
from arena.protocol import TimeControl


def make_player(spec: BotSpec, time: TimeControl) -> Player:
    """The right Player for a spec: in process or subprocess."""
    # Here, above both kinds, so base.py needs neither (no import circle through it).
    return LocalPlayer(spec, time) if spec.in_process else ProcessPlayer(spec, time)


__all__ = ["BotSpec", "LocalPlayer", "Player", "ProcessPlayer", "make_player"]

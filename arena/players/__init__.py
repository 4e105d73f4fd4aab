"""Players: the runner's side of a bot, in process or as a subprocess speaking arena/2."""

from arena.players.base import BotSpec, Player, make_player
from arena.players.local import LocalPlayer
from arena.players.process import ProcessPlayer

__all__ = ["BotSpec", "LocalPlayer", "Player", "ProcessPlayer", "make_player"]

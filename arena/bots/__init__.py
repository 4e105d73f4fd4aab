"""The built-in bots, shipped inside the package so an installed Arena has them.

`random_bot.py` is the stdlib random bot that `arena bot check` and `arena transcript` play
against (`arena.players.base.random_bot` starts it as a subprocess from this folder). It is also
the source of the example `bots/random_bot.py` (`python -m arena.kits bots` writes it).
"""

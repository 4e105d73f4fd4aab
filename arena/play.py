"""`arena play`: a person plays one seat of a game in the terminal against bots, recorded like any
game (a one-match tournament of its own, so `arena replay`, the reports and the web show it).

The person is a HumanPlayer (arena/players/human.py) put in its seat by the match runner's
`wrap` hook; the bots run as in a tournament, with the default time limits.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rich.console import Console

from arena.config import TimeConfig
from arena.errors import ConfigError
from arena.games import get_game, make_options
from arena.match import GamePlan, GameRecord, MatchRunner, MatchSpec
from arena.players.base import BotSpec, Player, random_bot
from arena.players.human import HumanPlayer
from arena.protocol import TimeControl
from arena.store import Store
from arena.store.matches import MatchRecord

RANDOM = "random"  # the `--against` name of the built-in random bot


@dataclass
class PlayResult:
    """A played game: its tournament and game ids and its record (scores, ending, moves)."""

    tournament_id: int
    game_id: str
    record: GameRecord


def resolve_bot(target: str, db: Path | None, seed: int = 1) -> BotSpec:
    """`random` (the built-in random bot), a bot folder or manifest path, or a registry NAME[@V]."""
    if target == RANDOM:
        return random_bot(RANDOM, seed=seed)
    from arena.checker import resolve_target

    spec, _games, _manifest = resolve_target(target, db)
    return spec


def table_of(game: str, against: list[BotSpec], seats: int | None, seat: int,
             seed: int) -> tuple[int, list[BotSpec]]:
    """The seat count and the bots of the other seats, in seat order: `against` in turn, random
    bots for the seats left; bot names made unique (a match keys its bots by name)."""
    counts = get_game(game).game_type.seat_counts
    if seats is None:
        seats = next((n for n in counts if n >= len(against) + 1), None)
        if seats is None:
            raise ConfigError(f"{game} has at most {max(counts)} seats: {len(against)} bots and "
                              "you do not fit")
    if seats not in counts:
        raise ConfigError(f"--seats {seats}: {game} is played by "
                          f"{', '.join(map(str, counts))} seats")
    if len(against) > seats - 1:
        raise ConfigError(f"{len(against)} --against bots for {seats - 1} other seats")
    if not 0 <= seat < seats:
        raise ConfigError(f"--seat {seat}: the seats are 0 to {seats - 1}")
    others = list(against) + [random_bot(f"{RANDOM}-{i}", seed=seed + i)
                              for i in range(len(against) + 1, seats)]
    taken: set[str] = set()
    unique = []
    for spec in others:
        name, n = spec.name, 1
        while name in taken:
            n += 1
            name = f"{spec.name}-{n}"
        taken.add(name)
        unique.append(spec if name == spec.name else dataclasses.replace(spec, name=name))
    return seats, unique


def play_game(game: str, against: list[BotSpec], store: Store, stream: TextIO, console: Console,
              *, seat: int = 0, seats: int | None = None, seed: int = 1,
              options: dict | None = None, name: str = "you") -> PlayResult:
    """Play one game of `game` with a person in `seat` (reading `stream`, drawing on `console`)
    against `against` (random bots fill the other seats); record it in `store`."""
    options = dict(options or {})
    parsed = make_options(game, options)  # a bad option is a ConfigError before anything starts
    seats, others = table_of(game, against, seats, seat, seed)
    get_game(game).validate_options(parsed, seats)
    if name in {b.name for b in others}:
        raise ConfigError(f"--name {name!r} is also a bot's name at this table")
    person = BotSpec(name=name, version="human", factory=_no_bot)
    bots = (person, *others)
    seating = [0] * seats
    rest = iter(range(1, seats))
    for s in range(seats):
        seating[s] = 0 if s == seat else next(rest)
    bot_ids = {b.name: store.add_bot(b.name, b.version, command=b.command, workdir=b.workdir)
               for b in bots}
    options_json = parsed.model_dump(mode="json")
    tid = store.create_tournament(
        f"play {game}", game, "round_robin", seats, seed, options_json,
        {"play": {"game": game, "seat": seat, "seed": seed, "person": name,
                  "against": [b.name for b in others]}},
        [bot_ids[b.name] for b in bots],
        stages=[{"name": "play", "game": game, "format": "round_robin", "seats": seats,
                 "options": options_json, "config": {"planned_games": 1},
                 "entrants": list(range(seats)), "left_out": [], "rounds": 1}],
        names=[b.name for b in bots])
    store.set_stage_status(tid, 1, "running")
    table = [bots[b].name for b in seating]
    store.record_round(tid, 1, 1, [table], [], 0.0, bot_ids)
    game_id = f"t{tid}-play-g1"
    defaults = TimeConfig()
    spec = MatchSpec(
        match_id=f"t{tid}-play", game=game, options=options,
        bots=bots, games=(GamePlan(game_id, 0, 0, 0, seed, tuple(seating)),),
        time=TimeControl(startup_ms=defaults.startup_ms, move_ms=defaults.move_ms),
        max_failures=1)

    def seat_person(player: Player) -> Player:
        if player.spec is person:
            return HumanPlayer(person, player.time, stream, console)
        return player

    try:
        result = asyncio.run(MatchRunner(spec, wrap=seat_person).run())
    except BaseException:
        store.set_status(tid, "interrupted")
        raise
    from arena.tournament import score_result

    entries = {b.name: i for i, b in enumerate(bots)}
    score, deals = score_result(result, 1, 1, tuple(seating), entries, [b.name for b in bots])
    store.record_matches(tid, [MatchRecord(1, 1, 1, game, options_json, result, score,
                                           names=table, deals=deals, match_id=spec.match_id,
                                           bots=tuple(seating))], bot_ids)
    store.set_stage_status(tid, 1, "finished")
    store.set_status(tid, "finished")
    return PlayResult(tid, game_id, result.games[0])


def _no_bot() -> None:
    """The person's placeholder factory: the match runner's wrap puts a HumanPlayer there."""
    return None

"""Events: a tournament is one or more stages, each a game with its own format, seats and options.

`plan_event` validates everything a run needs — games, options for the seat count, the format's
constraints, deal limits, who plays which stage — before anything is written, so a rejected config
leaves the database as it was. The same entrants play every stage they can: a bot whose manifest
does not list a stage's game is left out of that stage (and the standings say so).

Ids and seeds are pure functions of (tournament, stage, round, table, deal), so a resumed run builds
exactly the matches an uninterrupted run would.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from math import comb

from arena.cards import derive_seed
from arena.config import StageConfig, TournamentConfig, stage_entrants, time_control
from arena.errors import ConfigError
from arena.games import get_game, make_options
from arena.match import GamePlan, MatchSpec
from arena.players.base import BotSpec
from arena.scheduling import Pairing, RoundRobin, Scheduler, Table, get_scheduler, seatings

GAMES_PER_MATCH_LIMIT = 1000  # the ordinal arithmetic keeps the games of one match contiguous
TABLES_PER_ROUND_LIMIT = 1_000_000
ROUNDS_PER_STAGE_LIMIT = 1_000_000


@dataclass
class StagePlan:
    """One validated stage: its config, scheduler, entrants (event entry indices) and game plans."""

    number: int  # 1-based
    config: StageConfig
    scheduler: Scheduler
    pairing: Pairing
    entrants: list[int]  # event entry index of each stage-local bot
    left_out: list[int]  # event entries that do not play this stage's game
    options: dict  # the game options, defaults filled in (JSON)
    seatings: list[tuple[int, int, tuple[int, ...]]]
    total_rounds: int

    @property
    def games_per_match(self) -> int:
        """Games in each match of this stage."""
        return len(self.seatings)

    def stored_config(self) -> dict:
        """The stage's config as the database keeps it: planned games and schedule version added."""
        stored = {**self.config.model_dump(mode="json"), "planned_games": self.planned_games()}
        if isinstance(self.scheduler, RoundRobin):
            stored["schedule"] = self.scheduler.schedule
        return stored

    def planned_games(self) -> int:
        """Games the stage will play (byes and rests excluded, so an estimate for Swiss)."""
        per_match = self.config.cycles * self.games_per_match
        if self.config.format == "round_robin":
            return comb(len(self.entrants), self.config.seats) * per_match
        if self.config.format == "gauntlet":
            field_size = len(self.entrants) - len(self.pairing.candidates)
            return len(self.pairing.candidates) * comb(field_size, self.config.seats - 1) * per_match
        tables = max(1, len(self.entrants) // self.config.seats)
        return self.total_rounds * tables * self.games_per_match


@dataclass
class EventPlan:
    """A whole validated tournament: its config, bots and stages, and the digest resumes compare."""

    config: TournamentConfig
    bots: list[BotSpec]
    rows: list[dict]
    stages: list[StagePlan]
    digest: str
    time: object = field(default=None)

    @property
    def name(self) -> str:
        """The tournament's name."""
        return self.config.name

    def planned_games(self) -> int:
        """Games over every stage (an estimate where the format decides as it goes)."""
        return sum(s.planned_games() for s in self.stages)


def config_digest(config: TournamentConfig) -> str:
    """A digest of the config's content, to tell whether a resume continues the same tournament."""
    data = config.model_dump(mode="json")
    # Keys added after tournaments were recorded count only when set: at their defaults the digest
    # stays what it was, so a tournament recorded before them still resumes.
    for key, default in LATER_KEYS.items():
        if data.get(key) == default:
            data.pop(key, None)
    for stage in data.get("stages", []):
        for key, default in LATER_STAGE_KEYS.items():
            if stage.get(key) == default:
                stage.pop(key, None)
    for limits in (data.get("limits"), *(b.get("limits") for b in data.get("bots", []))):
        if isinstance(limits, dict):
            for key in LATER_LIMITS:
                if limits.get(key) is None:
                    limits.pop(key, None)
    text = json.dumps(data, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


LATER_KEYS = {"bot_user": "seat", "allow_unconfined": False}
LATER_STAGE_KEYS = {"weight": 1.0}
LATER_LIMITS = ("tmp_mb", "cpu_cores")


def plan_event(config: TournamentConfig, bots: list[BotSpec], rows: list[dict]) -> EventPlan:
    """Validate and plan every stage; ConfigError (one line) on anything that cannot be played."""
    names = [b.name for b in bots]
    stages = []
    for number, stage in enumerate(config.stages, start=1):
        where = f"stage {stage.name!r}: " if config.event else ""
        try:
            stages.append(_plan_stage(number, stage, names, rows, config.seed))
        except ConfigError as exc:
            raise ConfigError(f"{where}{exc}") from None
    return EventPlan(config, bots, rows, stages, config_digest(config), time_control(config))


def keep_recorded_schedules(plan: EventPlan, recorded_stages: list[dict]) -> None:
    """On resume, each round robin stage is dealt by the schedule version it was recorded with.

    A stage recorded before schedules had versions (no `schedule` in its stored config) was dealt
    by version 1; re-deriving its rounds with a later version would not match the recorded ones.
    ConfigError (one line) for a version this Arena does not know.
    """
    for stage, row in zip(plan.stages, recorded_stages):
        if not isinstance(stage.scheduler, RoundRobin):
            continue
        version = (row.get("config") or {}).get("schedule", 1)
        if version != stage.scheduler.schedule:
            try:
                stage.scheduler = RoundRobin(schedule=version)
            except ConfigError as exc:
                raise ConfigError(f"cannot resume stage {stage.number} ({stage.config.name!r}): "
                                  f"{exc}") from None


def _plan_stage(number: int, stage: StageConfig, names: list[str], rows: list[dict],
                seed: int) -> StagePlan:
    game_cls = get_game(stage.game)
    options = make_options(stage.game, stage.options)
    game_cls.validate_options(options, stage.seats)
    plans = seatings(stage.seats, stage.deals, stage.duplicate)
    if len(plans) > GAMES_PER_MATCH_LIMIT:
        raise ConfigError(
            f"deals: at most {GAMES_PER_MATCH_LIMIT} games per match, got {len(plans)} "
            f"({stage.deals} deals x {len(plans) // stage.deals} seat rotations)")
    entrants = stage_entrants(stage, rows)
    left_out = [i for i in range(len(rows)) if i not in entrants]
    local = {names[e]: i for i, e in enumerate(entrants)}
    for key in ("candidates", "seeding"):
        absent = [n for n in getattr(stage, key) if n not in local]
        if absent:
            raise ConfigError(f"{key}: bot {absent[0]!r} does not play {stage.game}")
    if len(set(stage.seeding)) != len(stage.seeding):
        raise ConfigError(f"seeding: a bot is listed twice ({stage.seeding})")
    if len(entrants) < stage.seats:
        raise ConfigError(f"{len(entrants)} bots cannot fill tables of {stage.seats} seats")
    if stage.tiebreaks is not None:
        from arena.standings import TIEBREAKS

        unknown = [t for t in stage.tiebreaks if t not in TIEBREAKS]
        if unknown:
            raise ConfigError(f"tiebreaks: unknown tie-break {unknown[0]!r} "
                              f"(choose from {', '.join(TIEBREAKS)})")
    scheduler = get_scheduler(stage.format)
    pairing_seed = derive_seed(seed, "pairing", stage.game, number)
    seeding = [local[n] for n in stage.seeding]
    if seeding:  # a partial list: the bots it names first, the rest in an order from the seed
        rest = [i for i in range(len(entrants)) if i not in seeding]
        random.Random(pairing_seed).shuffle(rest)
        seeding += rest
    pairing = Pairing(
        entrants=len(entrants), seats=stage.seats,
        seed=pairing_seed,
        rounds=stage.rounds, cycles=stage.cycles,
        candidates=tuple(local[n] for n in stage.candidates),
        seeding=tuple(seeding), bye_points=stage.bye_points,
        sprt=stage.sprt.as_tuple() if stage.sprt else None,
    )
    if stage.format != "swiss" and stage.rounds is not None:
        raise ConfigError(f"rounds: only a swiss stage takes rounds (format is {stage.format})")
    if stage.format != "gauntlet" and stage.candidates:
        raise ConfigError(f"candidates: only a gauntlet takes candidates (format is {stage.format})")
    scheduler.validate(pairing)
    total = scheduler.total_rounds(pairing)
    if total > ROUNDS_PER_STAGE_LIMIT:
        raise ConfigError(f"{total} rounds: at most {ROUNDS_PER_STAGE_LIMIT} per stage")
    return StagePlan(number, stage, scheduler, pairing, entrants, left_out,
                     options.model_dump(mode="json"), plans, total)


def match_id(tournament_id: int, stage: int, round_no: int, table_no: int) -> str:
    """The deterministic id of a match."""
    return f"t{tournament_id}-st{stage}-r{round_no}-m{table_no}"


def ordinal(stage: int, round_no: int, table_no: int, game_index: int) -> int:
    """A game's position in the tournament's fixed order (ratings count games in this order)."""
    return ((stage * ROUNDS_PER_STAGE_LIMIT + round_no) * TABLES_PER_ROUND_LIMIT
            + table_no) * GAMES_PER_MATCH_LIMIT + game_index


def match_spec(plan: EventPlan, stage: StagePlan, table: Table, tournament_id: int) -> MatchSpec:
    """The MatchSpec of one table: bots in seat order, every game with its id, ordinal and seed."""
    config = plan.config
    mid = match_id(tournament_id, stage.number, table.round, table.number)
    table_bots = tuple(plan.bots[stage.entrants[b]] for b in table.bots)
    names = tuple(b.name for b in table_bots)
    games = tuple(
        GamePlan(
            game_id=f"{mid}-d{deal}-s{rot}",
            ordinal=ordinal(stage.number, table.round, table.number, i),
            deal=deal,
            rotation=rot,
            # Seeds depend on the config, not on the database or entry order: same config, same deals.
            seed=derive_seed(config.seed, stage.config.game, stage.number, table.round, names, deal),
            seating=seating,
        )
        for i, (deal, rot, seating) in enumerate(stage.seatings)
    )
    return MatchSpec(
        match_id=mid, game=stage.config.game, options=stage.options, bots=table_bots, games=games,
        time=plan.time, max_failures=stage.config.max_failures,
    )

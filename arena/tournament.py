"""Running a tournament: schedule → MatchSpecs → executor → store → ratings.

The driver is the only writer. Each match is recorded in one transaction as it finishes, so a
tournament stopped at any moment keeps every finished match, and a resumed run skips them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from arena.cards import derive_seed
from arena.config import TournamentConfig, time_control
from arena.errors import ConfigError
from arena.executors import Executor
from arena.games import get_game, make_options
from arena.match import GamePlan, MatchResult, MatchSpec
from arena.players.base import BotSpec
from arena.ratings import elo
from arena.schedulers import Table, round_robin, seatings
from arena.store import Store

GAMES_PER_MATCH_LIMIT = 1000  # ordinal arithmetic below keeps games of one match contiguous


@dataclass
class TournamentRun:
    """What a run did: the tournament id, matches played now and before, and the final table."""

    tournament_id: int
    matches_total: int
    matches_played: int
    matches_skipped: int
    games_played: int
    ratings: list[dict] = field(default_factory=list)


def config_digest(config: TournamentConfig) -> str:
    """A digest of the config's content, to tell whether a resume continues the same tournament."""
    text = json.dumps(config.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def plan_matches(config: TournamentConfig, bots: list[BotSpec], tournament_id: int) -> list[tuple[Table, MatchSpec]]:
    """Every match of the tournament, in schedule order, with deterministic ids and deal seeds."""
    options = make_options(config.game, config.options).model_dump(mode="json")
    plans = seatings(config.seats, config.deals, config.duplicate)
    if len(plans) > GAMES_PER_MATCH_LIMIT:
        raise ConfigError(f"deals: at most {GAMES_PER_MATCH_LIMIT} games per match, got {len(plans)}")
    out = []
    tc = time_control(config)
    for rnd in round_robin(len(bots), config.seats, config.cycles):
        for table in rnd:
            match_id = f"t{tournament_id}-r{table.round}-m{table.number}"
            base = (table.round * 100_000 + table.number) * GAMES_PER_MATCH_LIMIT
            games = tuple(
                GamePlan(
                    game_id=f"{match_id}-d{deal}-s{rot}",
                    ordinal=base + i,
                    deal=deal,
                    rotation=rot,
                    # Seeds depend on the config, not on the database: same config, same deals.
                    seed=derive_seed(config.seed, config.game, table.round, table.bots, deal),
                    seating=seating,
                )
                for i, (deal, rot, seating) in enumerate(plans)
            )
            spec = MatchSpec(
                match_id=match_id, game=config.game, options=options,
                bots=tuple(bots[b] for b in table.bots), games=games, time=tc,
                max_failures=config.max_failures,
            )
            out.append((table, spec))
    return out


def run_tournament(
    config: TournamentConfig,
    bots: list[BotSpec],
    bot_rows: list[dict],
    store: Store,
    executor: Executor,
    resume: bool = False,
    on_start: Callable[[int, int, int], None] | None = None,
    on_result: Callable[[MatchResult], None] | None = None,
) -> TournamentRun:
    """Play (or resume) a tournament and store its games and Elo ratings."""
    game_cls = get_game(config.game)
    options = make_options(config.game, config.options)
    game_cls.validate_options(options, config.seats)
    options_json = options.model_dump(mode="json")
    digest = config_digest(config)
    full_config = {**config.model_dump(mode="json"), "digest": digest}
    if resume:
        existing = store.find_tournament(config.name)
        if existing is None:
            raise ConfigError(f"nothing to resume: no tournament named {config.name!r}")
        if json.loads(existing["config"]).get("digest") != digest:
            raise ConfigError(
                f"cannot resume tournament {existing['id']} ({config.name!r}): its config differs"
            )
        tid = existing["id"]
        store.set_status(tid, "running")
    else:
        bot_ids = [store.add_bot(**row) for row in bot_rows]
        tid = store.create_tournament(
            config.name, config.game, config.format, config.seats, config.seed,
            options_json, full_config, bot_ids,
        )
    bot_ids = store.bot_ids(tid)
    matches = plan_matches(config, bots, tid)
    done = store.recorded_matches(tid)
    todo = [(t, s) for t, s in matches if s.match_id not in done]
    tables = {s.match_id: t for t, s in todo}
    if on_start:
        on_start(tid, len(matches), sum(len(s.games) for _, s in todo))
    run = TournamentRun(tid, len(matches), 0, len(matches) - len(todo), 0)
    try:
        for result in executor.run(s for _, s in todo):
            table = tables[result.match_id]
            store.record_match(tid, table.round, table.number, config.game, options_json,
                               result, bot_ids)
            run.matches_played += 1
            run.games_played += len(result.games)
            if on_result:
                on_result(result)
    except BaseException:
        store.set_status(tid, "interrupted")
        raise
    run.ratings = update_ratings(store, tid, config.rating.k, config.rating.initial)
    store.set_status(tid, "finished")
    return run


def update_ratings(store: Store, tournament_id: int, k: float = 32.0, initial: float = 1500.0) -> list[dict]:
    """Recompute a tournament's Elo from its stored games (in ordinal order) and store it."""
    table, history = elo(store.game_results(tournament_id), k=k, initial=initial,
                         bots=store.bot_ids(tournament_id))
    store.save_ratings(tournament_id, "elo", table, history)
    return table

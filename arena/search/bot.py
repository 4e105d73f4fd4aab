"""ISMCTS as a bot: `choose(observation, legal_actions)` rebuilds a state from the observation
(`from_observation` of the game, with the options of `game_start`), searches it and answers one of
the legal actions."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping

from arena.cards import derive_seed
from arena.games import get_game
from arena.search.hooks import declared_bots, search_hooks
from arena.search.ismcts import EXPLORATION, ISMCTS, action_key
from arena.search.playouts import Profile, profile_for


def state_from_observation(observation: dict, options: Mapping | None):
    """The game state an observation describes, built with the game's options from game_start."""
    return get_game(observation["game"]).from_observation(observation, dict(options or {}))


class ISMCTSBot:
    """An in-process ISMCTS bot with an iteration and/or time budget per move."""

    def __init__(self, iterations: int | None = 1000, time_ms: float | None = None,
                 seed: int = 0, exploration: float = EXPLORATION, profile: str = "tuned",
                 per_game: bool = False):
        self.search = ISMCTS(iterations=iterations, time_ms=time_ms, seed=seed,
                             exploration=exploration, profile=profile)
        self.seed = seed
        self.options: dict | None = None
        # Take each game's exploration and profile from its shipped bot at game_start (the
        # budget stays).
        self.per_game = per_game
        # The profile's per-game tracker, fed every observation (made at the game's first one).
        self.tracker = None

    def game_start(self, msg: dict) -> None:
        """Keep the game's options (they come once, in game_start); with `per_game`, search
        with the shipped bot's exploration and profile for this table (`shipped_settings`)."""
        self.options = dict(msg.get("options") or {})
        self.tracker = None
        if self.per_game and msg.get("game"):
            settings = shipped_settings(msg["game"], len(msg.get("players") or ()) or 2,
                                        self.options)
            self.search.c = settings.get("exploration", EXPLORATION)
            self.search.profile = settings.get("profile", "tuned")

    def choose(self, observation: dict, legal_actions: list, time_left_ms: float | None = None):
        """The searched action for this observation (deterministic given seed and iterations)."""
        profile = self.search.profile
        if not isinstance(profile, Profile):
            profile = profile_for(observation["game"], profile)
        tracking = profile.tracker is not None
        if len(legal_actions) == 1 and not tracking:
            return legal_actions[0]
        state = state_from_observation(observation, self.options)
        weights = None
        if tracking:
            # Every observation, forced moves too: the tracker reads each match's hand sizes.
            if self.tracker is None:
                self.tracker = profile.tracker()
            self.tracker.observe(observation, state)
            weights = self.tracker.weights()
            if len(legal_actions) == 1:
                return legal_actions[0]
        # Seeded by the observation itself, so a move depends on no earlier call (beyond the
        # weights the tracker, if any, read from this game's earlier observations).
        rng = random.Random(derive_seed("ismcts", self.seed,
                                        json.dumps(observation, sort_keys=True)))
        budget = self.search.time_ms
        if time_left_ms is not None:
            # Leave room for rebuilding the state and for the protocol's own overhead.
            cap = max(5.0, 0.5 * time_left_ms - 20)
            budget = cap if budget is None else min(budget, cap)
        action = self.search.search(state, observation["seat"], rng, time_ms=budget,
                                    weights=weights)
        wanted = action_key(action)
        return next(a for a in legal_actions if action_key(a) == wanted)


def factory(iterations: int | None = None, time_ms: float | None = None, seed: int = 0,
            exploration: float = EXPLORATION, profile: str = "tuned"):
    """A zero-argument factory of ISMCTSBot for tournament configs (`python = "module:attr"`)."""
    return lambda: ISMCTSBot(iterations=iterations, time_ms=time_ms, seed=seed,
                             exploration=exploration, profile=profile)


# A shipped bot's wall-time cap per move: under the configs' move_ms = 1000, it only guards a busy
# shared machine (each game's shipped bots search a fixed number of iterations, which keeps their
# results reproducible; about 100-180 ms of CPU per move here, bench/search_bench.py).
SHIPPED_TIME_MS = 900


def shipped_bots() -> dict[str, Mapping]:
    """The settings of every game's shipped bots (the bots configs/search/*.toml name), by bot
    name, as the games declare them in their search hooks."""
    return {name: settings for name, (_game, settings) in declared_bots().items()}


def shipped_bot(game: str, seats: int, options: Mapping) -> str:
    """The name of the shipped bot that plays `game` at `seats` seats with these options."""
    pick = search_hooks(game).pick_bot
    return game if pick is None else pick(seats, options)


def shipped_settings(game: str, seats: int, options: Mapping) -> Mapping:
    """The settings of the shipped bot that plays this table; none (ISMCTSBot's own) for a game
    that declares no bot."""
    return search_hooks(game).bots.get(shipped_bot(game, seats, options), {})


# Time-budget factories, for play.
ismcts_150ms = factory(time_ms=150)
ismcts_100ms = factory(time_ms=100)
ismcts_400it = factory(iterations=400)

# The shipped bots' factories, made on first use, so that a config names the same object twice.
_SHIPPED_FACTORIES: dict[str, object] = {}


def __getattr__(name: str):
    """`SHIPPED` (shipped_bots()) and `ismcts_<bot>`, the factory of a shipped bot with its
    settings and the wall-time cap (configs name them as `arena.search.bot:ismcts_xeri`)."""
    if name == "SHIPPED":
        return shipped_bots()
    bot = name.removeprefix("ismcts_")
    if bot != name:
        made = _SHIPPED_FACTORIES.get(bot)
        if made is None:
            settings = shipped_bots().get(bot)
            if settings is not None:
                made = _SHIPPED_FACTORIES[bot] = factory(time_ms=SHIPPED_TIME_MS, **settings)
        if made is not None:
            return made
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

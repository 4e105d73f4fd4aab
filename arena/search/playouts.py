"""Playout settings for ISMCTS: how far a playout runs, how it plays, how it is scored.

Each game declares its profiles in its search hooks (arena.search.hooks); `profile_for` looks them
up by game name and kind. A `Profile` says whether a playout stops at the end of the current round
(the game's `round` counter changes: a game that scores its rounds on their own has in the score
margin then a good static evaluation, and the rest of a long game is mostly noise) and the points
that make a margin "large" (`scale`: a margin gain of `scale` is worth a reward of
0.5 + 0.5 * tanh(1)). `policy` is a cheap state-based playout rule (seat, legal actions, rng) ->
action, or None for uniformly random play.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from arena.games import game_names
from arena.games.base import JSON, GameState
from arena.search.hooks import search_hooks

PlayoutPolicy = Callable[[GameState, int, list, random.Random], JSON]


@dataclass(frozen=True)
class Profile:
    """How ISMCTS plays out and scores the states of one game."""

    stop_at_round_end: bool = False
    scale: float = 10.0
    # Share of a finished game's reward that is its rank (win/draw/loss); the rest is the margin.
    rank_weight: float = 0.5
    policy: PlayoutPolicy | None = None
    # A fast playout function (state, rng, stop_at_round_end, plies) replacing the generic loop.
    fast: Callable[[GameState, random.Random, bool, int | None], None] | None = None
    # Plies from the search's root after which a playout stops (None: no limit), and points per
    # seat added to the scores of a stopped playout for what its position is worth.
    horizon: int | None = None
    bonus: Callable[[GameState], list[float]] | None = None
    # A rule-based preference per legal action (seat's view of the determinized state, higher is
    # better, about 0..1) that biases the tree toward it while an action has few visits
    # (progressive bias: + prior_weight * prior / (visits + 1)); untried actions go in its order.
    prior: Callable[[GameState, int, list], list[float]] | None = None
    prior_weight: float = 0.0
    # A model of the other sides' play inside the tree (seat, legal, rng -> action, like `policy`):
    # modelled seats play by it instead of by statistics of their own, so the tree branches on
    # the searching side's choices only and learns the reply to that play. None: decoupled UCT.
    opponent: PlayoutPolicy | None = None
    # Builds what the profile's functions look up (state of the game about to be searched).
    prepare: Callable[[GameState], object] | None = None
    # Inference from the other sides' past play under the `opponent` model: called once per
    # search with (root state, searching seat), it returns a function that re-deals a fresh
    # determinization in place (det, rng) so the hidden cards agree with what the modelled seats
    # chose so far, or None when there is nothing to infer.
    belief: Callable[[GameState, int], Callable[[GameState, random.Random], None] | None] | None = None
    # Whether the other sides' play so far fits `opponent` (root state, searching seat): when it
    # says no, the search plays them by statistics of their own (decoupled UCT) and infers nothing.
    identify: Callable[[GameState, int], bool] | None = None
    # Search only the root decision, pairing its actions: each iteration determinizes once, and
    # every legal action of the searching seat is played from that determinization with the same
    # playout seed (common random numbers), the other seats answering by `opponent` (or at
    # random); the best mean reward wins. The iteration budget counts playouts. Pays where a
    # tree's statistics are swamped by chance and each decision shifts the result a little.
    paired: bool = False
    # Rewards: "margin" (the margin over the best other side, squashed, blended with the rank at
    # the end) or "pairwise" (per other side, the chance of finishing ahead of it: exact at the
    # end, else Phi(score difference / spread(state)), spread being the standard deviation of a
    # pair's difference still to come).
    reward: str = "margin"
    spread: Callable[[GameState], float] | None = None
    # A factory of a per-game tracker the bot feeds every observation of its seat
    # (`observe(observation, state)`), whose `weights()` (per seat, the probability that it plays
    # by `opponent`) go to `belief` as `weights=`.
    tracker: Callable[[], object] | None = None


def play_out(state: GameState, rng: random.Random, stop_at_round_end: bool,
             policy: PlayoutPolicy | None, plies: int | None = None) -> None:
    """Play `state` on with `policy` (random if None) until it is over, `plies` steps are played
    or, if asked, its round ends."""
    start_round = getattr(state, "round", None) if stop_at_round_end else None
    rand = rng.random
    left = -1 if plies is None else plies
    while left:
        left -= 1
        acting = state.to_act()
        if not acting:
            return
        if start_round is not None and state.round != start_round:
            return
        actions = {}
        for s in acting:
            legal = state.legal_actions(s)
            if len(legal) == 1:
                actions[s] = legal[0]
            elif policy is None:
                actions[s] = legal[int(rand() * len(legal))]
            else:
                actions[s] = policy(state, s, legal, rng)
        state.apply_validated(actions)


# Plain ISMCTS: uniformly random playouts to the game's end, rewarded by rank alone.
RANDOM_PLAYOUTS = Profile(stop_at_round_end=False, rank_weight=1.0)

# The kinds a missing kind falls back to, in order (then the generic Profile()).
_FALLBACKS = {"paired": ("paired", "policy", "tuned"), "policy": ("policy", "tuned")}


def profile_for(game: str, kind: str = "tuned") -> Profile:
    """The profile of `game` (declared in its search hooks): "tuned" (its default), "policy"
    (with the rule-based playout policies; else "tuned"), "paired" (the paired root search where
    a game has one, else "policy") or "random" (whole-game random playouts, rank rewards: plain
    ISMCTS, unless the game declares its own); any other kind is "tuned"."""
    profiles = search_hooks(game).profiles
    if kind == "random":
        return profiles.get("random", RANDOM_PLAYOUTS)
    for fallback in _FALLBACKS.get(kind, ("tuned",)):
        if fallback in profiles:
            return profiles[fallback]
    return Profile()


def declared_profiles(kind: str = "tuned") -> dict[str, Profile]:
    """Every registered game that declares a profile of `kind`, with that profile."""
    declared = {}
    for game in game_names():
        profiles = search_hooks(game).profiles
        if kind in profiles:
            declared[game] = profiles[kind]
    return declared

"""Per-game playout settings for ISMCTS: how far a playout runs, how it plays, how it is scored.

A `Profile` says whether a playout stops at the end of the current round (the game's `round`
counter changes: every game here scores its rounds on their own, so the score margin then is a
good static evaluation and the rest of a long game is mostly noise) and the points that make a
margin "large" (`scale`: a margin gain of `scale` is worth a reward of 0.5 + 0.5 * tanh(1)).
`policy` is a cheap state-based playout rule (seat, legal actions, rng) -> action, or None for
uniformly random play.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from arena.games.base import JSON, GameState
from arena.search import crossfire_playout as crossfire
from arena.search.bfc_playout import heuristic_policy, heuristic_prior, show_bonus
from arena.search.crosswalk_model import (
    PlayEvidence,
    model_belief,
    model_fast,
    model_fast_random_rest,
    model_identify,
    model_opponent,
    model_prior,
    round_spread,
)
from arena.search.crosswalk_playout import crosswalk_fast, crosswalk_prior

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


# -- Xeri -------------------------------------------------------------------------------------------

def xeri_fast(state, rng: random.Random, stop_at_round_end: bool, plies: int | None = None,
              capture: float = 0.9) -> None:
    """Xeri playout on the determinized state: take the most valuable pile on offer (a lone card
    is a xeri; a jack is spent only on a xeri or a pile worth points), else lay the card that
    hands the next player the least (its hand is known in the determinization: a card it can
    match or jack gives it the pile). With probability 1 - `capture` a random card instead.
    Stops after `plies` plays or at the round's end if asked."""
    rand = rng.random
    hands = state.hands
    points = state._points
    jack_xeri = state.options.jack_xeri
    start_round = state.round
    left = -1 if plies is None else plies
    while state.current >= 0 and left:
        left -= 1
        if stop_at_round_end and state.round != start_round:
            return
        seat = state.current
        hand = hands[seat]
        if capture <= 0 or len(hand) == 1 or rand() >= capture:
            state._play(seat, hand[int(rand() * len(hand))])
            continue
        pile = state.pile
        n = len(pile)
        worth = sum(points[c] for c in pile) + 0.3 * n
        card, best = None, 0.5
        if n:
            top = pile[-1][0]
            for c in hand:
                r = c[0]
                if r == top:
                    value = worth + (10 if n == 1 else 0) + 1
                elif r == "J":
                    value = worth + (_jack_xeri_value(pile[0], jack_xeri) if n == 1 else 0) - 3
                else:
                    continue
                if value > best:
                    card, best = c, value
        if card is None:
            other = hands[(seat + 1) % len(hands)]
            ranks = {c[0] for c in other}
            has_jack = "J" in ranks
            card, low = None, None
            for c in hand:
                r = c[0]
                given = 0.0
                if r in ranks:
                    given = worth + points[c] + (10 if n == 0 else 0)
                elif has_jack:
                    given = worth + points[c] + (_jack_xeri_value(c, jack_xeri) if n == 0 else 0)
                # Keep jacks: each one is a later capture or xeri.
                cost = given + (4 if r == "J" else 0) + points[c] * 0.3 + 0.1 * rand()
                if low is None or cost < low:
                    card, low = c, cost
        state._play(seat, card)


def _jack_xeri_value(lone: str, jack_xeri: str) -> int:
    """Points of a xeri that a jack makes on the lone card `lone`."""
    if jack_xeri == "any_jack_20" or lone[0] == "J":
        return 20
    return 10 if jack_xeri == "jack_on_jack_20" else 0


def xeri_random(state, rng: random.Random, stop_at_round_end: bool,
                plies: int | None = None) -> None:
    """Uniformly random Xeri plays, without action lists (xeri_fast never capturing on purpose,
    one draw per play); stops after `plies` plays or at the round's end if asked."""
    xeri_fast(state, rng, stop_at_round_end, plies, capture=0.0)


def xeri_bonus(state) -> list[float]:
    """What a Xeri position holds beyond its points: captured cards (toward the 3-point most-cards
    bonus) and jacks in hand (each a later capture or xeri)."""
    n = state.ncaptured
    jacks = [sum(1 for c in hand if c[0] == "J") for hand in state.hands]
    return [0.12 * n[s % len(n)] + 2.0 * jacks[s] for s in range(len(jacks))]


PROFILES: dict[str, Profile] = {
    "xeri": Profile(stop_at_round_end=True, scale=8.0, fast=xeri_fast, horizon=8,
                    bonus=xeri_bonus),
    # The other seat modelled as the heuristic (exactly: arena.search.crossfire_playout) with its
    # row drawn to explain its plays of the deal; a seat that does not play by it is searched
    # with decoupled UCT instead. Playouts by the heuristic's measure (70 % of cards).
    "crossfire": Profile(stop_at_round_end=False, scale=3.0, fast=crossfire.fast_playout,
                         opponent=crossfire.model_pick, belief=crossfire.belief,
                         identify=crossfire.identify, prepare=crossfire.prepare),
    # Playouts by the heuristic's final-card rule (75 % of the cards, the rest random) on a
    # plain-list simulation of the round, and the same rule as prior: random playouts judged
    # final cards badly (41.7 % against the heuristic at 4 seats, 50 % at 2).
    "crosswalk": Profile(stop_at_round_end=True, scale=40.0, fast=crosswalk_fast,
                         prior=crosswalk_prior, prior_weight=1.0),
    "battlefield_cribbage": Profile(stop_at_round_end=True, scale=12.0),
}

# Rule-informed variants (profile kind "policy"): the BFC team bot and the 2-seat Crosswalk bot
# search with these (the 4-seat Crosswalk bot measured no better with its entry than without).
POLICY_PROFILES: dict[str, Profile] = {
    **PROFILES,
    # Crosswalk with the other seats modelled exactly as the heuristic (arena.search.
    # crosswalk_model): in the tree, in playouts, and in each determinization's hands, which are
    # re-dealt to agree with their plays this cycle; a seat whose plays contradict the model
    # plays at random instead. Under other rules (no model) every seat is searched.
    "crosswalk": Profile(stop_at_round_end=True, scale=40.0, fast=model_fast,
                         prior=model_prior, prior_weight=1.0, opponent=model_opponent,
                         belief=model_belief, identify=model_identify),
    # BFC: the heuristic's own action values (arena.search.bfc_playout) as prior and playout
    # rule, playouts cut 8 plies below the root and scored with the visible hands' expected show
    # value; the 4-seat team bot uses it (low exploration: a point is only 1/8 of the reward scale).
    "battlefield_cribbage": Profile(stop_at_round_end=True, scale=8.0, prior=heuristic_prior,
                                    prior_weight=1.0, policy=heuristic_policy, horizon=8,
                                    bonus=show_bonus),
}

# The paired root search (profile kind "paired"): the 4-seat Crosswalk bot. A seat's one choice
# moves its expected result by a point or two of share beaten, which a tree's branching on every
# deal of the round buries; pairing the choices on the same deals measures exactly that. The
# other seats: the heuristic's exact card with the probability their plays so far give it (the
# rest play at random), hands re-dealt to agree with their plays this cycle.
PAIRED_PROFILES: dict[str, Profile] = {
    "crosswalk": Profile(stop_at_round_end=True, fast=model_fast_random_rest,
                         opponent=model_opponent, belief=model_belief, identify=model_identify,
                         paired=True, reward="pairwise", spread=round_spread,
                         tracker=PlayEvidence),
}

RANDOM_PROFILES: dict[str, Profile] = {
    "xeri": Profile(stop_at_round_end=False, rank_weight=1.0, fast=xeri_random),
}


def profile_for(game: str, kind: str = "tuned") -> Profile:
    """The profile of `game`: "tuned" (the defaults above), "policy" (with the rule-based
    playout policies), "paired" (the paired root search where a game has one, else "policy") or
    "random" (whole-game random playouts, rank rewards: plain ISMCTS)."""
    if kind == "policy":
        return POLICY_PROFILES.get(game, Profile())
    if kind == "paired":
        return PAIRED_PROFILES.get(game) or POLICY_PROFILES.get(game, Profile())
    if kind == "random":
        return RANDOM_PROFILES.get(game, Profile(stop_at_round_end=False, rank_weight=1.0))
    return PROFILES.get(game, Profile())

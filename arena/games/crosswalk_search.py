"""Crosswalk's search hooks for ISMCTS (returned by CrosswalkState.search_hooks): the profiles
built from the heuristic's final-card rule (arena.games.crosswalk_playout) and from the exact
model of the heuristic (arena.games.crosswalk_model), and the 2- and 4-seat shipped bots."""

from __future__ import annotations

from arena.games.crosswalk_model import (
    PlayEvidence,
    model_belief,
    model_fast,
    model_fast_random_rest,
    model_identify,
    model_opponent,
    model_prior,
    round_spread,
)
from arena.games.crosswalk_playout import crosswalk_fast, crosswalk_prior
from arena.search.hooks import SearchHooks
from arena.search.playouts import Profile

SEARCH = SearchHooks(
    profiles={
        # Playouts by the heuristic's final-card rule (75 % of the cards, the rest random) on a
        # plain-list simulation of the round, and the same rule as prior: random playouts judged
        # final cards badly (41.7 % against the heuristic at 4 seats, 50 % at 2).
        "tuned": Profile(stop_at_round_end=True, scale=40.0, fast=crosswalk_fast,
                         prior=crosswalk_prior, prior_weight=1.0),
        # The other seats modelled exactly as the heuristic: in the tree, in playouts, and in
        # each determinization's hands, which are re-dealt to agree with their plays this cycle;
        # a seat whose plays contradict the model plays at random instead. Under other rules (no
        # model) every seat is searched. The 2-seat bot's (the 4-seat bot measured no better).
        "policy": Profile(stop_at_round_end=True, scale=40.0, fast=model_fast,
                          prior=model_prior, prior_weight=1.0, opponent=model_opponent,
                          belief=model_belief, identify=model_identify),
        # The 4-seat bot's paired root search. A seat's one choice moves its expected result by a
        # point or two of share beaten, which a tree's branching on every deal of the round
        # buries; pairing the choices on the same deals measures exactly that. The other seats:
        # the heuristic's exact card with the probability their plays so far give it (the rest
        # play at random), hands re-dealt to agree with their plays this cycle.
        "paired": Profile(stop_at_round_end=True, fast=model_fast_random_rest,
                          opponent=model_opponent, belief=model_belief, identify=model_identify,
                          paired=True, reward="pairwise", spread=round_spread,
                          tracker=PlayEvidence),
    },
    bots={
        "crosswalk": {"iterations": 330, "profile": "policy"},
        # The iteration budget counts playouts here; four seats cost more per iteration (four
        # seats' statistics and priors per node), hence a budget of its own.
        "crosswalk_4p": {"iterations": 350, "profile": "paired"},
    },
    pick_bot=lambda seats, options: "crosswalk" if seats == 2 else "crosswalk_4p",
)

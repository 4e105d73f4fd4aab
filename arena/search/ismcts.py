"""Single-observer information-set MCTS (Cowling, Powley & Whitehouse 2012) over the game API.

Every iteration determinizes the root state for the searching seat (`GameState.determinize`: the
cards it cannot place are re-dealt, later chance re-drawn), then walks one tree shared by all
determinizations. A node is a history of joint actions from the root; at a node, each acting seat
keeps its own statistics per action (decoupled UCT, so a game's simultaneous steps are handled
like turns), and UCB uses availability counts: an action's exploration term counts the visits in
which it was legal, not the node's visits. The playout after the tree follows the `Profile` the
game declares (arena.search.playouts): a cheap state-based policy or random play, to the end
of the game or of the current round. A finished game's reward blends its rank (1 alone first, 0
alone last, ties split) with the squashed gain of the side's score margin over the search's root;
a playout cut at a round's end is scored by that margin gain alone. Rewards are per side, so
partners share them. A profile may also bias the tree with a rule-based prior (progressive bias:
untried actions in the rule's order, then a bonus that fades with visits) and may model the other
sides' play by a rule, so that the tree branches on the searching side's choices only. A
"paired" profile searches the root decision alone: each iteration's determinization plays every
legal action with one playout seed, so the actions are compared on the same luck.

Given its seed and an iteration budget a search is deterministic; a time budget stops earlier on
a slow machine and is for play, not for tests.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from typing import Any

from arena.games.base import JSON, GameState
from arena.search.playouts import Profile, play_out, profile_for

# The UCB exploration constant unless a bot says otherwise (rewards are in [0, 1]).
EXPLORATION = 0.7


def action_key(action: JSON) -> Any:
    """A hashable key of a JSON action (dicts of scalars and lists of scalars)."""
    if isinstance(action, dict):
        return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in action.items())
    if isinstance(action, list):
        return tuple(action)
    return action


def rank_rewards(ranks: Sequence[int]) -> list[float]:
    """Reward in [0, 1] per seat: the share of other seats it beats, a tie counting half."""
    n = len(ranks)
    if n < 2:
        return [1.0] * n
    return [
        (sum(1 for r in ranks if r > mine) + 0.5 * (sum(1 for r in ranks if r == mine) - 1))
        / (n - 1)
        for mine in ranks
    ]


class _Stats:
    """One seat's statistics at one node: visits, reward sums, availability per action key."""

    __slots__ = ("n", "w", "avail", "prior")

    def __init__(self) -> None:
        self.n: dict[Any, int] = {}
        self.w: dict[Any, float] = {}
        self.avail: dict[Any, int] = {}
        # The profile's rule-based preference per action key, computed when the key is first seen.
        self.prior: dict[Any, float] = {}


class _Node:
    """A history of joint actions: per-seat statistics and children by joint action."""

    __slots__ = ("stats", "children")

    def __init__(self) -> None:
        self.stats: dict[int, _Stats] = {}
        self.children: dict[tuple, _Node] = {}


class ISMCTS:
    """A reusable searcher: `search(state, seat)` returns the action to play for `seat`."""

    def __init__(
        self,
        iterations: int | None = 1000,
        time_ms: float | None = None,
        exploration: float = EXPLORATION,
        seed: int = 0,
        profile: Profile | str = "tuned",
    ):
        if iterations is None and time_ms is None:
            raise ValueError("ISMCTS needs an iteration budget, a time budget or both")
        self.iterations = iterations
        self.time_ms = time_ms
        self.c = exploration
        self.seed = seed
        # A Profile, or the name of a per-game kind ("tuned", "random") looked up at search time.
        self.profile = profile
        # Engine operations of the last search, for the bench.
        self.ops = {"iterations": 0, "determinize": 0, "clone": 0, "legal_actions": 0, "apply": 0}

    def _profile_of(self, state: GameState) -> Profile:
        if isinstance(self.profile, Profile):
            return self.profile
        return profile_for(state.game_type.name, self.profile)

    def search(
        self, state: GameState, seat: int, rng: random.Random | None = None,
        time_ms: float | None = None, weights: dict[int, float] | None = None,
    ) -> JSON:
        """The most visited action of `seat` after the budget (a paired profile: the best mean);
        `state` is left unchanged. `weights` (from the profile's tracker) go to its belief."""
        legal = state.legal_actions(seat)
        if len(legal) == 1:
            return legal[0]
        rng = rng or random.Random(self.seed)
        # The scorer first: a profile's one-time tables must not eat the first move's budget.
        scorer = _Scorer(state, self._profile_of(state), seat, weights)
        budget_ms = time_ms if time_ms is not None else self.time_ms
        deadline = None if budget_ms is None else time.perf_counter() + budget_ms / 1000
        if scorer.profile.paired:
            return self._search_paired(state, seat, legal, rng, scorer, deadline)
        root = _Node()
        ops = self.ops = dict.fromkeys(self.ops, 0)
        done = 0
        while self.iterations is None or done < self.iterations:
            if deadline is not None and done and time.perf_counter() >= deadline:
                break
            self._iterate(root, state, seat, rng, ops, scorer)
            done += 1
        ops["iterations"] = done
        stats = root.stats[seat]
        by_key = {action_key(a): a for a in legal}
        best = max(by_key, key=lambda k: (stats.n.get(k, 0), stats.w.get(k, 0.0)))
        return by_key[best]

    def _search_paired(self, state: GameState, seat: int, legal: list, rng: random.Random,
                       scorer: _Scorer, deadline: float | None) -> JSON:
        """The root action with the best mean reward, every action played on the same
        determinizations and playout seeds (the iteration budget counts playouts)."""
        totals = self.paired_totals(state, seat, legal, rng, scorer, deadline)
        best = max(range(len(legal)), key=lambda i: (totals[i], -i))
        return legal[best]

    def paired_totals(self, state: GameState, seat: int, legal: list, rng: random.Random,
                      scorer: _Scorer, deadline: float | None = None) -> list[float]:
        """Per legal action of `seat`, its summed reward over the paired samples of one search."""
        ops = self.ops = dict.fromkeys(self.ops, 0)
        model = scorer.model
        side_of = scorer.side_of
        totals = [0.0] * len(legal)
        done = 0
        while self.iterations is None or done < self.iterations:
            if deadline is not None and done and time.perf_counter() >= deadline:
                break
            det = state.determinize(seat, rng)
            ops["determinize"] += 1
            if scorer.infer is not None:
                scorer.infer(det, rng)
            seed = rng.getrandbits(64)
            for i, action in enumerate(legal):
                branch = det.clone()
                ops["clone"] += 1
                # The same seed for every action: their playouts differ only by what the action
                # changes, so the comparison does not pay for the deal's luck.
                branch_rng = random.Random(seed)
                actions = {}
                for s in branch.to_act():
                    if s == seat:
                        actions[s] = action
                        continue
                    options = branch.legal_actions(s)
                    ops["legal_actions"] += 1
                    if len(options) == 1:
                        actions[s] = options[0]
                    elif model is not None and side_of[s] != side_of[seat]:
                        actions[s] = model(branch, s, options, branch_rng)
                    else:
                        actions[s] = options[int(branch_rng.random() * len(options))]
                branch.apply_validated(actions)
                ops["apply"] += 1
                if branch.to_act():
                    scorer.play_out(branch, branch_rng, 1)
                totals[i] += scorer.rewards(branch)[seat]
            done += len(legal)
        ops["iterations"] = done
        return totals

    def root_statistics(self, state: GameState, seat: int, rng: random.Random) -> dict:
        """Visits and mean reward of each root action after one search (for analysis; a paired
        profile: the samples each action was played on and its mean)."""
        root = _Node()
        scorer = _Scorer(state, self._profile_of(state), seat)
        if scorer.profile.paired:
            legal = state.legal_actions(seat)
            totals = self.paired_totals(state, seat, legal, rng, scorer)
            samples = self.ops["determinize"]
            return {action_key(a): (samples, t / max(1, samples)) for a, t in zip(legal, totals)}
        for _ in range(self.iterations or 1):
            self._iterate(root, state, seat, rng, self.ops, scorer)
        stats = root.stats[seat]
        return {k: (stats.n[k], stats.w[k] / stats.n[k]) for k in stats.n}

    def _iterate(self, root: _Node, state: GameState, seat: int, rng: random.Random,
                 ops: dict, scorer: _Scorer) -> None:
        det = state.determinize(seat, rng)
        ops["determinize"] += 1
        if scorer.infer is not None:
            scorer.infer(det, rng)
        node = root
        path: list[tuple[_Node, dict[int, Any]]] = []
        c = self.c
        model = scorer.model
        side_of = scorer.side_of
        my_side = side_of[seat]
        prior_of = scorer.profile.prior
        bias = scorer.profile.prior_weight
        expanded = False
        while not expanded:
            acting = det.to_act()
            if not acting:
                break
            joint: dict[int, Any] = {}
            actions: dict[int, JSON] = {}
            for s in acting:
                legal = det.legal_actions(s)
                ops["legal_actions"] += 1
                if model is not None and side_of[s] != my_side:
                    # A modelled opponent is part of the environment: no statistics, no branch.
                    actions[s] = legal[0] if len(legal) == 1 else model(det, s, legal, rng)
                    continue
                stats = node.stats.get(s)
                if stats is None:
                    stats = node.stats[s] = _Stats()
                keys = [action_key(a) for a in legal]
                avail, n = stats.avail, stats.n
                untried = []
                for k in keys:
                    avail[k] = avail.get(k, 0) + 1
                    if k not in n:
                        untried.append(k)
                prior = None
                if prior_of is not None:
                    prior = stats.prior
                    if any(k not in prior for k in keys):
                        for k, value in zip(keys, prior_of(det, s, legal)):
                            prior.setdefault(k, value)
                if untried:
                    if prior is None:
                        k = untried[int(rng.random() * len(untried))]
                    else:
                        # The rule's favourite first, so a small budget starts from it.
                        k = max(untried, key=prior.__getitem__)
                    expanded = True
                else:
                    w = stats.w
                    best, best_v = keys[0], -1.0
                    for k2 in keys:
                        v = w[k2] / n[k2] + c * math.sqrt(math.log(avail[k2]) / n[k2])
                        if prior is not None:
                            v += bias * prior[k2] / (n[k2] + 1)
                        if v > best_v:
                            best, best_v = k2, v
                    k = best
                joint[s] = k
                actions[s] = legal[keys.index(k)]
            path.append((node, joint))
            det.apply_validated(actions)
            ops["apply"] += 1
            jkey = tuple(sorted(joint.items()))
            child = node.children.get(jkey)
            if child is None:
                child = node.children[jkey] = _Node()
                expanded = True
            node = child
        if det.to_act():
            scorer.play_out(det, rng, len(path))
        rewards = scorer.rewards(det)
        for node, joint in path:
            for s, k in joint.items():
                stats = node.stats[s]
                stats.n[k] = stats.n.get(k, 0) + 1
                stats.w[k] = stats.w.get(k, 0.0) + rewards[s]


class _Scorer:
    """Plays out and scores determinized states of one search, relative to its root's margins."""

    def __init__(self, root: GameState, profile: Profile, seat: int,
                 weights: dict[int, float] | None = None):
        self.profile = profile
        if profile.prepare is not None:
            profile.prepare(root)
        fits = profile.opponent is not None and (
            profile.identify is None or profile.identify(root, seat))
        # The model of the other sides' play, if they play by it as far as can be told.
        self.model = profile.opponent if fits else None
        self.infer = None
        if fits and profile.belief is not None:
            self.infer = (profile.belief(root, seat) if weights is None
                          else profile.belief(root, seat, weights=weights))
        self.teams = root.teams()
        self.side_of = [0] * root.num_seats
        for i, team in enumerate(self.teams):
            for s in team:
                self.side_of[s] = i
        self.root_margins = self._margins(self._scores(root))
        # Cutting at the round's end only pays when the root is not already past the last round.
        self.cut = profile.stop_at_round_end and hasattr(root, "round")

    def _margins(self, scores: Sequence[float]) -> list[float]:
        """Per side: its score minus the best other side's."""
        side_scores = [scores[team[0]] for team in self.teams]
        if len(side_scores) < 2:
            return [0.0] * len(side_scores)
        out = []
        for i, mine in enumerate(side_scores):
            out.append(mine - max(v for j, v in enumerate(side_scores) if j != i))
        return out

    def _scores(self, state: GameState) -> list[float]:
        """Scores, plus the profile's bonus for a game still going."""
        scores = state.scores()
        bonus = self.profile.bonus
        if bonus is None or not state.to_act():
            return list(scores)
        return [a + b for a, b in zip(scores, bonus(state))]

    def play_out(self, det: GameState, rng: random.Random, depth: int) -> None:
        """Play `det` (`depth` plies below the root) on as the profile says."""
        profile = self.profile
        plies = None if profile.horizon is None else max(1, profile.horizon - depth)
        if profile.fast is not None:
            profile.fast(det, rng, self.cut, plies)
        else:
            play_out(det, rng, self.cut, profile.policy, plies)

    def rewards(self, det: GameState) -> list[float]:
        """Reward in [0, 1] per seat for where `det` stands (finished or cut at a round's end)."""
        profile = self.profile
        if profile.reward == "pairwise":
            return self._pairwise(det)
        margins = self._margins(self._scores(det))
        scale = profile.scale
        gains = [0.5 + 0.5 * math.tanh((m - r) / scale)
                 for m, r in zip(margins, self.root_margins)]
        if det.to_act():
            return [gains[side] for side in self.side_of]
        ranks = rank_rewards(det.result().ranks)
        w = profile.rank_weight
        return [w * ranks[s] + (1 - w) * gains[self.side_of[s]] for s in range(len(ranks))]

    def _pairwise(self, det: GameState) -> list[float]:
        """Per seat: the mean over the other sides of the chance its side ends ahead (a tie
        half): exact for a finished game, else from the score difference and the spread."""
        if det.to_act():
            scores = det.scores()
            spread = self.profile.spread(det) if self.profile.spread is not None else 0.0
        else:
            ranks = det.result().ranks
            scores, spread = [-r for r in ranks], 0.0
        side_scores = [scores[team[0]] for team in self.teams]
        n = len(side_scores)
        if n < 2:
            return [1.0] * len(self.side_of)
        per_side = []
        for i, mine in enumerate(side_scores):
            total = 0.0
            for j, theirs in enumerate(side_scores):
                if j != i:
                    total += ahead_chance(mine - theirs, spread)
            per_side.append(total / (n - 1))
        return [per_side[side] for side in self.side_of]


_SQRT2 = math.sqrt(2.0)


def ahead_chance(diff: float, spread: float) -> float:
    """The chance of ending ahead from a score difference `diff` (a tie half): exact when
    `spread` (the standard deviation of the difference still to come) is 0, else Phi(diff / spread)."""
    if spread <= 0.0:
        return 1.0 if diff > 0 else 0.5 if diff == 0 else 0.0
    return 0.5 * (1.0 + math.erf(diff / (spread * _SQRT2)))

"""How far any bot can get ahead of the Crosswalk heuristic at 4 seats: a ceiling, by look-ahead.

    python bench/crosswalk_4p_ceiling.py [--deals 100] [--seed 12] [--samples 8] [--procs 2]
        [--keep-samples 300] [--kinds heuristic,clairvoyant,hands,fair,keep,keep-win]
        [--table mixed|heuristics]

The table of configs/search/crosswalk_4p.toml, played in process: a candidate, the heuristic
(bots/crosswalk_bot.py) and two uniformly random seats (`--table mixed`), or the candidate and
three heuristic seats (`--table heuristics`), each deal in all 4 seat rotations. The figure is
the candidate's score against the heuristic seat(s) (a win 1, a tie 1/2, over every pair of the
candidate and a heuristic seat in a game), with the LOS from wins and losses, as `arena h2h`
reports it. Candidates:

- "heuristic": the heuristic itself (the level, 50 % up to noise);
- "clairvoyant": at every choice it plays each card on a copy of the real game, future deals
  included, then every seat plays on (itself and the heuristic seat by the heuristic's rule,
  the random seats at random, `--samples` times), and keeps the card that beats the heuristic
  seat most often at the game's end;
- "hands": the same look-ahead knowing every hand (and the other seats' cards of this match)
  but not the order of the stock (each sample re-deals the stock and discard pile at random,
  sizes kept, and re-draws later shuffles);
- "fair": the same look-ahead on what the seat may know: each of the `--samples` continuations
  starts from a determinization of its view re-dealt by the search's belief (weighted by the
  play evidence), the seats it trusts there playing the heuristic's rule and the rest at random,
  this match's cards included. It still aims at the heuristic seat(s), as the figure does.

- "keep": a fair bot built on the game's structure. Only each seat's last card of a round counts
  at 3-4 seats, and the deal never looks at a card's number, so for any fixed value of "my last
  card is x" the best play is to play the hand card of lowest value (an exchange argument: from
  the hand {a, b}, whatever can be done after playing b can be copied after playing a, ending on
  b where the copy ended on a). It estimates those values as well as the search's model allows:
  `--keep-samples` times it re-deals what it cannot see (the search's belief, weighted by the
  play evidence), plays the round to its end with the model, and scores every one of its
  unplayed cards as the last card against the other seats' last cards (the chance of ending
  ahead of each, as the paired search's rewards).
- "keep-win": "keep" valuing a last card by the chance of finishing ahead of every other seat
  (first place) instead of the sum of the chances over the seats: the strongest rival counts most.

A fair bot knows less than "hands". If "hands" is level while "clairvoyant" is ahead, what
separates the cards at a choice is the order of the cards still to come, which no fair bot can
know; that bounds what any search can gain here. If "keep" is level too, the heuristic's order of
its cards is already as good as a simulation of the whole round with its exact model makes it.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bots"))
import crosswalk_bot  # noqa: E402  (the heuristic, standard library only)

from arena.cards import derive_seed  # noqa: E402
from arena.games import new_game  # noqa: E402
from arena.games.crosswalk_model import (  # noqa: E402
    TRUST_ATTR,
    PlayEvidence,
    model_belief,
    round_spread,
)
from arena.games.crosswalk_playout import CARD_NUMBER, SPACE, finish_round  # noqa: E402
from arena.ratings.stats import los  # noqa: E402
from arena.search.bot import state_from_observation  # noqa: E402
from arena.search.ismcts import ahead_chance  # noqa: E402

SAMPLES = 8
KEEP_SAMPLES = 300


def _table_actions(state, me: int, rivals: tuple, rng: random.Random) -> dict:
    """Every seat's card in this match: me and the heuristic seats by the rule, the rest at
    random (a lone card is played without asking)."""
    actions = {}
    for s in state.to_act():
        legal = state.legal_actions(s)
        if len(legal) == 1:
            actions[s] = legal[0]
        elif s == me or s in rivals:
            actions[s] = crosswalk_bot.choose(state.observation(s), legal, {})
        else:
            actions[s] = legal[int(rng.random() * len(legal))]
    return actions


def _score(state, me: int, rivals: tuple) -> list[float]:
    """My score against each heuristic seat in a finished game: 1, 1/2 for a tie, or 0."""
    ranks = state.result().ranks
    return [1.0 if ranks[me] < ranks[h] else 0.5 if ranks[me] == ranks[h] else 0.0
            for h in rivals]


def _finish(state, me: int, rivals: tuple, rng: random.Random) -> float:
    """Play `state` to the end by `_table_actions`; my summed score against the heuristic seats."""
    while state.to_act():
        state.apply(_table_actions(state, me, rivals, rng))
    return sum(_score(state, me, rivals))


def _look_ahead(state, me: int, rivals: tuple, others: dict, kind: str, samples: int):
    """The card that scores best against the heuristic seats over `samples` continuations."""
    legal = state.legal_actions(me)
    default = crosswalk_bot.choose(state.observation(me), legal, {})
    best, best_value = default, -1.0
    # The heuristic's card first: it keeps ties.
    for action in [default] + [a for a in legal if a != default]:
        value = 0.0
        for k in range(samples):
            branch = state.clone()
            if kind == "hands":
                rng = random.Random(k)
                branch._redraw_future(rng)
                pile = branch.stock + branch.discard
                rng.shuffle(pile)
                size = len(branch.discard)
                branch.discard, branch.stock = pile[:size], pile[size:]
            branch.apply({**others, me: action})
            value += _finish(branch, me, rivals, random.Random(1000 + k))
        if value > best_value:
            best, best_value = action, value
    return best


def _fair_look_ahead(state, me: int, rivals: tuple, evidence: PlayEvidence, seed: int,
                     samples: int):
    """The card that scores best against the heuristic seats over `samples` continuations from
    the seat's belief (every card compared on the same determinizations)."""
    legal = state.legal_actions(me)
    observation = state.observation(me)
    root = state_from_observation(observation, {})
    infer = model_belief(root, me, evidence.weights())
    rng = random.Random(derive_seed("fair", seed, len(root.played), root.round))
    starts = []
    for _ in range(samples):
        det = root.determinize(me, rng)
        if infer is not None:
            infer(det, rng)
        starts.append(det)
    default = crosswalk_bot.choose(observation, legal, {})
    best, best_value = default, -1.0
    for action in [default] + [a for a in legal if a != default]:
        value = 0.0
        for k, det in enumerate(starts):
            branch = det.clone()
            # The seats the belief trusts play the rule (me too), the rest at random.
            trusted = tuple(getattr(det, TRUST_ATTR, ()))
            play_rng = random.Random(1000 + k)
            actions = _table_actions(branch, me, trusted, play_rng)
            branch.apply({**actions, me: action})
            while branch.to_act():
                branch.apply(_table_actions(branch, me, trusted, play_rng))
            value += sum(_score(branch, me, rivals))
        if value > best_value:
            best, best_value = action, value
    return best


def _last_card_values(root, me: int, weights: dict, samples: int,
                      rng: random.Random, objective: str = "seats") -> dict[int, float]:
    """Per number of my unplayed cards: the summed chance over `samples` simulated round ends of
    ending ahead of each other seat were it my last card (the others' last cards as simulated)."""
    infer = model_belief(root, me, weights)
    played = set(root.played)
    mine = sorted({CARD_NUMBER[c] for c in root._deck
                   if c[0] in root.seat_colours[me] and c not in played})
    values = dict.fromkeys(mine, 0.0)
    seats = range(root.num_seats)
    others = [s for s in seats if s != me]
    before = [sum(r[s] for r in root.round_scores) for s in seats]
    for _ in range(samples):
        det = root.determinize(me, rng)
        infer(det, rng)
        trusted = frozenset(getattr(det, TRUST_ATTR, ())) | {me}
        last = {s: CARD_NUMBER[c] for s, c in finish_round(det, rng, 0.0, trusted).items()}
        spread = round_spread(det)  # the rounds after this one
        top = max(last[s] for s in others)
        for x in mine:
            last[me] = x
            lead = max(top, x)  # SPACE[n][lead]: the space of a card n when the highest is lead
            points = [before[s] + 10 * SPACE[last[s]][lead] for s in seats]
            chances = [ahead_chance(points[me] - points[s], spread) for s in others]
            values[x] += sum(chances) if objective == "seats" else math.prod(chances)
    return values


def _keep(state, me: int, legal: list, evidence: PlayEvidence, seed: int, samples: int,
          objective: str = "seats"):
    """The "keep" candidate's card: the hand card of lowest simulated last-card value."""
    observation = state.observation(me)
    root = state_from_observation(observation, {})
    if len(legal) == 1:
        return legal[0]
    rng = random.Random(derive_seed("keep", seed, len(root.played), root.round))
    values = _last_card_values(root, me, evidence.weights(), samples, rng, objective)
    return min(legal, key=lambda a: (values[CARD_NUMBER[a["card"]]], -CARD_NUMBER[a["card"]]))


TABLES = ("mixed", "heuristics")


def play(job: tuple[str, str, int, int, int, int, int]) -> list[float]:
    """One game of the table: the candidate's score against each heuristic seat."""
    kind, table, seed, deal, rotation, samples, keep_samples = job
    state = new_game("crosswalk", {}, 4, seed * 100003 + deal)
    rng = random.Random(seed * 7919 + deal * 4 + rotation)
    me = rotation
    rivals = ((rotation + 1) % 4,) if table == "mixed" else tuple(
        s for s in range(4) if s != me)
    evidence = PlayEvidence()
    while state.to_act():
        actions = _table_actions(state, me, rivals, rng)
        if kind in ("keep", "keep-win", "fair"):
            # Every observation, forced moves too: the evidence reads each match's hand sizes.
            observation = state.observation(me)
            evidence.observe(observation, state_from_observation(observation, {}))
        if kind in ("keep", "keep-win"):
            actions[me] = _keep(state, me, state.legal_actions(me), evidence,
                                seed * 100003 + deal, keep_samples,
                                "seats" if kind == "keep" else "win")
        elif kind == "fair" and len(state.legal_actions(me)) > 1:
            actions[me] = _fair_look_ahead(state, me, rivals, evidence, seed * 100003 + deal,
                                           samples)
        elif kind != "heuristic" and len(state.legal_actions(me)) > 1:
            others = {s: a for s, a in actions.items() if s != me}
            actions[me] = _look_ahead(state, me, rivals, others, kind, samples)
        state.apply(actions)
    return _score(state, me, rivals)


def main() -> None:
    """Print one line per candidate."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--samples", type=int, default=SAMPLES)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--keep-samples", type=int, default=KEEP_SAMPLES)
    parser.add_argument("--kinds", default="heuristic,clairvoyant,hands,keep")
    parser.add_argument("--table", choices=TABLES, default="mixed")
    args = parser.parse_args()
    print(f"{'candidate':12} {'pairs':>6} {'vs heuristic':>13} {'W-D-L':>13} {'LOS':>6} {'s':>6}")
    with Pool(args.procs) as pool:
        for kind in args.kinds.split(","):
            started = time.time()
            jobs = [(kind, args.table, args.seed, d, r, args.samples, args.keep_samples)
                    for d in range(args.deals)
                    for r in range(4)]
            scores = [x for game in pool.map(play, jobs, chunksize=4) for x in game]
            wins, losses = scores.count(1.0), scores.count(0.0)
            draws = len(scores) - wins - losses
            pct = 100 * sum(scores) / len(scores)
            chance = los(wins, losses) if wins + losses else math.nan
            print(f"{kind:12} {len(scores):6d} {pct:12.1f}% {f'{wins}-{draws}-{losses}':>13} "
                  f"{chance:6.3f} {time.time() - started:6.0f}", flush=True)


if __name__ == "__main__":
    main()

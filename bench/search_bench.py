"""ISMCTS speed per game: iterations per second and engine operations per iteration.

    python bench/search_bench.py [--iterations N]

For each game, one search from the state after a few random moves, with each playout profile
(arena.search.playouts, as each game declares it): "random" (plain ISMCTS: whole-game random
playouts, rank rewards), "tuned" (the default: cut-offs at the round's end or a horizon, margin rewards, the Xeri and
Crosswalk playout rules), "policy" (the rule-informed variants: the BFC heuristic as prior and
playout rule, which the team bot uses) and, for Crosswalk, "paired" (the 4-seat bot's paired root
search: an iteration is one playout there, each determinization serving every legal card).
Crossfire's position is reached by heuristic play, so that
its search models the other seat (a seat playing at random is soon searched by decoupled UCT
instead; the "crossfire 2p vs random" rows measure that). Rates are per second of
CPU time (process time), so a busy shared machine slows them less than wall time would; the
budget and CPU ms per move are the shipped bot's (arena.search.bot.shipped_bots), on the row of the
profile it uses. The engine operations counted are determinize (each is one clone plus a
re-deal), legal_actions and apply calls in the tree. The goal for Xeri is at least 2,000
iterations/s on one core with random playouts.
"""

from __future__ import annotations

import argparse
import random
import time

from arena.games import new_game
from arena.games.crossfire_search import heuristic_pick
from arena.search import ISMCTS
from arena.search.bot import shipped_bots
from arena.search.ismcts import EXPLORATION
from arena.search.playouts import declared_profiles

# Game, seats, options, the shipped bot (arena.search.bot.shipped_bots) that plays it, and how the
# benched position is reached: random moves, or the heuristic's (where the search models it).
CASES = [
    ("xeri", 2, {}, "xeri", "random"),
    ("crossfire", 2, {"open_rows": True}, "crossfire", "heuristic"),
    ("crossfire", 2, {"open_rows": True}, "crossfire", "random"),
    ("crosswalk", 2, {}, "crosswalk", "random"),
    ("crosswalk", 4, {}, "crosswalk_4p", "random"),
    ("battlefield_cribbage", 2, {}, "bfc", "random"),
    ("battlefield_cribbage", 4, {"team_mode": True}, "bfc_teams", "random"),
]


def position(name: str, seats: int, options: dict, opening: str = "random", moves: int = 4):
    """A game state a few moves in, played at random or (Crossfire) by the heuristic, then to the
    middle of its second deal (where the search also re-deals the modelled seat's row)."""
    rng = random.Random(1)
    state = new_game(name, options, seats, 7)
    done = 0

    def move(seat: int):
        legal = state.legal_actions(seat)
        if opening == "heuristic":
            return heuristic_pick(state, seat, legal)
        return rng.choice(legal)

    # Past `moves` moves, and on to a decision with a choice (a lone legal action is not searched).
    while done < moves or len(state.legal_actions(state.to_act()[0])) < 2:
        state.apply({s: move(s) for s in state.to_act()})
        done += 1
    while opening == "heuristic" and state.round_in_deal < 3:
        state.apply({s: move(s) for s in state.to_act()})
    return state


def bench_determinize_playout(state, n: int = 2000) -> float:
    """Iterations/s of the bare determinize + rollout path (no tree)."""
    seat = state.to_act()[0]
    rng = random.Random(0)
    started = time.process_time()
    for _ in range(n):
        state.determinize(seat, rng).rollout(rng)
    return n / max(1e-9, time.process_time() - started)



def main() -> None:
    """Print one line per game and profile."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'game':28} {'profile':8} {'it/s':>8} {'budget':>7} {'ms/move':>8} "
          f"{'det+playout/s':>14} {'det/it':>7} {'legal/it':>9} {'apply/it':>9}")
    for name, seats, options, bot, opening in CASES:
        state = position(name, seats, options, opening)
        label = f"{name} {seats}p" + (" teams" if options.get("team_mode") else "") + (
            " vs random" if name == "crossfire" and opening == "random" else "")
        bare = bench_determinize_playout(state, max(200, args.iterations // 4))
        shipped = shipped_bots()[bot]
        paired = declared_profiles("paired")
        kinds = ("random", "tuned", "policy") + (("paired",) if name in paired else ())
        for profile in kinds:
            exploration = shipped.get("exploration", EXPLORATION)
            search = ISMCTS(iterations=args.iterations, seed=1, profile=profile,
                            exploration=exploration)
            started = time.process_time()
            search.search(state, state.to_act()[0], random.Random(2))
            rate = args.iterations / max(1e-9, time.process_time() - started)
            ops = search.ops
            it = max(1, ops["iterations"])
            # The budget and CPU per move only on the row of the profile the shipped bot uses.
            used = profile == shipped.get("profile", "tuned")
            budget = f"{shipped['iterations']:7d} {1000 * shipped['iterations'] / rate:8.0f}" \
                if used else f"{'':7} {'':8}"
            print(f"{label:28} {profile:8} {rate:8.0f} {budget} "
                  f"{bare if profile == 'random' else float('nan'):14.0f} "
                  f"{ops['determinize'] / it:7.2f} {ops['legal_actions'] / it:9.2f} "
                  f"{ops['apply'] / it:9.2f}")

if __name__ == "__main__":
    main()

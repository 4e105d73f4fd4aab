"""Battlefield Cribbage knowledge for ISMCTS: a state-based port of the greedy heuristic's action
values (bots/bfc_bot.py), used as the search's prior and as a playout policy, and a static
evaluation (expected show value of every visible hand) for playouts cut at a horizon.

The heuristic values every option as line points now - go points given away + change in the
expected show value of the own hand - half of what the next seat could score at once on the line
left behind + (when the option ends the round) the hand lead over the other side. It sees only
what a seat sees: face-up slot cards, the line, its own drawn card; face-down slots count as
unknown cards. The same numbers here, computed from a (determinized) state's public fields, model
the heuristic opponents in the tree and give the search its first guess. `SEARCH` is the
profiles and shipped bots made of these (returned by BattlefieldCribbageState.search_hooks).
"""

from __future__ import annotations

import math
import random
from functools import lru_cache

from arena.games.base import JSON
from arena.games.cribbage_scoring import rank_parts
from arena.search.hooks import SearchHooks
from arena.search.playouts import Profile

JOKER = "JK"
HAND = 5
_RANKS = "A23456789TJQK"
# Card code -> rank (A=1 .. K=13, joker 0): the joker's code starts with "J", so look it up whole.
_RANK: dict[str, int] = {JOKER: 0}
for _r_index, _r in enumerate(_RANKS):
    for _s in "SHDC":
        _RANK[_r + _s] = _r_index + 1
# Expected extra show points of d unknown slots beyond the known cards' synergy with the common
# card (the heuristic's table, measured by simulation of random hands).
_UNKNOWN_BONUS = (0.0, 0.0, 4.77, 6.2, 6.93, 7.2)
_DANGER_WEIGHT = 0.5
_END_WEIGHT = 0.6
# A hand holding the joker is killed at the show: valued below any real hand, so it is dumped.
_KILLED = -3.0


def _pip(rank: int) -> int:
    return rank if rank < 10 else 10


@lru_cache(maxsize=None)
def _rank_points(ranks: tuple[int, ...]) -> int:
    """Fifteens, pairs and runs of a sorted multiset of up to five ranks."""
    counts = [0] * 14
    for r in ranks:
        counts[r] += 1
    return sum(rank_parts(counts))


def _with(ranks: tuple[int, ...], r: int) -> tuple[int, ...]:
    return tuple(sorted(ranks + (r,)))


@lru_cache(maxsize=None)
def hand_value(known: tuple[int, ...], unknown: int) -> float:
    """Expected rank-only show value of sorted face-up ranks plus `unknown` face-down slots."""
    if 0 in known:
        return _KILLED
    total = 0.0
    if unknown == 0:
        for c in range(1, 14):
            total += max(_rank_points(_with(known[:i] + known[i + 1:], c))
                         for i in range(len(known)))
        return total / 13
    if unknown == 1:
        for u in range(1, 14):
            five = _with(known, u)
            for c in range(1, 14):
                total += max(_rank_points(_with(five[:i] + five[i + 1:], c)) for i in range(5))
        return total / 169
    for c in range(1, 14):
        total += _rank_points(_with(known, c))
    return total / 13 + _UNKNOWN_BONUS[unknown]


def _slots_value(slots: list) -> float:
    """hand_value of a slot list (card codes, None for face down)."""
    known = tuple(sorted(_RANK[c] for c in slots if c is not None))
    return hand_value(known, HAND - len(known))


@lru_cache(maxsize=1 << 18)
def _line_points(ranks: tuple[int, ...], total: int, rule: str, cap, joker_mode: str) -> int:
    """Points for laying the last of `ranks` on a line now totalling `total` (the heuristic's)."""
    if not ranks or (ranks[-1] == 0 and joker_mode == "inert"):
        return 0
    pts = 2 if total in (15, 31) else 0
    n = len(ranks)
    if rule == "standard_pegging":
        same = 1
        while same < n and ranks[n - 1 - same] == ranks[-1] and ranks[-1]:
            same += 1
        if same >= 2:
            pts += same * (same - 1)
        seen: set[int] = set()
        run = 0
        for k in range(1, n + 1):
            r = ranks[n - k]
            if r == 0 or r in seen:
                break
            seen.add(r)
            if k >= 3 and max(seen) - min(seen) == k - 1:
                run = k
        return pts + run
    counts: dict[int, int] = {}
    repeated = False
    best = 0
    for k in range(1, n + 1):
        r = ranks[n - k]
        if r == 0:
            break
        counts[r] = counts.get(r, 0) + 1
        repeated = repeated or counts[r] > 1
        if k < 2:
            continue
        if len(counts) == 1:
            best = k * (k - 1)
            continue
        if repeated and cap is not None and k > cap:
            break
        lo, hi = min(counts), max(counts)
        if len(counts) >= 3 and hi - lo == len(counts) - 1:
            product, pairs = 1, 0
            for m in counts.values():
                product *= m
                pairs += m * (m - 1)
            best = len(counts) * product + pairs
    return pts + best


class _View:
    """What seat `me` sees of a state, in the heuristic's shapes (ranks, slot lists)."""

    __slots__ = ("me", "n", "side", "slots", "line", "total", "went_out", "finals", "rule", "cap",
                 "joker", "reset31")

    def __init__(self, state, me: int):
        self.me = me
        n = self.n = state.n
        self.side = state.side_of
        hand, up = state.hand, state.up
        self.slots = [[hand[i] if up[i] else None for i in range(s * HAND, s * HAND + HAND)]
                      for s in range(n)]
        self.line = tuple(_RANK[c] for c in state.line)
        self.total = state.total
        self.went_out = state.went_out
        self.finals = state.finals
        opts = state.options
        self.rule = opts.line_scoring
        self.cap = opts.line_group_max_cards
        self.joker = opts.joker_on_line
        self.reset31 = opts.reset_at_31

    def friend(self, seat: int) -> bool:
        return self.side[seat] == self.side[self.me]

    def lay(self, line: tuple, total: int, r: int, placer: int):
        """(new line, new total, placer's points, go seat or None) for laying rank r."""
        p = _pip(r)
        if total + p > 31:
            line, total, go = (r,), p, (placer - 1) % self.n
        else:
            line, total, go = line + (r,), total + p, None
        pts = _line_points(line, total, self.rule, self.cap, self.joker)
        if self.reset31 and total == 31:
            line, total = (), 0
        return line, total, pts, go

    def gain(self, line: tuple, total: int, r: int):
        """Net points for the own side of laying rank r, and the line it leaves."""
        line, total, pts, go = self.lay(line, total, r, self.me)
        if go is not None:
            pts += 1 if self.friend(go) else -1
        return pts, line, total

    def avg_gain(self, line: tuple, total: int) -> float:
        """Mean net points of laying an unknown rank."""
        return _avg_gain(self, line, total)

    def danger(self, line: tuple, total: int) -> float:
        """What the next seat could score at once on this line (0 if it is a partner)."""
        nxt = (self.me + 1) % self.n
        last_turn = self.went_out is not None and not self.finals[1:]
        if self.friend(nxt) or last_turn:
            return 0.0
        known = tuple(sorted(_RANK[c] for c in self.slots[nxt] if c is not None))
        return _danger(line, total, known, nxt, self.n, self.rule, self.cap, self.joker,
                       self.reset31)

    def end_bonus(self, my_hand: float) -> float:
        """Worth of ending the round now with this hand: lead over the best other-side hand."""
        other = max(_slots_value(self.slots[s]) for s in range(self.n) if not self.friend(s))
        return _END_WEIGHT * (my_hand - other)


def _avg_gain(view: _View, line: tuple, total: int) -> float:
    return sum(view.gain(line, total, r)[0] for r in range(1, 14)) / 13


@lru_cache(maxsize=1 << 18)
def _danger(line: tuple, total: int, known: tuple, nxt: int, n: int, rule: str, cap,
            joker: str, reset31: bool) -> float:
    """The heuristic's danger: the best known card of the next seat, or a random card's mean."""

    def lay(line, total, r):
        p = _pip(r)
        if total + p > 31:
            line, total = (r,), p
        else:
            line, total = line + (r,), total + p
        return _line_points(line, total, rule, cap, joker)

    best = 0
    for r in known:
        best = max(best, lay(line, total, r))
        if line:
            best = max(best, lay(line[:-1], total - _pip(line[-1]), r))
    avg = sum(lay(line, total, r) for r in range(1, 14)) / 13
    return max(best, avg)


def _option_value(view: _View, line: tuple, total: int, slot: int | None, card_in: str | None,
                  placed: int | None, final: bool) -> float:
    """Value of putting `card_in` into `slot` (or nothing) and laying rank `placed` (None:
    unknown) on the line (`line`, `total`)."""
    mine = view.slots[view.me]
    before = _slots_value(mine)
    if slot is not None:
        mine = list(mine)
        mine[slot] = card_in
        after = _slots_value(mine)
    else:
        after = before
    if placed is None:
        net = view.avg_gain(line, total)
        danger = 0.5
    else:
        net, line2, total2 = view.gain(line, total, placed)
        danger = 0.0 if final else view.danger(line2, total2)
    value = net + (after - before) - _DANGER_WEIGHT * danger
    if final:
        value += 1 + view.end_bonus(after)
    elif view.went_out is None and all(c is not None for c in mine):
        value += view.end_bonus(after)
    return value


def _draw_value(view: _View, final: bool) -> float:
    """Expected value of drawing: the best use of each possible rank, averaged."""
    mine = view.slots[view.me]
    slot_ranks = tuple(sorted(-1 if c is None else _RANK[c] for c in mine))
    before, after = _hand_table(slot_ranks)
    line, total = view.line, view.total
    gains = [view.gain(line, total, r)[0] for r in range(14)]
    unknown_net = sum(gains[1:]) / 13
    nets = [(unknown_net if old < 0 else gains[old]) - before for old in slot_ranks]
    acc = 0.0
    for r in range(1, 14):
        best = gains[r]
        for net, row in zip(nets, after):
            v = net + row[r]
            if v > best:
                best = v
        acc += best
    return acc / 13 - _DANGER_WEIGHT * 0.5 + (1 if final else 0)


@lru_cache(maxsize=None)
def _hand_table(slot_ranks: tuple[int, ...]) -> tuple[float, list[list[float]]]:
    """For sorted slot ranks (-1 face down): the hand's value, and per slot k and drawn rank r
    the value after r replaces slot k (the part of the draw value that ignores the line)."""
    known = tuple(r for r in slot_ranks if r >= 0)
    before = hand_value(known, HAND - len(known))
    after = []
    for k in range(len(slot_ranks)):
        rest = [x for j, x in enumerate(slot_ranks) if j != k and x >= 0]
        row = [0.0] * 14
        for r in range(1, 14):
            trial = tuple(sorted(rest + [r]))
            row[r] = hand_value(trial, HAND - len(trial))
        after.append(row)
    return before, after


def _crib_values(state, view: _View, legal: list) -> list[float]:
    """The heuristic's crib discard: feed the own side's crib, starve the other side's."""
    own_crib = view.friend(state.dealer)
    common = state.common
    hand = state.hand
    base = view.me * HAND
    crib = [_RANK[c] for c in state.crib_up]
    free = state.options.hand_choice == "free"
    five = hand[base:base + HAND]
    killed = JOKER in five or common == JOKER
    values = []
    for action in legal:
        k = action["slot"]
        r = _RANK[five[k]]
        cards = crib + [r] + ([_RANK[common]] if common else [])
        if 0 in cards:
            worth = -5.0
        else:
            worth = float(_rank_points(tuple(sorted(cards))[:5])) + (2 if r == 5 else 0)
        value = worth if own_crib else -worth
        if free and not killed and common:
            kept = tuple(sorted([_RANK[c] for i, c in enumerate(five) if i != k]
                                + [_RANK[common]]))
            nobs = any(c == "J" + common[1] for i, c in enumerate(five) if i != k)
            value += 2 * (_rank_points(kept) + nobs)
        values.append(value)
    return values


def heuristic_values(state, seat: int, legal: list) -> list[float]:
    """The greedy heuristic's value of each legal action of `seat` (points, higher is better)."""
    kind = legal[0]["type"]
    if kind == "reveal":
        # Blind: the heuristic takes the first pair.
        return [1.0] + [0.0] * (len(legal) - 1)
    view = _View(state, seat)
    if kind == "crib_discard":
        return _crib_values(state, view, legal)
    final = view.went_out is not None and list(view.finals) == [seat]
    mine = view.slots[seat]
    line, total = view.line, view.total
    values = []
    if state.phase == "after_draw":
        drawn = state.pending
        for action in legal:
            if action["type"] == "place_drawn":
                values.append(_option_value(view, line, total, None, None, _RANK[drawn], final))
            else:
                k = action["slot"]
                old = mine[k]
                values.append(_option_value(view, line, total, k, drawn,
                                            None if old is None else _RANK[old], final))
        return values
    for action in legal:
        kind = action["type"]
        if kind == "draw":
            values.append(_draw_value(view, final))
        elif kind == "take_line":
            k = action["replace_slot"]
            taken = state.line[-1]
            old = mine[k]
            shorter, less = line[:-1], total - _pip(line[-1])
            values.append(_option_value(view, shorter, less, k, taken,
                                        None if old is None else _RANK[old], final))
        else:  # flip_common: the round ends with an unknown card laid by the seat
            values.append(_option_value(view, line, total, None, None, None, True))
    return values


def heuristic_prior(state, seat: int, legal: list, temperature: float = 2.0) -> list[float]:
    """The heuristic's preference as a prior in (0, 1]: exp(-(best value - value) / temperature),
    so its choice is 1 and an action `temperature` points worse about 0.37."""
    values = heuristic_values(state, seat, legal)
    top = max(values)
    return [math.exp((v - top) / temperature) for v in values]


def heuristic_policy(state, seat: int, legal: list, rng: random.Random,
                     noise: float = 0.0) -> JSON:
    """Playout rule: the heuristic's choice (first best, as the bot picks), or with probability
    `noise` a random action."""
    if noise and rng.random() < noise:
        return legal[int(rng.random() * len(legal))]
    values = heuristic_values(state, seat, legal)
    best = 0
    for i in range(1, len(values)):
        if values[i] > values[best]:
            best = i
    return legal[best]


def show_bonus(state) -> list[float]:
    """Per seat, its side's expected show value: the heuristic's hand value of each seat's visible
    slots (face-down ones as unknown cards) summed over the side, so a playout cut before the show
    still counts the hands it built (0 once the round's show has begun)."""
    n = state.n
    hand, up = state.hand, state.up
    side_of = state.side_of
    per_side = [0.0] * (max(side_of) + 1)
    if state.phase in ("crib_discard", "cease_fire") or state.common is not None:
        return [0.0] * n
    for s in range(n):
        base = s * HAND
        known = tuple(sorted(_RANK[hand[i]] for i in range(base, base + HAND) if up[i]))
        per_side[side_of[s]] += hand_value(known, HAND - len(known))
    return [per_side[side_of[s]] for s in range(n)]


SEARCH = SearchHooks(
    profiles={
        "tuned": Profile(stop_at_round_end=True, scale=12.0),
        # The heuristic's own action values as prior and playout rule, playouts cut 8 plies below
        # the root and scored with the visible hands' expected show value; the 4-seat team bot
        # uses it (low exploration: a point is only 1/8 of the reward scale).
        "policy": Profile(stop_at_round_end=True, scale=8.0, prior=heuristic_prior,
                          prior_weight=1.0, policy=heuristic_policy, horizon=8, bonus=show_bonus),
    },
    bots={"bfc": {"iterations": 250},
          "bfc_teams": {"iterations": 150, "exploration": 0.3, "profile": "policy"}},
    pick_bot=lambda seats, options: "bfc_teams" if options.get("team_mode") else "bfc",
)

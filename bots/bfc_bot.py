#!/usr/bin/env python3
"""Battlefield Cribbage heuristic bot: greedy one-turn lookahead. Standard library only.

Every option of a turn (draw, take the line end into a slot, flip the common card; after a draw:
lay the card or put it into a slot) is valued as

    line points now - points handed to the other side (go)
    + change in the expected show value of the bot's own hand
    - half of what the next player (if an opponent) could score at once on the line left behind
    + when the option ends the round (going out, flipping), the hand lead over the opponents.

Hand values use ranks only (fifteens, pairs, runs; no flush or nobs): the expected best four of
five over a uniformly random common card, face-down slots treated as unknown cards. A held joker
kills the hand, so the bot gets rid of it. At the show it feeds its own crib and starves the
others' (the joker goes to an opponent's crib when a killed hand may choose).
"""

from __future__ import annotations

from functools import lru_cache

RANKS = "A23456789TJQK"
RANK = {r: i + 1 for i, r in enumerate(RANKS)}
JOKER = "JK"
HAND = 5
# Expected extra show points from d still-unknown slots beyond the known cards' synergy with the
# common card (rank-only scoring, measured by simulation of random hands).
UNKNOWN_BONUS = (0.0, 0.0, 4.77, 6.2, 6.93, 7.2)
DANGER_WEIGHT = 0.5
END_WEIGHT = 0.6
# Value of a hand that holds the joker (killed at the show): below any real hand, so it is dumped.
KILLED = -3.0


def rank(card: str) -> int:
    """A=1 .. K=13; the joker 0."""
    return 0 if card == JOKER else RANK[card[0]]


def pip(card_rank: int) -> int:
    """Pip value of a rank (joker rank 0 -> 0 pips)."""
    return min(card_rank, 10)


@lru_cache(maxsize=None)
def rank_points(ranks: tuple[int, ...]) -> int:
    """Fifteens, pairs and runs of a sorted multiset of up to five ranks."""
    ways = [1] + [0] * 15
    for r in ranks:
        p = pip(r)
        for t in range(15, p - 1, -1):
            ways[t] += ways[t - p]
    counts = [0] * 15
    for r in ranks:
        counts[r] += 1
    pts = 2 * ways[15] + sum(m * (m - 1) for m in counts)
    length, product = 0, 1
    for m in counts[1:]:
        if m:
            length += 1
            product *= m
        else:
            if length >= 3:
                pts += length * product
            length, product = 0, 1
    return pts


def _with(ranks: tuple[int, ...], r: int) -> tuple[int, ...]:
    return tuple(sorted(ranks + (r,)))


@lru_cache(maxsize=None)
def hand_value(known: tuple[int, ...], unknown: int) -> float:
    """Expected rank-only show value: known face-up ranks (sorted) + `unknown` face-down slots."""
    if 0 in known:
        return KILLED
    total = 0.0
    if unknown == 0:
        for c in range(1, 14):
            total += max(
                rank_points(_with(known[:i] + known[i + 1:], c)) for i in range(len(known))
            )
        return total / 13
    if unknown == 1:
        for u in range(1, 14):
            five = _with(known, u)
            for c in range(1, 14):
                total += max(rank_points(_with(five[:i] + five[i + 1:], c)) for i in range(5))
        return total / 169
    for c in range(1, 14):
        total += rank_points(_with(known, c))
    return total / 13 + UNKNOWN_BONUS[unknown]


def hand_value_of(slots: list) -> float:
    """hand_value of a slot list (card codes, None for face down)."""
    known = tuple(sorted(rank(c) for c in slots if c is not None))
    return hand_value(known, sum(1 for c in slots if c is None))


def line_points(ranks: list[int], total: int, rule: str, cap, joker_mode: str) -> int:
    """Points for laying the last of `ranks` on a line now totalling `total` (spec §6.5)."""
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


class View:
    """The parts of an observation the heuristic needs, in convenient shapes."""

    def __init__(self, obs: dict):
        self.obs = obs
        self.me = obs["seat"]
        self.n = obs["num_players"]
        self.team = obs.get("team_mode", False)
        opts = obs.get("options", {})
        self.rule = opts.get("line_scoring", "bfc_groups")
        self.cap = opts.get("line_group_max_cards", 5)
        self.joker_mode = opts.get("joker_on_line", "inert")
        self.reset31 = opts.get("reset_at_31", False)
        self.slots = []
        for hand in obs["hands"]:
            row = [None] * HAND
            for entry in hand:
                row[entry["slot"]] = entry["card"]
            self.slots.append(row)
        self.line = [rank(c) for c in obs["line"]]
        self.total = obs["line_total"]
        self.went_out = obs.get("went_out")

    def friend(self, seat: int) -> bool:
        """Whether `seat` scores for the bot's side."""
        return seat == self.me or (self.team and seat % 2 == self.me % 2)

    def lay(self, line: list[int], total: int, r: int, placer: int):
        """(new line, new total, points to placer's side, go seat or None) for laying rank r."""
        p = pip(r)
        if total + p > 31:
            line, total, go = [r], p, (placer - 1) % self.n
        else:
            line, total, go = line + [r], total + p, None
        pts = line_points(line, total, self.rule, self.cap, self.joker_mode)
        if self.reset31 and total == 31:
            line, total = [], 0
        return line, total, pts, go

    def gain(self, line, total, r):
        """Net immediate points for the bot's side when it lays rank r, and the line it leaves."""
        line, total, pts, go = self.lay(line, total, r, self.me)
        net = pts
        if go is not None:
            net += 1 if self.friend(go) else -1
        return net, line, total

    def danger(self, line: list[int], total: int) -> float:
        """What the next seat could score at once on this line (0 if it is a partner)."""
        nxt = (self.me + 1) % self.n
        last_turn = self.went_out is not None and not self.obs["final_turns_remaining"][1:]
        if self.friend(nxt) or last_turn:
            return 0.0
        best = 0
        known = [rank(c) for c in self.slots[nxt] if c is not None]
        for r in known:
            best = max(best, self.lay(line, total, r, nxt)[2])
            if line:
                shorter = line[:-1]
                best = max(best, self.lay(shorter, total - pip(line[-1]), r, nxt)[2])
        avg = sum(self.lay(line, total, r, nxt)[2] for r in range(1, 14)) / 13
        return max(best, avg)

    def opponents_hand(self) -> float:
        """The best expected hand value among the other side's seats."""
        return max(hand_value_of(self.slots[s]) for s in range(self.n) if not self.friend(s))

    def end_bonus(self, my_hand: float) -> float:
        """Worth of ending the round now with this hand (lead over the best opponent hand)."""
        return END_WEIGHT * (my_hand - self.opponents_hand())


def option_value(view: View, slot: int | None, card_in: str | None, placed: int | None,
                 final: bool) -> float:
    """Value of putting `card_in` into `slot` (or nothing) and laying `placed` (None: unknown)."""
    mine = list(view.slots[view.me])
    before = hand_value_of(mine)
    if slot is not None:
        mine[slot] = card_in
    after = hand_value_of(mine)
    line, total = view.line, view.total
    if placed is None:
        net = sum(view.gain(line, total, r)[0] for r in range(1, 14)) / 13
        danger = 0.5
    else:
        net, line2, total2 = view.gain(line, total, placed)
        danger = 0.0 if final else view.danger(line2, total2)
    value = net + (after - before) - DANGER_WEIGHT * danger
    goes_out = view.went_out is None and all(c is not None for c in mine)
    if final:
        value += 1 + view.end_bonus(after)
    elif goes_out:
        value += view.end_bonus(after)
    return value


def _is_final(view: View) -> bool:
    finals = view.obs.get("final_turns_remaining") or []
    return view.went_out is not None and finals == [view.me]


def choose(observation: dict, legal_actions: list) -> dict:
    """Pick one of `legal_actions` for this observation."""
    if len(legal_actions) == 1:
        return legal_actions[0]
    kind = legal_actions[0]["type"]
    if kind == "reveal":
        return legal_actions[0]
    view = View(observation)
    if kind == "crib_discard":
        return _crib_discard(view, legal_actions)
    final = _is_final(view)
    if observation["phase"] == "after_draw":
        drawn = observation["pending_drawn_card"]
        best, best_value = None, None
        for action in legal_actions:
            if action["type"] == "place_drawn":
                value = option_value(view, None, None, rank(drawn), final)
            else:
                k = action["slot"]
                old = view.slots[view.me][k]
                value = option_value(view, k, drawn, None if old is None else rank(old), final)
            if best_value is None or value > best_value:
                best, best_value = action, value
        return best
    best, best_value = None, None
    for action in legal_actions:
        if action["type"] == "draw":
            value = _draw_value(view, final)
        elif action["type"] == "take_line":
            k = action["replace_slot"]
            taken = observation["line"][-1]
            old = view.slots[view.me][k]
            shorter = View.__new__(View)
            shorter.__dict__.update(view.__dict__)
            shorter.line = view.line[:-1]
            shorter.total = view.total - pip(view.line[-1])
            value = option_value(shorter, k, taken, None if old is None else rank(old), final)
        else:  # flip_common: the round ends with an unknown card laid by the bot
            value = option_value(view, None, None, None, True)
        if best_value is None or value > best_value:
            best, best_value = action, value
    return best


def _draw_value(view: View, final: bool) -> float:
    """Expected value of drawing: the best use of each possible rank, averaged (no danger term)."""
    total = 0.0
    mine = view.slots[view.me]
    before = hand_value_of(mine)
    for r in range(1, 14):
        card = RANKS[r - 1] + "S"
        best = view.gain(view.line, view.total, r)[0]
        for k in range(HAND):
            trial = list(mine)
            trial[k] = card
            old = mine[k]
            if old is None:
                net = sum(view.gain(view.line, view.total, x)[0] for x in range(1, 14)) / 13
            else:
                net = view.gain(view.line, view.total, rank(old))[0]
            best = max(best, net + hand_value_of(trial) - before)
        total += best
    value = total / 13 - DANGER_WEIGHT * 0.5
    if final:
        value += 1
    return value


def _crib_discard(view: View, legal_actions: list) -> dict:
    """Feed the own side's crib, starve an opponent's; under hand_choice "free" also keep the best
    four (under "must_maximize" every legal discard scores the hand the same)."""
    obs = view.obs
    own_crib = view.friend(obs["dealer"])
    common = obs.get("common_card")
    five = view.slots[view.me]
    crib = [rank(c) for c in obs["crib"]["face_up"]]
    free = obs.get("options", {}).get("hand_choice") == "free"
    killed = JOKER in five or common == JOKER
    best, best_value = None, None
    for action in legal_actions:
        k = action["slot"]
        r = rank(five[k])
        cards = crib + [r] + ([rank(common)] if common else [])
        if 0 in cards:
            worth = -5.0
        else:
            worth = float(rank_points(tuple(sorted(cards))[:5])) + (2 if r == 5 else 0)
        value = worth if own_crib else -worth
        if free and not killed and common:
            kept = [rank(c) for i, c in enumerate(five) if i != k] + [rank(common)]
            nobs = any(c == "J" + common[1] for i, c in enumerate(five) if i != k)
            value += 2 * (rank_points(tuple(sorted(kept))) + nobs)
        if best_value is None or value > best_value:
            best, best_value = action, value
    return best


if __name__ == "__main__":
    from arenabot import run

    run(choose, name="bfc_heuristic", version="1")

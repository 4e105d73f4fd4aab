"""Battlefield Cribbage (BFC): cribbage played on an open "line" from blind five-card hands.

Every rule resolution is the default and every variant an option; the rules as implemented are
described for bot authors in seeds/battlefield_cribbage.md. Scoring comes from arena.games.cribbage_scoring.

A game is a series of rounds. Each round deals 53 cards (52 + joker): five face-down slots per seat,
2/1/0 face-down crib cards, one line card, the rest is the draw pile. A turn is one or two `apply`
steps (`draw` then `place_drawn`/`replace`, or a single `take_line`/`flip_common`), preceded by a
`reveal` step on a seat's first turn of the round. The show needs a `crib_discard` step only when a
seat has a real choice.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import orjson
from pydantic import Field, field_validator

from arena.cards import JOKER, derive_seed, standard_deck
from arena.errors import GameOptionsError, IllegalActionError
from arena.games import register
from arena.games.base import JSON, GameOptions, GameState, GameType
from arena.games.chance import HiddenDeal, future_seed
from arena.games.cribbage_scoring import (
    best_discards,
    ceasefire_score,
    hand_score,
    line_points,
    pip,
)

if TYPE_CHECKING:
    from arena.games.text import TextView
    from arena.search.hooks import SearchHooks

DECK: tuple[str, ...] = tuple(standard_deck(jokers=1))
HAND = 5
# Initial face-down crib cards and draw-pile size after the deal, by number of seats.
CRIB_DOWN = {2: 2, 3: 1, 4: 0}
PILE_SIZE = {n: len(DECK) - HAND * n - CRIB_DOWN[n] - 1 for n in CRIB_DOWN}
# Spec §8 safety valve: from the 1,001st turn of a round on, every turn must draw (or flip).
TURN_CAP = 1000
# No natural bound exists on the number of rounds: a round whose common card is the joker can score
# nothing at all, and players can steer the joker into that place. A game therefore stops after this
# many rounds and is decided by the scores (a normal 121-point game takes about 6-15 rounds).
MAX_ROUNDS = 500

_PIP = {c: pip(c) for c in DECK}
_STANDOFF_K = re.compile(r"max_line_takes_without_draw:([1-9][0-9]{0,5})")
_REVEAL_PAIRS = [(a, b) for a in range(HAND) for b in range(a + 1, HAND)]
# Every action there is, as shared objects that apply() compares against and legal_actions()
# copies (never hands out): validating an action then builds no dict.
_DRAW = {"type": "draw"}
_FLIP = {"type": "flip_common"}
_PLACE = {"type": "place_drawn"}
_TAKE = [{"type": "take_line", "replace_slot": k} for k in range(HAND)]
_REPLACE = [{"type": "replace", "slot": k} for k in range(HAND)]
_AFTER_DRAW = [_PLACE, *_REPLACE]
_REVEAL = {(a, b): {"type": "reveal", "slots": [a, b]} for a, b in _REVEAL_PAIRS}
_CRIB = [{"type": "crib_discard", "slot": k} for k in range(HAND)]
# (slot, index into hand) of each seat's slots, for building the hands of a view.
_SLOTS = [tuple((k, s * HAND + k) for k in range(HAND)) for s in range(max(CRIB_DOWN.keys()))]
# The list-valued fields of each kind of event: views copy these lists, and only these, so that a
# caller mutating a view can never reach the logged events (which clones and later views share).
_LIST_KEYS = {
    "reveal": ("slots", "cards"),
    "cease_fire_hand": ("cards",),
    "went_out": ("final_turns",),
    "show": ("cards",),
    "crib": ("cards",),
}


def _encode_tail(encoded: bytes, items: Sequence, done: int) -> bytes:
    """`encoded` (the comma-joined JSON of items[:done]) extended with the JSON of the rest."""
    tail = b",".join([orjson.dumps(item) for item in items[done:]])
    return encoded + b"," + tail if encoded else tail


class _GameOver(Exception):
    """Raised inside a step when a side reaches the target under win_check="immediate"."""


class BattlefieldCribbageOptions(GameOptions):
    """Battlefield Cribbage options (spec §17); the number of players is the number of seats."""

    team_mode: bool = Field(
        False,
        description="4 seats only: partners sit opposite, teams {0,2} and {1,3}; each team shares "
        "one score",
    )
    target: int = Field(121, ge=1, le=1000, description="Points that win the game.")
    joker_on_line: Literal["inert", "zero_value_scored"] = Field(
        "inert",
        description="inert: the joker counts 0, placing it scores nothing and it breaks pair/run "
        "groups; zero_value_scored: it counts 0 but the line is scored normally when it is placed",
    )
    line_scoring: Literal["bfc_groups", "standard_pegging"] = Field(
        "bfc_groups",
        description="bfc_groups: the longest tail forming a pair group or a run group (double, "
        "triple, double-double runs count); standard_pegging: cribbage pairs and runs on the end",
    )
    line_group_max_cards: Literal[5] | None = Field(
        5,
        description="bfc_groups only: a tail with a repeated rank may hold at most 5 cards "
        "(null: no limit)",
    )
    reset_at_31: bool = Field(
        False,
        description="false: a line at exactly 31 stays and the next card overflows it (go point); "
        "true: the line is cleared right after its 31 is scored, without a go point",
    )
    final_card_scoring: Literal["line_plus_last", "last_only_unless_31"] = Field(
        "line_plus_last",
        description="line_plus_last: the common card's placer scores the line as usual plus 1 for "
        "last card unless the line is at 31; last_only_unless_31: 1 for last card, and the line "
        "only if it totals 31 (then no last-card point)",
    )
    hand_choice: Literal["must_maximize", "free"] = Field(
        "must_maximize",
        description="must_maximize: at the show the hand keeps a best four (a choice only among "
        "tied discards); free: any card may go to the crib and the kept four are scored",
    )
    joker_to_crib: Literal["allowed", "forbidden", "forced"] = Field(
        "allowed",
        description="A killed hand holding the joker: may send any card to the crib (allowed), "
        "any card but the joker (forbidden), or must send the joker (forced)",
    )
    joker_common_kills_last_card: bool = Field(
        True,
        description="When the common card is the joker there is also no last-card point (hands, "
        "crib and heels score nothing either way)",
    )
    ceasefire_flush: Literal["five_only", "four_or_five"] = Field(
        "five_only",
        description="Cease-fire hands (all five cards, no common card): flush only with five of a "
        "suit (5), or also four of a suit (4)",
    )
    win_check: Literal["immediate", "end_of_round_highest"] = Field(
        "immediate",
        description="immediate: the game ends the moment a side reaches the target; "
        "end_of_round_highest: the round is finished and the highest score wins (ties share)",
    )
    standoff_rule: str = Field(
        "snapshot_repeat",
        description="snapshot_repeat: the dealer must draw (or flip) when the table at the start "
        "of their turn repeats one seen at an earlier dealer turn of the round; "
        "max_line_takes_without_draw:K: the dealer must draw once K turns in a row took the line "
        "end without anybody drawing",
    )
    reveal_choice: Literal["player", "auto_lowest_slots"] = Field(
        "player",
        description="player: the first-turn reveal of two face-down slots is an action; "
        "auto_lowest_slots: the two lowest-numbered face-down slots are turned automatically",
    )
    skunk_scoring: bool = Field(
        False,
        description="Report a skunk (every losing side at most target-31) or double skunk (at most "
        "target-61) in the final observation; scores stay points",
    )

    @field_validator("standoff_rule")
    @classmethod
    def _check_standoff_rule(cls, value: str) -> str:
        if value == "snapshot_repeat" or _STANDOFF_K.fullmatch(value):
            return value
        raise ValueError(
            "expected 'snapshot_repeat' or 'max_line_takes_without_draw:K' "
            "with K a positive integer"
        )


@register
class BattlefieldCribbageState(GameState):
    """A game of Battlefield Cribbage in progress."""

    game_type = GameType(
        name="battlefield_cribbage",
        title="Battlefield Cribbage",
        seat_counts=(2, 3, 4),
        options_model=BattlefieldCribbageOptions,
        summary="Cribbage with blind face-down hands: draw or take the line end, replace slots, "
        "peg 15s, 31s, pairs and runs on an open line, then show the best four of five; the joker "
        "kills.",
        variants=(
            {"team_mode": True},
            {
                "line_scoring": "standard_pegging",
                "reset_at_31": True,
                "final_card_scoring": "last_only_unless_31",
                "hand_choice": "free",
                "joker_to_crib": "forced",
            },
            {
                "joker_on_line": "zero_value_scored",
                "line_group_max_cards": None,
                "joker_common_kills_last_card": False,
                "ceasefire_flush": "four_or_five",
                "win_check": "end_of_round_highest",
                "standoff_rule": "max_line_takes_without_draw:3",
                "reveal_choice": "auto_lowest_slots",
                "skunk_scoring": True,
            },
            {"team_mode": True, "hand_choice": "free", "joker_to_crib": "forbidden", "target": 61},
        ),
        # Teams add a partner and team scores to the observation.
        protocol_options=("team_mode", "reveal_choice"),
    )

    options: BattlefieldCribbageOptions

    @classmethod
    def validate_options(cls, options: BattlefieldCribbageOptions, num_seats: int) -> None:
        """Seat count 2-4; team_mode needs exactly 4 seats."""
        super().validate_options(options, num_seats)
        if options.team_mode and num_seats != 4:
            raise GameOptionsError(
                f"battlefield_cribbage: option team_mode=True needs 4 seats, not {num_seats}"
            )

    @classmethod
    def max_steps(cls, options: BattlefieldCribbageOptions, num_seats: int) -> int:
        """MAX_ROUNDS rounds of at most (TURN_CAP + pile size) turns of 2 steps, + reveals, discards."""
        # After TURN_CAP turns every turn must draw (the pile shrinks) or flip (the round ends), and
        # a turn is at most two steps; each seat adds one reveal and one crib discard per round.
        turns = TURN_CAP + PILE_SIZE[num_seats]
        return MAX_ROUNDS * (2 * turns + 2 * num_seats)

    def __init__(self, options: BattlefieldCribbageOptions, num_seats: int, seed: int):
        super().__init__(options, num_seats, seed)
        n = num_seats
        self.n = n
        self.side_of = [s % 2 for s in range(n)] if options.team_mode else list(range(n))
        self.pts = [0] * (2 if options.team_mode else n)
        # Constant parts of every view, built once (copied on output).
        self.options_json = options.model_dump()
        self.score_keys = (
            ("team0", "team1") if options.team_mode else tuple(f"p{s}" for s in range(n))
        )
        self._teams_json = orjson.Fragment(orjson.dumps(self.teams()))
        # Per seat: (its slot cards, its face-up flags, the encoded hand of its view) as last
        # encoded; a move changes one seat's hand at most, so the others' encodings are reused.
        self._hands_json: list[tuple[list, list, bytes] | None] = [None] * n
        # The RNG is used only here; every round's shuffle comes from a seed drawn now, so clone()
        # need not copy the RNG state (which costs more than the rest of the state together).
        self.first_dealer = self.rng.randrange(n)
        self.deal_seed = self.rng.getrandbits(63)
        m = _STANDOFF_K.fullmatch(options.standoff_rule)
        self.standoff_k = int(m.group(1)) if m else None
        self.dealer = (self.first_dealer - 1) % n
        self.round = 0
        self.over = False
        self.end_reason: str | None = None
        # Summaries of finished rounds, oldest first; a tuple, so clones share it.
        self.rounds_log: tuple[dict, ...] = ()
        # The comma-joined JSON of rounds_log[:_rounds_done] (and of log[:_log_done], reset with
        # each round's log): each entry is encoded once, by the first observation_json after it
        # is logged, never during rollouts. Bytes, so clones share them.
        self._rounds_json = b""
        self._rounds_done = 0
        # The finished round's event log and its list fields (see log_lists), kept for replays and
        # tests (full_view only); never appended to again, so clones share them.
        self.prev_log: list[dict] = []
        self.prev_log_lists: list[tuple[int, tuple[str, ...]]] = []
        self._reset_round_state()
        try:
            self._next_round(close=False)
        except _GameOver:
            pass

    # -- round state -------------------------------------------------------------------------------
    def _reset_round_state(self) -> None:
        n = self.n
        self.hand: list[str | None] = [None] * (HAND * n)  # seat s owns hand[5s:5s+5]; None = shown
        self.up = [False] * (HAND * n)
        self.line: list[str] = []
        self.total = 0
        self.out: list[str] = []
        self.pile: list[str] = []  # the top card is the last element
        self.crib_down: list[str] = []
        self.crib_up: list[str] = []
        self.pending: str | None = None
        self.common: str | None = None
        self.phase = "main"
        self.cur = 0
        self.first_done = [False] * n
        self.went_out: int | None = None
        self.finals: list[int] = []  # seats whose final turn is not finished, current one first
        self.turns = 0
        self.forced: str | None = None
        self.snaps: set[tuple] = set()
        self.takes = 0
        self.show_queue: list[int] = []
        # The crib_discard choices of the seat showing (None when not known yet).
        self._show_slots: list[int] | None = None
        self.gain = [0] * len(self.pts)
        self.ceasefire = False
        # Public events of this round, oldest first. An event is never changed once logged, so
        # clones copy only the list; log_lists holds (index, list-valued keys) of the events with
        # list fields, which views must copy.
        self.log: list[dict] = []
        self.log_lists: list[tuple[int, tuple[str, ...]]] = []
        self._log_json = b""
        self._log_done = 0

    def _deal(self) -> bool:
        """Deal a new round; False if it is a cease-fire (already scored), True if play starts."""
        self.round += 1
        self._reset_round_state()
        n = self.n
        deck = list(DECK)
        random.Random(derive_seed("bfc", self.deal_seed, self.round)).shuffle(deck)
        dealer = self.dealer
        hand = self.hand
        for i in range(HAND * n):
            hand[((dealer + 1 + i) % n) * HAND + i // n] = deck.pop()
        self.crib_down = [deck.pop() for _ in range(CRIB_DOWN[n])]
        first = deck.pop()
        self.line = [first]
        self.total = _PIP[first]
        self.pile = deck
        if first != JOKER:
            self._begin_turn((dealer + 1) % n)
            return True
        self.ceasefire = True
        self.phase = "cease_fire"
        self._event({"event": "cease_fire", "dealer": dealer, "points": 1})
        self._award(dealer, 1)
        flush = self.options.ceasefire_flush
        for k in range(1, n + 1):
            s = (dealer + k) % n
            for i in range(s * HAND, s * HAND + HAND):
                self.up[i] = True
            five = hand[s * HAND:s * HAND + HAND]
            points = ceasefire_score(five, flush)
            self._event({"event": "cease_fire_hand", "seat": s, "cards": five, "points": points})
            self._award(s, points)
        return False

    def _next_round(self, close: bool = True) -> None:
        """Close the finished round (if any), then deal until a round that is played starts."""
        while True:
            if close:
                self.prev_log = self.log
                self.prev_log_lists = self.log_lists
                self.rounds_log += (
                    {
                        "round": self.round,
                        "dealer": self.dealer,
                        "cease_fire": self.ceasefire,
                        "points": [self.gain[self.side_of[s]] for s in range(self.n)],
                    },
                )
                reached = max(self.pts) >= self.options.target
                if reached and self.options.win_check == "end_of_round_highest":
                    self._finish("target")
                    return
                if self.round >= MAX_ROUNDS:
                    self._finish("round_cap")
                    return
            close = True
            self.dealer = (self.dealer + 1) % self.n
            if self._deal():
                return

    def _set_rounds_log(self, summaries: tuple[dict, ...]) -> None:
        """Replace the round summaries (their encoding starts over)."""
        self.rounds_log = summaries
        self._rounds_json = b""
        self._rounds_done = 0

    def _finish(self, reason: str) -> None:
        self.over = True
        self.end_reason = reason
        self.phase = "game_over"

    def _event(self, event: dict) -> None:
        keys = _LIST_KEYS.get(event["event"])
        if keys:
            self.log_lists.append((len(self.log), keys))
        self.log.append(event)

    def _award(self, seat: int, points: int) -> None:
        """Give points to the seat's side; may end the game at once (win_check immediate)."""
        if points <= 0:
            return
        side = self.side_of[seat]
        self.pts[side] += points
        self.gain[side] += points
        # Scores only grow, so no earlier stand-off snapshot can ever match again.
        self.snaps.clear()
        if self.pts[side] >= self.options.target and self.options.win_check == "immediate":
            self._finish("target")
            raise _GameOver

    # -- turns -------------------------------------------------------------------------------------
    def _begin_turn(self, seat: int) -> None:
        self.cur = seat
        self.turns += 1
        forced = None
        if self.turns > TURN_CAP:
            forced = "turn_cap"
        elif seat == self.dealer:
            if self.standoff_k is None:
                # Face-down cards are masked: a face-down slot keeps its card all round, so this
                # compares the same tables, and a determinized copy (whose face-down cards differ)
                # keeps the stand-off history it could see.
                snap = (
                    tuple(self.line), tuple(c if u else None for c, u in zip(self.hand, self.up)),
                    tuple(self.up), len(self.pile),
                    tuple(self.pts), self.went_out, tuple(self.finals),
                )
                if snap in self.snaps:
                    forced = "standoff"
                else:
                    self.snaps.add(snap)
            elif self.takes >= self.standoff_k:
                forced = "standoff"
        self.forced = forced
        if forced:
            self._event({"event": "forced_draw", "seat": seat, "reason": forced})
        if self.first_done[seat]:
            self.phase = "main"
        elif self.options.reveal_choice == "auto_lowest_slots":
            base = seat * HAND
            slots = [k for k in range(HAND) if not self.up[base + k]][:2]
            self._reveal(seat, slots, auto=True)
        else:
            self.phase = "reveal"

    def _reveal(self, seat: int, slots: Sequence[int], auto: bool) -> None:
        base = seat * HAND
        for k in slots:
            self.up[base + k] = True
        self.first_done[seat] = True
        self._event({
            "event": "reveal", "seat": seat, "slots": list(slots),
            "cards": [self.hand[base + k] for k in slots], "auto": auto,
        })
        self.phase = "main"

    def _place(self, seat: int, card: str, final: bool, event: dict) -> bool:
        """Put a card on the line end: reset + go, then line points. True if the placement scored
        the line's 31 (for the last-card rule)."""
        p = _PIP[card]
        go_to = None
        if self.total + p > 31:
            self.out.extend(self.line)
            self.line = [card]
            self.total = p
            go_to = (seat - 1) % self.n
        else:
            self.line.append(card)
            self.total += p
        opts = self.options
        at_31 = self.total == 31
        if final and opts.final_card_scoring == "last_only_unless_31" and not at_31:
            points = 0
        else:
            points = line_points(
                self.line, opts.line_scoring, opts.line_group_max_cards, opts.joker_on_line
            )
        scored_31 = at_31 and not (card == JOKER and opts.joker_on_line == "inert")
        if at_31 and opts.reset_at_31:
            self.out.extend(self.line)
            self.line = []
            self.total = 0
        event["placed"] = card
        event["reset"] = go_to is not None
        event["go_to"] = go_to
        event["points"] = points
        event["line_total"] = self.total
        self._event(event)
        if go_to is not None:
            self._award(go_to, 1)
        self._award(seat, points)
        return scored_31

    def _end_turn(self, seat: int, card: str, final: bool, scored_31: bool) -> None:
        if final:
            self.finals = []
            self._common(seat, card, scored_31)
            return
        if self.went_out is None:
            base = seat * HAND
            if all(self.up[base:base + HAND]):
                self.went_out = seat
                self.finals = [(seat + k) % self.n for k in range(1, self.n)]
                self._event({"event": "went_out", "seat": seat, "final_turns": list(self.finals)})
                self._begin_turn(self.finals[0])
            else:
                self._begin_turn((seat + 1) % self.n)
        else:
            self.finals.pop(0)
            self._begin_turn(self.finals[0])

    def _is_final(self) -> bool:
        """Whether the current turn's placement makes the common card (last final turn)."""
        return self.went_out is not None and len(self.finals) == 1

    def _common(self, placer: int, card: str, scored_31: bool) -> None:
        """The round's last placement made `card` the common card: last card, heels, the show."""
        if self.line and self.line[-1] == card:
            self.line.pop()
            self.total -= _PIP[card]
        else:  # reset_at_31 cleared the line right after this card
            self.out.remove(card)
        self.common = card
        self.forced = None
        opts = self.options
        joker = card == JOKER
        last = 0 if scored_31 or (joker and opts.joker_common_kills_last_card) else 1
        heels = 2 if card[0] == "J" and not joker else 0
        self._event({"event": "common", "seat": placer, "card": card, "last_card": last,
                     "heels": heels, "heels_to": self.dealer if heels else None})
        self._award(placer, last)
        self._award(self.dealer, heels)
        self.show_queue = [(self.dealer + k) % self.n for k in range(1, self.n + 1)]
        self._run_show()

    # -- the show ----------------------------------------------------------------------------------
    def _discard_slots(self, seat: int) -> list[int]:
        base = seat * HAND
        five = self.hand[base:base + HAND]
        common = self.common
        if JOKER in five:
            j = five.index(JOKER)
            rule = self.options.joker_to_crib
            if rule == "forced":
                return [j]
            if rule == "forbidden":
                return [k for k in range(HAND) if k != j]
            return list(range(HAND))
        if common == JOKER or self.options.hand_choice == "free":
            return list(range(HAND))
        return best_discards(five, common)[1]

    def _run_show(self) -> None:
        """Score hands in show order; stop for a crib_discard decision when a seat has one."""
        while self.show_queue:
            seat = self.show_queue[0]
            base = seat * HAND
            for i in range(base, base + HAND):
                self.up[i] = True
            slots = self._discard_slots(seat)
            if len(slots) > 1:
                # Kept for legal_actions: the show's slots depend on face-up cards only.
                self._show_slots = slots
                self.phase = "crib_discard"
                self.cur = seat
                return
            self._discard(seat, slots[0])
        cards = self.crib_down + self.crib_up
        self.crib_up = cards
        self.crib_down = []
        common = self.common
        points = 0 if JOKER in cards or common == JOKER else hand_score(cards, common, crib=True)
        self._event({"event": "crib", "seat": self.dealer, "cards": list(cards), "points": points})
        self._award(self.dealer, points)
        self._next_round()

    def _discard(self, seat: int, slot: int) -> None:
        """The seat's show: `slot` goes to the crib, the other four are scored."""
        self._show_slots = None
        base = seat * HAND
        five = self.hand[base:base + HAND]
        card = five[slot]
        common = self.common
        killed = JOKER in five or common == JOKER
        points = 0 if killed else hand_score(five[:slot] + five[slot + 1:], common)
        self.hand[base + slot] = None
        self.crib_up.append(card)
        self.show_queue.pop(0)
        self._event({"event": "show", "seat": seat, "cards": five, "killed": killed,
                     "discard": card, "points": points})
        self._award(seat, points)

    # -- GameState hooks ---------------------------------------------------------------------------
    def to_act(self) -> list[int]:
        """The one seat whose decision is pending; [] once the game is over."""
        return [] if self.over else [self.cur]

    def legal_actions(self, seat: int) -> list[JSON]:
        """Actions of `seat` now, in a fixed order (spec §15 encoding)."""
        if self.phase == "reveal":
            # The only action with a list inside, which must be the caller's own too.
            return [{"type": "reveal", "slots": a["slots"][:]} for a in self._legal(seat)]
        return [a.copy() for a in self._legal(seat)]

    def _legal(self, seat: int) -> list[dict]:
        """The legal actions of `seat` as the shared action objects (not to be handed out)."""
        if self.over or seat != self.cur:
            return []
        phase = self.phase
        if phase == "main":
            npile = len(self.pile)
            if self.forced:
                return [_DRAW] if npile >= 3 else [_FLIP]
            acts = [_DRAW] if npile >= 3 else []
            if self.line:
                acts.extend(_TAKE)
            if npile == 2:
                acts.append(_FLIP)
            return acts
        if phase == "after_draw":
            return _AFTER_DRAW
        if phase == "reveal":
            base = seat * HAND
            up = self.up
            return [
                _REVEAL[pair] for pair in _REVEAL_PAIRS
                if not up[base + pair[0]] and not up[base + pair[1]]
            ]
        if phase == "crib_discard":
            slots = self._show_slots
            if slots is None:  # a state built from an observation
                slots = self._show_slots = self._discard_slots(seat)
            return [_CRIB[k] for k in slots]
        return []

    def apply(self, actions: Mapping[int, JSON]) -> None:
        """Validate the acting seat's action and apply it; an illegal action changes nothing."""
        if self.over:
            raise IllegalActionError("the game is over: no seat may act")
        seat = self.cur
        if len(actions) != 1 or seat not in actions:
            extra = sorted(set(actions) - {seat})
            raise IllegalActionError(
                f"seats [{seat}] must act; missing {[] if seat in actions else [seat]}, "
                f"not to act {extra}",
                seat=(extra or [seat])[0],
            )
        action = actions[seat]
        if action not in self._legal(seat):
            raise IllegalActionError(
                f"illegal action for seat {seat}: {action!r}", seat=seat, action=action
            )
        self.apply_validated(actions)

    def apply_validated(self, actions: Mapping[int, JSON]) -> None:
        """Apply the acting seat's validated action."""
        seat = self.cur
        try:
            self._step(seat, actions[seat])
        except _GameOver:
            pass

    _apply = apply_validated  # the base class's hook, the same function: no extra call

    def _step(self, seat: int, action: JSON) -> None:
        kind = action["type"]
        base = seat * HAND
        if kind == "draw":
            self.pending = self.pile.pop()
            self.takes = 0
            # The pile only shrinks, so no earlier stand-off snapshot can ever match again.
            self.snaps.clear()
            self.phase = "after_draw"
        elif kind == "take_line":
            k = int(action["replace_slot"])
            card = self.line.pop()
            self.total -= _PIP[card]
            old = self.hand[base + k]
            was_down = not self.up[base + k]
            self.hand[base + k] = card
            self.up[base + k] = True
            self.takes += 1
            final = self._is_final()
            event = {"event": "turn", "seat": seat, "source": "line", "card_in": card, "slot": k,
                     "was_face_down": was_down}
            scored_31 = self._place(seat, old, final, event)
            self._end_turn(seat, old, final, scored_31)
        elif kind == "place_drawn" or kind == "replace":
            drawn = self.pending
            self.pending = None
            if kind == "replace":
                k = int(action["slot"])
                card = self.hand[base + k]
                was_down = not self.up[base + k]
                self.hand[base + k] = drawn
                self.up[base + k] = True
                event = {"event": "turn", "seat": seat, "source": "draw", "card_in": drawn,
                         "slot": k, "was_face_down": was_down}
            else:
                card = drawn
                event = {"event": "turn", "seat": seat, "source": "draw", "card_in": None,
                         "slot": None, "was_face_down": False}
            final = self._is_final()
            scored_31 = self._place(seat, card, final, event)
            self._end_turn(seat, card, final, scored_31)
        elif kind == "flip_common":
            card = self.pile.pop()
            event = {"event": "turn", "seat": seat, "source": "flip", "card_in": None, "slot": None,
                     "was_face_down": True}
            scored_31 = self._place(seat, card, True, event)
            self._end_turn(seat, card, True, scored_31)
        elif kind == "reveal":
            self._reveal(seat, [int(k) for k in action["slots"]], auto=False)
        elif kind == "crib_discard":
            self._discard(seat, int(action["slot"]))
            self._run_show()

    def teams(self) -> list[list[int]]:
        """Partners {0,2} and {1,3} in team mode, otherwise every seat alone."""
        if self.options.team_mode:
            return [[0, 2], [1, 3]]
        return [[s] for s in range(self.n)]

    def scores(self) -> list[float]:
        """Each seat's score (its team's score in team mode)."""
        return [self.pts[side] for side in self.side_of]

    def deck(self) -> list[str]:
        """The 52 standard cards and the joker."""
        return list(DECK)

    def card_zones(self) -> dict[str, list[str]]:
        """Slots per seat (face up / down), line, out of play, draw pile, crib, drawn, common."""
        zones: dict[str, list[str]] = {}
        hand, up = self.hand, self.up
        for s in range(self.n):
            idx = range(s * HAND, s * HAND + HAND)
            zones[f"slots_{s}_face_up"] = [hand[i] for i in idx if hand[i] is not None and up[i]]
            zones[f"slots_{s}_face_down"] = [
                hand[i] for i in idx if hand[i] is not None and not up[i]
            ]
        zones["line"] = list(self.line)
        zones["out_of_play"] = list(self.out)
        zones["draw_pile"] = list(self.pile)
        zones["crib_face_down"] = list(self.crib_down)
        zones["crib_face_up"] = list(self.crib_up)
        zones["pending_drawn"] = [self.pending] if self.pending else []
        zones["common"] = [self.common] if self.common else []
        return zones

    def hidden_from(self, seat: int) -> set[str]:
        """Face-down slots (own too), the draw pile, face-down crib cards, another's drawn card."""
        hidden = {c for c, u in zip(self.hand, self.up) if c is not None and not u}
        hidden.update(self.pile)
        hidden.update(self.crib_down)
        if self.pending is not None and self.cur != seat:
            hidden.add(self.pending)
        return hidden

    # -- determinization ----------------------------------------------------------------------------
    def unknown_deal(self, seat: int) -> HiddenDeal:
        """Face-down slots (the own ones too), the draw pile, the face-down crib, another's draw.

        All of them were dealt or drawn blind, so every unseen card may be in any of them.
        """
        deal = HiddenDeal(sorted(self.hidden_from(seat)))
        hand, up = self.hand, self.up
        for s in range(self.n):
            deal.add(f"slots_{s}_face_down", sum(
                1 for i in range(s * HAND, s * HAND + HAND) if hand[i] is not None and not up[i]))
        deal.add("draw_pile", len(self.pile))
        deal.add("crib_face_down", len(self.crib_down))
        if self.pending is not None and self.cur != seat:
            deal.add("pending_drawn", 1)
        return deal

    def _place_unknown(self, seat: int, placed: dict[str, list[str]]) -> None:
        """Fill face-down slots in slot order, then the pile, the crib and another's drawn card."""
        hand, up = self.hand, self.up
        for s in range(self.n):
            cards = placed.get(f"slots_{s}_face_down")
            if cards:
                it = iter(cards)
                for i in range(s * HAND, s * HAND + HAND):
                    if hand[i] is not None and not up[i]:
                        hand[i] = next(it)
        self.pile = placed.get("draw_pile", [])
        self.crib_down = placed.get("crib_face_down", [])
        if "pending_drawn" in placed:
            self.pending = placed["pending_drawn"][0]

    @classmethod
    def text_view(cls) -> TextView:
        """How a terminal draws Battlefield Cribbage (arena.games.battlefield_cribbage_text)."""
        from arena.games.battlefield_cribbage_text import TEXT

        return TEXT

    @classmethod
    def search_hooks(cls) -> SearchHooks:
        """Battlefield Cribbage's playout profiles and shipped search bots
        (arena.games.battlefield_cribbage_search)."""
        # Imported on a search's first call: playing the game never needs its search knowledge.
        from arena.games.battlefield_cribbage_search import SEARCH

        return SEARCH

    @classmethod
    def from_observation(cls, observation: dict, options: Mapping) -> BattlefieldCribbageState:
        """A state that `observation` describes exactly, under `options` (as game_start gives
        them), the cards its seat cannot place put anywhere consistent (for search bots:
        determinize it before looking at hidden cards).

        Not in an observation, so approximated: the stand-off snapshots of earlier dealer turns
        (none) and this round's points per side (zero; they only feed the round summary).
        """
        from arena.games import new_game

        obs = observation
        n = obs["num_players"]
        state = new_game("battlefield_cribbage", dict(options), n, 0)
        state.round = obs["round"]
        state.dealer = obs["dealer"]
        state.over = obs["game_over"]
        state.end_reason = obs["end_reason"]
        state.pts = [obs["scores"][k] for k in state.score_keys]
        state._set_rounds_log(tuple(
            {**r, "points": list(r["points"])} for r in obs["rounds"]))
        state.prev_log, state.prev_log_lists = [], []
        state._reset_round_state()
        state.phase = obs["phase"]
        state.cur = obs["to_act"] if obs["to_act"] is not None else 0
        state.line = list(obs["line"])
        state.total = obs["line_total"]
        state.out = list(obs["out_of_play"])
        state.crib_up = list(obs["crib"]["face_up"])
        state.common = obs["common_card"]
        state.first_done = list(obs["first_turn_done"])
        state.went_out = obs["went_out"]
        state.finals = list(obs["final_turns_remaining"])
        state.forced = obs["forced_reason"]
        state.takes = obs["line_takes_without_draw"]
        state.turns = obs["turn_in_round"]
        state.ceasefire = state.phase == "cease_fire"
        for event in obs["history"]:
            state._event({k: (v[:] if isinstance(v, list) else v) for k, v in event.items()})
        hand: list[str | None] = [None] * (HAND * n)
        up = [False] * (HAND * n)
        known = set(state.line) | set(state.out) | set(state.crib_up)
        if state.common:
            known.add(state.common)
        down: list[int] = []
        for s, slots in enumerate(obs["hands"]):
            for entry in slots:
                i = s * HAND + entry["slot"]
                if entry["card"] is None:
                    down.append(i)
                else:
                    hand[i] = entry["card"]
                    up[i] = True
                    known.add(entry["card"])
        own_pending = obs["pending_drawn_card"]
        if own_pending:
            known.add(own_pending)
        free = iter([c for c in DECK if c not in known])
        for i in down:
            hand[i] = next(free)
        state.hand, state.up = hand, up
        state.crib_down = [next(free) for _ in range(obs["crib"]["face_down_count"])]
        if own_pending:
            state.pending = own_pending
        elif state.phase == "after_draw":
            state.pending = next(free)
        state.pile = list(free)
        if len(state.pile) != obs["draw_pile_count"]:
            raise ValueError("battlefield_cribbage: the observation does not account for every card")
        if state.phase == "crib_discard":
            k = (state.cur - state.dealer - 1) % n + 1  # the dealer shows last
            state.show_queue = [(state.dealer + j) % n for j in range(k, n + 1)]
        return state

    def _redraw_future(self, rng: random.Random) -> None:
        """Later rounds shuffle from a fresh deal seed."""
        self.deal_seed = future_seed(rng)

    # -- JSON views --------------------------------------------------------------------------------
    # Views are built on every move (bots get an observation per move), so they copy the logged
    # events with dict.copy and fix up only the few list fields, rather than rebuilding each event.
    @staticmethod
    def _copy_log(log: list[dict], lists: list[tuple[int, tuple[str, ...]]]) -> list[dict]:
        """Fresh copies of logged events (the events themselves are shared with clones)."""
        events = list(map(dict.copy, log))
        for i, keys in lists:
            event = events[i]
            for key in keys:
                event[key] = event[key][:]
        return events

    def _winner_and_skunk(self) -> tuple[list[int] | None, str | None]:
        """The winning seats (None if not over or tied at the top) and the skunk grade."""
        if not self.over:
            return None, None
        best = max(self.pts)
        if self.pts.count(best) > 1:
            return None, None
        side = self.pts.index(best)
        winners = [s for s in range(self.n) if self.side_of[s] == side]
        skunk = None
        if self.options.skunk_scoring and self.end_reason == "target":
            worst_other = max(p for i, p in enumerate(self.pts) if i != side)
            target = self.options.target
            if worst_other <= target - 61:
                skunk = "double"
            elif worst_other <= target - 31:
                skunk = "single"
        return winners, skunk

    def _seat_hand(self, seat: int) -> list[dict]:
        """The seat's slots as every view shows them: face-down cards as None, shown slots left out."""
        hand, up = self.hand, self.up
        return [{"slot": k, "card": hand[i] if up[i] else None} for k, i in _SLOTS[seat]
                if hand[i] is not None]

    def _hands_fragment(self) -> orjson.Fragment:
        """The encoded hands of a view, each seat's re-encoded only when its slots changed."""
        hand, up, cache = self.hand, self.up, self._hands_json
        parts = []
        for seat in range(self.n):
            base = seat * HAND
            cards, faces = hand[base:base + HAND], up[base:base + HAND]
            entry = cache[seat]
            if entry is None or entry[0] != cards or entry[1] != faces:
                entry = cache[seat] = (cards, faces, orjson.dumps(self._seat_hand(seat)))
            parts.append(entry[2])
        return orjson.Fragment(b"[" + b",".join(parts) + b"]")

    def _public(self, view: dict, encoded: bool = False) -> dict:
        """Add what every seat sees to `view` (which holds the leading keys) and return it,
        all but this round's history and the round summaries (see _public_logs); `encoded` puts
        cached encodings (orjson fragments) in place of the hands and teams."""
        n = self.n
        over = self.over
        opts = self.options
        winners, skunk = self._winner_and_skunk()
        view["num_players"] = n
        view["team_mode"] = opts.team_mode
        view["teams"] = self._teams_json if encoded else self.teams()
        view["scores"] = dict(zip(self.score_keys, self.pts))
        view["score_list"] = self.scores()
        view["target"] = opts.target
        view["dealer"] = self.dealer
        view["round"] = self.round
        view["to_act"] = None if over else self.cur
        view["phase"] = self.phase
        view["hands"] = self._hands_fragment() if encoded else [self._seat_hand(s) for s in range(n)]
        view["line"] = self.line[:]
        view["line_total"] = self.total
        view["out_of_play"] = self.out[:]
        view["draw_pile_count"] = len(self.pile)
        view["crib"] = {"face_down_count": len(self.crib_down), "face_up": self.crib_up[:]}
        view["first_turn_done"] = self.first_done[:]
        view["went_out"] = self.went_out
        view["final_turns_remaining"] = self.finals[:]
        view["standoff_forced"] = self.forced is not None and not over
        view["forced_reason"] = None if over else self.forced
        view["line_takes_without_draw"] = self.takes
        view["turn_in_round"] = self.turns
        view["common_card"] = self.common
        view["game_over"] = over
        view["end_reason"] = self.end_reason
        view["winners"] = winners
        view["skunk"] = skunk
        return view

    def _public_logs(self, view: dict) -> dict:
        """Add this round's history and the round summaries to `view`, as fresh copies."""
        view["history"] = self._copy_log(self.log, self.log_lists)
        rounds = list(map(dict.copy, self.rounds_log))
        for summary in rounds:
            summary["points"] = summary["points"][:]
        view["rounds"] = rounds
        return view

    def observation(self, seat: int) -> dict:
        """What `seat` sees: every face-up card, counts of hidden ones, its own drawn card."""
        obs = self._public_logs(self._public({"game": "battlefield_cribbage", "seat": seat}))
        obs["pending_drawn_card"] = self.pending if self.cur == seat else None
        return obs

    def observation_json(self, seat: int) -> bytes:
        """observation(seat) as compact JSON, the history and round summaries from their cached
        encoding (only entries logged since the last call are encoded)."""
        log = self.log
        if self._log_done < len(log):
            self._log_json = _encode_tail(self._log_json, log, self._log_done)
            self._log_done = len(log)
        rounds = self.rounds_log
        if self._rounds_done < len(rounds):
            self._rounds_json = _encode_tail(self._rounds_json, rounds, self._rounds_done)
            self._rounds_done = len(rounds)
        obs = self._public({"game": "battlefield_cribbage", "seat": seat}, encoded=True)
        obs["history"] = orjson.Fragment(b"[" + self._log_json + b"]")
        obs["rounds"] = orjson.Fragment(b"[" + self._rounds_json + b"]")
        obs["pending_drawn_card"] = self.pending if self.cur == seat else None
        return orjson.dumps(obs)

    def observation_from_scratch(self, seat: int) -> dict:
        """observation(seat), which copies the logged events and keeps no cache: only
        observation_json does."""
        return self.observation(seat)

    def full_view(self) -> dict:
        """Everything, face-down cards and the draw pile order included."""
        view = self._public_logs(self._public({"game": "battlefield_cribbage"}))
        # Replays read the options here (observations no longer carry them).
        view["options"] = self.options_json.copy()
        hand, up = self.hand, self.up
        view["first_dealer"] = self.first_dealer
        view["hands_full"] = [
            [{"slot": k, "card": hand[i], "face_up": up[i]} for k, i in slots
             if hand[i] is not None]
            for slots in _SLOTS[:self.n]
        ]
        view["draw_pile_top_first"] = self.pile[::-1]
        view["crib_face_down"] = self.crib_down[:]
        view["pending_drawn_card"] = self.pending
        view["show_queue"] = self.show_queue[:]
        view["previous_round_history"] = self._copy_log(self.prev_log, self.prev_log_lists)
        return view

    def clone(self) -> BattlefieldCribbageState:
        """A cheap independent copy: mutable lists copied; options, RNG and logged events shared."""
        # The RNG is never used after construction; logged events are never changed, and only the
        # current round's log lists are ever appended to.
        new = object.__new__(BattlefieldCribbageState)
        new.__dict__.update(self.__dict__)
        new.pts = self.pts[:]
        new.gain = self.gain[:]
        new.hand = self.hand[:]
        new.up = self.up[:]
        new.line = self.line[:]
        new.out = self.out[:]
        new.pile = self.pile[:]
        new.crib_down = self.crib_down[:]
        new.crib_up = self.crib_up[:]
        new.first_done = self.first_done[:]
        new.finals = self.finals[:]
        new.snaps = set(self.snaps)
        new.show_queue = self.show_queue[:]
        new.log = self.log[:]
        new.log_lists = self.log_lists[:]
        new._hands_json = self._hands_json[:]
        return new

    # -- positions (tests and analysis) -----------------------------------------------------------
    @classmethod
    def from_position(
        cls,
        options: BattlefieldCribbageOptions | Mapping | None = None,
        num_seats: int = 2,
        *,
        hands: Sequence[Sequence[str]],
        line: Sequence[str],
        draw_pile_top_first: Sequence[str],
        dealer: int = 0,
        to_act: int | None = None,
        face_up: Sequence[Sequence[bool]] | None = None,
        crib: Sequence[str] | None = None,
        scores: Sequence[int] | None = None,
        first_turn_done: bool = True,
        went_out: int | None = None,
        final_turns: Sequence[int] = (),
    ) -> BattlefieldCribbageState:
        """A game at a chosen position, for tests and analysis: given slot cards, face-up flags
        (default: all face down), line, draw pile (top first), face-down crib cards (default: the
        first unused cards in deck order), per-side scores and whose turn it is (default: the
        dealer's left, at the start of a turn). Every other card is put out of play. Later rounds
        are dealt normally."""
        from arena.games import new_game

        state = new_game("battlefield_cribbage", options, num_seats, seed=0)
        assert isinstance(state, cls)
        n = num_seats
        used = [c for h in hands for c in h] + list(line) + list(draw_pile_top_first)
        if crib is None:
            crib = [c for c in DECK if c not in set(used) and c != JOKER][:CRIB_DOWN[n]]
        used += list(crib)
        if len(used) != len(set(used)) or not set(used) <= set(DECK):
            raise ValueError("from_position: cards must be distinct deck cards")
        if len(hands) != n or any(len(h) != HAND for h in hands) or len(crib) != CRIB_DOWN[n]:
            raise ValueError("from_position: 5 cards per seat and 2/1/0 crib cards are needed")
        state.round = 1
        state.over = False
        state.end_reason = None
        state._set_rounds_log(())
        state.prev_log = []
        state.prev_log_lists = []
        state.dealer = dealer
        state._reset_round_state()
        state.hand = [c for h in hands for c in h]
        state.up = [bool(f) for fs in face_up for f in fs] if face_up else [False] * (HAND * n)
        state.line = list(line)
        state.total = sum(_PIP[c] for c in line)
        state.pile = list(draw_pile_top_first)[::-1]
        state.crib_down = list(crib)
        state.out = [c for c in DECK if c not in set(used)]
        state.pts = list(scores) if scores is not None else [0] * len(state.pts)
        state.first_done = [first_turn_done] * n
        state.went_out = went_out
        if went_out is not None:
            state.finals = list(final_turns) or [(went_out + k) % n for k in range(1, n)]
        seat = (dealer + 1) % n if to_act is None else to_act
        state.turns = 0
        state._begin_turn(seat)
        return state

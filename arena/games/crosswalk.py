"""Crosswalk: move coloured pawns across a 10-space crosswalk with simultaneously played cards.

Rules as implemented: seeds/crosswalk.md. Each seat owns one
colour (two in a 2-seat game); a round deals cards in cycles until every card has been played, and a
seat scores 10 x the space its pawn ends on. Only one decision exists: the card played in a match,
chosen by every participant at once. Dealing, sorting, re-deals and scoring are automatic.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

import orjson
from pydantic import Field, field_validator

from arena.cards import colour_deck, seeded_shuffle
from arena.errors import GameOptionsError, IllegalActionError
from arena.games import register
from arena.games.base import JSON, GameOptions, GameResult, GameState, GameType, check_acting
from arena.games.chance import HiddenDeal, future_seed

if TYPE_CHECKING:
    from arena.games.text import TextView
    from arena.search.hooks import SearchHooks

COLOURS = "RBGY"
HAND_SIZE = 5
TRACK_END = 10
COLOUR_ORDER_PREFIX = "colour_order:"

Colour = Literal["R", "B", "G", "Y"]

# Card facts looked up on every play; cards are "R1".."Y10".
_NUMBER = {c: int(c[1:]) for c in colour_deck(COLOURS)}
_INDEX = {c: i for i, c in enumerate(colour_deck(COLOURS))}


class CrosswalkOptions(GameOptions):
    """Options of Crosswalk (the number of players is the seat count, not an option)."""

    rounds: int = Field(3, ge=1, description="Number of rounds; the highest total after them wins.")
    lead_tie: str = Field(
        "all_lead",
        description=(
            "When several cards share the highest number: 'all_lead' (each moves to that number), "
            "'no_move' (no pawn moves in that match) or 'colour_order:RBGY' (the first colour in "
            "the given order leads; the other tied cards are 0 behind, i.e. space 1)."
        ),
    )
    movement: Literal["absolute", "relative"] = Field(
        "absolute",
        description=(
            "'absolute': a pawn is set to the space its card earns; 'relative': it moves forward "
            "that many spaces (stopping at 10)."
        ),
    )
    removed_colour: Colour = Field(
        "Y", description="3 players only: the colour (10 cards and its pawn) left out of the game."
    )
    two_player_colours: tuple[tuple[Colour, Colour], tuple[Colour, Colour]] = Field(
        (("R", "G"), ("B", "Y")),
        description=(
            "2 players only: the colours of seat 0 and of seat 1, a partition of RBGY into two "
            "pairs; a seat scores with the higher of its two pawns."
        ),
    )
    tiebreak: Literal["shared", "best_single_round", "last_round"] = Field(
        "shared",
        description=(
            "Equal totals: 'shared' rank; or the better 'best_single_round' score; or the better "
            "'last_round' score (still equal: shared)."
        ),
    )

    @field_validator("lead_tie")
    @classmethod
    def _check_lead_tie(cls, value: str) -> str:
        if value in ("all_lead", "no_move"):
            return value
        order = value[len(COLOUR_ORDER_PREFIX):] if value.startswith(COLOUR_ORDER_PREFIX) else ""
        if order and all(c in COLOURS for c in order) and len(set(order)) == len(order):
            return value
        raise ValueError(
            "expected 'all_lead', 'no_move' or 'colour_order:' followed by each colour once, "
            "e.g. 'colour_order:RBGY'"
        )

    @field_validator("two_player_colours")
    @classmethod
    def _check_pairs(cls, value: tuple[tuple[str, str], tuple[str, str]]) -> tuple:
        if sorted(value[0] + value[1]) != sorted(COLOURS):
            raise ValueError("the two pairs must use each of R, B, G, Y exactly once")
        return value


def colours_in_play(options: CrosswalkOptions, num_seats: int) -> str:
    """The colours used with this many seats, in RBGY order (3 seats leave one out)."""
    if num_seats == 3:
        return COLOURS.replace(options.removed_colour, "")
    return COLOURS


def seat_colours(options: CrosswalkOptions, num_seats: int) -> list[str]:
    """The colour(s) each seat owns, e.g. ["RG", "BY"] for two seats."""
    if num_seats == 2:
        return ["".join(pair) for pair in options.two_player_colours]
    return list(colours_in_play(options, num_seats))


def _parse_lead_tie(lead_tie: str) -> tuple[str, dict[str, int]]:
    """('all_lead' | 'no_move' | 'order', colour -> priority) from the option string."""
    if lead_tie.startswith(COLOUR_ORDER_PREFIX):
        order = lead_tie[len(COLOUR_ORDER_PREFIX):]
        return "order", {c: i for i, c in enumerate(order)}
    return lead_tie, {}


def _match_outcome(
    cards: list[str], pawns: Mapping[str, int], tie_mode: str, priority: Mapping[str, int],
    relative: bool,
) -> tuple[int, list[str], dict[str, int]]:
    """(highest number, leading cards, colour -> new space) of one match's revealed cards."""
    lead = max(_NUMBER[c] for c in cards)
    top = [c for c in cards if _NUMBER[c] == lead]
    if len(top) > 1:
        if tie_mode == "no_move":
            return lead, [], {}
        if tie_mode == "order":
            top = [min(top, key=lambda c: priority[c[0]])]
    moves = {}
    for card in cards:
        # A tied card that does not lead is 0 behind the lead: space 1 (absolute) or no step.
        distance = lead if card in top else lead - _NUMBER[card]
        colour = card[0]
        if relative:
            moves[colour] = min(TRACK_END, pawns[colour] + distance)
        else:
            moves[colour] = max(1, distance)
    return lead, top, moves


def resolve_match(
    cards_by_seat: Mapping[int, str], pawns: Mapping[str, int], lead_tie: str = "all_lead",
    movement: str = "absolute",
) -> dict[str, int]:
    """The pawn spaces after one match in which each seat revealed the given card."""
    tie_mode, priority = _parse_lead_tie(lead_tie)
    cards = [cards_by_seat[s] for s in sorted(cards_by_seat)]
    _, _, moves = _match_outcome(cards, pawns, tie_mode, priority, movement == "relative")
    return {**pawns, **moves}


@register
class CrosswalkState(GameState):
    """A game of Crosswalk in progress: rounds of deal/sort/re-deal cycles and simultaneous matches."""

    game_type = GameType(
        name="crosswalk",
        title="Crosswalk",
        seat_counts=(2, 3, 4),
        options_model=CrosswalkOptions,
        simultaneous=True,
        summary=(
            "Everyone reveals a card at once; the highest number sends its pawn to that space, the "
            "others to the difference. Score the space your pawn ends on, over 3 rounds."
        ),
        variants=(
            {"lead_tie": "no_move"},
            {"lead_tie": "colour_order:RBGY"},
            {"lead_tie": "colour_order:YGBR", "movement": "relative"},
            {"removed_colour": "R", "two_player_colours": [["R", "B"], ["G", "Y"]]},
            {"rounds": 1, "tiebreak": "best_single_round"},
            {"rounds": 2, "tiebreak": "last_round", "movement": "relative"},
        ),
    )

    def __init__(self, options: CrosswalkOptions, num_seats: int, seed: int):
        super().__init__(options, num_seats, seed)
        self.colours = colours_in_play(options, num_seats)
        self.seat_colours = seat_colours(options, num_seats)
        self.owner = {c: s for s, cols in enumerate(self.seat_colours) for c in cols}
        self._deck = colour_deck(self.colours)
        self._tie_mode, self._priority = _parse_lead_tie(options.lead_tie)
        self._relative = options.movement == "relative"
        self._own_total = [10 * len(cols) for cols in self.seat_colours]
        # The start of each seat's encoded observation, up to its public part (never changes).
        self._json_head = [
            b'{"game":"crosswalk","seat":%d,"my_colours":%s,' % (s, orjson.dumps(list(cols)))
            for s, cols in enumerate(self.seat_colours)
        ]
        # The encoded public part (the same for every seat), built by the first observation_json
        # after a move and dropped by the next move; bytes, so clones share it.
        self._public_json: bytes | None = None
        # The game RNG is used only here: every shuffle is derived from deal_seed, the round and
        # the shuffle's number in the round, so clone() can share the RNG (copying its large state
        # would cost more than copying the rest of the game).
        self.first_dealer = self.rng.randrange(num_seats)
        self.deal_seed = self.rng.getrandbits(63)
        self.round_scores: list[list[int]] = []
        self.round = -1
        self.over = False
        self._start_round()
        self._advance()

    # -- automatic steps ------------------------------------------------------------------------
    def _start_round(self) -> None:
        self.round += 1
        self.dealer = (self.first_dealer + self.round) % self.num_seats
        self.pawns = {c: 1 for c in self.colours}
        self.shuffles = 0
        self.stock = list(self._deck)
        self._shuffle(self.stock)
        self.discard: list[str] = []
        self.played: list[str] = []
        self.hands: list[list[str]] = [[] for _ in range(self.num_seats)]
        self.discarded_by: list[list[str]] = [[] for _ in range(self.num_seats)]
        # The cards each seat put on the discard pile since it was last turned into the stock: the
        # seat knows they are there (the deal and every reshuffle happen in view of the table).
        self.in_discard: list[list[str]] = [[] for _ in range(self.num_seats)]
        self.own_left = list(self._own_total)
        self.participants: list[int] = []
        self.cycle = -1
        self.match_in_cycle = 0
        self.last_match: tuple[dict[int, str], int, list[int], dict[str, int]] | None = None

    def _draw(self, count: int) -> list[str]:
        """Up to `count` cards from the top of the stock, turning the shuffled discard pile into
        the stock whenever it runs out; fewer only when both are empty."""
        stock = self.stock
        if count <= 0:
            return []
        if len(stock) >= count:
            drawn = stock[:-count - 1:-1]
            del stock[-count:]
            return drawn
        drawn = stock[::-1]
        if not self.discard:
            self.stock = []
            return drawn
        self.stock = self.discard
        self.discard = []
        self.in_discard = [[] for _ in range(self.num_seats)]
        self._shuffle(self.stock)
        return drawn + self._draw(count - len(drawn))

    def _shuffle(self, cards: list[str]) -> None:
        """Shuffle in place as a function of deal_seed, the round and the shuffle's number in it."""
        seeded_shuffle(cards, f"crosswalk:{self.deal_seed}:{self.round}:{self.shuffles}")
        self.shuffles += 1

    def _discard(self, seat: int, cards: list[str]) -> None:
        """Put the seat's cards on the discard pile; it remembers each card once this round."""
        self.discard.extend(cards)
        self.in_discard[seat].extend(cards)
        known = self.discarded_by[seat]
        for card in cards:
            if card not in known:
                known.append(card)

    def _sort(self, seat: int) -> None:
        """Discard every card of the seat's hand that is not of its own colours."""
        own = self.seat_colours[seat]
        hand = self.hands[seat]
        keep = [c for c in hand if c[0] in own]
        if len(keep) != len(hand):
            self._discard(seat, [c for c in hand if c[0] not in own])
            self.hands[seat] = keep

    def _advance(self) -> None:
        """Run the automatic steps until participants must choose a card or the game is over."""
        while True:
            if self.stock or self.discard:
                self._start_cycle()
                return
            # A new list rather than append: clones share round_scores.
            self.round_scores = [*self.round_scores, self._round_points()]
            if len(self.round_scores) == self.options.rounds:
                self.over = True
                self.participants = []
                return
            self._start_round()

    def _start_cycle(self) -> None:
        """Deal a cycle: five cards each round the table, sorting, re-deals for empty hands."""
        n = self.num_seats
        order = [s for s in ((self.dealer + 1 + i) % n for i in range(n)) if self.own_left[s]]
        hands = self.hands
        # Dealing round the table one card at a time gives seat order[i] every len(order)-th card
        # of the drawn sequence (sorting only starts once the deal is done).
        dealt = self._draw(HAND_SIZE * len(order))
        for i, seat in enumerate(order):
            hands[seat].extend(dealt[i::len(order)])
        for seat in order:
            self._sort(seat)
        for seat in order:
            # Terminates: every unplayed own card of this seat is in the stock or discard pile now.
            while not hands[seat]:
                cards = self._draw(HAND_SIZE)
                if not cards:
                    raise AssertionError("crosswalk: an unfinished seat has no card left to draw")
                hands[seat].extend(cards)
                self._sort(seat)
        for seat in order:
            hands[seat].sort(key=_INDEX.__getitem__)
        self.participants = sorted(order)
        self.cycle += 1
        self.match_in_cycle = 0

    def _round_points(self) -> list[int]:
        return [10 * max(self.pawns[c] for c in cols) for cols in self.seat_colours]

    # -- the hooks ------------------------------------------------------------------------------
    def to_act(self) -> list[int]:
        """Every participant of the current match (all choose at once); [] when the game is over."""
        return list(self.participants)

    def legal_actions(self, seat: int) -> list[JSON]:
        """Play any card of the hand (all of them are the seat's own colours)."""
        if seat not in self.participants:
            return []
        return [{"type": "play", "card": c} for c in self.hands[seat]]

    def apply(self, actions: Mapping[int, JSON]) -> None:
        """Validate every seat's card first, then play the match; an illegal action changes nothing."""
        acting = self.participants
        check_acting(actions, acting)
        for seat in acting:
            action = actions[seat]
            if not (
                isinstance(action, dict)
                and len(action) == 2
                and action.get("type") == "play"
                and action.get("card") in self.hands[seat]
            ):
                raise IllegalActionError(
                    f"illegal action for seat {seat}: {action!r}", seat=seat, action=action
                )
        self.apply_validated(actions)

    def apply_validated(self, actions: Mapping[int, JSON]) -> None:
        """Play the match for already-validated cards, then deal on or score as needed."""
        self._public_json = None
        chosen = {seat: actions[seat]["card"] for seat in self.participants}
        cards = []
        for seat, card in chosen.items():
            self.hands[seat].remove(card)
            self.own_left[seat] -= 1
            cards.append(card)
        self.played.extend(cards)
        lead, top, moves = _match_outcome(
            cards, self.pawns, self._tie_mode, self._priority, self._relative
        )
        self.pawns.update(moves)
        leaders = [s for s, c in chosen.items() if c in top]
        self.last_match = (chosen, lead, leaders, moves)
        if any(not self.hands[s] for s in self.participants):
            for seat in self.participants:
                if self.hands[seat]:
                    self._discard(seat, self.hands[seat])
                    self.hands[seat] = []
            self.participants = []
            self._advance()
        else:
            self.match_in_cycle += 1

    _apply = apply_validated  # the base class's hook, the same function: no extra call

    def _last_match_json(self) -> dict | None:
        if self.last_match is None:
            return None
        chosen, lead, leaders, moves = self.last_match
        return {
            "cards": {str(s): c for s, c in chosen.items()},
            "lead": lead,
            "leaders": list(leaders),
            "moves": dict(moves),
        }

    def _public(self) -> dict:
        """The part of the observation every seat sees alike, as new values."""
        return {
            "num_players": self.num_seats,
            "colours": self.colours,
            "colour_owner": dict(self.owner),
            "round": self.round,
            "rounds": self.options.rounds,
            "dealer": self.dealer,
            "cycle": self.cycle,
            "match_in_cycle": self.match_in_cycle,
            "pawns": dict(self.pawns),
            "round_scores": [list(r) for r in self.round_scores],
            "totals": self._totals(),
            "hand_counts": [len(h) for h in self.hands],
            "participants": list(self.participants),
            "finished": [left == 0 for left in self.own_left],
            "stock_count": len(self.stock),
            "discard_count": len(self.discard),
            "played_this_round": list(self.played),
            "last_match": self._last_match_json(),
            "over": self.over,
        }

    def observation(self, seat: int) -> dict:
        """What `seat` sees: public state, its own hand and the cards it discarded this round."""
        obs = {"game": "crosswalk", "seat": seat, "my_colours": list(self.seat_colours[seat])}
        obs.update(self._public())
        obs["my_hand"] = list(self.hands[seat])
        obs["my_discards_this_round"] = list(self.discarded_by[seat])
        return obs

    def observation_json(self, seat: int) -> bytes:
        """observation(seat) as compact JSON; the public part is encoded once per move for all seats."""
        public = self._public_json
        if public is None:
            public = self._public_json = orjson.dumps(self._public())[1:-1]
        return b"".join((
            self._json_head[seat],
            public,
            b',"my_hand":',
            orjson.dumps(self.hands[seat]),
            b',"my_discards_this_round":',
            orjson.dumps(self.discarded_by[seat]),
            b"}",
        ))

    def observation_from_scratch(self, seat: int) -> dict:
        """observation(seat), which keeps no cache: only observation_json does."""
        return self.observation(seat)

    def full_view(self) -> dict:
        """Everything: every hand, the stock (top card first), the discard pile, who discarded what."""
        view = {"game": "crosswalk", "seat_colours": list(self.seat_colours)}
        view.update(self._public())
        # Replays read the options here (observations no longer carry them).
        view["options"] = self.options.model_dump(mode="json")
        view.update(
            first_dealer=self.first_dealer,
            hands=[list(h) for h in self.hands],
            stock=self.stock[::-1],
            discard=list(self.discard),
            discarded_by=[list(d) for d in self.discarded_by],
            own_cards_left=list(self.own_left),
        )
        return view

    def _totals(self) -> list[int]:
        return [sum(r[s] for r in self.round_scores) for s in range(self.num_seats)]

    def scores(self) -> list[float]:
        """Completed rounds' totals, plus the running round's points as the pawns stand now."""
        totals = self._totals()
        if not self.over:
            totals = [t + p for t, p in zip(totals, self._round_points())]
        return totals

    def result(self) -> GameResult:
        """Ranks by total; the tiebreak option may separate equal totals."""
        if not self.over:
            raise IllegalActionError("the game is not over: no result yet")
        totals = self._totals()
        mode = self.options.tiebreak
        if mode == "shared":
            keys = [(t, 0) for t in totals]
        elif mode == "best_single_round":
            keys = [(t, max(r[s] for r in self.round_scores)) for s, t in enumerate(totals)]
        else:
            keys = [(t, self.round_scores[-1][s]) for s, t in enumerate(totals)]
        ranks = [1 + sum(1 for other in keys if other > k) for k in keys]
        return GameResult(scores=list(totals), ranks=ranks)

    def card_zones(self) -> dict[str, list[str]]:
        """Each hand, the stock, the discard pile and the played pile (this round's cards)."""
        zones = {f"hand{s}": list(h) for s, h in enumerate(self.hands)}
        zones.update(stock=list(self.stock), discard=list(self.discard), played=list(self.played))
        return zones

    def hidden_from(self, seat: int) -> set[str]:
        """Other hands, stock and discard pile, except the cards this seat discarded this round."""
        hidden = set(self.stock)
        hidden.update(self.discard)
        for s, hand in enumerate(self.hands):
            if s != seat:
                hidden.update(hand)
        hidden.difference_update(self.discarded_by[seat])
        return hidden

    def deck(self) -> list[str]:
        """The cards of the colours in play: 40, or 30 with three players."""
        return list(self._deck)

    # -- determinization ------------------------------------------------------------------------
    def unknown_deal(self, seat: int) -> HiddenDeal:
        """The other hands (own colours only), the stock and the rest of the discard pile.

        Known to `seat`: its hand, the played cards, and its own discards since the discard pile
        last became the stock (they are still in the pile).
        """
        known = set(self.hands[seat])
        known.update(self.played)
        mine = self.in_discard[seat]
        known.update(mine)
        unknown = [c for c in self._deck if c not in known]
        deal = HiddenDeal(unknown)
        for other, hand in enumerate(self.hands):
            if other != seat:
                colours = self.seat_colours[other]
                deal.add(f"hand{other}", len(hand), [c for c in unknown if c[0] in colours])
        deal.add("discard", len(self.discard) - len(mine))
        deal.add("stock", len(self.stock))
        return deal

    def _place_unknown(self, seat: int, placed: dict[str, list[str]]) -> None:
        """Re-dealt hands (sorted), discard pile (own known discards first) and stock."""
        for other in range(self.num_seats):
            if other != seat:
                self.hands[other] = sorted(placed.get(f"hand{other}", ()), key=_INDEX.__getitem__)
                # What the other seats discarded is theirs to know, not this seat's.
                self.discarded_by[other] = []
                self.in_discard[other] = []
        self.discard = self.in_discard[seat] + placed.get("discard", [])
        self.stock = placed.get("stock", [])
        self._public_json = None

    @classmethod
    def text_view(cls) -> TextView:
        """How a terminal draws Crosswalk (arena.games.crosswalk_text)."""
        from arena.games.crosswalk_text import TEXT

        return TEXT

    @classmethod
    def search_hooks(cls) -> SearchHooks:
        """Crosswalk's playout profiles and shipped search bots (arena.games.crosswalk_search)."""
        # Imported on a search's first call: playing the game never needs its search knowledge.
        from arena.games.crosswalk_search import SEARCH

        return SEARCH

    @classmethod
    def from_observation(cls, observation: dict, options: Mapping) -> CrosswalkState:
        """A state that `observation` describes exactly, under `options` (as game_start gives
        them), the cards its seat cannot place put anywhere consistent (for search bots:
        determinize it before looking at hidden cards).

        The observation does not say which of the seat's discards are still in the discard pile,
        so this state assumes none is: its determinizations are a little less informed.
        """
        from arena.games import new_game

        obs = observation
        seat, n = obs["seat"], obs["num_players"]
        game = new_game("crosswalk", dict(options), n, 0)
        game.round = obs["round"]
        game.dealer = obs["dealer"]
        game.first_dealer = (game.dealer - game.round) % n
        game.cycle = obs["cycle"]
        game.match_in_cycle = obs["match_in_cycle"]
        game.pawns = dict(obs["pawns"])
        game.round_scores = [list(r) for r in obs["round_scores"]]
        game.participants = list(obs["participants"])
        game.over = obs["over"]
        game.played = list(obs["played_this_round"])
        played = set(game.played)
        game.own_left = [sum(1 for c in game._deck if c[0] in cols and c not in played)
                         for cols in game.seat_colours]
        last = obs["last_match"]
        game.last_match = None if last is None else (
            {int(k): v for k, v in last["cards"].items()}, last["lead"], list(last["leaders"]),
            dict(last["moves"]))
        game.discarded_by = [[] for _ in range(n)]
        game.discarded_by[seat] = list(obs["my_discards_this_round"])
        game.in_discard = [[] for _ in range(n)]
        hands: list[list[str]] = [[] for _ in range(n)]
        hands[seat] = list(obs["my_hand"])
        known = played | set(hands[seat])
        free = [c for c in game._deck if c not in known]
        for other in range(n):
            if other != seat:
                cols = game.seat_colours[other]
                mine = [c for c in free if c[0] in cols][:obs["hand_counts"][other]]
                hands[other] = mine
                taken = set(mine)
                free = [c for c in free if c not in taken]
        game.hands = hands
        game.discard = free[:obs["discard_count"]]
        game.stock = free[obs["discard_count"]:]
        if len(game.stock) != obs["stock_count"]:
            raise ValueError("crosswalk: the observation does not account for every card")
        game._public_json = None
        return game

    def _redraw_future(self, rng: random.Random) -> None:
        """Reshuffles and later rounds draw from a fresh deal seed."""
        self.deal_seed = future_seed(rng)

    @classmethod
    def validate_options(cls, options: CrosswalkOptions, num_seats: int) -> None:
        """Seat count, and a colour_order lead_tie that orders the colours in play."""
        super().validate_options(options, num_seats)
        if options.lead_tie.startswith(COLOUR_ORDER_PREFIX):
            order = set(options.lead_tie[len(COLOUR_ORDER_PREFIX):])
            in_play = colours_in_play(options, num_seats)
            # With 3 players the full RBGY order is also accepted; the removed colour never plays.
            if order != set(in_play) and order != set(COLOURS):
                raise GameOptionsError(
                    f"crosswalk: option lead_tie={options.lead_tie!r} must list each colour in "
                    f"play ({in_play}) once for {num_seats} seats"
                )

    @classmethod
    def max_steps(cls, options: CrosswalkOptions, num_seats: int) -> int:
        """Exact: a round has as many matches as one seat has own cards (10, or 20 with 2 seats)."""
        # Every unfinished seat plays one own card per match and all own the same number of cards,
        # so all seats finish together, in the round's last match.
        return options.rounds * 10 * (2 if num_seats == 2 else 1)

    def clone(self) -> CrosswalkState:
        """A cheap independent copy: the state mutated in place is copied, the rest is shared."""
        # Shared: options, the RNG (unused after construction), the encoded public part (bytes),
        # and participants, last_match and round_scores, which are replaced on change, never
        # mutated.
        new = object.__new__(CrosswalkState)
        new.__dict__.update(self.__dict__)
        new.pawns = self.pawns.copy()
        new.stock = self.stock[:]
        new.discard = self.discard[:]
        new.played = self.played[:]
        new.hands = [h[:] for h in self.hands]
        new.discarded_by = [d[:] for d in self.discarded_by]
        new.in_discard = [d[:] for d in self.in_discard]
        new.own_left = self.own_left[:]
        return new

"""Xeri: the Greek fishing game (take the pile by matching its top card or with a jack).

The rules as implemented are described for bot authors in seeds/xeri.md. A game is a series of
rounds; each round deals the whole 52-card deck (a 4-card starting pile plus deals of 6 cards to
each player: four deals with two players, two with four) and is scored on its own. Four seats play
the partnership form: partners 0+2 against 1+3 share captured piles and score (a seat's side is
seat % 2, which with two seats is the seat itself).

Observations are built from parts cached as the game goes: the growing lists (this round's plays and
xeris, the round results) keep their JSON encoding, extended lazily with the entries added since the
last observation (so rollouts pay nothing for it), and the keys that change only between deals are
encoded once per deal; an observation's cost does not grow with the game.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import orjson
from pydantic import Field

from arena.cards import RANKS, SUITS, derive_seed, standard_deck
from arena.errors import IllegalActionError
from arena.games import new_game, register
from arena.games.base import JSON, GameOptions, GameState, GameType
from arena.games.chance import HiddenDeal, future_seed

if TYPE_CHECKING:
    from arena.games.text import TextView
    from arena.search.hooks import SearchHooks

DECK: tuple[str, ...] = tuple(standard_deck())
HAND_SIZE = 6
PILE_SIZE = 4
PLAYS_PER_ROUND = 52 - PILE_SIZE
# A tied game under tiebreak="extra_round" gets at most this many extra rounds, then is a draw.
MAX_EXTRA_ROUNDS = 4
# Every card is captured by someone in a real round, so the card points (22 or more) are always
# handed out: the leader gains at least 11 points per round, which bounds target_score games.
MIN_LEADER_GAIN_PER_ROUND = 11

_SORT_KEY = {c: RANKS.index(c[0]) * 4 + SUITS.index(c[1]) for c in DECK}
PARTNERS = [[0, 2], [1, 3]]


# Per list length, the steps of its shuffle from the end: position i and the random bits drawn to
# pick one of the positions 0..i, (i + 1).bit_length().
_SHUFFLE_STEPS = {n: [(i, (i + 1).bit_length()) for i in range(n - 1, 0, -1)] for n in range(53)}


def _shuffle(rng: random.Random, cards: list[str]) -> None:
    """Shuffle `cards` in place exactly as rng.shuffle does on CPython 3.11, in a quarter of the time."""
    # The same Fisher-Yates draws as random.shuffle (rejection-sampled getrandbits), so every seed
    # keeps its deals and stored games replay; the speed comes from skipping a call per card.
    getrandbits = rng.getrandbits
    for i, bits in _SHUFFLE_STEPS[len(cards)]:
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        cards[i], cards[j] = cards[j], cards[i]


def _card_points(ten_of_diamonds: int) -> dict[str, int]:
    points = {c: (1 if c[0] in "AKQJT" else 0) for c in DECK}
    points["2C"] = 1
    points["TD"] = ten_of_diamonds
    return points


_POINTS = {2: _card_points(2), 3: _card_points(3)}

# Encoded pieces of history entries, built once: a play is encoded by joining a few of them.
_CARD_JSON = {c: orjson.dumps(c) for c in DECK}
_PLAIN_ENTRY = [{c: b'{"seat":%d,"card":"%s","captured":null,"xeri":0}' % (s, c.encode())
                 for c in DECK} for s in range(4)]
_PLAIN_NEXT_ENTRY = [{c: b"," + e for c, e in entries.items()} for entries in _PLAIN_ENTRY]
_CAPTURE_HEAD = [{c: b'{"seat":%d,"card":"%s","captured":[' % (s, c.encode()) for c in DECK}
                 for s in range(4)]


def _appended(open_array: bytes, entries: list[bytes]) -> bytes:
    """An encoded JSON array left open (no closing bracket) with encoded `entries` appended."""
    if len(open_array) > 1:
        return b"".join((open_array, b",", b",".join(entries)))
    return open_array + b",".join(entries)


# Pieces of the encoded observation. Counts and round points stay below 1024 (52 cards, at most 26
# xeris of 20 plus the card points), so their encodings are looked up.
# Lists indexed by a seat or -1 (for "none") are looked up at seat + 1.
_NUM = [b"%d" % i for i in range(1024)]
_OBS_HEAD = [b'{"game":"xeri","seat":%d,' % s for s in range(4)]
_TO_ACT = [b'"to_act":%s,"round_points":[' % s for s in (b"null", b"0", b"1", b"2", b"3")]
_LAST_CAPTURER = [b'],"last_capturer":%s,"history":' % s
                  for s in (b"null", b"0", b"1", b"2", b"3")]
_OPPONENT_COUNT = [b',"opponent_hand_count":%d}' % k for k in range(HAND_SIZE + 1)]
_TEAM_PARTNER = [b',"team":%d,"partner":%d,"hand_counts":[' % (s & 1, (s + 2) % 4)
                 for s in range(4)]


def _history_entry_json(seat: int, card: str, taken: tuple[str, ...] | None, value: int) -> bytes:
    if taken is None:
        return _PLAIN_ENTRY[seat][card]
    cards = b",".join([_CARD_JSON[c] for c in taken])
    return b"".join((_CAPTURE_HEAD[seat][card], cards, b'],"xeri":', str(value).encode(), b"}"))


class XeriOptions(GameOptions):
    """Xeri options (spec §11); the 4-player partnership form is the game with four seats."""

    rounds: int = Field(
        2, ge=1, le=100,
        description="Number of rounds in the game (ignored when target_score is set).",
    )
    target_score: int | None = Field(
        None, ge=1, le=1000, examples=[60],
        description="When set, play whole rounds until a player's total reaches this score.",
    )
    dealer_rotation: Literal["per_round", "per_deal"] = Field(
        "per_round",
        description="per_round: the dealer changes each round; per_deal: also after every 6-card "
        "deal inside a round (the non-dealer of each deal leads it).",
    )
    jack_xeri: Literal["any_jack_20", "jack_on_jack_20", "pisti_equal_rank_only"] = Field(
        "any_jack_20",
        description="any_jack_20: a xeri made by a jack is worth 20; jack_on_jack_20: only a jack "
        "taking a lone jack is 20, a jack taking another lone card is 10; pisti_equal_rank_only: a "
        "jack taking a lone non-jack is a plain capture, jack on jack is 20.",
    )
    xeri_on_last_card: bool = Field(
        True, description="Whether a xeri made by the last card played in a round counts as a xeri."
    )
    ten_of_diamonds: Literal[2, 3] = Field(
        2, description="Points for the ten of diamonds: 2 in total, or 3 (1 as a ten + 2)."
    )
    redeal_if: Literal["top_two_or_top_jack", "any_pair_or_top_jack"] = Field(
        "top_two_or_top_jack",
        description="When the 4-card starting pile is dealt again: its top two cards share a rank "
        "or its top card is a jack; or any two of its cards share a rank or its top is a jack.",
    )
    uncaptured_leftover: Literal["nobody", "dealer"] = Field(
        "nobody",
        description="Who takes the cards left in the pile at the end of a round in which nobody "
        "captured (the last capturer takes them otherwise).",
    )
    tiebreak: Literal["draw", "extra_round"] = Field(
        "draw",
        description="Equal totals at the end: a draw, or extra rounds (at most "
        f"{MAX_EXTRA_ROUNDS}) until the totals differ, then a draw.",
    )


@register
class XeriState(GameState):
    """A game of Xeri in progress."""

    game_type = GameType(
        name="xeri",
        title="Xeri",
        seat_counts=(2, 4),
        options_model=XeriOptions,
        summary="Greek fishing game: take the pile by matching its top card or with a jack; "
        "taking a lone card is a xeri worth 10 or 20. Two players, or four in two partnerships.",
        variants=(
            {"jack_xeri": "pisti_equal_rank_only", "xeri_on_last_card": False,
             "ten_of_diamonds": 3},
            {"dealer_rotation": "per_deal", "redeal_if": "any_pair_or_top_jack",
             "uncaptured_leftover": "dealer"},
            {"target_score": 60, "tiebreak": "extra_round"},
            {"rounds": 1, "tiebreak": "extra_round", "jack_xeri": "jack_on_jack_20"},
        ),
    )

    options: XeriOptions

    def __init__(self, options: XeriOptions, num_seats: int, seed: int):
        super().__init__(options, num_seats, seed)
        # The seat on each seat's left, who plays next: play passes clockwise.
        self._left = [(s + 1) % num_seats for s in range(num_seats)]
        self._points = _POINTS[options.ten_of_diamonds]
        # The game RNG is used only here: each round shuffles with an RNG seeded from deal_seed and
        # the round number, so clone() can share the RNG instead of copying its large state.
        self.first_dealer = self.rng.randrange(num_seats)
        self.deal_seed = self.rng.getrandbits(63)
        # Scores, captured piles and their counts belong to sides: side = seat % 2, which with two
        # seats is the seat itself and with four pairs partners 0+2 and 1+3.
        self.totals = [0, 0]
        self.round_results: list[dict] = []
        # Encoded JSON arrays left open (no closing bracket), with the number of entries they hold.
        # Kept as tuples, replaced when extended: clones share them safely, and the instance stays
        # within the 30 attributes for which CPython shares the key table (faster attribute access).
        self._results_enc = (b"[", 0)
        self.extra_rounds = 0
        self.round = -1
        self.hands: list[list[str]] = [[] for _ in range(num_seats)]
        self.pile: list[str] = []
        self.stock: list[str] = []
        self.captured: list[list[str]] = [[], []]
        self._start_round()

    # -- round mechanics ------------------------------------------------------------------------
    def _start_round(self) -> None:
        self.round += 1
        # Each round's first dealer moves one seat on even under per_deal (the deals of a round
        # would otherwise give the same seat the first lead of every round).
        self.round_dealer = (self.first_dealer + self.round) % self.num_seats
        self.dealer = self.round_dealer
        self.deal_in_round = 0
        self.captured = [[], []]
        self.xeris: list[tuple[int, str, str, int]] = []
        self.ncaptured = [0, 0]
        self.card_pts = [0, 0]
        self.xeri_pts = [0, 0]
        self.last_capturer = -1
        self.history: list[tuple[int, str, tuple[str, ...] | None, int]] = []
        self.redeals: list[tuple[str, ...]] = []
        # Redeals happen right here, so one RNG per round serves them and is then dropped.
        rng = random.Random(derive_seed("xeri", self.deal_seed, self.round))
        stock = list(DECK)
        _shuffle(rng, stock)
        self.stock = stock  # the next card dealt is the last element
        self._deal_hands()
        pile = [stock.pop() for _ in range(PILE_SIZE)]
        while self._must_redeal(pile):
            self.redeals.append(tuple(pile))
            stock.extend(pile)
            _shuffle(rng, stock)
            pile = [stock.pop() for _ in range(PILE_SIZE)]
        self.pile = pile
        self._reset_round_json()

    def _reset_round_json(self) -> None:
        """Forget the round's encodings (history, xeris, the per-deal keys): they start again."""
        # This round's history and xeris, encoded as open arrays, and how many entries of each.
        self._round_enc = (b"[", 0, b"[", 0)
        self._deal_json = b""

    def _must_redeal(self, pile: list[str]) -> bool:
        top = pile[-1][0]
        if top == "J":
            return True
        if self.options.redeal_if == "top_two_or_top_jack":
            return pile[-2][0] == top
        return len({c[0] for c in pile}) < len(pile)

    def _deal_hands(self) -> None:
        """Six cards to each seat from the dealer's left round to the dealer, who deals last; the
        seat on the dealer's left leads."""
        stock = self.stock
        n = self.num_seats
        dealer = self.dealer
        for k in range(1, n + 1):
            hand = stock[-HAND_SIZE:]
            del stock[-HAND_SIZE:]
            hand.sort(key=_SORT_KEY.__getitem__)
            self.hands[(dealer + k) % n] = hand
        self.current = (dealer + 1) % n
        self._deal_json = b""  # the dealer, deal and stock count in observations change

    def _play(self, seat: int, card: str) -> None:
        hands = self.hands
        hands[seat].remove(card)
        pile = self.pile
        n = len(pile)
        rank = card[0]
        if n and (rank == "J" or pile[-1][0] == rank):
            side = seat & 1
            value = 0
            if n == 1 and (self.options.xeri_on_last_card or self.stock or any(hands)):
                value = self._xeri_value(pile[0], card)
            taken = (*pile, card)
            if value:
                self.xeris.append((seat, pile[0], card, value))
                self.xeri_pts[side] += value
            else:
                self.captured[side].extend(taken)
            points = self._points
            self.card_pts[side] += sum([points[c] for c in taken])
            self.ncaptured[side] += n + 1
            self.last_capturer = seat
            self.pile = []
            self.history.append((seat, card, taken, value))
        else:
            pile.append(card)
            self.history.append((seat, card, None, 0))
        following = self._left[seat]
        if hands[following]:
            self.current = following
        elif self.stock:
            self.deal_in_round += 1
            if self.options.dealer_rotation == "per_deal":
                self.dealer = (self.dealer + 1) % self.num_seats
            self._deal_hands()
        else:
            self._end_round()

    def _xeri_value(self, lone: str, card: str) -> int:
        mode = self.options.jack_xeri
        if card[0] != "J":
            return 10
        if mode == "any_jack_20" or lone[0] == "J":
            return 20
        return 10 if mode == "jack_on_jack_20" else 0

    def _end_round(self) -> None:
        leftover = len(self.pile)
        taker = self.last_capturer
        if taker < 0 and self.options.uncaptured_leftover == "dealer":
            taker = self.dealer
        if leftover and taker >= 0:
            side = taker & 1
            self.captured[side].extend(self.pile)
            self.card_pts[side] += sum(self._points[c] for c in self.pile)
            self.ncaptured[side] += leftover
            self.pile = []
        n0, n1 = self.ncaptured
        most = 0 if n0 > n1 else 1 if n1 > n0 else None
        points = [self.card_pts[s] + self.xeri_pts[s] + (3 if most == s else 0) for s in (0, 1)]
        self.totals = [self.totals[0] + points[0], self.totals[1] + points[1]]
        # A new list rather than append: clones share round_results.
        self.round_results = [*self.round_results, {
            "round": self.round,
            "dealer": self.round_dealer,
            "extra_round": self.extra_rounds > 0,
            "captured_counts": list(self.ncaptured),
            "most_cards": most,
            "card_points": list(self.card_pts),
            "xeri_counts": [sum(1 for x in self.xeris if x[0] & 1 == s) for s in (0, 1)],
            "xeri_points": list(self.xeri_pts),
            "leftover": {"seat": taker if leftover and taker >= 0 else None, "count": leftover},
            "points": points,
            "totals": list(self.totals),
        }]
        self.card_pts = [0, 0]
        self.xeri_pts = [0, 0]
        self._deal_json = b""  # the scores and round results in observations change
        over = self._regular_end_reached()
        if (over and self.totals[0] == self.totals[1] and self.options.tiebreak == "extra_round"
                and self.extra_rounds < MAX_EXTRA_ROUNDS):
            self.extra_rounds += 1
            over = False
        if over:
            self.current = -1
        else:
            self._start_round()

    def _regular_end_reached(self) -> bool:
        """True when the rounds (or the target score) of the options are done, ties aside."""
        opts = self.options
        if opts.target_score is None:
            return self.round + 1 >= opts.rounds
        return max(self.totals) >= opts.target_score

    # -- GameState hooks ------------------------------------------------------------------------
    @classmethod
    def max_steps(cls, options: XeriOptions, num_seats: int) -> int:
        """48 plays per round times the most rounds the options allow."""
        if options.target_score is None:
            rounds = options.rounds
        else:
            rounds = math.ceil(options.target_score / MIN_LEADER_GAIN_PER_ROUND)
        if options.tiebreak == "extra_round":
            rounds += MAX_EXTRA_ROUNDS
        return PLAYS_PER_ROUND * rounds

    def to_act(self) -> list[int]:
        """The seat to play, or [] when the game is over."""
        return [] if self.current < 0 else [self.current]

    def teams(self) -> list[list[int]]:
        """Partners 0+2 and 1+3 in the partnership form, otherwise each seat alone."""
        if self.num_seats == 4:
            return [list(t) for t in PARTNERS]
        return [[0], [1]]

    def legal_actions(self, seat: int) -> list[JSON]:
        """One play action per card of the hand (hand order) for the seat to act."""
        if seat != self.current:
            return []
        return [{"type": "play", "card": c} for c in self.hands[seat]]

    def apply(self, actions: Mapping[int, JSON]) -> None:
        """Validate and apply the acting seat's play; an illegal one raises and changes nothing."""
        seat = self.current
        if seat < 0:
            raise IllegalActionError("the game is over: no seat may act")
        if len(actions) != 1 or seat not in actions:
            extra = sorted(s for s in actions if s != seat)
            raise IllegalActionError(
                f"seats [{seat}] must act; missing {[] if seat in actions else [seat]}, "
                f"not to act {extra}",
                seat=extra[0] if extra else seat,
            )
        action = actions[seat]
        # Same test as `action in legal_actions(seat)` without building the list.
        if not ((type(action) is dict or isinstance(action, Mapping)) and len(action) == 2
                and action.get("type") == "play" and action.get("card") in self.hands[seat]):
            raise IllegalActionError(
                f"illegal action for seat {seat}: {action!r}", seat=seat, action=action
            )
        self._play(seat, action["card"])

    def apply_validated(self, actions: Mapping[int, JSON]) -> None:
        """Play the acting seat's already-validated card."""
        seat = self.current
        self._play(seat, actions[seat]["card"])

    _apply = apply_validated  # the base class's hook, the same function: no extra call

    # -- observations ---------------------------------------------------------------------------
    def observation(self, seat: int) -> dict:
        """What `seat` sees: its hand, the table, this round's plays and past round results."""
        # Every list and entry must be the caller's own (in-process bots may change them), and
        # building them afresh costs less than decoding the cached encoding.
        return self.observation_from_scratch(seat)

    def observation_json(self, seat: int) -> bytes:
        """observation(seat) as compact JSON, joined from cached encodings of its parts."""
        history = self.history
        encoded, done, xeri_json, xeri_done = self._round_enc
        if done != len(history):
            s, c, taken, value = history[done]
            if taken is None and done + 1 == len(history):
                # The usual case: one play since the last observation, which took nothing.
                encoded += (_PLAIN_NEXT_ENTRY if done else _PLAIN_ENTRY)[s][c]
            else:
                encoded = _appended(encoded, [_history_entry_json(*h) for h in history[done:]])
                xeris = self.xeris
                if xeri_done != len(xeris):
                    xeri_json = _appended(xeri_json, [
                        orjson.dumps({"seat": s, "cards": [a, b], "value": v})
                        for s, a, b, v in xeris[xeri_done:]])
                    xeri_done = len(xeris)
            self._round_enc = (encoded, len(history), xeri_json, xeri_done)
        deal = self._deal_json or self._encode_deal()
        card_pts = self.card_pts
        xeri_pts = self.xeri_pts
        ncaptured = self.ncaptured
        hands = self.hands
        return b"".join((
            _OBS_HEAD[seat], deal, _TO_ACT[self.current + 1],
            _NUM[card_pts[0] + xeri_pts[0]], b",", _NUM[card_pts[1] + xeri_pts[1]],
            b'],"pile":', orjson.dumps(self.pile),
            b',"captured_counts":[', _NUM[ncaptured[0]], b",", _NUM[ncaptured[1]],
            b'],"xeri":', xeri_json, _LAST_CAPTURER[self.last_capturer + 1],
            encoded, b'],"my_hand":', orjson.dumps(hands[seat]),
            _OPPONENT_COUNT[len(hands[1 - seat])] if self.num_seats == 2 else b"".join((
                b',"opponent_hand_count":', _NUM[len(hands[self._left[seat]])],
                _TEAM_PARTNER[seat], b",".join([_NUM[len(h)] for h in hands]), b"]}")),
        ))

    def _encode_deal(self) -> bytes:
        """The encoded observation keys that change only between deals (cached till the next)."""
        results = self.round_results
        encoded, done = self._results_enc
        if done < len(results):
            encoded = _appended(encoded, [orjson.dumps(r) for r in results[done:]])
            self._results_enc = (encoded, len(results))
        fixed = orjson.dumps({
            "round": self.round,
            "extra_round": self.extra_rounds > 0,
            "dealer": self.dealer,
            "round_dealer": self.round_dealer,
            "deal_in_round": self.deal_in_round,
            "scores": self.totals,
            "stock_count": len(self.stock),
            "redeals": self.redeals,
        })
        self._deal_json = b"".join(
            (fixed[1:-1], b',"round_results":', encoded, b"],"))
        return self._deal_json

    def observation_from_scratch(self, seat: int) -> dict:
        """observation(seat) built from the state alone, no cached encoding used."""
        obs = {"game": "xeri", "seat": seat, **self._public(), "my_hand": list(self.hands[seat]),
               # With four seats: the opponent on the left, who answers this seat's play.
               "opponent_hand_count": len(self.hands[self._left[seat]])}
        if self.num_seats == 4:
            obs["team"] = seat & 1
            obs["partner"] = (seat + 2) % 4
            obs["hand_counts"] = [len(h) for h in self.hands]
        return obs

    def _public(self) -> dict:
        return {
            "round": self.round,
            # Extra rounds only ever come last, so once one has started every later round is one.
            "extra_round": self.extra_rounds > 0,
            "dealer": self.dealer,
            "round_dealer": self.round_dealer,
            "deal_in_round": self.deal_in_round,
            "to_act": None if self.current < 0 else self.current,
            "scores": list(self.totals),
            "round_points": [self.card_pts[s] + self.xeri_pts[s] for s in (0, 1)],
            "pile": list(self.pile),
            "stock_count": len(self.stock),
            "captured_counts": list(self.ncaptured),
            "xeri": [{"seat": s, "cards": [a, b], "value": v} for s, a, b, v in self.xeris],
            "last_capturer": None if self.last_capturer < 0 else self.last_capturer,
            "redeals": [list(p) for p in self.redeals],
            "history": [
                {"seat": s, "card": c, "captured": None if t is None else list(t), "xeri": v}
                for s, c, t, v in self.history
            ],
            "round_results": [_copy_result(r) for r in self.round_results],
        }

    def full_view(self) -> dict:
        """Everything: all hands, the stock in dealing order, captured piles and dealing facts."""
        return {
            "game": "xeri",
            "options": self.options.model_dump(),
            **self._public(),
            "first_dealer": self.first_dealer,
            "extra_rounds": self.extra_rounds,
            "hands": [list(h) for h in self.hands],
            "stock": self.stock[::-1],
            "captured": [list(self.captured[0]), list(self.captured[1])],
        }

    def scores(self) -> list[float]:
        """Totals of finished rounds plus the card and xeri points of the round in progress (in
        the partnership form each seat has its side's score)."""
        side_scores = [self.totals[s] + self.card_pts[s] + self.xeri_pts[s] for s in (0, 1)]
        return [side_scores[s & 1] for s in range(self.num_seats)]

    def card_zones(self) -> dict[str, list[str]]:
        """Hands, pile, stock, each side's plain captured pile and each side's xeri pile."""
        zones = {f"hand_{s}": list(h) for s, h in enumerate(self.hands)}
        zones.update({
            "pile": list(self.pile),
            "stock": list(self.stock),
            "captured_0": list(self.captured[0]),
            "captured_1": list(self.captured[1]),
            "xeri_0": [],
            "xeri_1": [],
        })
        for s, a, b, _ in self.xeris:
            zones[f"xeri_{s & 1}"] += [a, b]
        return zones

    def hidden_from(self, seat: int) -> set[str]:
        """The other hands (a partner's too) and the stock, except cards this seat saw in a
        rejected pile.

        These are the cards an observation must not show; the cards whose place the seat cannot
        know (rejected pile cards included) are `unknown_deal(seat).cards`.
        """
        hidden = set(self.stock)
        for other, hand in enumerate(self.hands):
            if other != seat:
                hidden.update(hand)
        for pile in self.redeals:
            hidden.difference_update(pile)
        return hidden

    def deck(self) -> list[str]:
        """The 52 standard cards."""
        return list(DECK)

    # -- determinization ------------------------------------------------------------------------
    def unknown_deal(self, seat: int) -> HiddenDeal:
        """The cards `seat` has not seen this round, in the other hands and the stock.

        A card of a rejected starting pile went back into the stock after the hands were dealt, so
        during the round's first deal it cannot be in a hand.
        """
        known = set(self.hands[seat])
        known.update(self.pile)
        for pile in self.captured:
            known.update(pile)
        for _, a, b, _ in self.xeris:
            known.add(a)
            known.add(b)
        unknown = [c for c in DECK if c not in known]
        deal = HiddenDeal(unknown)
        in_hands = unknown
        if self.deal_in_round == 0 and self.redeals:
            rejected = {c for pile in self.redeals for c in pile}
            in_hands = [c for c in unknown if c not in rejected]
        for other in range(self.num_seats):
            if other != seat:
                deal.add(f"hand_{other}", len(self.hands[other]), in_hands)
        deal.add("stock", len(self.stock))
        return deal

    def _place_unknown(self, seat: int, placed: dict[str, list[str]]) -> None:
        """Re-dealt hands (kept sorted) and stock (in the sampled order)."""
        for other in range(self.num_seats):
            if other != seat:
                self.hands[other] = sorted(placed.get(f"hand_{other}", ()),
                                           key=_SORT_KEY.__getitem__)
        self.stock = placed.get("stock", [])

    def _redraw_future(self, rng: random.Random) -> None:
        """New rounds shuffle from a fresh deal seed."""
        self.deal_seed = future_seed(rng)

    def rollout(self, rng: random.Random) -> None:
        """Random plays to the end, without building action lists."""
        rand = rng.random
        hands = self.hands
        while self.current >= 0:
            hand = hands[self.current]
            self._play(self.current, hand[int(rand() * len(hand))])

    def clone(self) -> XeriState:
        """A cheap independent copy: the state mutated in place is copied, the rest is shared."""
        # Shared: options, the RNG (unused after construction), totals and round_results (replaced
        # on change, never mutated), redeals (only built inside _start_round), the tuples and the
        # cached encodings (bytes, replaced when extended; each copy extends its own).
        new = object.__new__(XeriState)
        new.__dict__.update(self.__dict__)
        new.hands = [h[:] for h in self.hands]
        new.pile = self.pile[:]
        new.stock = self.stock[:]
        captured = self.captured
        new.captured = [captured[0][:], captured[1][:]]
        new.xeris = self.xeris[:]
        new.ncaptured = self.ncaptured[:]
        new.card_pts = self.card_pts[:]
        new.xeri_pts = self.xeri_pts[:]
        new.history = self.history[:]
        return new

    @classmethod
    def text_view(cls) -> TextView:
        """How a terminal draws Xeri (arena.games.xeri_text)."""
        from arena.games.xeri_text import TEXT

        return TEXT

    @classmethod
    def search_hooks(cls) -> SearchHooks:
        """Xeri's playout profiles and shipped search bots (arena.games.xeri_search)."""
        # Imported on a search's first call: playing the game never needs its search knowledge.
        from arena.games.xeri_search import SEARCH

        return SEARCH

    # -- positions ------------------------------------------------------------------------------
    @classmethod
    def from_observation(cls, observation: dict, options: Mapping) -> XeriState:
        """A state that `observation` describes exactly, given the game's `options` (as the
        game_start message gives them); the cards its seat cannot place are put anywhere
        consistent (for search bots: determinize it before looking at hidden cards)."""
        obs = observation
        seat = obs["seat"]
        n = len(obs["hand_counts"]) if "hand_counts" in obs else 2
        game = new_game("xeri", options, n, 0)
        game.round = obs["round"]
        game.dealer = obs["dealer"]
        game.round_dealer = obs["round_dealer"]
        game.first_dealer = (game.round_dealer - game.round) % n
        game.deal_in_round = obs["deal_in_round"]
        game.current = -1 if obs["to_act"] is None else obs["to_act"]
        game.totals = list(obs["scores"])
        game.round_results = [_copy_result(r) for r in obs["round_results"]]
        game.extra_rounds = sum(1 for r in obs["round_results"] if r["extra_round"]) + (
            1 if obs["extra_round"] and game.current >= 0 else 0)
        game.pile = list(obs["pile"])
        game.ncaptured = list(obs["captured_counts"])
        game.last_capturer = -1 if obs["last_capturer"] is None else obs["last_capturer"]
        game.redeals = [tuple(p) for p in obs["redeals"]]
        game.history = [(h["seat"], h["card"], None if h["captured"] is None
                         else tuple(h["captured"]), h["xeri"]) for h in obs["history"]]
        game.xeris = [(x["seat"], x["cards"][0], x["cards"][1], x["value"]) for x in obs["xeri"]]
        game.captured = [[], []]
        for s, _, taken, value in game.history:
            if taken is not None and not value:
                game.captured[s & 1].extend(taken)
        game.xeri_pts = [sum(v for s2, _, _, v in game.xeris if s2 & 1 == s) for s in (0, 1)]
        game.card_pts = [obs["round_points"][s] - game.xeri_pts[s] for s in (0, 1)]
        counts = obs["hand_counts"] if n == 4 else [
            len(obs["my_hand"]) if s == seat else obs["opponent_hand_count"] for s in (0, 1)]
        hands: list[list[str]] = [[] for _ in range(n)]
        hands[seat] = list(obs["my_hand"])
        game.hands = hands
        # Any consistent placement will do: determinize re-deals it. Rejected pile cards go last,
        # into the stock, since during a round's first deal they cannot be in a hand.
        known = set(hands[seat]) | set(game.pile)
        for s in (0, 1):
            known.update(game.captured[s])
        for _, x1, x2, _ in game.xeris:
            known.update((x1, x2))
        rejected = {c for p in game.redeals for c in p}
        unplaced = sorted((c for c in DECK if c not in known), key=lambda c: c in rejected)
        for other in range(n):
            if other != seat:
                hands[other] = sorted(unplaced[:counts[other]], key=_SORT_KEY.__getitem__)
                del unplaced[:counts[other]]
        game.stock = unplaced
        if len(game.stock) != obs["stock_count"]:
            raise ValueError("xeri: the observation does not account for every card")
        game._reset_round_json()
        game._results_enc = (b"[", 0)
        return game

    @classmethod
    def from_position(
        cls,
        options: XeriOptions | Mapping | None = None,
        *,
        hands: Sequence[Sequence[str]],
        pile: Sequence[str],
        stock: Sequence[str] = (),
        captured: Sequence[Sequence[str]] = ((), ()),
        dealer: int = 1,
        to_act: int | None = None,
        last_capturer: int | None = None,
        round_no: int = 0,
        totals: Sequence[int] = (0, 0),
        seed: int = 0,
    ) -> XeriState:
        """A two-player game set to a chosen position inside a round (for tests, analysis, search).

        Every one of the 52 cards must be placed exactly once among `hands`, `pile` (bottom
        first), `stock` (next card dealt first; a multiple of 12 cards) and `captured` (plain
        captured piles, no xeris). `dealer` deals the current deal; the seat to act follows from
        the hand sizes (the seat holding more cards, else the non-dealer) and `to_act`, if given,
        must agree. Later chance (new rounds) uses `seed`.
        """
        game = new_game("xeri", options, 2, seed)
        # The seed's own deal may have rejected starting piles; they are not part of this position.
        game.redeals = []
        placed = [*hands[0], *hands[1], *pile, *stock, *captured[0], *captured[1]]
        if sorted(placed) != sorted(DECK):
            missing = sorted(set(DECK) - set(placed))
            extra = sorted(c for c in set(placed) if placed.count(c) > 1 or c not in DECK)
            raise ValueError(f"every card must be placed once: missing {missing}, extra {extra}")
        sizes = [len(hands[0]), len(hands[1])]
        if len(stock) % (2 * HAND_SIZE) or max(sizes) > HAND_SIZE or abs(sizes[0] - sizes[1]) > 1:
            raise ValueError(f"impossible deal: hands of {sizes} cards, stock of {len(stock)}")
        # The non-dealer leads each deal and turns alternate, so the hand sizes say who is to act.
        turn = 1 - dealer if sizes[0] == sizes[1] else sizes.index(max(sizes))
        if to_act is None:
            to_act = turn
        if to_act != turn or not hands[to_act]:
            raise ValueError(
                f"seat {to_act} cannot be to act with hands of {sizes} cards, dealer {dealer}"
            )
        game.round = round_no
        game.deal_in_round = 3 - len(stock) // (2 * HAND_SIZE)
        game.dealer = dealer
        per_deal = game.options.dealer_rotation == "per_deal"
        game.round_dealer = dealer ^ (game.deal_in_round & 1) if per_deal else dealer
        game.first_dealer = game.round_dealer ^ (round_no & 1)
        game.hands = [sorted(hands[0], key=_SORT_KEY.__getitem__),
                      sorted(hands[1], key=_SORT_KEY.__getitem__)]
        game.pile = list(pile)
        game.stock = list(stock)[::-1]
        game.captured = [list(captured[0]), list(captured[1])]
        game.ncaptured = [len(captured[0]), len(captured[1])]
        game.card_pts = [sum(game._points[c] for c in captured[s]) for s in (0, 1)]
        game.last_capturer = -1 if last_capturer is None else last_capturer
        game.totals = list(totals)
        game.current = to_act
        game._reset_round_json()
        return game


def _copy_result(result: dict) -> dict:
    out = dict(result)
    for key in ("captured_counts", "card_points", "xeri_counts", "xeri_points", "points", "totals"):
        out[key] = list(result[key])
    out["leftover"] = dict(result["leftover"])
    return out

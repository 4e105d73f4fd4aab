"""Crossfire: two players push blind cards beside a neutral card; suits move cards, the highest scores.

Rules as implemented: seeds/crossfire.md (for bot authors).
Each round both seats play at once (one simultaneous step), so one `apply` call is one round.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

import orjson
from pydantic import Field

from arena.cards import derive_seed, standard_deck
from arena.errors import IllegalActionError
from arena.games import register
from arena.games.base import JSON, GameOptions, GameState, GameType
from arena.games.chance import HiddenDeal, future_seed

if TYPE_CHECKING:
    from arena.games.text import TextView
    from arena.search.hooks import SearchHooks

# Comparison order: the ace is high in Crossfire.
RANK_ORDER = {r: v for v, r in enumerate("23456789TJQKA", start=2)}

# Sudden death stops after this many rounds without a point and the game stays a draw. A round
# scores nobody with probability ~0.39, so the cap is hit with probability ~0.39**100 < 1e-40.
SUDDEN_DEATH_MAX_ROUNDS = 100

ROUNDS_PER_DEAL = 5
# Rows dealt in each regular deal, per game length; the sizes sum to the rounds of a game.
DEAL_SIZES = {
    "three_deals": (5, 5, 5),
    "partial_final_deal": (5, 5, 5, 2),
    "reshuffle_to_25_rounds": (5, 5, 5, 5, 5),
}

MOVEMENTS = ("none", "swap_players", "swap_dealer_neutral", "swap_neutral_opponent", "slide")

# Shared action objects are only compared against, never handed out (legal_actions builds fresh ones).
_ACTIONS = [{"type": "play_slot", "slot": k} for k in range(ROUNDS_PER_DEAL)]
_SLOT_INDEX = {k: k for k in range(ROUNDS_PER_DEAL)}


def _encode_tail(encoded: bytes, items: list, done: int) -> bytes:
    """`encoded` (the comma-joined JSON of items[:done]) extended with the JSON of the rest."""
    tail = b",".join([orjson.dumps(item) for item in items[done:]])
    return encoded + b"," + tail if encoded else tail


def resolve_round(
    dealer_card: str, neutral: str, opponent_card: str, tie_rule: str = "position"
) -> tuple[str, tuple[str, str, str], str | None]:
    """Movement, layout (dealer position, middle, opponent position) and scorer of one round.

    The scorer is "dealer", "opponent" or None. Under tie_rule "played_cards" a round in which the
    two played cards share a rank scores nobody, besides the position tie that stops any round.
    """
    d, n, o = dealer_card[1], neutral[1], opponent_card[1]
    if d == n:
        if n == o:
            movement, layout = "slide", (opponent_card, dealer_card, neutral)
        else:
            movement, layout = "swap_dealer_neutral", (neutral, dealer_card, opponent_card)
    elif d == o:
        movement, layout = "swap_players", (opponent_card, neutral, dealer_card)
    elif n == o:
        movement, layout = "swap_neutral_opponent", (dealer_card, opponent_card, neutral)
    else:
        movement, layout = "none", (dealer_card, neutral, opponent_card)
    left = RANK_ORDER[layout[0][0]]
    middle = RANK_ORDER[layout[1][0]]
    right = RANK_ORDER[layout[2][0]]
    if (left <= middle and right <= middle) or left == right:
        return movement, layout, None
    if tie_rule == "played_cards" and dealer_card[0] == opponent_card[0]:
        return movement, layout, None
    return movement, layout, "dealer" if left > right else "opponent"


class CrossfireOptions(GameOptions):
    """The options of Crossfire (rules §13)."""

    game_length: Literal["three_deals", "partial_final_deal", "reshuffle_to_25_rounds"] = Field(
        "three_deals",
        description="three_deals: 15 rounds, 7 cards stay unused; partial_final_deal: a 4th deal of "
        "2 cards each, 17 rounds; reshuffle_to_25_rounds: 5 deals, the discards are reshuffled "
        "under the stock when it runs short",
    )
    dealer_rotation: Literal["per_deal", "per_game"] = Field(
        "per_deal",
        description="per_deal: the dealer changes after every deal; per_game: the first dealer "
        "deals the whole game",
    )
    tie_rule: Literal["position", "played_cards"] = Field(
        "position",
        description="position: nobody scores when the two position cards tie for highest; "
        "played_cards: nobody scores either when the two played cards share a rank",
    )
    tiebreak: Literal["draw", "sudden_death"] = Field(
        "draw",
        description="draw: equal totals draw; sudden_death: reshuffle all 52 cards and play more "
        f"rounds until someone scores (at most {SUDDEN_DEATH_MAX_ROUNDS}, then a draw)",
    )
    open_rows: bool = Field(
        False,
        description="house rule: each player may look at their own face-down row (the source game "
        "is played blind)",
    )


@register
class CrossfireState(GameState):
    """A game of Crossfire in progress."""

    game_type = GameType(
        name="crossfire",
        title="Crossfire",
        seat_counts=(2,),
        options_model=CrossfireOptions,
        simultaneous=True,
        summary="Both players push a face-down card beside a neutral card; same suits move cards, "
        "the highest card in a player's position scores a point.",
        variants=(
            {"open_rows": True, "game_length": "reshuffle_to_25_rounds", "tiebreak": "sudden_death"},
            {
                "game_length": "partial_final_deal",
                "dealer_rotation": "per_game",
                "tie_rule": "played_cards",
                "tiebreak": "sudden_death",
            },
            {"open_rows": True, "tie_rule": "played_cards", "dealer_rotation": "per_game"},
        ),
        # Open rows show a player its own face-down row: new fields in its observation.
        protocol_options=("open_rows",),
    )

    options: CrossfireOptions

    def __init__(self, options: CrossfireOptions, num_seats: int, seed: int):
        super().__init__(options, num_seats, seed)
        self._sizes = DEAL_SIZES[options.game_length]
        self._tie_rule = options.tie_rule
        self.first_dealer = self.rng.randrange(2)
        self.dealer = self.first_dealer
        deck = standard_deck()
        self.rng.shuffle(deck)
        self.stock = deck  # the top of the stock is the end of the list
        # Later reshuffles draw from generators seeded off self.rng here, so that clone() need not
        # copy the rng state (the costliest part of a copy): self.rng is not used after this.
        self._reshuffle_seed = self.rng.getrandbits(63)
        self._reshuffles = 0
        self.rows: list[list[str | None]] = [[], []]
        # Each seat's face-down slot numbers, ascending: what legal_actions and the observation
        # list, kept beside the rows so that no move scans them.
        self._slots: list[list[int]] = [[], []]
        self.neutral: str | None = None
        self.discards: list[str] = []
        self.points = [0, 0]
        self.deal_index = 0  # 1-based once dealing starts
        self.round_in_deal = 0
        self.round = 0
        self.sudden_death = False
        self.sudden_death_rounds = 0
        self.over = False
        # One observation-ready entry per round played, as the observation shows it; entries are
        # never changed once appended, so clones share them and their encodings.
        self.history: list[dict] = []
        # The comma-joined JSON of history[:_history_done] and discards[:_discards_done]: encoded
        # when an observation is first encoded after they grow (never during rollouts), each entry
        # once. Bytes are immutable, so clones share them.
        self._history_json = b""
        self._history_done = 0
        self._discards_json = b""
        self._discards_done = 0
        self._deal(self._sizes[0])

    # -- the course of a game -------------------------------------------------------------------
    def _deal(self, size: int) -> None:
        """Start the next deal: rows of `size` cards each, opponent first, then the neutral card."""
        if len(self.stock) < 3 * size:
            # Only reshuffle_to_25_rounds and sudden death get here: the discards are shuffled
            # together with the rest of the stock. Putting them under it instead would deal the
            # never-seen leftovers into known slots and end the blindness of the slot choice.
            pile = self.discards + self.stock
            self._shuffle(pile)
            self.stock = pile
            self._set_discards([])
        stock = self.stock
        dealer = self.dealer
        opp_row: list[str | None] = []
        dealer_row: list[str | None] = []
        for _ in range(size):
            opp_row.append(stock.pop())
            dealer_row.append(stock.pop())
        self.rows = [dealer_row, opp_row] if dealer == 0 else [opp_row, dealer_row]
        self._slots = [list(range(size)), list(range(size))]
        self.neutral = stock.pop()
        self.deal_index += 1
        self.round_in_deal = 1
        self.round += 1

    def _set_discards(self, cards: list[str]) -> None:
        """Replace the discard pile (its encoding starts over)."""
        self.discards = cards
        self._discards_json = b""
        self._discards_done = 0

    def _shuffle(self, cards: list[str]) -> None:
        """Shuffle in place with the next reshuffle generator (derived from the game's rng)."""
        random.Random(derive_seed(self._reshuffle_seed, self._reshuffles)).shuffle(cards)
        self._reshuffles += 1

    def _finish_deal(self) -> None:
        """After the last round of a deal: next deal, sudden death, or the end of the game."""
        if self.options.dealer_rotation == "per_deal":
            self.dealer ^= 1
        if self.sudden_death:
            self._deal(ROUNDS_PER_DEAL)
            return
        if self.deal_index < len(self._sizes):
            self._deal(self._sizes[self.deal_index])
        elif self.points[0] == self.points[1] and self.options.tiebreak == "sudden_death":
            self.sudden_death = True
            deck = self.stock + self.discards
            self._shuffle(deck)
            self.stock = deck
            self._set_discards([])
            self._deal(ROUNDS_PER_DEAL)
        else:
            # Any cards left in the stock stay there, never revealed.
            self.over = True

    def _play(self, slots: tuple[int, int]) -> None:
        """Play one round: both seats' chosen slots, movement, comparison, discard."""
        dealer = self.dealer
        rows = self.rows
        dealer_card = rows[dealer][slots[dealer]]
        opponent_card = rows[dealer ^ 1][slots[dealer ^ 1]]
        rows[dealer][slots[dealer]] = None
        rows[dealer ^ 1][slots[dealer ^ 1]] = None
        self._slots[0].remove(slots[0])
        self._slots[1].remove(slots[1])
        neutral = self.neutral
        movement, layout, scorer = resolve_round(dealer_card, neutral, opponent_card, self._tie_rule)
        seat = None if scorer is None else (dealer if scorer == "dealer" else dealer ^ 1)
        if seat is not None:
            self.points[seat] += 1
        self.history.append(
            {
                "round": self.round,
                "dealer": dealer,
                "dealer_card": dealer_card,
                "neutral": neutral,
                "opponent_card": opponent_card,
                "movement": movement,
                "layout": {"dealer_pos": layout[0], "middle": layout[1], "opponent_pos": layout[2]},
                "scorer": seat,
            }
        )
        self.discards.extend((dealer_card, neutral, opponent_card))
        self.neutral = None
        if self.sudden_death:
            self.sudden_death_rounds += 1
            if seat is not None:
                self.over = True
                return
            if self.sudden_death_rounds >= SUDDEN_DEATH_MAX_ROUNDS:
                self.over = True
                return
        if self.round_in_deal < len(rows[0]):
            self.neutral = self.stock.pop()
            self.round_in_deal += 1
            self.round += 1
        else:
            self._finish_deal()

    # -- GameState hooks ------------------------------------------------------------------------
    @classmethod
    def max_steps(cls, options: CrossfireOptions, num_seats: int) -> int:
        """One step per round: the regular rounds plus the sudden-death cap when enabled."""
        regular = sum(DEAL_SIZES[options.game_length])
        return regular + (SUDDEN_DEATH_MAX_ROUNDS if options.tiebreak == "sudden_death" else 0)

    def to_act(self) -> list[int]:
        """Both seats choose a slot at once every round; nobody once the game is over."""
        return [] if self.over else [0, 1]

    def legal_actions(self, seat: int) -> list[JSON]:
        """One play_slot action per face-down slot the seat still has, by slot index."""
        if self.over or seat not in (0, 1):
            return []
        return [{"type": "play_slot", "slot": k} for k in self._slots[seat]]

    def _slot_of(self, seat: int, action: JSON) -> int:
        """The slot an action plays, or IllegalActionError (same test as `action in legal_actions`)."""
        row = self.rows[seat]
        try:
            # A dict lookup matches slot values by ==, as the list comparison does (True, 1.0).
            k = _SLOT_INDEX.get(action["slot"])
        except (KeyError, TypeError):
            k = None
        if k is not None and k < len(row) and row[k] is not None and action == _ACTIONS[k]:
            return k
        raise IllegalActionError(f"illegal action for seat {seat}: {action!r}", seat=seat, action=action)

    def apply(self, actions: Mapping[int, JSON]) -> None:
        """Validate both seats' actions, then play the round; an illegal action changes nothing."""
        if self.over:
            raise IllegalActionError("the game is over: no seat may act")
        if len(actions) != 2 or 0 not in actions or 1 not in actions:
            missing = sorted({0, 1} - set(actions))
            extra = sorted(set(actions) - {0, 1})
            raise IllegalActionError(
                f"seats [0, 1] must act; missing {missing}, not to act {extra}",
                seat=(extra or missing)[0],
            )
        self._play((self._slot_of(0, actions[0]), self._slot_of(1, actions[1])))

    def apply_validated(self, actions: Mapping[int, JSON]) -> None:
        """Play the round for already-validated actions."""
        self._play((self._slot_of(0, actions[0]), self._slot_of(1, actions[1])))

    _apply = apply_validated  # the base class's hook, the same function: no extra call

    def scores(self) -> list[float]:
        """Points won so far by each seat (sudden-death points included)."""
        return list(self.points)

    def deck(self) -> list[str]:
        """The 52 standard cards."""
        return standard_deck()

    def card_zones(self) -> dict[str, list[str]]:
        """Both rows, the neutral card, the stock (unused leftovers stay there) and the discards."""
        return {
            "row_0": [c for c in self.rows[0] if c],
            "row_1": [c for c in self.rows[1] if c],
            "neutral": [self.neutral] if self.neutral else [],
            "stock": list(self.stock),
            "discards": list(self.discards),
        }

    def _seen(self) -> set[str]:
        """Every card that has been face up in a completed round (reshuffles bring some back)."""
        seen: set[str] = set()
        for entry in self.history:
            seen.update((entry["dealer_card"], entry["neutral"], entry["opponent_card"]))
        return seen

    def hidden_from(self, seat: int) -> set[str]:
        """Stock and face-down rows (the own row too unless open_rows), minus cards seen before."""
        hidden = set(self.stock)
        hidden.update(c for c in self.rows[seat ^ 1] if c)
        if not self.options.open_rows:
            hidden.update(c for c in self.rows[seat] if c)
        return hidden - self._seen()

    # -- determinization ------------------------------------------------------------------------
    def unknown_deal(self, seat: int) -> HiddenDeal:
        """The face-down rows (the own row too unless open_rows) and the stock.

        Every card not in the discard pile, on the neutral or in an open own row is equally likely
        in any of these places: since the last (re)shuffle nothing else about them was shown.
        """
        known = set(self.discards)
        if self.neutral:
            known.add(self.neutral)
        if self.options.open_rows:
            known.update(c for c in self.rows[seat] if c)
        deal = HiddenDeal([c for c in standard_deck() if c not in known])
        for s in (0, 1):
            if s != seat or not self.options.open_rows:
                deal.add(f"row_{s}", sum(1 for c in self.rows[s] if c))
        deal.add("stock", len(self.stock))
        return deal

    def _place_unknown(self, seat: int, placed: dict[str, list[str]]) -> None:
        """Fill the re-dealt rows slot by slot, and the stock in the sampled order."""
        for s in (0, 1):
            cards = placed.get(f"row_{s}")
            if cards:
                it = iter(cards)
                self.rows[s] = [next(it) if c else None for c in self.rows[s]]
        self.stock = placed.get("stock", [])

    def _redraw_future(self, rng: random.Random) -> None:
        """Later reshuffles draw from a fresh seed."""
        self._reshuffle_seed = future_seed(rng)

    @classmethod
    def text_view(cls) -> TextView:
        """How a terminal draws Crossfire (arena.games.crossfire_text)."""
        from arena.games.crossfire_text import TEXT

        return TEXT

    @classmethod
    def search_hooks(cls) -> SearchHooks:
        """Crossfire's playout profiles and shipped search bots (arena.games.crossfire_search)."""
        # Imported on a search's first call: playing the game never needs its search knowledge.
        from arena.games.crossfire_search import SEARCH

        return SEARCH

    @classmethod
    def from_observation(cls, observation: dict, options: Mapping) -> CrossfireState:
        """A state that `observation` describes exactly, under `options` (as game_start gives them),
        the cards its seat cannot place put anywhere consistent (for search bots: determinize it
        before looking at hidden cards)."""
        from arena.games import new_game

        obs = observation
        seat = obs["seat"]
        game = new_game("crossfire", dict(options), 2, 0)
        game.dealer = obs["dealer"]
        game.deal_index = obs["deal_index"]
        game.round_in_deal = obs["round_in_deal"]
        game.round = obs["round"]
        game.sudden_death = obs["sudden_death"]
        game.over = obs["over"]
        game.points = list(obs["scores"])
        game.neutral = obs["neutral"]
        game._set_discards(list(obs["discards"]))
        game.history = [_copy_entry(h) for h in obs["history"]]
        regular = sum(game._sizes)
        game.sudden_death_rounds = max(0, len(game.history) - regular) if game.sudden_death else 0
        known = set(game.discards) | ({game.neutral} if game.neutral else set())
        mine = {e["slot"]: e["card"] for e in obs.get("my_row", ())}
        known.update(mine.values())
        free = iter([c for c in standard_deck() if c not in known])
        size = len(game.rows[0]) if game.deal_index == 1 else (
            game._sizes[game.deal_index - 1] if game.deal_index <= len(game._sizes)
            else ROUNDS_PER_DEAL)
        width = max([size, *(k + 1 for k in obs["my_slots"]),
                     *(k + 1 for k in obs["opponent_slots"])])
        rows: list[list[str | None]] = [[None] * width, [None] * width]
        for s, slots in ((seat, obs["my_slots"]), (seat ^ 1, obs["opponent_slots"])):
            for k in slots:
                rows[s][k] = mine[k] if s == seat and k in mine else next(free)
        game.rows = rows
        game._slots = [[k for k, c in enumerate(row) if c] for row in rows]
        game.stock = list(free)
        if len(game.stock) != obs["stock_count"]:
            raise ValueError("crossfire: the observation does not account for every card")
        return game

    def _fixed_part(self, seat: int) -> dict:
        """The observation's fields that do not grow with the game, in their documented order."""
        mine = self._slots[seat]
        obs = {
            "game": "crossfire",
            "seat": seat,
            "dealer": self.dealer,
            "deal_index": self.deal_index,
            "round_in_deal": self.round_in_deal,
            "round": self.round,
            "sudden_death": self.sudden_death,
            "over": self.over,
            "scores": list(self.points),
            "neutral": self.neutral,
            "my_slots": list(mine),
            "opponent_slots": list(self._slots[seat ^ 1]),
        }
        if self.options.open_rows:
            row = self.rows[seat]
            obs["my_row"] = [{"slot": k, "card": row[k]} for k in mine]
        obs["stock_count"] = len(self.stock)
        return obs

    def observation(self, seat: int) -> dict:
        """What `seat` sees: slots (and its own cards under open_rows), neutral, scores, history."""
        obs = self._fixed_part(seat)
        obs["discards"] = list(self.discards)
        obs["history"] = [_copy_entry(h) for h in self.history]
        return obs

    def observation_json(self, seat: int) -> bytes:
        """observation(seat) as compact JSON, the discards and history from their cached encoding."""
        if self._discards_done < len(self.discards):
            self._discards_json = _encode_tail(self._discards_json, self.discards, self._discards_done)
            self._discards_done = len(self.discards)
        if self._history_done < len(self.history):
            self._history_json = _encode_tail(self._history_json, self.history, self._history_done)
            self._history_done = len(self.history)
        obs = self._fixed_part(seat)
        obs["discards"] = orjson.Fragment(b"[" + self._discards_json + b"]")
        obs["history"] = orjson.Fragment(b"[" + self._history_json + b"]")
        return orjson.dumps(obs)

    def observation_from_scratch(self, seat: int) -> dict:
        """observation(seat) rebuilt from the rows, piles and rounds played, using no cache."""
        rows = self.rows
        obs = self._fixed_part(seat)
        # The slot lists are the cached part: recomputed here from the rows themselves.
        obs["my_slots"] = [k for k, c in enumerate(rows[seat]) if c]
        obs["opponent_slots"] = [k for k, c in enumerate(rows[seat ^ 1]) if c]
        if self.options.open_rows:
            obs["my_row"] = [{"slot": k, "card": c} for k, c in enumerate(rows[seat]) if c]
        obs["discards"] = list(self.discards)
        obs["history"] = [_copy_entry(h) for h in self.history]
        return obs

    def full_view(self) -> dict:
        """Everything: both rows by slot, the stock from the top down, discards and history."""
        return {
            "game": "crossfire",
            "options": self.options.model_dump(),
            "first_dealer": self.first_dealer,
            "dealer": self.dealer,
            "deal_index": self.deal_index,
            "round_in_deal": self.round_in_deal,
            "round": self.round,
            "sudden_death": self.sudden_death,
            "sudden_death_rounds": self.sudden_death_rounds,
            "over": self.over,
            "scores": list(self.points),
            "rows": [list(self.rows[0]), list(self.rows[1])],
            "neutral": self.neutral,
            "stock_top_first": self.stock[::-1],
            "discards": list(self.discards),
            "history": [_copy_entry(h) for h in self.history],
        }

    def clone(self) -> CrossfireState:
        """A cheap independent copy: mutable lists copied; options, spent rng, entries and their
        encodings shared (none of them ever changes)."""
        new = object.__new__(CrossfireState)
        new.__dict__.update(self.__dict__)
        new.stock = list(self.stock)
        new.rows = [list(self.rows[0]), list(self.rows[1])]
        new._slots = [list(self._slots[0]), list(self._slots[1])]
        new.discards = list(self.discards)
        new.points = list(self.points)
        new.history = list(self.history)
        return new


def _copy_entry(entry: dict) -> dict:
    """A history entry the caller may change: the entry and its layout copied."""
    return {**entry, "layout": {**entry["layout"]}}

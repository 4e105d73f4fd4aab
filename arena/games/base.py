"""The game interface every Arena game implements.

A game module declares a `GameType` (name, seat counts, options model) as data, subclasses
`GameState` with a few hooks, and registers the class with `arena.games.register`. A game is a pure
function of (options, number of seats, seed, actions): all chance comes from `self.rng`.

Actions and observations are JSON values (dicts, lists, strings, numbers, booleans, None). Cards are
the string codes of `arena.cards`; every card in a game is unique, so the conformance kit can track
each card by its code.

Search (arena.search) needs three more hooks: `determinize` (through `unknown_deal` and its two
helpers), `from_observation`, and optionally `search_hooks`, the game's own search knowledge.
"""

from __future__ import annotations

import copy
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import orjson
from pydantic import BaseModel, ConfigDict

from arena.cards import make_rng
from arena.errors import GameOptionsError, IllegalActionError
from arena.games.chance import HiddenDeal

if TYPE_CHECKING:
    from arena.games.text import TextView
    from arena.search.hooks import SearchHooks

JSON = Any
# A policy chooses an action from (observation, legal_actions), as a bot does.
Policy = Callable[[dict, list], JSON]


class GameOptions(BaseModel):
    """Base of every game's options model: unknown keys are an error, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class GameType:
    """What a game is, as data: its registered name, seat counts and options."""

    name: str
    title: str
    seat_counts: tuple[int, ...]
    options_model: type[GameOptions]
    simultaneous: bool = False
    summary: str = ""
    # Option sets beyond the defaults that the conformance kit must also cover (besides the
    # one-option-at-a-time variations it derives from the options model itself).
    variants: tuple[dict, ...] = ()
    # Options (bool or Literal) that change what a bot is sent beyond values: its observation's
    # fields, the kinds of requests it gets, who its partners are. `arena bot check` plays every
    # value of each, since a bot that works with the defaults may still break on them.
    protocol_options: tuple[str, ...] = ()


@dataclass(frozen=True)
class GameResult:
    """Final scores and ranks per seat (1 = best, tied seats share a rank; teams share both)."""

    scores: list[float]
    ranks: list[int]


def ranks_from_scores(scores: Sequence[float]) -> list[int]:
    """Competition ranks from scores, higher is better: [5, 9, 5] -> [2, 1, 2]."""
    return [1 + sum(1 for other in scores if other > s) for s in scores]


def forfeit_ranks(scores: Sequence[float], culprit: int, teams: Sequence[Sequence[int]]) -> list[int]:
    """Ranks after `culprit` forfeits: its side is last, the others are ranked by their scores."""
    losing = next((set(t) for t in teams if culprit in t), {culprit})
    others = [i for i in range(len(scores)) if i not in losing]
    ranks = [0] * len(scores)
    for i in others:
        ranks[i] = 1 + sum(1 for j in others if scores[j] > scores[i])
    last = len(others) + 1
    for i in losing:
        ranks[i] = last
    return ranks


class GameState(ABC):
    """One game in progress. Subclasses implement the hooks marked abstract."""

    game_type: ClassVar[GameType]

    def __init__(self, options: GameOptions, num_seats: int, seed: int):
        self.options = options
        self.num_seats = num_seats
        self.seed = seed
        self.rng = make_rng(seed)

    # -- creation -------------------------------------------------------------------------------
    @classmethod
    def validate_options(cls, options: GameOptions, num_seats: int) -> None:
        """Raise GameOptionsError when the options do not fit this number of seats."""
        if num_seats not in cls.game_type.seat_counts:
            raise GameOptionsError(
                f"{cls.game_type.name} is played by {_or_list(cls.game_type.seat_counts)} seats, "
                f"not {num_seats}"
            )

    @classmethod
    def max_steps(cls, options: GameOptions, num_seats: int) -> int:
        """An upper bound on the number of `apply` calls in one game with these options."""
        return 10_000

    # -- the hooks ------------------------------------------------------------------------------
    @abstractmethod
    def to_act(self) -> list[int]:
        """The seats that must act now, ascending; several at a simultaneous step; [] when over."""

    @abstractmethod
    def legal_actions(self, seat: int) -> list[JSON]:
        """The legal actions of `seat` now, as JSON values ([] if the seat is not to act)."""

    def apply_validated(self, actions: Mapping[int, JSON]) -> None:
        """Apply actions already checked against legal_actions, one per acting seat: the runner's
        and search's step, which validate on their own side and so skip apply()'s check."""
        self._apply(actions)

    @abstractmethod
    def _apply(self, actions: Mapping[int, JSON]) -> None:
        """The game's step for validated actions, behind apply_validated (a game may override
        apply_validated itself and alias this hook to it, saving a call per step)."""

    @abstractmethod
    def observation(self, seat: int) -> dict:
        """Exactly what `seat` may see now, as a JSON object."""

    def observation_json(self, seat: int) -> bytes:
        """observation(seat) as compact JSON: what the runner sends in an `act` line.

        Games build it from parts cached as the game goes (a history's encoded entries are
        appended once, never re-encoded), so its cost does not grow with the game's length.
        """
        return orjson.dumps(self.observation(seat))

    def observation_from_scratch(self, seat: int) -> dict:
        """observation(seat) rebuilt from the state alone, using no cache.

        The reference the conformance kit holds observation() and observation_json() to at every
        step; a game whose observation() keeps no cache need not override it.
        """
        return self.observation(seat)

    @abstractmethod
    def full_view(self) -> dict:
        """Everything, hidden cards included: for replays and tests only, never for bots."""

    @abstractmethod
    def scores(self) -> list[float]:
        """Current score of each seat (a team's score is repeated for each member)."""

    @abstractmethod
    def card_zones(self) -> dict[str, list[str]]:
        """Every card of the game by zone (hands, piles, stock, discards...); together, the deck."""

    @abstractmethod
    def hidden_from(self, seat: int) -> set[str]:
        """The cards whose identity `seat` cannot know now (face down, in the stock, others' hands)."""

    @abstractmethod
    def deck(self) -> list[str]:
        """All cards this game uses (for card accounting)."""

    # -- provided -------------------------------------------------------------------------------
    def apply(self, actions: Mapping[int, JSON]) -> None:
        """Validate and apply one action per acting seat; an illegal one raises and changes nothing."""
        acting = self.to_act()
        check_acting(actions, acting)
        for seat in acting:
            action = actions[seat]
            if action not in self.legal_actions(seat):
                raise IllegalActionError(
                    f"illegal action for seat {seat}: {action!r}", seat=seat, action=action
                )
        self.apply_validated(actions)

    def is_over(self) -> bool:
        """True when no seat must act any more."""
        return not self.to_act()

    def teams(self) -> list[list[int]]:
        """The sides of this game: each seat alone unless the game has partnerships."""
        return [[s] for s in range(self.num_seats)]

    def result(self) -> GameResult:
        """Final scores and ranks; only valid when the game is over."""
        if not self.is_over():
            raise IllegalActionError("the game is not over: no result yet")
        scores = self.scores()
        return GameResult(scores=list(scores), ranks=ranks_from_scores(scores))

    def clone(self) -> GameState:
        """An independent copy; games override this with something cheaper than deepcopy."""
        return copy.deepcopy(self)

    # -- for search: determinization, a state from an observation, search hooks -----------------
    def unknown_deal(self, seat: int) -> HiddenDeal:
        """Every card `seat` cannot place now, and the zones (of card_zones) it may be in."""
        raise NotImplementedError(f"{type(self).__name__} has no determinization")

    def determinize(self, seat: int, rng: random.Random) -> GameState:
        """A copy in which what `seat` cannot know is re-dealt from `rng`, future chance included.

        The copy's observation(seat) equals this state's; this state is unchanged.
        """
        deal = self.unknown_deal(seat)
        new = self.clone()
        new._place_unknown(seat, deal.sample(rng))
        new._redraw_future(rng)
        return new

    def _place_unknown(self, seat: int, placed: dict[str, list[str]]) -> None:
        """Put the re-dealt cards (zone -> cards, as in unknown_deal) in their zones."""
        raise NotImplementedError

    def _redraw_future(self, rng: random.Random) -> None:
        """Replace every seed of later chance with one drawn from `rng`."""
        raise NotImplementedError

    @classmethod
    def from_observation(cls, observation: dict, options: Mapping) -> GameState:
        """A state that `observation` describes, under `options` (as game_start gives them), the
        cards its seat cannot place put anywhere consistent: what a search bot searches from."""
        raise NotImplementedError(f"{cls.__name__} cannot be rebuilt from an observation")

    @classmethod
    def search_hooks(cls) -> SearchHooks | None:
        """What search needs of this game beyond this interface (arena.search.hooks.SearchHooks:
        playout profiles, shipped bots), or None for the generic defaults."""
        return None

    @classmethod
    def text_view(cls) -> TextView | None:
        """How a terminal draws this game (arena.games.text.TextView), or None for no text view."""
        return None

    def rollout(self, rng: random.Random) -> None:
        """Play this state to its end with uniformly random legal actions (games may speed it up)."""
        while True:
            acting = self.to_act()
            if not acting:
                return
            self.apply_validated({s: rng.choice(self.legal_actions(s)) for s in acting})


def check_acting(actions: Mapping[int, JSON], acting: Sequence[int]) -> None:
    """Raise IllegalActionError unless `actions` has exactly one entry per acting seat."""
    if not acting:
        raise IllegalActionError("the game is over: no seat may act")
    if sorted(actions) != list(acting):
        missing = sorted(set(acting) - set(actions))
        extra = sorted(set(actions) - set(acting))
        raise IllegalActionError(
            f"seats {list(acting)} must act; missing {missing}, not to act {extra}",
            seat=(extra or missing)[0],
        )


def play_out(state: GameState, policies: Sequence[Policy | None],
             rng: random.Random | None = None) -> GameResult:
    """Play `state` to its end in process, one policy per seat, and return the result.

    A seat whose policy is None plays uniformly at random from `rng` (no observation is built).
    """
    while True:
        acting = state.to_act()
        if not acting:
            return state.result()
        actions = {}
        for seat in acting:
            legal = state.legal_actions(seat)
            policy = policies[seat]
            actions[seat] = rng.choice(legal) if policy is None else policy(state.observation(seat), legal)
        state.apply(actions)


def _or_list(values: Sequence[int]) -> str:
    values = [str(v) for v in values]
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " or " + values[-1]


def parse_options(model: type[GameOptions], raw: Mapping[str, Any] | None, game: str) -> GameOptions:
    """Validate raw option values into the game's model; errors name the option and the bad value."""
    from pydantic import ValidationError

    try:
        return model.model_validate(dict(raw or {}))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "options"
        if err["type"] == "extra_forbidden":
            known = ", ".join(model.model_fields)
            raise GameOptionsError(
                f"{game}: unknown option {where!r} (known: {known})"
            ) from None
        raise GameOptionsError(
            f"{game}: option {where}={err.get('input')!r} is invalid: {err['msg']}"
        ) from None

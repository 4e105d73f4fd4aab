"""The conformance kit: every registered game passes it, and every check catches its failure.

The toy game below is small but complete (turns or simultaneous play, draws from a hidden stock,
optional partnerships); each broken subclass breaks one rule of the contract; the kit must name it.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
from collections.abc import Mapping
from typing import Literal

import pytest
from pydantic import Field

from arena.conformance import (
    ConformanceError,
    Report,
    case_id,
    cases,
    check_cross_process,
    check_game,
    hypothesis_check,
    option_sets,
)
from arena.errors import ArenaError, GameOptionsError
from arena.games import (
    GAMES,
    GameOptions,
    GameState,
    GameType,
    new_game,
    register,
)
from arena.games.base import GameResult, ranks_from_scores

TOY = "toy_conformance"
VALUE = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5}
TOY_DECK = [r + s for s in "SHDC" for r in "A2345"]


class ToyOptions(GameOptions):
    """Options of the toy game."""

    hand_size: int = Field(3, ge=1, le=4, description="cards dealt to each seat")
    mode: Literal["turns", "simultaneous"] = Field("turns", description="how seats play")
    scoring: Literal["high", "low"] = Field("high", description="whether high or low cards score")
    open_hands: bool = Field(False, description="every hand is face up")
    target: int | None = Field(None, ge=1, examples=[6], description="score that ends the game")
    hand_limit: int | None = Field(6, ge=1, description="no draw with this many cards in hand")
    partnership: bool = Field(False, description="seats 0+2 against 1+3 (four seats only)")


class ToyGame(GameState):
    """Draw from a hidden stock or play a card for its value; all cards played ends the game."""

    game_type = GameType(
        name=TOY,
        title="Toy",
        seat_counts=(2, 3, 4),
        options_model=ToyOptions,
        simultaneous=True,
        summary="a toy game for the conformance kit's own tests",
        variants=({"mode": "simultaneous", "partnership": True},),
    )

    def __init__(self, options: ToyOptions, num_seats: int, seed: int):
        super().__init__(options, num_seats, seed)
        self.stock = self.new_deck()
        self.rng.shuffle(self.stock)
        deal = options.hand_size
        self.hands = [[self.stock.pop() for _ in range(deal)] for _ in range(num_seats)]
        self.pile: list[str] = []
        self.points = [0] * num_seats
        self.turn = 0
        self.moves = 0

    def new_deck(self) -> list[str]:
        """The cards, in a fixed order before shuffling."""
        return list(TOY_DECK)

    @classmethod
    def validate_options(cls, options: ToyOptions, num_seats: int) -> None:
        """Partnerships need four seats."""
        super().validate_options(options, num_seats)
        if options.partnership and num_seats != 4:
            raise GameOptionsError(f"partnership=True needs 4 seats, not {num_seats}")

    @classmethod
    def max_steps(cls, options: ToyOptions, num_seats: int) -> int:
        """Each step draws or plays one of the 20 cards, and each card is drawn and played once."""
        return 2 * len(TOY_DECK)

    def value(self, card: str) -> int:
        """What a card scores."""
        v = VALUE[card[0]]
        return v if self.options.scoring == "high" else 6 - v

    def over(self) -> bool:
        """All cards played, or a side reached the target."""
        if self.options.target is not None and max(self.scores()) >= self.options.target:
            return True
        return not self.stock and not any(self.hands)

    def to_act(self) -> list[int]:
        """The seat whose turn it is, or every seat holding cards when play is simultaneous."""
        if self.over():
            return []
        if self.options.mode == "simultaneous":
            return [s for s in range(self.num_seats) if self.hands[s]]
        return [self.turn]

    def legal_actions(self, seat: int) -> list[dict]:
        """Draw (if the stock has cards and the hand is not full), then play each card."""
        if seat not in self.to_act():
            return []
        actions = []
        limit = self.options.hand_limit
        room = limit is None or len(self.hands[seat]) < limit
        if self.options.mode == "turns" and self.stock and room:
            actions.append({"type": "draw"})
        actions += [{"type": "play", "card": c} for c in sorted(self.hands[seat])]
        return actions

    def _apply(self, actions: Mapping[int, dict]) -> None:
        self.moves += 1
        if self.options.mode == "simultaneous":
            played = {s: a["card"] for s, a in actions.items()}
            for s, card in played.items():
                self.play(s, card, score=False)
            best = max(played, key=lambda s: (self.value(played[s]), -s))
            self.points[best] += sum(self.value(c) for c in played.values())
            for s in sorted(played):
                if self.stock:
                    self.hands[s].append(self.stock.pop())
            return
        seat, action = next(iter(actions.items()))
        if action["type"] == "draw":
            self.hands[seat].append(self.stock.pop())
        else:
            self.play(seat, action["card"], score=True)
        self.advance()

    def play(self, seat: int, card: str, score: bool) -> None:
        """Move a card from a hand to the pile."""
        self.hands[seat].remove(card)
        self.pile.append(card)
        if score:
            self.points[seat] += self.value(card)

    def advance(self) -> None:
        """The next seat that can still do something."""
        for i in range(1, self.num_seats + 1):
            s = (self.turn + i) % self.num_seats
            if self.hands[s] or self.stock:
                self.turn = s
                return

    def observation(self, seat: int) -> dict:
        """Own hand, public counts, the pile and the scores."""
        obs = {
            "game": TOY,
            "seat": seat,
            "hand": sorted(self.hands[seat]),
            "hand_sizes": [len(h) for h in self.hands],
            "stock_size": len(self.stock),
            "pile": list(self.pile),
            "scores": self.scores(),
            "turn": self.turn,
        }
        if self.options.open_hands:
            obs["hands"] = [sorted(h) for h in self.hands]
        return obs

    def full_view(self) -> dict:
        """Everything."""
        return {
            "hands": [list(h) for h in self.hands],
            "stock": list(self.stock),
            "pile": list(self.pile),
            "points": list(self.points),
            "turn": self.turn,
            "moves": self.moves,
        }

    def teams(self) -> list[list[int]]:
        """Seats 0+2 and 1+3 in a partnership game."""
        if self.options.partnership:
            return [[0, 2], [1, 3]]
        return super().teams()

    def scores(self) -> list[float]:
        """Points, summed over each side."""
        if self.options.partnership:
            a, b = self.points[0] + self.points[2], self.points[1] + self.points[3]
            return [a, b, a, b]
        return list(self.points)

    def card_zones(self) -> dict[str, list[str]]:
        """Hands, stock and pile."""
        zones = {f"hand{s}": list(h) for s, h in enumerate(self.hands)}
        zones["stock"] = list(self.stock)
        zones["pile"] = list(self.pile)
        return zones

    def hidden_from(self, seat: int) -> set[str]:
        """The stock, and the other hands unless hands are open."""
        hidden = set(self.stock)
        if not self.options.open_hands:
            for s, h in enumerate(self.hands):
                if s != seat:
                    hidden.update(h)
        return hidden

    def deck(self) -> list[str]:
        """The 20 cards."""
        return list(TOY_DECK)

    def clone(self) -> ToyGame:
        """A copy with its own lists and RNG."""
        other = copy.copy(self)
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.hands = [list(h) for h in self.hands]
        other.stock = list(self.stock)
        other.pile = list(self.pile)
        other.points = list(self.points)
        return other


# -- broken variants: each breaks one rule of the contract --------------------------------------


class LeakyToy(ToyGame):
    """Shows the top card of the stock."""

    def observation(self, seat: int) -> dict:
        return dict(super().observation(seat), next=self.stock[-1:])


class NondeterministicToy(ToyGame):
    """Shuffles with the global RNG."""

    def __init__(self, options: ToyOptions, num_seats: int, seed: int):
        super().__init__(options, num_seats, seed)
        random.shuffle(self.stock)


class LateNondeterministicToy(ToyGame):
    """Reshuffles the stock with the global RNG on the fifth move."""

    def _apply(self, actions: Mapping[int, dict]) -> None:
        super()._apply(actions)
        if self.moves == 5:
            random.shuffle(self.stock)


class LostCardToy(ToyGame):
    """Fives played vanish instead of reaching the pile."""

    def play(self, seat: int, card: str, score: bool) -> None:
        super().play(seat, card, score)
        if card[0] == "5":
            self.pile.remove(card)


class MutatingApplyToy(ToyGame):
    """A 'fast' apply that counts the move before validating it."""

    def apply(self, actions: Mapping[int, dict]) -> None:
        self.moves += 1
        super().apply(actions)


class AcceptingToy(ToyGame):
    """Applies whatever it is given."""

    def apply(self, actions: Mapping[int, dict]) -> None:
        if self.to_act() and set(actions) == set(self.to_act()) and all(
            a.get("type") in ("draw", "play") for a in actions.values()
        ):
            self._apply(actions)
        else:
            super().apply(actions)

    def _apply(self, actions: Mapping[int, dict]) -> None:
        # A card not in the hand is played anyway, if the hand has any card.
        fixed = {}
        for s, a in actions.items():
            if a["type"] == "play" and a["card"] not in self.hands[s] and self.hands[s]:
                a = {"type": "play", "card": self.hands[s][0]}
            fixed[s] = a
        super()._apply(fixed)


class SharedCloneToy(ToyGame):
    """A shallow clone: hands are shared with the original."""

    def clone(self) -> ToyGame:
        other = copy.copy(self)
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.stock = list(self.stock)
        other.pile = list(self.pile)
        other.points = list(self.points)
        return other


class SharedRngCloneToy(ToyGame):
    """A clone that shares the original's RNG object."""

    def clone(self) -> ToyGame:
        other = super().clone()
        other.rng = self.rng
        return other

    def _apply(self, actions: Mapping[int, dict]) -> None:
        super()._apply(actions)
        # Reshuffling the stock on every move makes the game consume chance all along.
        self.rng.shuffle(self.stock)


class WrongRanksToy(ToyGame):
    """Ranks the lowest score first."""

    def result(self):
        res = super().result()
        return type(res)(scores=res.scores, ranks=ranks_from_scores([-s for s in res.scores]))


class GappyRanksToy(ToyGame):
    """Ranks 1, 2, 3... by seat, ignoring ties and scores."""

    def result(self):
        res = super().result()
        return type(res)(scores=res.scores, ranks=[1] * (self.num_seats - 1) + [3])


class SameDealToy(ToyGame):
    """Ignores the seed."""

    def __init__(self, options: ToyOptions, num_seats: int, seed: int):
        super().__init__(options, num_seats, 0)


class DescendingToActToy(ToyGame):
    """Lists the acting seats in descending order."""

    def to_act(self) -> list[int]:
        return sorted(super().to_act(), reverse=True)


class NoDrawToy(ToyGame):
    """Forgets to offer the draw, so a seat with an empty hand is stuck."""

    def legal_actions(self, seat: int) -> list[dict]:
        return [a for a in super().legal_actions(seat) if a["type"] != "draw"]


class IdleActionsToy(ToyGame):
    """Offers actions to seats that are not to act."""

    def legal_actions(self, seat: int) -> list[dict]:
        if self.over():
            return []
        return [{"type": "play", "card": c} for c in sorted(self.hands[seat])] or [{"type": "pass"}]


class DuplicateActionsToy(ToyGame):
    """Lists the draw twice."""

    def legal_actions(self, seat: int) -> list[dict]:
        actions = super().legal_actions(seat)
        return actions + [a for a in actions if a["type"] == "draw"]


class TupleObservationToy(ToyGame):
    """Puts a tuple into the observation (JSON turns it into a list)."""

    def observation(self, seat: int) -> dict:
        return dict(super().observation(seat), hand_sizes=tuple(len(h) for h in self.hands))


class IntKeyObservationToy(ToyGame):
    """Keys a dict by seat number (JSON turns the keys into strings)."""

    def observation(self, seat: int) -> dict:
        return dict(super().observation(seat), sizes={s: len(h) for s, h in enumerate(self.hands)})


class NoSeatObservationToy(ToyGame):
    """Leaves out the "seat" key."""

    def observation(self, seat: int) -> dict:
        obs = super().observation(seat)
        del obs["seat"]
        return obs


class AliasedObservationToy(ToyGame):
    """Returns its own hand list inside the observation."""

    def observation(self, seat: int) -> dict:
        return dict(super().observation(seat), hand=self.hands[seat])


class CachedActionsToy(ToyGame):
    """Hands out one cached list of legal actions, which callers can then shuffle."""

    def legal_actions(self, seat: int) -> list[dict]:
        key = (seat, self.moves)
        if getattr(self, "_cache_key", None) != key:
            self._cache_key, self._cache = key, super().legal_actions(seat)
        return self._cache


class ShortMaxStepsToy(ToyGame):
    """Claims games last at most five steps."""

    @classmethod
    def max_steps(cls, options: ToyOptions, num_seats: int) -> int:
        return 5


class EarlyResultToy(ToyGame):
    """Gives a result before the end."""

    def result(self):
        scores = self.scores()
        return GameResult(scores=scores, ranks=ranks_from_scores(scores))


class TeamScoreToy(ToyGame):
    """Partners keep their own scores."""

    def scores(self) -> list[float]:
        return list(self.points)


class HiddenStrayToy(ToyGame):
    """Hides a card the deck does not have."""

    def hidden_from(self, seat: int) -> set[str]:
        return super().hidden_from(seat) | {"ZZ"}


class FloatNanToy(ToyGame):
    """Scores NaN for a seat with no points."""

    def scores(self) -> list[float]:
        return [p if p else float("nan") for p in super().scores()]


class SetOrderToy(ToyGame):
    """Builds its deck from a set: the order differs between processes."""

    def new_deck(self) -> list[str]:
        return list(set(TOY_DECK))


class SetLegalToy(ToyGame):
    """Lists the plays in set order: the order differs between processes."""

    def legal_actions(self, seat: int) -> list[dict]:
        actions = super().legal_actions(seat)
        plays = {a["card"] for a in actions if a["type"] == "play"}
        draws = [a for a in actions if a["type"] == "draw"]
        return draws + [{"type": "play", "card": c} for c in plays]


class RareLeakToy(ToyGame):
    """Leaks the stock only after seat 0 drew on each of its first five turns."""

    def __init__(self, options: ToyOptions, num_seats: int, seed: int):
        super().__init__(options, num_seats, seed)
        self.draws0 = 0
        self.turns0 = 0

    def _apply(self, actions: Mapping[int, dict]) -> None:
        if 0 in actions:
            self.turns0 += 1
            self.draws0 += actions[0]["type"] == "draw"
        super()._apply(actions)

    def observation(self, seat: int) -> dict:
        obs = super().observation(seat)
        if self.turns0 == self.draws0 == 5:
            obs["stock"] = list(self.stock)
        return obs

    def clone(self) -> ToyGame:
        return copy.deepcopy(self)


@pytest.fixture
def toy():
    """Register toy game classes under a test-only name; unregister afterwards."""
    installed = []

    def install(cls: type[GameState] = ToyGame) -> str:
        register(cls)
        installed.append(cls.game_type.name)
        return cls.game_type.name

    yield install
    for name in installed:
        GAMES.pop(name, None)


# -- the kit against the toy game ----------------------------------------------------------------


def test_option_sets_derive_alternatives_and_drop_invalid_seat_counts(toy):
    toy()
    two = option_sets(TOY, 2)
    assert two == [
        {},
        {"mode": "simultaneous"},
        {"scoring": "low"},
        {"open_hands": True},
        {"target": 6},
        {"hand_limit": None},
    ]
    four = option_sets(TOY, 4)
    assert four == two + [{"partnership": True}, {"mode": "simultaneous", "partnership": True}]
    assert option_sets(TOY) == four


def test_a_declared_variant_that_no_seat_count_accepts_is_an_error(toy):
    class BadVariantToy(ToyGame):
        game_type = dataclasses.replace(
            ToyGame.game_type, variants=({"partnership": True, "mode": "x"},)
        )

    class NoSeatsVariantToy(ToyGame):
        game_type = dataclasses.replace(
            ToyGame.game_type, seat_counts=(2, 3), variants=({"partnership": True},)
        )

    toy(BadVariantToy)
    with pytest.raises(ConformanceError, match=r"declared variant .* is invalid"):
        option_sets(TOY)
    toy(NoSeatsVariantToy)
    with pytest.raises(ConformanceError, match=r"valid for none of the seat counts \[2, 3\]"):
        option_sets(TOY, 2)


def test_cases_cover_every_seat_count_and_option_set(toy):
    toy()
    mine = cases([TOY])
    assert len(mine) == 6 + 6 + 8
    assert (TOY, 3, {"scoring": "low"}) in mine
    assert (TOY, 3, {"partnership": True}) not in mine
    assert case_id((TOY, 4, {"mode": "simultaneous", "partnership": True})) == (
        f"{TOY}-4p-mode=simultaneous,partnership=True"
    )


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_a_correct_toy_passes_every_option_set(toy, seats):
    toy()
    for opts in option_sets(TOY, seats):
        report = check_game(TOY, seats, opts, games=4, seed=seats)
        assert isinstance(report, Report)
        assert report.games == 4 and report.steps > 4 * 3
        assert report.moves_per_second > 0 and report.seconds > 0
        assert report.probes["illegal"] > report.steps
        assert report.probes["replay"] == 4 and report.probes["kept_clone"] == 8


def test_a_correct_toy_passes_with_sampled_probes(toy):
    toy()
    report = check_game(TOY, 3, games=30, probe_rate=0.1)
    assert report.games == 30
    assert 0 < report.probes["clone"] < report.steps / 2


def _fails(cls, *, seats=2, options=None, games=3, match: str) -> ConformanceError:
    """check_game must raise a ConformanceError naming the failure and the context."""
    GAMES[TOY] = cls
    with pytest.raises(ConformanceError, match=match) as info:
        check_game(TOY, seats, options, games=games)
    err = info.value
    assert err.game == TOY and err.num_seats == seats
    text = str(err)
    assert text.startswith(f"{TOY} seats={seats} options=")
    assert f"seed={err.seed}" in text
    return err


BROKEN = [
    (LeakyToy, {}, r"observation\(\d\) leaks cards hidden from seat \d: \['[A2-5][SHDC]'\]"),
    (NondeterministicToy, {}, r"a replay of the same seed and actions differs"),
    (LostCardToy, {}, r"card accounting: .* miss \['5[SHDC]'"),
    (MutatingApplyToy, {},
     r"made-up action for seat 0: refused apply.* changed the state: \$\.moves"),
    (AcceptingToy, {}, r"another seat's action for seat \d: apply\(.*\) was accepted"),
    (SharedCloneToy, {}, r"playing a clone for \d+ steps changed the original: \$\.hands"),
    (SharedRngCloneToy, {}, r"changed the original's RNG"),
    (WrongRanksToy, {}, r"result\(\) ranks seat \d \(score \d+\) below seat \d"),
    (GappyRanksToy, {}, r"not 1-based competition ranks"),
    (SameDealToy, {}, r"3 different seeds all start with the same card_zones"),
    (DescendingToActToy, {"mode": "simultaneous"}, r"to_act\(\) = \[1, 0\] is not ascending"),
    (NoDrawToy, {"hand_size": 1}, r"seat \d must act but has no legal action"),
    (IdleActionsToy, {}, r"seat 1 is not to act but has legal actions"),
    (DuplicateActionsToy, {}, r"legal_actions\(0\) lists an action twice: .*draw"),
    (TupleObservationToy, {}, r"observation\(0\) changes in a JSON round trip: \$\.hand_sizes"),
    (IntKeyObservationToy, {}, r"observation\(0\) changes in a JSON round trip: \$\.sizes\.0"),
    (NoSeatObservationToy, {}, r"observation\(0\) must hold \"game\": .* and \"seat\": 0"),
    (AliasedObservationToy, {}, r"changing the value returned by observation\(0\) in place"),
    (CachedActionsToy, {}, r"changing the value returned by legal_actions\(0\) in place"),
    (ShortMaxStepsToy, {}, r"not over after max_steps=5 steps"),
    (EarlyResultToy, {}, r"result\(\) before the end returned a result"),
    (HiddenStrayToy, {}, r"hidden_from\(0\) has cards not in deck\(\): \['ZZ'\]"),
    (FloatNanToy, {}, r"observation\(0\) is not JSON: Out of range float values"),
]


@pytest.mark.parametrize("cls,options,match", BROKEN, ids=[b[0].__name__ for b in BROKEN])
def test_each_check_catches_its_failure(toy, cls, options, match):
    toy()
    err = _fails(cls, options=options, match=match)
    assert err.step is not None or cls is SameDealToy


def test_a_replay_names_the_first_step_that_differs(toy):
    toy()
    match = r"step=5: a replay of the same seed and actions differs: full_view: \$\.stock"
    err = _fails(LateNondeterministicToy, match=match)
    assert err.step == 5 and len(err.actions) >= 5


def test_skip_leaves_out_a_probe_while_triaging(toy):
    toy()
    GAMES[TOY] = AliasedObservationToy
    report = check_game(TOY, 2, games=2, skip={"aliasing"})
    assert "aliasing" not in report.probes and report.probes["clone"] > 0
    with pytest.raises(ValueError, match="unknown checks to skip"):
        check_game(TOY, 2, games=1, skip={"leaks"})


def test_the_report_is_plain_data(toy):
    toy()
    report = check_game(TOY, 2, {"scoring": "low"}, games=3, seed=7)
    data = dataclasses.asdict(report)
    assert data["game"] == TOY and data["options"] == {"scoring": "low"} and data["seed"] == 7
    assert data["games"] == 3 and data["steps"] == report.steps
    assert json.loads(json.dumps(data)) == data


def test_team_members_must_share_scores(toy):
    toy()
    match = r"team \[0, 2\] members have different scores"
    _fails(TeamScoreToy, seats=4, options={"partnership": True}, match=match)


def test_the_error_carries_the_actions_that_rebuild_the_failing_state(toy):
    toy()
    err = _fails(LostCardToy, match="card accounting")
    state = new_game(TOY, err.options, err.num_seats, err.seed)
    for actions in err.actions:
        state.apply(actions)
    assert len(err.actions) == err.step
    zones = state.card_zones()
    assert sum(len(z) for z in zones.values()) < len(TOY_DECK)


def test_unexpected_exceptions_in_game_code_become_conformance_errors(toy):
    class CrashingToy(ToyGame):
        def observation(self, seat: int) -> dict:
            if self.moves == 3:
                raise KeyError("oops")
            return super().observation(seat)

    toy()
    err = _fails(CrashingToy, match=r"step=3: observation\(0\) raised KeyError: 'oops'")
    assert isinstance(err, ArenaError) and isinstance(err.__cause__, KeyError)


def test_cross_process_replay_catches_set_order_dependence(toy):
    toy()
    assert check_cross_process(TOY, 2, games=1) > 10
    GAMES[TOY] = SetOrderToy
    check_game(TOY, 2, games=2)  # within one process the set order is stable
    match = r"PYTHONHASHSEED=.* another state .*: \$\.full_view\.hands"
    with pytest.raises(ConformanceError, match=match):
        check_cross_process(TOY, 2, games=1)


def test_cross_process_replay_catches_legal_actions_in_set_order(toy):
    toy()
    GAMES[TOY] = SetLegalToy
    with pytest.raises(ConformanceError, match=r"another state .*: \$\.legal_actions\["):
        check_cross_process(TOY, 2, games=1)


def test_hypothesis_finds_what_fixed_seeds_miss(toy):
    toy()
    GAMES[TOY] = RareLeakToy
    options = {"hand_size": 4, "hand_limit": None}
    check_game(TOY, 2, options, games=20, probe_rate=0.1)
    with pytest.raises(ConformanceError, match=r"leaks cards hidden from seat"):
        hypothesis_check(TOY, 2, options, max_examples=30, derandomize=True)


def test_hypothesis_check_passes_a_correct_game(toy):
    toy()
    report = hypothesis_check(TOY, 3, {"mode": "simultaneous"}, max_examples=10, derandomize=True)
    assert report.games >= 10 and report.steps > 0


def test_result_before_the_end_must_raise_an_arena_error(toy):
    class IndexErrorResultToy(ToyGame):
        def result(self):
            if not self.is_over():
                raise IndexError("no result")
            return super().result()

    toy()
    _fails(IndexErrorResultToy, match=r"before the end raised IndexError instead of an ArenaError")

"""A game is one module plus its renderer: search and the replay viewer find what they need of a
game through the game's registration, so a new game plugs in without edits under arena/search/ or
in the shared web files.

The toy game below (high card: each seat plays one card a trick, the higher card takes both) is
registered like the real games and searched by the same ISMCTS and search bot; every real game
passes the kit's search checks.
"""

from __future__ import annotations

import importlib
import random
import re
from collections.abc import Mapping
from pathlib import Path

import pytest
from pydantic import Field

from arena.conformance import ConformanceError, check_search, check_search_hooks, option_sets
from arena.games import GAMES, GameOptions, GameState, GameType, game_names, get_game, register
from arena.games.chance import HiddenDeal
from arena.search import ISMCTS, ISMCTSBot
from arena.search.bot import shipped_bot, shipped_bots
from arena.search.hooks import GENERIC, SearchHooks, search_hooks
from arena.search.playouts import RANDOM_PLAYOUTS, Profile, profile_for

ARENA = Path(__file__).resolve().parents[2] / "arena"
TOY = "toy_high_card"
TOY_DECK = [r + s for s in "SH" for r in "A23456"]
VALUE = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6}


class HighCardOptions(GameOptions):
    """Options of the toy game."""

    hand_size: int = Field(3, ge=1, le=3, description="cards dealt to each seat")


class HighCard(GameState):
    """Two seats play a card a trick in turn; the higher card takes both; hands refill."""

    game_type = GameType(name=TOY, title="High card", seat_counts=(2,),
                         options_model=HighCardOptions, summary="a toy game for the search hooks")

    def __init__(self, options: HighCardOptions, num_seats: int, seed: int):
        super().__init__(options, num_seats, seed)
        self.stock = list(TOY_DECK)
        self.rng.shuffle(self.stock)
        self.hands = [[self.stock.pop() for _ in range(options.hand_size)] for _ in range(2)]
        self.trick: list[str] = []
        self.won: list[str] = []
        self.points = [0, 0]
        self.turn = 0

    def to_act(self) -> list[int]:
        """The seat whose turn it is, until every card is played."""
        return [self.turn] if self.hands[self.turn] else []

    def legal_actions(self, seat: int) -> list[str]:
        """Any card of the hand."""
        return sorted(self.hands[seat]) if seat in self.to_act() else []

    def _apply(self, actions: Mapping[int, str]) -> None:
        seat, card = next(iter(actions.items()))
        self.hands[seat].remove(card)
        self.trick.append(card)
        if len(self.trick) == 1:
            self.turn = 1 - seat
            return
        lead, answer = self.trick
        winner = 1 - seat if VALUE[lead[0]] >= VALUE[answer[0]] else seat
        self.points[winner] += VALUE[lead[0]] + VALUE[answer[0]]
        self.won += self.trick
        self.trick = []
        for s in (winner, 1 - winner):
            if self.stock:
                self.hands[s].append(self.stock.pop())
        self.turn = winner

    def observation(self, seat: int) -> dict:
        """Own hand, the trick, the scores and the public counts."""
        return {"game": TOY, "seat": seat, "hand": sorted(self.hands[seat]),
                "hand_sizes": [len(h) for h in self.hands], "stock_size": len(self.stock),
                "trick": list(self.trick), "won": sorted(self.won), "scores": self.scores(),
                "turn": self.turn}

    def full_view(self) -> dict:
        """Everything."""
        return {"hands": [list(h) for h in self.hands], "stock": list(self.stock),
                "trick": list(self.trick), "won": list(self.won), "points": list(self.points),
                "turn": self.turn}

    def scores(self) -> list[float]:
        """Points taken."""
        return list(self.points)

    def card_zones(self) -> dict[str, list[str]]:
        """Hands, stock, trick and the cards taken."""
        return {"hand0": list(self.hands[0]), "hand1": list(self.hands[1]),
                "stock": list(self.stock), "trick": list(self.trick), "won": list(self.won)}

    def hidden_from(self, seat: int) -> set[str]:
        """The stock and the other hand."""
        return set(self.stock) | set(self.hands[1 - seat])

    def deck(self) -> list[str]:
        """The 12 cards."""
        return list(TOY_DECK)

    def clone(self) -> HighCard:
        """A copy with its own lists and RNG."""
        other = HighCard.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.hands = [list(h) for h in self.hands]
        other.stock, other.trick = list(self.stock), list(self.trick)
        other.won, other.points = list(self.won), list(self.points)
        return other

    def unknown_deal(self, seat: int) -> HiddenDeal:
        """The other hand and the stock, in any order."""
        deal = HiddenDeal(sorted(self.hidden_from(seat)))
        deal.add(f"hand{1 - seat}", len(self.hands[1 - seat]))
        deal.add("stock", len(self.stock))
        return deal

    def _place_unknown(self, seat: int, placed: dict[str, list[str]]) -> None:
        self.hands[1 - seat] = placed.get(f"hand{1 - seat}", [])
        self.stock = placed.get("stock", [])

    def _redraw_future(self, rng: random.Random) -> None:
        """No chance after the deal but the stock's order, which the re-deal draws."""

    @classmethod
    def from_observation(cls, observation: dict, options: Mapping) -> HighCard:
        """The seen cards where they are seen, the rest dealt in deck order."""
        obs = observation
        state = cls(HighCardOptions.model_validate(dict(options)), 2, 0)
        seat = obs["seat"]
        seen = set(obs["hand"]) | set(obs["trick"]) | set(obs["won"])
        rest = [c for c in TOY_DECK if c not in seen]
        state.hands[seat] = list(obs["hand"])
        state.hands[1 - seat] = rest[:obs["hand_sizes"][1 - seat]]
        state.stock = rest[obs["hand_sizes"][1 - seat]:]
        state.trick, state.won = list(obs["trick"]), list(obs["won"])
        state.points, state.turn = list(obs["scores"]), obs["turn"]
        return state


def high_card_policy(state: HighCard, seat: int, legal: list, rng: random.Random) -> str:
    """Playouts play the highest card."""
    high_card_policy.calls += 1
    return max(legal, key=lambda c: VALUE[c[0]])


high_card_policy.calls = 0

HOOKS = SearchHooks(
    profiles={"tuned": Profile(policy=high_card_policy, scale=6.0)},
    bots={"toy_high_card_bot": {"iterations": 40, "exploration": 0.4}},
    pick_bot=lambda seats, options: "toy_high_card_bot",
)


class HighCardWithHooks(HighCard):
    """The toy game declaring its own search knowledge, as the real games do."""

    @classmethod
    def search_hooks(cls) -> SearchHooks:
        """A playout policy and a shipped bot."""
        return HOOKS


@pytest.fixture
def toy():
    """Register a toy game class under TOY (as a game module does); unregister afterwards."""

    def install(cls: type[GameState] = HighCard) -> str:
        register(cls)
        return TOY

    yield install
    GAMES.pop(TOY, None)


def _playing(seed: int, moves: int) -> HighCard:
    """A toy game `moves` random moves in."""
    state = get_game(TOY)(HighCardOptions(), 2, seed)
    rng = random.Random(seed)
    for _ in range(moves):
        state.apply({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})
    return state


# -- a new game plugs into search ------------------------------------------------------------------


def test_a_game_without_hooks_is_searched_with_the_generic_defaults(toy):
    toy()
    assert search_hooks(TOY) is GENERIC
    assert profile_for(TOY) == profile_for(TOY, "policy") == profile_for(TOY, "paired") == Profile()
    assert profile_for(TOY, "random") == RANDOM_PLAYOUTS
    state = _playing(3, 3)
    seat = state.to_act()[0]
    picks = [ISMCTS(iterations=60, seed=1).search(state, seat, random.Random(2)) for _ in range(2)]
    assert picks[0] == picks[1] and picks[0] in state.legal_actions(seat)
    assert shipped_bot(TOY, 2, {}) == TOY and TOY not in shipped_bots()


def test_the_search_bot_plays_a_game_without_hooks_from_its_observations(toy):
    toy()
    report = check_search(TOY, 2, games=4, iterations=20)
    assert report.games == 4 and report.probes["rebuilt"] > 4 and report.probes["searches"] > 0


def test_a_game_declares_its_own_playouts_and_shipped_bot(toy):
    toy(HighCardWithHooks)
    assert search_hooks(TOY) is HOOKS
    assert profile_for(TOY, "policy") is HOOKS.profiles["tuned"]
    state = _playing(5, 2)
    seat = state.to_act()[0]
    high_card_policy.calls = 0
    ISMCTS(iterations=30, seed=1).search(state, seat, random.Random(2))
    assert high_card_policy.calls > 0
    assert shipped_bot(TOY, 2, {}) == "toy_high_card_bot"
    assert shipped_bots()["toy_high_card_bot"] == {"iterations": 40, "exploration": 0.4}
    # A config names the shipped bot as arena.search.bot:ismcts_<bot>, and a per-game bot takes
    # its settings at game_start.
    bot = importlib.import_module("arena.search.bot").ismcts_toy_high_card_bot()
    assert (bot.search.iterations, bot.search.c) == (40, 0.4)
    per_game = ISMCTSBot(iterations=10, per_game=True)
    per_game.game_start({"type": "game_start", "game": TOY, "options": {}, "seat": seat,
                         "players": ["a", "b"]})
    assert per_game.search.c == 0.4
    obs = state.observation(seat)
    assert per_game.choose(obs, state.legal_actions(seat)) in state.legal_actions(seat)
    check_search(TOY, 2, games=2)


def test_arena_search_names_no_game():
    """Game-independent search only: no game's name and no import of a game's module."""
    names = game_names()
    shared = {"__init__", "base", "chance"}
    games_modules = {p.stem for p in (ARENA / "games").glob("*.py")} - shared
    for path in sorted((ARENA / "search").glob("*.py")):
        text = path.read_text()
        for name in names:
            assert not re.search(rf"\b{name}\b", text), (path.name, name)
        for module in games_modules:
            assert f"arena.games.{module}" not in text, (path.name, module)


# -- the kit's search checks -----------------------------------------------------------------------


def _tables():
    """Every registered game at each seat count, with the defaults and each declared variant."""
    out = []
    for name in game_names():
        cls = get_game(name)
        for seats in cls.game_type.seat_counts:
            valid = option_sets(name, seats)
            out += [(name, seats, opts) for opts in [{}] + [dict(v) for v in cls.game_type.variants]
                    if opts in valid]
    return out


TABLES = _tables()


@pytest.mark.parametrize("name,seats,options", TABLES,
                         ids=[f"{n}-{s}p-{'variant' if o else 'default'}-{i}"
                              for i, (n, s, o) in enumerate(TABLES)])
def test_every_registered_game_passes_the_search_checks(name, seats, options):
    report = check_search(name, seats, options)
    assert report.games == 1 and report.probes["rebuilt"] > 0 and report.probes["searches"] > 0


def test_every_real_game_declares_its_hooks_and_a_bot_for_each_table():
    for name in ("xeri", "crossfire", "crosswalk", "battlefield_cribbage"):
        hooks = search_hooks(name)
        assert hooks is not GENERIC and "tuned" in hooks.profiles
        for seats in get_game(name).game_type.seat_counts:
            assert shipped_bot(name, seats, {}) in hooks.bots


@pytest.mark.parametrize("hooks,match", [
    ("not hooks", r"returned a str, not a SearchHooks"),
    (SearchHooks(profiles={"greedy": Profile()}), r"profile kind 'greedy' is none of"),
    (SearchHooks(profiles={"tuned": {"scale": 3}}), r"profile 'tuned' is a dict, not a Profile"),
    (SearchHooks(bots={"toy": {"iterations": 5, "budget": 3}}), r"unknown settings \['budget'\]"),
    (SearchHooks(bots={"toy": {"profile": "greedy"}}), r"unknown profile kind 'greedy'"),
    (SearchHooks(bots={"xeri": {}}), r"bot 'xeri' is declared by both 'toy_high_card' and 'xeri'"),
    (SearchHooks(bots={"toy_a": {}}), r"the bot picked for this table, 'toy_high_card', is none"),
    (SearchHooks(bots={"toy_a": {}}, pick_bot=lambda seats, options: "toy_b"), r"'toy_b', is none"),
])
def test_the_kit_names_what_is_wrong_with_a_games_hooks(toy, hooks, match):
    class BadHooks(HighCard):
        @classmethod
        def search_hooks(cls):
            return hooks

    toy(BadHooks)
    with pytest.raises(ConformanceError, match=match) as info:
        check_search_hooks(TOY, 2)
    assert info.value.game == TOY and str(info.value).startswith(f"{TOY} seats=2 ")


# -- the web: a game's renderer is its one file ----------------------------------------------------


STATIC = ARENA / "web" / "static"


@pytest.mark.parametrize("name", game_names())
def test_every_registered_game_has_a_renderer_that_registers_itself(name):
    renderer = STATIC / "js" / "games" / f"{name}.js"
    assert f'ArenaReplay.register("{name}"' in renderer.read_text()


def test_the_shared_web_files_name_no_game():
    shared = [p for p in STATIC.rglob("*") if p.is_file() and p.parent.name != "games"]
    shared += list((ARENA / "web" / "templates").glob("*.html"))
    assert shared
    for path in shared:
        text = path.read_text()
        for name in game_names():
            assert not re.search(rf"\b{name}\b", text), (path.name, name)

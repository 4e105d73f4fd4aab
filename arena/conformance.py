"""The conformance kit: random-play checks that every registered game must pass.

`check_game` plays seeded random games and checks, at every step, the game contract of
`arena.games.base`: seats to act and their legal actions, card accounting, no hidden card in any
observation, JSON round trips, refusal of illegal actions without side effects, independent clones,
determinism, and a well-formed result. `hypothesis_check` lets Hypothesis choose the seed and every
action (it tries always-first and always-last choices that uniform random play almost never makes),
and `check_cross_process` replays games under another PYTHONHASHSEED to catch set-order dependence.

Every failure raises `ConformanceError`, whose message names the game, seats, options, seed, step
and what failed; its `actions` attribute holds the actions applied before the failure, so the
failing state can be rebuilt with `new_game(game, options, num_seats, seed)` and those actions.

    from arena.conformance import check_game
    report = check_game("xeri", 2, {"jack_xeri": "jack_on_jack_20"}, games=50)
"""

from __future__ import annotations

import enum
import json
import math
import os
import random
import re
import subprocess
import sys
import time
import types
import typing
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson
from pydantic import ValidationError

from arena.cards import derive_seed
from arena.errors import ArenaError, GameOptionsError, IllegalActionError
from arena.games import GAMES, game_names, get_game, make_options, new_game
from arena.games.base import GameResult, GameState, ranks_from_scores

# (step, seat, legal actions) -> index of the chosen action.
Chooser = Callable[[int, int, list], int]

# Probes that `skip` may leave out while triaging a game (the per-step invariants always run).
SKIPPABLE = frozenset({"illegal", "clone", "aliasing", "replay", "deals", "determinize"})

# Determinizations drawn per state by the coverage check before it gives up on an unseen place.
MAX_COVERAGE_SAMPLES = 6000

# Steps a clone usually plays before the original is compared with its state before cloning.
CLONE_STEPS = 6

# Replays compare full views and observations every this many steps (and the seats to act always).
REPLAY_EVERY = 8

# An action no game can have: its "type" is not a word any game would use.
BOGUS_ACTION = {"type": "__conformance_bogus__", "card": "??"}


class ConformanceError(ArenaError):
    """A game broke its contract; the message names the game, seats, options, seed, step, check."""

    def __init__(
        self,
        message: str,
        *,
        game: str = "",
        num_seats: int = 0,
        options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        step: int | None = None,
        actions: Sequence[Mapping[int, Any]] = (),
    ):
        super().__init__(message)
        self.game = game
        self.num_seats = num_seats
        self.options = dict(options or {})
        self.seed = seed
        self.step = step
        self.actions = [dict(a) for a in actions]


@dataclass
class Report:
    """What one `check_game` or `hypothesis_check` run did: games, steps, time, probe counts."""

    game: str
    num_seats: int
    options: dict
    seed: int
    games: int = 0
    steps: int = 0
    seconds: float = 0.0
    moves_per_second: float = 0.0
    # How many times each kind of probe ran (illegal actions tried, clones played, ...).
    probes: dict[str, int] = field(default_factory=dict)

    def _finish(self, started: float) -> Report:
        self.seconds = time.perf_counter() - started
        self.moves_per_second = self.steps / self.seconds if self.seconds > 0 else 0.0
        return self


# -- option sets and cases ----------------------------------------------------------------------


def _union_args(annotation: Any) -> tuple:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _same(a: Any, b: Any) -> bool:
    # True == 1 in Python, but a bool option set to 1 is not the default True.
    return type(a) is type(b) and a == b


def _field_alternatives(info: Any) -> list:
    """Values of one option worth covering besides its default: Literal values, bools, None."""
    default = info.get_default(call_default_factory=True)
    values: list = []
    numeric = False
    optional = False
    for arg in _union_args(info.annotation):
        if arg is type(None):
            optional = True
        elif arg is bool:
            values += [False, True]
        elif typing.get_origin(arg) is typing.Literal:
            values += list(typing.get_args(arg))
        elif isinstance(arg, type) and issubclass(arg, enum.Enum):
            values += list(arg)
        elif arg in (int, float):
            numeric = True
    if optional:
        values.append(None)
        if default is None and numeric:
            # A number for an option that is off by default: only one the author gave as an example.
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            values += list(info.examples or extra.get("examples") or [])
    out: list = []
    for v in values:
        if not _same(v, default) and not any(_same(v, o) for o in out):
            out.append(v)
    return out


def _options_key(options: Mapping[str, Any]) -> str:
    return json.dumps(options, sort_keys=True, default=str)


def option_sets(game_name: str, num_seats: int | None = None) -> list[dict]:
    """The defaults, each single-option alternative and the declared variants of a game.

    With `num_seats`, only the sets that `validate_options` accepts for that many seats; without,
    the sets valid for at least one of the game's seat counts. A declared variant that the options
    model or every seat count rejects is a mistake of the game: ConformanceError.
    """
    cls = get_game(game_name)
    model = cls.game_type.options_model
    all_counts = list(cls.game_type.seat_counts)
    for variant in cls.game_type.variants:
        _check_variant(cls, game_name, dict(variant), all_counts)
    candidates: list[dict] = [{}]
    for fname, info in model.model_fields.items():
        candidates += [{fname: v} for v in _field_alternatives(info)]
    candidates += [dict(v) for v in cls.game_type.variants]
    seat_counts = [num_seats] if num_seats is not None else all_counts
    out: list[dict] = []
    seen: set[str] = set()
    for raw in candidates:
        key = _options_key(raw)
        if key in seen:
            continue
        seen.add(key)
        try:
            parsed = model.model_validate(raw)
        except ValidationError:
            continue
        if any(_accepts(cls, parsed, n) for n in seat_counts):
            out.append(raw)
    return out


def _check_variant(cls: type[GameState], game_name: str, raw: dict, seat_counts: list[int]) -> None:
    """A declared variant must be valid options for at least one seat count."""
    key = _options_key(raw)
    try:
        parsed = cls.game_type.options_model.model_validate(raw)
    except ValidationError as exc:
        raise ConformanceError(
            f"{game_name}: declared variant {key} is invalid: {exc.errors()[0]['msg']}",
            game=game_name,
            options=raw,
        ) from None
    if not any(_accepts(cls, parsed, n) for n in seat_counts):
        raise ConformanceError(
            f"{game_name}: declared variant {key} is valid for none of the seat counts "
            f"{seat_counts}",
            game=game_name,
            options=raw,
        )


def _accepts(cls: type[GameState], parsed: Any, num_seats: int) -> bool:
    try:
        cls.validate_options(parsed, num_seats)
    except GameOptionsError:
        return False
    return True


def cases(names: Iterable[str] | None = None) -> list[tuple[str, int, dict]]:
    """(game, seats, options) for every registered game, seat count and option set valid there."""
    out = []
    for name in names if names is not None else game_names():
        for seats in get_game(name).game_type.seat_counts:
            out += [(name, seats, opts) for opts in option_sets(name, seats)]
    return out


def case_id(case: tuple[str, int, dict]) -> str:
    """A short readable id for a case, e.g. `xeri-2p-jack_xeri=jack_on_jack_20`."""
    name, seats, opts = case
    tail = ",".join(f"{k}={v}" for k, v in opts.items()) or "default"
    return f"{name}-{seats}p-{tail}"


# -- JSON helpers -------------------------------------------------------------------------------


def json_strings(value: Any) -> set[str]:
    """Every string inside a JSON value, dict keys included (what a leak check looks for)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, dict):
            found.update(k for k in item if isinstance(k, str))
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return found


def _leaked(text: str, hidden: Iterable[str]) -> list[str]:
    """The hidden cards that occur as a whole string (a key or a value) in a JSON text.

    Exact and fast: inside JSON text a quote is either a string delimiter or escaped, so the quoted
    card (as json.dumps writes it) occurs only where some string equals the card.
    """
    needles = _NEEDLES
    found = []
    for card in hidden:
        needle = needles.get(card)
        if needle is None:
            needle = needles[card] = json.dumps(card)
        if needle in text:
            found.append(card)
    return sorted(found)


# Card -> its JSON text, e.g. AS -> "AS" with the quotes (cards are few, the lookups many).
_NEEDLES: dict[str, str] = {}


def _first_diff(a: Any, b: Any, path: str = "$") -> str:
    """Where two JSON values first differ, as `path: a != b`."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in b:
                return f"{path}.{k}: only before ({_short(a[k])})"
            if k not in a:
                return f"{path}.{k}: only after ({_short(b[k])})"
            if a[k] != b[k] or type(a[k]) is not type(b[k]):
                return _first_diff(a[k], b[k], f"{path}.{k}")
        if list(a) != list(b):
            return f"{path}: key order {list(a)} != {list(b)}"
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y or type(x) is not type(y):
                return _first_diff(x, y, f"{path}[{i}]")
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
    return f"{path}: {_short(a)} != {_short(b)}"


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def scribble(value: Any) -> None:
    """Scribble over a JSON value in place, as a careless in-process bot might."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
            v["__conformance_scribble__"] = 1
        elif isinstance(v, list):
            stack.extend(v)
            v.append("__conformance_scribble__")
            v.reverse()


# -- the checker --------------------------------------------------------------------------------


def random_chooser(seed: int) -> Chooser:
    """A chooser picking uniformly among the legal actions with its own seeded RNG."""
    rng = random.Random(seed)
    return lambda step, seat, legal: rng.randrange(len(legal))


class _Step(NamedTuple):
    """What one step looked like, as JSON values after a round trip: for replays and clones."""

    acting: list[int]
    view: dict
    observations: list[dict]
    legal: list[list]
    scores: list[float]


class _Checker:
    """Plays and checks games of one (game, seats, options) case; raises ConformanceError."""

    def __init__(
        self,
        name: str,
        num_seats: int,
        options: Mapping[str, Any] | None,
        *,
        probe_rate: float = 1.0,
        kept_clones: int = 2,
        check_seed: int = 0,
        skip: Iterable[str] = (),
    ):
        self.name = name
        self.num_seats = num_seats
        self.raw_options = dict(options or {})
        self.cls = get_game(name)
        self.options = make_options(name, self.raw_options)
        self.probe_rate = probe_rate
        self.kept_clones = kept_clones
        self.skip = frozenset(skip)
        unknown = self.skip - SKIPPABLE
        if unknown:
            raise ValueError(
                f"unknown checks to skip {sorted(unknown)}; known: {sorted(SKIPPABLE)}"
            )
        self.max_steps = self.cls.max_steps(self.options, num_seats)
        self.overrides_result = self.cls.result is not GameState.result
        self.determinizes = self.cls.unknown_deal is not GameState.unknown_deal
        self.report = Report(name, num_seats, dict(self.raw_options), check_seed)
        self.initial_deals: list[str] = []
        # Context of the current game, for error messages.
        self.seed: int | None = None
        self.step: int | None = None
        self.actions: list[dict] = []

    # -- helpers --------------------------------------------------------------------------------
    def fail(self, what: str) -> ConformanceError:
        """A ConformanceError for `what`, naming the game, seats, options, seed and step."""
        opts = _options_key(self.raw_options) if self.raw_options else "{}"
        where = f" step={self.step}" if self.step is not None else ""
        msg = f"{self.name} seats={self.num_seats} options={opts} seed={self.seed}{where}: {what}"
        return ConformanceError(
            msg,
            game=self.name,
            num_seats=self.num_seats,
            options=self.raw_options,
            seed=self.seed,
            step=self.step,
            actions=self.actions,
        )

    def count(self, probe: str, n: int = 1) -> None:
        """Add `n` to the report's count of a probe."""
        self.report.probes[probe] = self.report.probes.get(probe, 0) + n

    def call(self, what: str, fn: Callable, *args: Any) -> Any:
        """Call game code; any exception becomes a ConformanceError naming the call."""
        try:
            return fn(*args)
        except ConformanceError:
            raise
        except Exception as exc:
            raise self.fail(f"{what} raised {type(exc).__name__}: {exc}") from exc

    def roundtrip(self, what: str, value: Any) -> tuple[str, Any]:
        """JSON text and reloaded value; fails unless it loads back equal (tuples, int keys...)."""
        # orjson first: json was half of the observation sweep's time. Anything orjson refuses or
        # does not load back equal (int keys, NaN, tuples) goes through json, whose text and
        # errors the failure messages quote.
        try:
            text = orjson.dumps(value).decode()
        except TypeError:
            text = None
        if text is not None:
            back = orjson.loads(text)
            if back == value:
                return text, back
        try:
            text = json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise self.fail(f"{what} is not JSON: {exc}") from None
        back = json.loads(text)
        if back != value:
            raise self.fail(f"{what} changes in a JSON round trip: {_first_diff(value, back)}")
        return text, back

    def same_view(self, state: GameState, view: dict, what: str) -> None:
        """Fail with the first difference unless state.full_view() equals `view`."""
        now = self.call("full_view()", state.full_view)
        if now != view:
            raise self.fail(f"{what}: {_first_diff(view, now)}")

    # -- one game -------------------------------------------------------------------------------
    def new(self, seed: int) -> GameState:
        """A new game of this case from `seed`."""
        return self.call("new_game", new_game, self.name, self.options, self.num_seats, seed)

    def play_one(self, seed: int, choose: Chooser, probe_rng: random.Random | None = None) -> None:
        """Play one game choosing actions with `choose`, checking every step; then replay it."""
        self.seed, self.step, self.actions = seed, 0, []
        probe_rng = probe_rng or random.Random(derive_seed("probe", seed))
        state = self.new(seed)
        deck = self.check_deck(state)
        teams = self.check_teams(state)
        zones = self.call("card_zones()", state.card_zones)
        self.initial_deals.append(json.dumps(zones, sort_keys=True, default=str))
        steps: list[_Step] = []
        kept: list[tuple[int, GameState]] = []
        history: dict[int, list] = {s: [] for s in range(self.num_seats)}
        probes = 0
        while True:
            self.step = len(steps)
            record = self.check_step(state, deck, teams)
            steps.append(record)
            acting = record.acting
            if not acting:
                break
            if self.step >= self.max_steps:
                raise self.fail(f"not over after max_steps={self.max_steps} steps")
            rng_state = state.rng.getstate()
            self.check_no_result(state)
            probing = probe_rng.random() < self.probe_rate
            if probing and "illegal" not in self.skip:
                self.probe_illegal(state, record, history, rng_state)
            if probing and "clone" not in self.skip:
                self.probe_clone(state, record.view, rng_state, probe_rng)
                # Keep a few clones, spread over the game (reservoir sampling), to replay later.
                probes += 1
                if len(kept) < self.kept_clones:
                    kept.append((self.step, self.call("clone()", state.clone)))
                elif probe_rng.random() < self.kept_clones / probes:
                    kept[probe_rng.randrange(len(kept))] = (self.step, state.clone())
            actions = {}
            for seat in acting:
                options = record.legal[seat]
                index = choose(self.step, seat, options)
                if not 0 <= index < len(options):
                    raise self.fail(f"chooser gave index {index} of {len(options)} actions")
                actions[seat] = options[index]
            if probing and "aliasing" not in self.skip:
                self.probe_aliasing(state, record, rng_state)
            if probing and self.determinizes and "determinize" not in self.skip:
                self.probe_determinize(state, record, probe_rng)
            self.call(f"apply({actions!r})", state.apply, actions)
            self.actions.append(actions)
            for seat, action in actions.items():
                history[seat].append(action)
            self.report.steps += 1
        self.check_illegal_after_end(state, steps[-1].view)
        result = self.check_result(state, teams)
        if "replay" not in self.skip:
            self.check_replay(seed, steps, result)
        for start, clone in sorted(kept, key=lambda k: k[0]):
            self.check_kept_clone(clone, start, steps, result)
        self.report.games += 1
        self.step = None

    def check_deck(self, state: GameState) -> list[str]:
        """The game's deck, checked to hold unique string cards."""
        deck = self.call("deck()", state.deck)
        if not isinstance(deck, list) or not all(isinstance(c, str) for c in deck):
            raise self.fail(f"deck() is not a list of card strings: {_short(deck)}")
        dupes = sorted(c for c, n in Counter(deck).items() if n > 1)
        if dupes:
            raise self.fail(f"deck() repeats cards {dupes}: cards must be unique strings")
        return deck

    def check_teams(self, state: GameState) -> list[list[int]]:
        """The game's teams, checked to partition the seats."""
        teams = self.call("teams()", state.teams)
        seats = sorted(s for team in teams for s in team)
        if seats != list(range(self.num_seats)):
            raise self.fail(f"teams() {teams} is not a partition of seats 0..{self.num_seats - 1}")
        return [list(t) for t in teams]

    def check_step(self, state: GameState, deck: list[str], teams: list[list[int]]) -> _Step:
        """The invariants that hold at every step; returns the step's record."""
        n = self.num_seats
        acting = self.call("to_act()", state.to_act)
        if not isinstance(acting, list) or any(
            type(s) is not int or not 0 <= s < n for s in acting
        ):
            raise self.fail(f"to_act() = {acting!r} is not a list of seats in 0..{n - 1}")
        if acting != sorted(set(acting)):
            raise self.fail(f"to_act() = {acting} is not ascending without repeats")
        if state.is_over() != (not acting):
            raise self.fail(f"is_over() is {state.is_over()} while to_act() is {acting}")
        if len(acting) > 1 and not self.cls.game_type.simultaneous:
            raise self.fail(f"to_act() = {acting} but the game type is not simultaneous")

        _, view = self.roundtrip("full_view()", self.call("full_view()", state.full_view))
        self.check_accounting(self.call("card_zones()", state.card_zones), deck)

        legal_lists = []
        for seat in range(n):
            what = f"legal_actions({seat})"
            actions = self.call(what, state.legal_actions, seat)
            if not isinstance(actions, list):
                raise self.fail(f"{what} is not a list: {_short(actions)}")
            legal_lists.append(self.roundtrip(what, actions)[1])
            if seat in acting:
                if not actions:
                    raise self.fail(f"seat {seat} must act but has no legal action")
                for a in actions:
                    if not isinstance(a, dict) or not isinstance(a.get("type"), str):
                        raise self.fail(f"{what} has {_short(a)}: not an object with a 'type'")
                texts = [json.dumps(a, sort_keys=True) for a in actions]
                if len(set(texts)) != len(texts):
                    dupes = sorted(t for t, k in Counter(texts).items() if k > 1)
                    raise self.fail(f"{what} lists an action twice: {dupes[0]}")
            elif actions:
                raise self.fail(
                    f"seat {seat} is not to act but has legal actions {_short(actions)}"
                )

        deck_set = set(deck)
        observations = []
        for seat in range(n):
            what = f"observation({seat})"
            obs = self.call(what, state.observation, seat)
            if not isinstance(obs, dict):
                raise self.fail(f"{what} is not a JSON object: {_short(obs)}")
            text, back = self.roundtrip(what, obs)
            observations.append(back)
            if obs.get("game") != self.name or obs.get("seat") != seat:
                raise self.fail(
                    f"{what} must hold \"game\": {self.name!r} and \"seat\": {seat}, "
                    f"has {obs.get('game')!r} and {obs.get('seat')!r}"
                )
            if "legal_actions" in obs:
                raise self.fail(f"{what} includes legal_actions (they travel beside it)")
            hidden = self.call(f"hidden_from({seat})", state.hidden_from, seat)
            if not isinstance(hidden, (set, frozenset)):
                raise self.fail(f"hidden_from({seat}) is not a set: {_short(hidden)}")
            stray = hidden - deck_set
            if stray:
                raise self.fail(f"hidden_from({seat}) has cards not in deck(): {sorted(stray)}")
            leaked = _leaked(text, hidden)
            if leaked:
                raise self.fail(f"{what} leaks cards hidden from seat {seat}: {leaked}")
            self.check_incremental(state, seat, back)

        scores = self.call("scores()", state.scores)
        self.check_scores("scores()", scores, teams)
        return _Step(list(acting), view, observations, legal_lists, list(scores))

    def check_incremental(self, state: GameState, seat: int, observed: dict) -> None:
        """observation_json(seat) and observation_from_scratch(seat) must equal observation(seat)."""
        what = f"observation_json({seat})"
        encoded = self.call(what, state.observation_json, seat)
        if not isinstance(encoded, bytes):
            raise self.fail(f"{what} is not bytes: {_short(encoded)}")
        try:
            sent = orjson.loads(encoded)
        except orjson.JSONDecodeError as exc:
            raise self.fail(f"{what} is not JSON: {exc}") from None
        if sent != observed:
            raise self.fail(f"{what} differs from observation({seat}): {_first_diff(observed, sent)}")
        what = f"observation_from_scratch({seat})"
        _, rebuilt = self.roundtrip(what, self.call(what, state.observation_from_scratch, seat))
        if rebuilt != observed:
            raise self.fail(
                f"observation({seat}) differs from a build from scratch: {_first_diff(rebuilt, observed)}"
            )
        self.count("incremental_observations")

    def check_accounting(self, zones: Any, deck: list[str]) -> None:
        """Check the card zones hold exactly the deck."""
        if not isinstance(zones, dict) or not all(
            isinstance(z, str) and isinstance(cards, list) for z, cards in zones.items()
        ):
            raise self.fail(f"card_zones() is not a dict of lists: {_short(zones)}")
        have = Counter(c for cards in zones.values() for c in cards)
        want = Counter(deck)
        if have != want:
            missing = sorted((want - have).elements())
            extra = sorted((have - want).elements())
            where = {
                c: [z for z, cards in zones.items() if c in cards] for c in sorted(set(extra))
            }
            raise self.fail(
                f"card accounting: zones {sorted(zones)} miss {missing} and have extra {extra}"
                + (f" (extra found in {where})" if extra else "")
            )

    def check_scores(self, what: str, scores: Any, teams: list[list[int]]) -> None:
        """Check scores are finite, one per seat, and shared within teams."""
        if not isinstance(scores, list) or len(scores) != self.num_seats:
            raise self.fail(f"{what} = {_short(scores)} is not a list of {self.num_seats} numbers")
        for s in scores:
            if type(s) not in (int, float) or not math.isfinite(s):
                raise self.fail(f"{what} = {scores} holds {s!r}, not a finite number")
        for team in teams:
            if len({scores[s] for s in team}) > 1:
                raise self.fail(f"{what} = {scores}: team {team} members have different scores")

    def check_no_result(self, state: GameState) -> None:
        """Check result() refuses to answer before the end."""
        try:
            state.result()
        except ArenaError:
            return
        except Exception as exc:
            raise self.fail(
                f"result() before the end raised {type(exc).__name__} instead of an ArenaError"
            ) from exc
        raise self.fail("result() before the end returned a result instead of raising")

    # -- illegal actions --------------------------------------------------------------------------
    def expect_refusal(
        self, state: GameState, actions: dict, what: str, view: dict, rng_state: tuple
    ) -> None:
        """`apply(actions)` must raise IllegalActionError, full_view and RNG untouched."""
        self.count("illegal")
        try:
            state.apply(actions)
        except IllegalActionError:
            pass
        except Exception as exc:
            raise self.fail(
                f"{what}: apply({_short(actions)}) raised {type(exc).__name__} ({exc}) "
                "instead of IllegalActionError"
            ) from exc
        else:
            raise self.fail(f"{what}: apply({_short(actions)}) was accepted")
        self.same_view(state, view, f"{what}: refused apply({_short(actions)}) changed the state")
        if state.rng.getstate() != rng_state:
            raise self.fail(f"{what}: refused apply({_short(actions)}) advanced the game RNG")

    def probe_illegal(
        self, state: GameState, record: _Step, history: dict[int, list], rng_state: tuple
    ) -> None:
        """Try the illegal submissions a buggy or hostile bot might make."""
        acting, view, legal = record.acting, record.view, record.legal
        base = {s: legal[s][0] for s in acting}
        for seat in acting:
            bogus = {**base, seat: BOGUS_ACTION}
            self.expect_refusal(state, bogus, f"made-up action for seat {seat}", view, rng_state)

            pool = [a for s in acting if s != seat for a in legal[s]]
            pool += [a for s, past in history.items() if s != seat for a in past[-8:]]
            foreign = next((a for a in pool if a not in legal[seat]), None)
            if foreign is not None:
                actions = {**base, seat: foreign}
                what = f"another seat's action for seat {seat}"
                self.expect_refusal(state, actions, what, view, rng_state)

            missing = {s: a for s, a in base.items() if s != seat}
            what = f"no action for acting seat {seat}"
            self.expect_refusal(state, missing, what, view, rng_state)

        idle = [s for s in range(self.num_seats) if s not in acting] + [self.num_seats]
        for seat in idle[:2]:
            extra = {**base, seat: base[acting[0]]}
            what = f"an action for seat {seat}, not to act"
            self.expect_refusal(state, extra, what, view, rng_state)

    def check_illegal_after_end(self, state: GameState, view: dict) -> None:
        """Check a finished game refuses every action and stays unchanged."""
        self.step = len(self.actions)
        rng_state = state.rng.getstate()
        self.expect_refusal(state, {0: BOGUS_ACTION}, "an action after the end", view, rng_state)

    # -- clones and aliasing ----------------------------------------------------------------------
    def probe_clone(
        self, state: GameState, view: dict, rng_state: tuple, probe_rng: random.Random
    ) -> None:
        """A clone equals the original, and playing it on leaves the original untouched.

        Most clones play a few steps (a shared list shows at once); one in eight plays to the end,
        through round ends and scoring.
        """
        self.count("clone")
        clone = self.call("clone()", state.clone)
        if clone is state or type(clone) is not type(state):
            got = "the original itself" if clone is state else type(clone).__name__
            raise self.fail(f"clone() returned {got}")
        self.same_view(clone, view, "clone() differs from the original")
        if clone.rng.getstate() != rng_state:
            raise self.fail("clone() has another RNG state than the original")
        choose = random_chooser(probe_rng.getrandbits(64))
        to_end = probe_rng.random() < 0.125
        steps = 0
        while to_end or steps < CLONE_STEPS:
            acting = self.call("to_act() on a clone", clone.to_act)
            if not acting:
                break
            if steps >= self.max_steps:
                raise self.fail(
                    f"a clone played randomly is not over after max_steps={self.max_steps} steps"
                )
            actions = {}
            for seat in acting:
                options = self.call("legal_actions() on a clone", clone.legal_actions, seat)
                if not options:
                    raise self.fail(
                        f"a clone played randomly for {steps} steps reached a state where "
                        f"seat {seat} must act but has no legal action"
                    )
                actions[seat] = options[choose(steps, seat, options)]
            self.call(f"apply({actions!r}) on a clone", clone.apply, actions)
            steps += 1
        self.same_view(state, view, f"playing a clone for {steps} steps changed the original")
        if state.rng.getstate() != rng_state:
            raise self.fail("playing a clone changed the original's RNG (shared random.Random?)")

    def probe_aliasing(self, state: GameState, record: _Step, rng_state: tuple) -> None:
        """Scribbling over returned observations and action lists must not change the game.

        In-process bots receive these objects; one that sorts or shuffles its hand or its legal
        actions in place must not reach into the game's own lists.
        """
        self.count("aliasing")
        for seat in range(self.num_seats):
            for what, fn, before in (
                (f"observation({seat})", state.observation, record.observations[seat]),
                (f"legal_actions({seat})", state.legal_actions, record.legal[seat]),
            ):
                scribble(self.call(what, fn, seat))
                after = self.call(what, fn, seat)
                full = self.call("full_view()", state.full_view)
                if after != before or full != record.view:
                    diff = (
                        f"{what} {_first_diff(before, after)}"
                        if after != before
                        else f"full_view {_first_diff(record.view, full)}"
                    )
                    raise self.fail(
                        f"changing the value returned by {what} in place changed the game "
                        f"(return copies, not internal lists): {diff}"
                    )
        if state.rng.getstate() != rng_state:
            raise self.fail("observation() or legal_actions() advanced the game RNG")

    def check_kept_clone(
        self, clone: GameState, start: int, steps: list[_Step], result: GameResult
    ) -> None:
        """A clone kept at `start` while the original played on replays the same game."""
        self.count("kept_clone")
        for i, actions in enumerate(self.actions[start:], start):
            self.step = i
            if (i - start) % REPLAY_EVERY == 0:
                self.same_view(
                    clone,
                    steps[i].view,
                    f"a clone taken at step {start}, given the same actions as the original, "
                    f"differs at step {i} (state shared with the original?)",
                )
            self.call(f"apply({actions!r}) on a kept clone", clone.apply, actions)
        self.step = len(self.actions)
        self.same_view(clone, steps[-1].view, f"a clone taken at step {start} ends differently")
        if self.call("result() of a kept clone", clone.result) != result:
            raise self.fail(f"a clone taken at step {start} ends with another result")

    # -- determinization --------------------------------------------------------------------------
    def true_unknown(self, state: GameState, seat: int) -> tuple[Any, dict[str, list[str]]]:
        """The seat's hidden deal and where its cards really are (zone -> cards), checked."""
        deal = self.call(f"unknown_deal({seat})", state.unknown_deal, seat)
        unknown = set(deal.cards)
        if len(unknown) != len(deal.cards):
            raise self.fail(f"unknown_deal({seat}) lists a card twice")
        hidden = self.call(f"hidden_from({seat})", state.hidden_from, seat)
        if not hidden <= unknown:
            raise self.fail(f"unknown_deal({seat}) misses hidden cards {sorted(hidden - unknown)}")
        zones = self.call("card_zones()", state.card_zones)
        actual = {z: [c for c in cards if c in unknown] for z, cards in zones.items()}
        why = deal.check(actual)
        if why:
            raise self.fail(f"unknown_deal({seat}) does not fit the true deal: {why}")
        return deal, actual

    def probe_determinize(self, state: GameState, record: _Step, probe_rng: random.Random) -> None:
        """For every seat: a determinized copy looks the same to that seat, keeps every card it
        knows in place, accounts for every card, leaves the original alone, depends only on what
        the seat knows, and plays on to a legal end."""
        self.count("determinize")
        zones = self.call("card_zones()", state.card_zones)
        zone_of = {c: z for z, cards in zones.items() for c in cards}
        deck = self.call("deck()", state.deck)
        for seat in range(self.num_seats):
            deal, _ = self.true_unknown(state, seat)
            unknown = set(deal.cards)
            key = probe_rng.getrandbits(64)
            det = self.call(f"determinize({seat})", state.determinize, seat, random.Random(key))
            self.same_view(state, record.view, f"determinize({seat}) changed the original")
            if det is state or type(det) is not type(state):
                raise self.fail(f"determinize({seat}) did not return a new {type(state).__name__}")
            obs = self.call(f"observation({seat}) of a determinized copy", det.observation, seat)
            if obs != record.observations[seat]:
                raise self.fail(f"determinize({seat}) changes observation({seat}): "
                                f"{_first_diff(record.observations[seat], obs)}")
            if det.to_act() != record.acting:
                raise self.fail(f"determinize({seat}) changes to_act(): {det.to_act()}")
            dz = self.call("card_zones() of a determinized copy", det.card_zones)
            self.check_accounting(dz, deck)
            for z, cards in dz.items():
                for c in cards:
                    if c not in unknown and zone_of.get(c) != z:
                        raise self.fail(f"determinize({seat}) moved {c}, which seat {seat} can "
                                        f"place, from {zone_of.get(c)} to {z}")
            # Only what the seat knows may shape the copy: determinizing the copy with the same
            # RNG must give the same state as determinizing the original with it.
            again = det.determinize(seat, random.Random(key ^ 1))
            direct = state.determinize(seat, random.Random(key ^ 1))
            a, b = again.full_view(), direct.full_view()
            if a != b:
                raise self.fail(f"determinize({seat}) depends on cards seat {seat} cannot know: "
                                f"{_first_diff(b, a)}")
            self.play_randomly(det, random_chooser(key), CLONE_STEPS, "a determinized copy")
        self.same_view(state, record.view, "playing determinized copies changed the original")

    def play_randomly(self, state: GameState, choose: Chooser, steps: int, what: str) -> None:
        """Play up to `steps` random steps on `state`, which must stay legal."""
        for step in range(steps):
            acting = self.call(f"to_act() on {what}", state.to_act)
            if not acting:
                return
            actions = {}
            for seat in acting:
                options = self.call(f"legal_actions() on {what}", state.legal_actions, seat)
                if not options:
                    raise self.fail(f"{what}: seat {seat} must act but has no legal action")
                actions[seat] = options[choose(step, seat, options)]
            self.call(f"apply({actions!r}) on {what}", state.apply, actions)

    def check_coverage(self, state: GameState, seat: int, rng: random.Random) -> int:
        """Over many determinizations each unknown card shows up in every zone a consistent deal
        allows and in no other; returns the number of samples drawn."""
        deal, _ = self.true_unknown(state, seat)
        possible = deal.possible()
        seen: dict[str, set[str]] = {c: set() for c in deal.cards}
        missing = sum(len(v) for v in possible.values())
        for n in range(1, MAX_COVERAGE_SAMPLES + 1):
            det = state.determinize(seat, rng)
            for z, cards in det.card_zones().items():
                for c in cards:
                    if c in seen and z not in seen[c]:
                        if z not in possible[c]:
                            raise self.fail(f"determinize({seat}) put {c} in {z}, where no deal "
                                            f"consistent with seat {seat}'s view has it")
                        seen[c].add(z)
                        missing -= 1
            if not missing:
                return n
        gaps = {c: sorted(possible[c] - seen[c]) for c in deal.cards if possible[c] - seen[c]}
        raise self.fail(f"after {MAX_COVERAGE_SAMPLES} determinizations for seat {seat} cards never "
                        f"appeared where they could be: {_short(gaps)}")

    # -- the end ----------------------------------------------------------------------------------
    def check_result(self, state: GameState, teams: list[list[int]]) -> GameResult:
        """Check the final result: one entry per seat, ranks consistent with scores and teams."""
        self.step = len(self.actions)
        result = self.call("result()", state.result)
        scores, ranks = list(result.scores), list(result.ranks)
        self.check_scores("result().scores", scores, teams)
        n = self.num_seats
        if len(ranks) != n or any(type(r) is not int for r in ranks):
            raise self.fail(f"result().ranks = {ranks} is not {n} integers")
        for r in ranks:
            if r != 1 + sum(1 for other in ranks if other < r):
                raise self.fail(
                    f"result().ranks = {ranks} are not 1-based competition ranks "
                    "(1 = best, tied seats share a rank, the next rank skips)"
                )
        final = self.call("scores()", state.scores)
        if not self.overrides_result:
            if ranks != ranks_from_scores(scores) or scores != final:
                raise self.fail(
                    f"result() = {scores}/{ranks} differs from ranks_from_scores(scores()) "
                    f"= {final}/{ranks_from_scores(final)}"
                )
        else:
            # A game with a tiebreak rule may order tied scores, never invert different ones.
            for i in range(n):
                for j in range(n):
                    if scores[i] > scores[j] and ranks[i] > ranks[j]:
                        raise self.fail(
                            f"result() ranks seat {i} (score {scores[i]}) below seat {j} "
                            f"(score {scores[j]}): ranks {ranks} disagree with scores {scores}"
                        )
        for team in teams:
            if len({ranks[s] for s in team}) > 1:
                raise self.fail(
                    f"result().ranks = {ranks}: team {team} members have different ranks"
                )
        return result

    def check_replay(self, seed: int, steps: list[_Step], result: GameResult) -> None:
        """Same seed and actions: the same full views, observations, legal actions and result.

        Seats to act are compared at every step, everything else every REPLAY_EVERY steps and at
        the end; a difference is then pinned down by a second replay that compares every step.
        """
        self.count("replay")
        try:
            self.replay(seed, steps, result, REPLAY_EVERY)
        except ConformanceError:
            self.replay(seed, steps, result, 1)
            raise

    def replay(self, seed: int, steps: list[_Step], result: GameResult, every: int) -> None:
        """Replay a game from its seed and actions and compare every `every`-th step."""
        state = self.new(seed)
        what = "a replay of the same seed and actions differs"
        for i, actions in enumerate(self.actions):
            self.step = i
            if i % every == 0:
                self.compare_step(state, steps[i], what)
            elif self.call("to_act()", state.to_act) != steps[i].acting:
                raise self.fail(f"{what}: to_act() {state.to_act()} instead of {steps[i].acting}")
            self.call(f"apply({actions!r}) in a replay", state.apply, actions)
        self.step = len(self.actions)
        self.compare_step(state, steps[-1], what)
        replayed = self.call("result() in a replay", state.result)
        if replayed != result:
            raise self.fail(f"{what}: result {replayed} instead of {result}")

    def compare_step(self, state: GameState, record: _Step, what: str) -> None:
        """Check a replayed step matches the recorded one."""
        acting = self.call("to_act()", state.to_act)
        if acting != record.acting:
            raise self.fail(f"{what}: to_act() {acting} instead of {record.acting}")
        self.same_view(state, record.view, f"{what}: full_view")
        for seat in range(self.num_seats):
            obs = self.call(f"observation({seat})", state.observation, seat)
            if obs != record.observations[seat]:
                diff = _first_diff(record.observations[seat], obs)
                raise self.fail(f"{what}: observation({seat}) {diff}")
            legal = self.call(f"legal_actions({seat})", state.legal_actions, seat)
            if legal != record.legal[seat]:
                diff = _first_diff(record.legal[seat], legal)
                raise self.fail(f"{what}: legal_actions({seat}) {diff}")
        scores = self.call("scores()", state.scores)
        if scores != record.scores:
            raise self.fail(f"{what}: scores() {scores} instead of {record.scores}")

    def check_deals_differ(self) -> None:
        """Different seeds must (almost always) deal differently: is the seed used at all?"""
        self.seed, self.step = None, 0
        if len(self.initial_deals) >= 3 and len(set(self.initial_deals)) == 1:
            raise self.fail(
                f"{len(self.initial_deals)} different seeds all start with the same card_zones(): "
                "is all chance drawn from self.rng?"
            )


# -- public entry points --------------------------------------------------------------------------


def game_seeds(
    name: str, num_seats: int, options: Mapping[str, Any] | None, seed: int, games: int
) -> list[int]:
    """The game seeds `check_game` uses: derived from the check seed and the case."""
    key = _options_key(dict(options or {}))
    return [derive_seed("conformance", name, num_seats, key, seed, i) for i in range(games)]


def check_game(
    name: str,
    num_seats: int,
    options: Mapping[str, Any] | None = None,
    games: int = 10,
    seed: int = 0,
    *,
    probe_rate: float = 1.0,
    kept_clones: int = 2,
    skip: Iterable[str] = (),
) -> Report:
    """Play `games` seeded random games of `name` and check the game contract at every step.

    `probe_rate` is the share of steps at which the costly probes run (illegal actions, a clone
    played on, in-place scribbling over returned values); the other checks run at every step.
    `skip` leaves out named probes (see SKIPPABLE) while triaging a game with a known failure.
    Raises ConformanceError at the first failure; returns a Report.
    """
    started = time.perf_counter()
    checker = _Checker(
        name,
        num_seats,
        options,
        probe_rate=probe_rate,
        kept_clones=kept_clones,
        check_seed=seed,
        skip=skip,
    )
    for game_seed in game_seeds(name, num_seats, options, seed, games):
        checker.play_one(game_seed, random_chooser(derive_seed("actions", game_seed)))
    if "deals" not in checker.skip:
        checker.check_deals_differ()
    return checker.report._finish(started)


def check_determinization(
    name: str,
    num_seats: int,
    options: Mapping[str, Any] | None = None,
    games: int = 1,
    states: int = 3,
    seed: int = 0,
) -> Report:
    """Statistical check of `determinize`: at `states` random points of each of `games` random
    games, for every seat, the determinized copies put each unknown card in every zone a consistent
    deal allows and in no other (fixed seeds, so the outcome is reproducible)."""
    started = time.perf_counter()
    checker = _Checker(name, num_seats, options, check_seed=seed)
    for game_seed in game_seeds(name, num_seats, options, seed, games):
        rng = random.Random(derive_seed("determinization", game_seed))
        checker.seed, checker.step = game_seed, 0
        state = checker.new(game_seed)
        path = []
        while state.to_act():
            path.append(state.clone())
            state.apply({s: rng.choice(state.legal_actions(s)) for s in state.to_act()})
        for step in sorted(rng.sample(range(len(path)), min(states, len(path)))):
            checker.step = step
            for seat in range(num_seats):
                checker.count("coverage_samples", checker.check_coverage(path[step], seat, rng))
            checker.count("coverage_states")
        checker.report.games += 1
        checker.report.steps += len(path)
    return checker.report._finish(started)


def check_observations(
    name: str,
    num_seats: int,
    options: Mapping[str, Any] | None = None,
    games: int = 100,
    seed: int = 0,
) -> Report:
    """Play `games` seeded random games and, at every step and for every seat, hold the cached
    observation(), its encoding observation_json() and a build from scratch to one another.

    Cheaper per game than `check_game` (no other probe), so it can cover thousands of games; clones
    taken along the way are played on and checked too, since caches must not be shared with them.
    """
    started = time.perf_counter()
    checker = _Checker(name, num_seats, options, check_seed=seed)
    for game_seed in game_seeds(name, num_seats, options, seed, games):
        rng = random.Random(derive_seed("observations", game_seed))
        checker.seed, checker.step = game_seed, 0
        state = checker.new(game_seed)
        branch = None
        while state.to_act():
            for current in (state, branch) if branch is not None else (state,):
                for seat in range(num_seats):
                    observed = checker.call(f"observation({seat})", current.observation, seat)
                    checker.check_incremental(current, seat, json.loads(json.dumps(observed)))
            if branch is None and rng.random() < 0.05:
                branch = state.clone()  # played on separately: its caches must be its own
            for current in (state, branch) if branch is not None else (state,):
                if current.to_act():
                    current.apply({s: rng.choice(current.legal_actions(s)) for s in current.to_act()})
            if branch is not None and not branch.to_act():
                branch = None
            checker.step += 1
        checker.report.games += 1
        checker.report.steps += checker.step
    return checker.report._finish(started)


# The settings a shipped search bot may declare (ISMCTSBot's).
BOT_SETTINGS = frozenset({"iterations", "exploration", "profile"})


def check_search_hooks(name: str, num_seats: int, options: Mapping[str, Any] | None = None) -> None:
    """Check the search hooks `name` declares (GameState.search_hooks, arena.search.hooks): None or
    a SearchHooks whose profiles are Profiles of known kinds, whose bots have ISMCTSBot settings
    (a known profile kind), bot names no other game uses, and, if it declares bots, one of them
    picked for this table."""
    from arena.search.hooks import PROFILE_KINDS, SearchHooks, declared_bots
    from arena.search.playouts import Profile

    def fail(what: str) -> ConformanceError:
        opts = _options_key(dict(options or {}))
        return ConformanceError(f"{name} seats={num_seats} options={opts}: search hooks: {what}",
                                game=name, num_seats=num_seats, options=options)

    hooks = get_game(name).search_hooks()
    if hooks is None:
        return
    if not isinstance(hooks, SearchHooks):
        raise fail(f"search_hooks() returned a {type(hooks).__name__}, not a SearchHooks")
    for kind, profile in hooks.profiles.items():
        if kind not in PROFILE_KINDS:
            raise fail(f"profile kind {kind!r} is none of {list(PROFILE_KINDS)}")
        if not isinstance(profile, Profile):
            raise fail(f"profile {kind!r} is a {type(profile).__name__}, not a Profile")
    for bot, settings in hooks.bots.items():
        unknown = set(settings) - BOT_SETTINGS
        if unknown:
            raise fail(f"bot {bot!r} has unknown settings {sorted(unknown)}")
        if settings.get("profile", "tuned") not in PROFILE_KINDS:
            raise fail(f"bot {bot!r} searches with an unknown profile kind {settings['profile']!r}")
    try:
        declared_bots()
    except ValueError as exc:
        raise fail(str(exc)) from None
    if hooks.bots:
        picked = name if hooks.pick_bot is None else hooks.pick_bot(num_seats, dict(options or {}))
        if picked not in hooks.bots:
            raise fail(f"the bot picked for this table, {picked!r}, is none of "
                       f"{sorted(hooks.bots)}")


def check_text_view(name: str, num_seats: int, options: Mapping[str, Any] | None = None,
                    games: int = 1, seed: int = 0) -> int:
    """Check the game's text view (GameState.text_view, arena.games.text): it has one; over
    `games` seeded random games it draws every observation, full view and legal action as text,
    says what each step did, and no seat's drawing (nor its account of a step) shows a card
    hidden from that seat. Returns the number of steps drawn."""
    from arena.games.text import TextView

    def fail(what: str) -> ConformanceError:
        opts = _options_key(dict(options or {}))
        return ConformanceError(f"{name} seats={num_seats} options={opts}: text view: {what}",
                                game=name, num_seats=num_seats, options=options)

    view = get_game(name).text_view()
    if not isinstance(view, TextView):
        raise fail(f"text_view() returned {type(view).__name__}, not a TextView: every game "
                   "needs one (`arena replay`, `arena play`)")

    def lines(what: str, value: Any) -> str:
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise fail(f"{what} is not a list of strings: {_short(value)}")
        return "\n".join(value)

    def leaks(text: str, hidden: set[str]) -> list[str]:
        return sorted(hidden & set(re.findall(r"[A-Za-z0-9]+", text)))

    steps = 0
    for game_seed in game_seeds(name, num_seats, options, seed, games):
        state = new_game(name, options, num_seats, game_seed)
        rng = random.Random(derive_seed("text", game_seed))
        before = [state.observation(s) for s in range(num_seats)]
        full_before = state.full_view()
        while True:
            lines("full()", view.full(full_before))
            for seat in range(num_seats):
                hidden = state.hidden_from(seat)
                text = lines(f"observation() of seat {seat}", view.observation(before[seat]))
                if leaks(text, hidden):
                    raise fail(f"seat {seat}'s drawing shows hidden cards {leaks(text, hidden)}")
            acting = state.to_act()
            if not acting:
                return steps
            actions = {}
            for seat in acting:
                legal = state.legal_actions(seat)
                for a in legal:
                    if not isinstance(view.action(a), str):
                        raise fail(f"action({_short(a)}) is not a string")
                actions[seat] = rng.choice(legal)
            state.apply(actions)
            steps += 1
            full_after = state.full_view()
            lines("events() of full views", view.events(full_before, full_after))
            after = [state.observation(s) for s in range(num_seats)]
            for seat in range(num_seats):
                text = lines(f"events() of seat {seat}", view.events(before[seat], after[seat]))
                hidden = state.hidden_from(seat)
                if leaks(text, hidden):
                    raise fail(f"seat {seat}'s account of step {steps} shows hidden cards "
                               f"{leaks(text, hidden)}")
            before, full_before = after, full_after


def check_search(
    name: str,
    num_seats: int,
    options: Mapping[str, Any] | None = None,
    games: int = 1,
    iterations: int = 8,
    seed: int = 0,
) -> Report:
    """Check what search needs of a game: its hooks (`check_search_hooks`), and in `games` random
    games the shipped ISMCTS bot (per game, `iterations` a move) playing one seat from its
    observations alone: at each of its decisions, `from_observation` rebuilds a state showing the
    seat the same observation and legal actions, the bot answers a legal action, and a search of
    the true state with each profile kind answers the same legal action twice (deterministic)."""
    from arena.search import ISMCTS, ISMCTSBot
    from arena.search.hooks import PROFILE_KINDS
    from arena.search.playouts import profile_for

    started = time.perf_counter()
    check_search_hooks(name, num_seats, options)
    checker = _Checker(name, num_seats, options, check_seed=seed)
    raw = checker.raw_options
    kinds = [profile_for(name, kind) for kind in PROFILE_KINDS]
    for index, game_seed in enumerate(game_seeds(name, num_seats, options, seed, games)):
        rng = random.Random(derive_seed("search", game_seed))
        checker.seed, checker.step, checker.actions = game_seed, 0, []
        state = checker.new(game_seed)
        mine = index % num_seats
        bot = ISMCTSBot(iterations=iterations, seed=game_seed, per_game=True)
        checker.call("ISMCTSBot.game_start", bot.game_start, {
            "type": "game_start", "game": name, "options": raw, "seat": mine,
            "players": [f"p{s}" for s in range(num_seats)]})
        decisions = 0
        while state.to_act():
            actions = {}
            for s in state.to_act():
                legal = state.legal_actions(s)
                if s != mine:
                    actions[s] = rng.choice(legal)
                    continue
                obs = state.observation(s)
                rebuilt = checker.call("from_observation", state.from_observation, obs, raw)
                if checker.call("rebuilt.observation", rebuilt.observation, s) != obs:
                    raise checker.fail(f"from_observation(observation({s})) shows the seat "
                                       "another observation")
                if checker.call("rebuilt.legal_actions", rebuilt.legal_actions, s) != legal:
                    raise checker.fail(f"from_observation(observation({s})) has other legal "
                                       "actions")
                actions[s] = checker.call("ISMCTSBot.choose", bot.choose, obs, legal)
                if actions[s] not in legal:
                    raise checker.fail(f"the search bot answered {_short(actions[s])}, not a legal "
                                       "action")
                checker.count("rebuilt")
                # The profiles on a few decisions only: each searches every kind twice.
                if len(legal) > 1 and decisions < 3:
                    decisions += 1
                    for profile in kinds:
                        picks = [checker.call("ISMCTS.search", ISMCTS(
                            iterations=iterations, seed=seed, profile=profile).search,
                            state, s, random.Random(k)) for k in (game_seed, game_seed)]
                        if picks[0] != picks[1] or picks[0] not in legal:
                            raise checker.fail(f"searches with one seed answered "
                                               f"{_short(picks)}: not one legal action")
                        checker.count("searches", 2)
            checker.actions.append(actions)
            state.apply(actions)
            checker.step += 1
        checker.report.games += 1
        checker.report.steps += checker.step
    return checker.report._finish(started)


def check_all(
    names: Iterable[str] | None = None,
    games: int = 5,
    seed: int = 0,
    seats: int | None = None,
) -> Iterator[tuple[tuple[str, int, dict], Report]]:
    """Run `check_game` over every case (game, seats, option set) of the named games, lazily."""
    for case in cases(names):
        name, num_seats, options = case
        if seats is None or num_seats == seats:
            report = check_game(name, num_seats, options, games=games, seed=seed)
            check_text_view(name, num_seats, options, seed=seed)
            yield case, report


def hypothesis_check(
    name: str,
    num_seats: int,
    options: Mapping[str, Any] | None = None,
    *,
    max_examples: int = 20,
    max_choices: int = 400,
    probe_rate: float = 0.25,
    derandomize: bool = False,
    shrink: bool = False,
) -> Report:
    """Like check_game, but Hypothesis chooses each game's seed and the index of every action.

    Hypothesis tries degenerate play (always the first or last action, long runs of one choice) that
    uniform random play almost never produces. After `max_choices` choices in a game the rest are
    uniform random (seeded by the drawn seed), which keeps each example's data small. Requires the
    `hypothesis` package (a dev dependency).
    """
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    started = time.perf_counter()
    checker = _Checker(name, num_seats, options, probe_rate=probe_rate, kept_clones=1)
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if shrink else [])

    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=derandomize,
        phases=phases,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(seed=st.integers(0, 2**63 - 1), data=st.data())
    def run(seed: int, data: Any) -> None:
        """Play and check one game whose actions Hypothesis chooses."""
        fallback = random.Random(seed)
        made = 0

        def choose(step: int, seat: int, legal: list) -> int:
            """The index of the action Hypothesis picks at this step."""
            nonlocal made
            if len(legal) == 1:
                return 0
            made += 1
            if made > max_choices:
                return fallback.randrange(len(legal))
            return data.draw(st.integers(0, len(legal) - 1), label=f"step {step} seat {seat}")

        checker.play_one(seed, choose, random.Random(seed ^ 0x5EED))

    run()
    return checker.report._finish(started)


def check_cross_process(
    name: str,
    num_seats: int,
    options: Mapping[str, Any] | None = None,
    games: int = 2,
    seed: int = 0,
    hash_seed: str = "12345",
) -> int:
    """Replay random games in a child process with another PYTHONHASHSEED; returns steps compared.

    Catches a game whose course, observations or legal action order depend on set iteration order,
    which differs between processes but never within one. The child imports the game class by
    module and name, so a game registered only at run time (a test's toy game) works as long as its
    module is importable.
    """
    cls = get_game(name)
    checker = _Checker(name, num_seats, options, check_seed=seed)
    if hash_seed == os.environ.get("PYTHONHASHSEED"):
        hash_seed = str(int(hash_seed) + 1)
    jobs = []
    for game_seed in game_seeds(name, num_seats, options, seed, games):
        checker.seed, checker.actions = game_seed, []
        state = checker.new(game_seed)
        choose = random_chooser(derive_seed("actions", game_seed))
        actions, views = [], [checker.call("a snapshot", _snapshot, state)]
        while checker.call("to_act()", state.to_act):
            checker.step = len(actions)
            step = {}
            for s in state.to_act():
                legal = checker.call(f"legal_actions({s})", state.legal_actions, s)
                step[s] = legal[choose(len(actions), s, legal)]
            checker.call(f"apply({step!r})", state.apply, step)
            checker.actions.append(step)
            actions.append({str(s): a for s, a in step.items()})
            views.append(checker.call("a snapshot", _snapshot, state))
        jobs.append({"seed": game_seed, "actions": actions, "views": views})
    payload = {
        "module": cls.__module__,
        "qualname": cls.__qualname__,
        "name": name,
        "num_seats": num_seats,
        "options": dict(options or {}),
        "jobs": [{"seed": j["seed"], "actions": j["actions"]} for j in jobs],
    }
    env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run(
        [sys.executable, "-m", "arena.conformance"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    if proc.returncode != 0:
        raise checker.fail(f"the child replay process failed: {proc.stderr.strip()[-800:]}")
    compared = 0
    for job, child in zip(jobs, json.loads(proc.stdout)):
        checker.seed = job["seed"]
        checker.actions = [{int(s): a for s, a in step.items()} for step in job["actions"]]
        for i, (mine, theirs) in enumerate(zip(job["views"], child["views"])):
            checker.step = i
            if mine != theirs:
                diff = _first_diff(json.loads(mine), json.loads(theirs))
                raise checker.fail(
                    f"with PYTHONHASHSEED={hash_seed} the same seed and actions give another "
                    f"state (set iteration order?): {diff}"
                )
            compared += 1
        if child["error"]:
            checker.step = len(child["views"])
            raise checker.fail(
                f"with PYTHONHASHSEED={hash_seed} replaying the same seed and actions raised "
                f"{child['error']}"
            )
    return compared


def _snapshot(state: GameState) -> str:
    """The JSON text of a state as every reader sees it: full view, observations, legal actions."""
    seats = range(state.num_seats)
    return json.dumps(
        {
            "full_view": state.full_view(),
            "observations": [state.observation(s) for s in seats],
            "legal_actions": [state.legal_actions(s) for s in seats],
        }
    )


def _child_replay() -> None:
    """Child side of check_cross_process: replay the games read from stdin, print full views."""
    import importlib

    payload = json.load(sys.stdin)
    if payload["name"] not in GAMES:
        cls = importlib.import_module(payload["module"])
        for part in payload["qualname"].split("."):
            cls = getattr(cls, part)
        GAMES[payload["name"]] = cls
    out = []
    for job in payload["jobs"]:
        views: list[str] = []
        error = None
        try:
            state = new_game(payload["name"], payload["options"], payload["num_seats"], job["seed"])
            views.append(_snapshot(state))
            for step in job["actions"]:
                state.apply({int(s): a for s, a in step.items()})
                views.append(_snapshot(state))
        except Exception as exc:  # the parent reports it, with the step it happened at
            error = f"{type(exc).__name__}: {exc}"
        out.append({"views": views, "error": error})
    json.dump(out, sys.stdout)


__all__ = [
    "BOGUS_ACTION",
    "Chooser",
    "ConformanceError",
    "Report",
    "case_id",
    "cases",
    "check_cross_process",
    "check_game",
    "game_seeds",
    "hypothesis_check",
    "option_sets",
    "random_chooser",
]


if __name__ == "__main__":
    _child_replay()

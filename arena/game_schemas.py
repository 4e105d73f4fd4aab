"""Per-game JSON Schemas of observations and actions, inferred by playing seeded random games.

The games build observations and actions as plain JSON values without declaring their shapes, so
the shapes are inferred: every conformance case of a game (seat count and option set) is played
with random legal actions from fixed seeds, each observation and legal action is round-tripped
through JSON (what a bot sees), and the values seen are merged into a draft 2020-12 schema. The
`options` of an observation is the one part declared in code, so it comes from the options model.
`arena schema` writes the results into protocol/schema/games/; a test fails when they are stale.
"""

from __future__ import annotations

import json
import random
import types
import typing
from pathlib import Path
from typing import Any

import orjson

from arena.cards import derive_seed

DRAFT = "https://json-schema.org/draft/2020-12/schema"
GENERATION_SEED = 0
GAMES_PER_CASE = 3
# Strings with at most this many distinct values are a closed set (phases, action types...).
STR_ENUM_MAX = 32
# Keys that tag an object's variant: objects tagged differently get one `oneOf` branch each.
DISCRIMINATORS = ("type", "event")
CARD_REF = {"$ref": "#/$defs/card"}
_WHAT = {"observation": "The `observation`",
         "action": "Each element of `legal_actions` (and so the `action` a bot answers with)"}


# -- the merged shape of many JSON values -------------------------------------------------------


class _Node:
    """Everything seen at one place in a JSON value: which types, which strings, which keys."""

    __slots__ = ("null", "bool", "int", "float", "strs", "items", "arrays", "objects", "seen")

    def __init__(self) -> None:
        self.null = self.bool = self.int = self.float = False
        self.strs: set[str] | None = None
        self.items: _Node | None = None  # merged array elements
        self.arrays = 0
        # variant tag (key, value) or None -> [count, {key: [present count, _Node]}]
        self.objects: dict[tuple[str, str] | None, list] = {}
        # Arrays and objects already merged, as JSON text: observations repeat most of the previous
        # step (a growing history), and merging a value twice changes nothing but the key counts.
        self.seen: set[bytes] = set()

    def add(self, value: Any) -> None:
        """Merge one JSON value into this node."""
        if value is None:
            self.null = True
        elif value is True or value is False:
            self.bool = True
        elif isinstance(value, int):
            self.int = True
        elif isinstance(value, float):
            self.float = True
        elif isinstance(value, str):
            if self.strs is None:
                self.strs = set()
            self.strs.add(value)
        elif isinstance(value, (list, dict)) and _seen(self.seen, value):
            return
        elif isinstance(value, list):
            self.arrays += 1
            if value and self.items is None:
                self.items = _Node()
            for v in value:
                self.items.add(v)
        elif isinstance(value, dict):
            tag = next(((k, value[k]) for k in DISCRIMINATORS if isinstance(value.get(k), str)), None)
            entry = self.objects.setdefault(tag, [0, {}])
            entry[0] += 1
            for k, v in value.items():
                slot = entry[1].get(k)
                if slot is None:
                    slot = entry[1][k] = [0, _Node()]
                slot[0] += 1
                slot[1].add(v)
        else:
            raise TypeError(f"not a JSON value: {value!r}")

    def schema(self, cards: frozenset[str]) -> dict:
        """The JSON Schema of every value merged so far (deterministic: sorted everywhere)."""
        parts: list[dict] = []
        if self.objects:
            branches = [_object_schema(self.objects[t], cards)
                        for t in sorted(self.objects, key=lambda t: ("",) if t is None else t)]
            parts.append(branches[0] if len(branches) == 1 else {"oneOf": branches})
        if self.arrays:
            parts.append({"type": "array", "items": self.items.schema(cards)} if self.items
                         else {"type": "array", "maxItems": 0})
        if self.strs is not None:
            if self.strs <= cards:
                parts.append(dict(CARD_REF))
            elif len(self.strs) == 1:
                parts.append({"type": "string", "const": next(iter(self.strs))})
            elif len(self.strs) <= STR_ENUM_MAX:
                parts.append({"type": "string", "enum": sorted(self.strs)})
            else:
                parts.append({"type": "string"})
        if self.float:
            parts.append({"type": "number"})  # integers are numbers too
        elif self.int:
            parts.append({"type": "integer"})
        if self.bool:
            parts.append({"type": "boolean"})
        if self.null:
            parts.append({"type": "null"})
        return _combine(parts)


def _seen(seen: set[bytes], value: Any) -> bool:
    key = orjson.dumps(value)
    if key in seen:
        return True
    seen.add(key)
    return False


def _object_schema(entry: list, cards: frozenset[str]) -> dict:
    count, keys = entry
    return {
        "type": "object",
        "properties": {k: keys[k][1].schema(cards) for k in sorted(keys)},
        "required": sorted(k for k in keys if keys[k][0] == count),
        "additionalProperties": False,
    }


def _combine(parts: list[dict]) -> dict:
    """One schema accepting any of `parts`: a type list when they are bare types, else anyOf."""
    if not parts:
        return {}
    if len(parts) == 1:
        return parts[0]
    if all(list(p) == ["type"] for p in parts):
        return {"type": [p["type"] for p in parts]}
    if len(parts) == 2 and parts[1] == {"type": "null"} and "enum" in parts[0]:
        return {"type": [parts[0]["type"], "null"], "enum": parts[0]["enum"] + [None]}
    return {"anyOf": parts}


# -- the options model, declared in code ---------------------------------------------------------


def options_schema(model: type) -> dict:
    """The JSON Schema of a game's options object, from its pydantic options model."""
    props = {}
    for name, info in model.model_fields.items():
        prop = _annotation_schema(info.annotation)
        for meta in info.metadata:
            for attr, key in (("ge", "minimum"), ("le", "maximum")):
                if getattr(meta, attr, None) is not None:
                    prop[key] = getattr(meta, attr)
        if info.description:
            prop["description"] = info.description
        props[name] = prop
    return {"type": "object", "properties": props, "required": sorted(props),
            "additionalProperties": False}


def _annotation_schema(annotation: Any) -> dict:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is type(None):
        return {"type": "null"}
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is int:
        return {"type": "integer"}
    if annotation is float:
        return {"type": "number"}
    if annotation is str:
        return {"type": "string"}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        subs = [_annotation_schema(a) for a in args]
        if all("enum" in s or s == {"type": "null"} for s in subs):
            return {"enum": [v for s in subs for v in s.get("enum", [None])]}
        if all(list(s) == ["type"] for s in subs):
            return {"type": [s["type"] for s in subs]}
        return {"anyOf": subs}
    if origin in (tuple, list):
        # model_dump gives lists for tuples; a fixed tuple of equal element types is one items schema.
        if origin is tuple and args and Ellipsis not in args:
            subs = [_annotation_schema(a) for a in args]
            if all(s == subs[0] for s in subs):
                return {"type": "array", "items": subs[0], "minItems": len(args), "maxItems": len(args)}
            return {"type": "array", "prefixItems": subs, "items": False}
        return {"type": "array", "items": _annotation_schema(args[0]) if args else {}}
    return {}


# -- sampling -------------------------------------------------------------------------------------


def samples(name: str, seed: int = GENERATION_SEED, games: int = GAMES_PER_CASE):
    """Yield ("observation" | "action", JSON value) from seeded random games of every case of `name`."""
    from arena.conformance import cases
    from arena.games import new_game

    for _, seats, options in cases([name]):
        key = json.dumps(options, sort_keys=True)
        for i in range(games):
            game_seed = derive_seed("game_schemas", name, seats, key, seed, i)
            state = new_game(name, options, seats, game_seed)
            rng = random.Random(derive_seed("game_schemas-actions", game_seed))
            while acting := state.to_act():
                moves = {}
                for seat in acting:
                    # The round trip gives what a bot sees: tuples become lists, keys strings.
                    yield "observation", orjson.loads(orjson.dumps(state.observation(seat)))
                    legal = orjson.loads(orjson.dumps(state.legal_actions(seat)))
                    for action in legal:
                        yield "action", action
                    moves[seat] = state.legal_actions(seat)[rng.randrange(len(legal))]
                state.apply(moves)


def game_deck(name: str) -> frozenset[str]:
    """Every card code the game uses in any of its cases."""
    from arena.conformance import cases
    from arena.games import new_game

    return frozenset(c for _, seats, opts in cases([name]) for c in new_game(name, opts, seats, 0).deck())


def game_schemas(name: str, seed: int = GENERATION_SEED, games: int = GAMES_PER_CASE) -> dict[str, dict]:
    """The observation and action schemas of game `name`, keyed "observation" and "action"."""
    from arena.games import get_game

    nodes = {"observation": _Node(), "action": _Node()}
    for kind, value in samples(name, seed, games):
        nodes[kind].add(value)
    deck = game_deck(name)
    out = {}
    for kind, node in nodes.items():
        schema = {
            "$schema": DRAFT,
            "title": f"{name} {kind}",
            "description": (
                f"{_WHAT[kind]} of an arena/2 `act` message in {name}, inferred from seeded "
                "random games over every seat count and option set; written by `arena schema`."
            ),
            **node.schema(deck),
        }
        if '"#/$defs/card"' in json.dumps(schema):
            schema["$defs"] = {"card": {"enum": sorted(deck)}}
        out[kind] = schema
    out["options"] = {
        "$schema": DRAFT,
        "title": f"{name} options",
        "description": (
            f"The `options` of an arena/2 `game_start` message in {name}: every option, defaults "
            "included (observations do not repeat them); from the game's options model, written "
            "by `arena schema`."
        ),
        **options_schema(get_game(name).game_type.options_model),
    }
    return out


def all_game_schemas() -> dict[str, dict]:
    """Every game's schemas keyed by file name, e.g. `xeri.observation.schema.json`."""
    from arena.games import game_names

    return {f"{name}.{kind}.schema.json": schema
            for name in game_names() for kind, schema in game_schemas(name).items()}


def dumps(schema: dict) -> str:
    """A schema as the byte-stable text kept on disk."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_game_schemas(folder) -> list[Path]:
    """Write every game's schemas into `folder` (protocol/schema/games); returns the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for file_name, schema in all_game_schemas().items():
        path = folder / file_name
        path.write_text(dumps(schema))
        paths.append(path)
    return paths


# -- validation of the subset emitted above ------------------------------------------------------

_TYPES = {
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def errors(value: Any, schema: dict, root: dict | None = None, path: str = "$",
           memo: dict | None = None) -> list[str]:
    """Why `value` does not match `schema` (the keywords this module emits); [] when it does.

    Pass the same `memo` dict over many values to skip sub-values already found valid (histories
    repeat from one observation to the next).
    """
    root = schema if root is None else root
    key = None
    if memo is not None and isinstance(value, (list, dict)):
        key = (id(schema), orjson.dumps(value))
        if key in memo:
            return []
    out = _errors(value, schema, root, path, memo)
    if key is not None and not out:
        memo[key] = True
    return out


def _errors(value: Any, schema: dict, root: dict, path: str, memo: dict | None) -> list[str]:
    if schema is False:
        return [f"{path}: nothing is allowed here"]
    out: list[str] = []
    if "$ref" in schema:
        ref = schema["$ref"]
        target = root
        for part in ref.removeprefix("#/").split("/"):
            target = target[part]
        out += errors(value, target, root, path, memo)
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[k](value) for k in kinds):
            return out + [f"{path}: expected {' or '.join(kinds)}, got {json.dumps(value)[:60]}"]
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        out.append(f"{path}: {json.dumps(value)[:60]} is not one of {json.dumps(schema['enum'])[:80]}")
    if "const" in schema and not _same(value, schema["const"]):
        out.append(f"{path}: expected {json.dumps(schema['const'])}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{path}: {value} > maximum {schema['maximum']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{path}: more than {schema['maxItems']} items")
        prefix = schema.get("prefixItems", [])
        for i, v in enumerate(value):
            sub = prefix[i] if i < len(prefix) else schema.get("items", {})
            out += errors(v, sub, root, f"{path}[{i}]", memo)
    if isinstance(value, dict):
        props = schema.get("properties", {})
        out += [f"{path}: missing required key {k!r}" for k in schema.get("required", []) if k not in value]
        for k, v in value.items():
            if k in props:
                out += errors(v, props[k], root, f"{path}.{k}", memo)
            elif schema.get("additionalProperties", True) is False:
                out.append(f"{path}: unexpected key {k!r}")
    for word, need in (("oneOf", 1), ("anyOf", None)):
        if word in schema:
            results = [errors(value, s, root, path, memo) for s in schema[word]]
            passed = sum(not r for r in results)
            if (need is None and passed == 0) or (need == 1 and passed != 1):
                best = min(results, key=len) if results else []
                out.append(f"{path}: matches {passed} of the {word} branches"
                           + (f" (closest: {best[0]})" if best else ""))
    return out


def _same(a: Any, b: Any) -> bool:
    # JSON equality: true is not 1, and 1 == 1.0.
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b

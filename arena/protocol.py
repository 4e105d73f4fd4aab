"""The arena/2 bot protocol: one pydantic model per message, and line encoding/decoding.

Messages are JSON objects, one per line, UTF-8. Bots must ignore message types and fields they do
not know, so the runner may add fields without a new protocol version; the runner in turn ignores
unknown fields in what bots send.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_serializer

from arena.errors import BadMessage

PROTOCOL_VERSION = "arena/2"
MAX_EVIDENCE = 300  # characters of an offending line kept as evidence
# Nesting a bot's message may have. Python's repr, ==, the json module and orjson.dumps (254) all
# recurse: a deeper value could make the runner fail while judging it. Actions of every game are
# a few levels deep.
MAX_DEPTH = 64
REPR_DEPTH = 12  # levels short_repr shows before writing "…"


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")


DEFAULT_GRACE_MS = 100  # the runner's margin for scheduling noise, stated to bots in `hello`


class TimeControl(_Message):
    """The time limits of a match, in milliseconds."""

    startup_ms: int = Field(description="Time allowed between process start and the `ready` reply.")
    move_ms: int = Field(description="Time allowed for each `action` reply.")
    bank_ms: int = Field(
        default=0, ge=0,
        description="Extra time per game: time over `move_ms` comes out of it; 0 means no bank.",
    )
    grace_ms: int = Field(
        default=DEFAULT_GRACE_MS, ge=0,
        description="Margin the runner adds to each deadline for scheduling noise; do not plan on it.",
    )


class Hello(_Message):
    """runner → bot: first message; the bot answers with `ready`."""

    type: Literal["hello"] = "hello"
    protocol: str = PROTOCOL_VERSION
    bot: str = Field(description="The name the bot is registered under in this tournament.")
    time: TimeControl


class Ready(_Message):
    """bot → runner: the answer to `hello`."""

    type: Literal["ready"]
    name: str = Field(default="", description="The bot's own name for itself.")
    version: str = Field(default="", description="The bot's own version string.")


class GameStart(_Message):
    """runner → bot: a game begins; `seat` is the bot's seat, `players` the bot names by seat."""

    type: Literal["game_start"] = "game_start"
    game_id: str
    game: str
    options: dict[str, Any]
    seat: int
    players: list[str]


class Act(_Message):
    """runner → bot: the bot must answer with one element of `legal_actions`."""

    type: Literal["act"] = "act"
    game_id: str
    request_id: int
    observation: dict[str, Any]
    legal_actions: list[Any]
    time_left_ms: int


class Action(_Message):
    """bot → runner: the chosen action for request `request_id`."""

    type: Literal["action"]
    request_id: int
    action: Any = Field(description="One element of the request's legal_actions, unchanged.")


class GameEnd(_Message):
    """runner → bot: a game is over; scores and ranks by seat (rank 1 = best)."""

    type: Literal["game_end"] = "game_end"
    game_id: str
    scores: list[float]
    ranks: list[int]
    termination: str = Field(description="`normal`, or the failure reason of a forfeited game.")
    culprit: int | None = Field(default=None, description="The seat that forfeited, if any.")

    @field_serializer("scores")
    def _integral_scores(self, scores: list[float]) -> list[int | float]:
        # Scores are counts in every game so far: send 24, not 24.0, which some JSON readers type apart.
        return [int(s) if float(s).is_integer() else s for s in scores]


class Bye(_Message):
    """runner → bot: the match is over; the bot should exit."""

    type: Literal["bye"] = "bye"


RUNNER_MESSAGES = (Hello, GameStart, Act, GameEnd, Bye)
BOT_MESSAGES = (Ready, Action)
BotMessage = Annotated[Union[Ready, Action], Field(discriminator="type")]
_bot_message = TypeAdapter(BotMessage)


def encode(message: BaseModel) -> bytes:
    """One message as a UTF-8 JSON line."""
    return orjson.dumps(message.model_dump(mode="json"), option=orjson.OPT_APPEND_NEWLINE)


def encode_dict(message: dict) -> bytes:
    """A message already in dict form as a UTF-8 JSON line (the hot path: no model round trip).

    orjson encodes an observation several times faster than the json module; on every move.
    """
    return orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)


@dataclass(slots=True)
class ActRequest:
    """One `act` request as the runner holds it: the observation already encoded by the game.

    A subprocess bot gets `line()`; an in-process bot gets `message()`, a decoded copy, so it sees
    exactly what a subprocess would and cannot reach into the game's state through it.
    """

    game_id: str
    request_id: int
    observation_json: bytes
    legal_actions: list
    time_left_ms: int
    skip: int = 0  # bytes of the line already written to the bot (a pipe that filled up midway)
    _line: bytes | None = None

    def line(self) -> bytes:
        """The act message as one JSON line (the observation's bytes spliced in, not re-encoded)."""
        if self._line is None:
            self._line = orjson.dumps({
                "type": "act", "game_id": self.game_id, "request_id": self.request_id,
                "observation": orjson.Fragment(self.observation_json),
                "legal_actions": self.legal_actions, "time_left_ms": self.time_left_ms,
            }, option=orjson.OPT_APPEND_NEWLINE)
        return self._line

    def message(self) -> dict:
        """The act message as a bot decodes it: fresh objects, the caller's to change."""
        return orjson.loads(self.line())


def evidence(line: bytes | str) -> str:
    """An offending line cut to a bounded size, for the failure record."""
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    text = text.rstrip("\n")
    return text if len(text) <= MAX_EVIDENCE else text[:MAX_EVIDENCE] + f"… ({len(text)} chars)"


def decode_bot_message(line: bytes) -> Ready | Action:
    """Parse one line from a bot; BadMessage says what is wrong and keeps the line as evidence.

    Whatever the line holds, the failure is the bot's: a message nested deeper than MAX_DEPTH is
    refused here, before anything recursive touches it, and any other error while judging it is
    a BadMessage too.
    """
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise BadMessage(f"not valid JSON: {exc}", evidence(line)) from None
    if not isinstance(data, dict):
        raise BadMessage(f"a message must be a JSON object, got {type(data).__name__}", evidence(line))
    # Counting brackets (strings included) is a cheap upper bound on the depth: most lines pass.
    if line.count(b"[") + line.count(b"{") > MAX_DEPTH:
        depth = nesting(data)
        if depth > MAX_DEPTH:
            raise BadMessage(f"message nested {depth} levels deep (at most {MAX_DEPTH})",
                             f"nested {depth} levels deep: {evidence(line)}")
    try:
        return _bot_message.validate_python(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"][1:]) or "type"
        raise BadMessage(f"invalid message ({where}: {err['msg']})", evidence(line)) from None
    except Exception as exc:  # whatever the bot sent, judging it is never the runner's failure
        raise BadMessage(f"unreadable message ({type(exc).__name__})", evidence(line)) from None


def nesting(value: Any) -> int:
    """How many levels of lists and objects `value` has (0 for a scalar), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, (list, tuple)):
            continue
        deepest = max(deepest, depth)
        stack.extend((x, depth + 1) for x in item)
    return deepest


def short_repr(value: Any, limit: int = 200) -> str:
    """A repr of a bot's value for messages: at most `limit` characters, never raising.

    Its recursion is bounded by REPR_DEPTH, not by the value (deeper levels are "…"), and it stops
    once `limit` characters are written, so a huge or deep value costs little. Integers too long
    for str() (over 4,300 digits) are described by their size.
    """
    parts: list[str] = []
    room = [limit + 1]

    def put(text: str) -> None:
        parts.append(text)
        room[0] -= len(text)

    def walk(item: Any, depth: int) -> None:
        if room[0] <= 0:
            return
        if isinstance(item, (dict, list, tuple)):
            is_dict = isinstance(item, dict)
            ends = "{}" if is_dict else ("()" if isinstance(item, tuple) else "[]")
            if depth >= REPR_DEPTH:
                put(ends[0] + "…" + ends[1])
                return
            put(ends[0])
            for i, entry in enumerate(item.items() if is_dict else item):
                if room[0] <= 0:
                    return
                if i:
                    put(", ")
                if is_dict:
                    walk(entry[0], depth + 1)
                    put(": ")
                    walk(entry[1], depth + 1)
                else:
                    walk(entry, depth + 1)
            put(ends[1])
        else:
            put(_atom_repr(item, room[0]))

    try:
        walk(value, 0)
    except Exception as exc:  # a hostile in-process object's own repr or iteration
        put(f"<{type(exc).__name__}>")
    text = "".join(parts)
    return text if len(text) <= limit else text[:limit] + "…"


def _atom_repr(item: Any, room: int) -> str:
    if isinstance(item, str):
        return repr(item[:max(room, 0) + 1])
    if isinstance(item, int) and not isinstance(item, bool) and item.bit_length() > 4 * room + 64:
        return f"<int of {item.bit_length():,} bits>"  # str() refuses over 4,300 digits
    try:
        return repr(item)[:max(room, 0) + 1]
    except Exception as exc:
        return f"<{type(item).__name__}: repr raised {type(exc).__name__}>"


def json_schemas() -> dict[str, dict]:
    """JSON Schema of every message, keyed by message type."""
    return {message_type(m): m.model_json_schema() for m in (*RUNNER_MESSAGES, *BOT_MESSAGES)}


def message_type(model: type[BaseModel]) -> str:
    """The `type` tag of a message model."""
    return model.model_fields["type"].annotation.__args__[0]


def write_schemas(folder) -> list:
    """Write one `<type>.schema.json` per message into `folder`; returns the paths."""
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for kind, schema in json_schemas().items():
        path = folder / f"{kind}.schema.json"
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
        paths.append(path)
    return paths

"""The arena/2 messages: decoding bot lines, and the generated schemas kept in protocol/."""

from __future__ import annotations

import json

import pytest

from arena.errors import BadMessage
from arena.protocol import (
    Action,
    Hello,
    Ready,
    TimeControl,
    decode_bot_message,
    encode,
    json_schemas,
)
from tests.support.paths import ROOT

SCHEMA_DIR = ROOT / "protocol" / "schema"


def test_schemas_in_protocol_folder_are_up_to_date():
    schemas = json_schemas()
    on_disk = {p.name.removesuffix(".schema.json"): json.loads(p.read_text())
               for p in SCHEMA_DIR.glob("*.schema.json")}
    assert on_disk == schemas, "protocol/schema is stale: run `arena schema`"


def test_decode_action_and_ready_ignoring_unknown_fields():
    msg = decode_bot_message(b'{"type":"action","request_id":4,"action":{"type":"play","card":"JH"},"x":1}')
    assert isinstance(msg, Action) and msg.request_id == 4 and msg.action == {"type": "play", "card": "JH"}
    assert isinstance(decode_bot_message(b'{"type":"ready"}\n'), Ready)


@pytest.mark.parametrize("line, words", [
    (b"not json", "not valid JSON"),
    (b"[1, 2]", "JSON object"),
    (b'{"type": "action"}', "request_id"),
    (b'{"type": "fold"}', "type"),
    (b'\xff\xfe', "not valid JSON"),
])
def test_bad_lines_raise_bad_message_with_evidence(line, words):
    with pytest.raises(BadMessage) as info:
        decode_bot_message(line)
    assert words in str(info.value)
    assert info.value.evidence


def test_evidence_is_bounded():
    with pytest.raises(BadMessage) as info:
        decode_bot_message(b"x" * 10_000)
    assert len(info.value.evidence) < 400


def test_encode_is_one_json_line():
    data = encode(Hello(bot="b", time=TimeControl(startup_ms=1, move_ms=2)))
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert json.loads(data) == {"type": "hello", "protocol": "arena/2", "bot": "b",
                                "time": {"startup_ms": 1, "move_ms": 2, "bank_ms": 0, "grace_ms": 100}}


def test_a_message_nested_deeper_than_the_bound_is_a_bad_message():
    from arena.protocol import MAX_DEPTH, MAX_EVIDENCE

    def line(depth):
        return (b'{"type":"action","request_id":1,"action":' + b"[" * depth + b"1"
                + b"]" * depth + b"}")

    assert decode_bot_message(line(MAX_DEPTH - 1)).action  # the message itself is one level
    with pytest.raises(BadMessage) as caught:
        decode_bot_message(line(990))
    assert str(caught.value) == f"message nested 991 levels deep (at most {MAX_DEPTH})"
    assert caught.value.evidence.startswith('nested 991 levels deep: {"type":"action"')
    assert len(caught.value.evidence) < MAX_EVIDENCE + 60


def test_short_repr_is_bounded_in_length_and_depth():
    from arena.protocol import REPR_DEPTH, nesting, short_repr

    deep = []
    for _ in range(5000):  # deeper than the recursion limit: no recursion may follow it
        deep = [deep]
    assert nesting(deep) == 5001
    assert short_repr(deep) == "[" * REPR_DEPTH + "[…]" + "]" * REPR_DEPTH
    assert short_repr({"type": "play", "card": "AS"}) == "{'type': 'play', 'card': 'AS'}"
    assert short_repr(["x" * 10_000], limit=50) == "['" + "x" * 48 + "…"
    assert short_repr(list(range(10 ** 6)), limit=20).endswith("…")

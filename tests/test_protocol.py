"""The arena/2 messages: decoding bot lines, and the generated schemas kept in protocol/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.errors import BadMessage
from arena.protocol import Action, Hello, Ready, TimeControl, decode_bot_message, encode, json_schemas

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "protocol" / "schema"


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

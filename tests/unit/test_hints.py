"""arena.hints: the usual mistake behind a failure, and the warnings in a bot's stderr."""

from __future__ import annotations

import json

import pytest

from arena.checker import combinations, protocol_option_sets
from arena.games import game_names, get_game
from arena.hints import (
    FLUSH_IDIOMS,
    LOG_TO_STDERR,
    flush_hint,
    hint,
    nearest_legal,
    stderr_size,
    stderr_warnings,
)

SLOTS = [{"type": "play_slot", "slot": n} for n in range(5)]
CARDS = [{"type": "play", "card": c} for c in ("2C", "AS", "KD")]


def _illegal(action) -> str:
    evidence = json.dumps({"type": "action", "request_id": 7, "action": action})
    return hint("illegal_action", "illegal action", evidence, SLOTS + CARDS)


def test_a_string_for_an_integer_names_the_field_and_both_types():
    said = _illegal({"type": "play_slot", "slot": "4"})
    assert said == ('the nearest legal action is {"type": "play_slot", "slot": 4}: at action.slot: '
                    '"4" the string where the legal action has 4 the integer')


def test_an_integer_for_a_string_and_a_bare_integer_as_the_whole_action():
    assert nearest_legal(4, ["4", "5"]) == ("4", ['4 the integer where the legal action has "4" '
                                                  'the string'])
    # A bare index into legal_actions is its own mistake.
    assert "looks like an index into legal_actions" in _illegal(1)


def test_a_wrong_key_name_and_a_card_in_another_case():
    said = _illegal({"type": "play", "Card": "AS"})
    assert '{"type": "play", "card": "AS"}' in said
    assert 'the key "Card" where legal actions have "card"' in said
    said = _illegal({"type": "play", "cards": "KD"})
    assert 'the key "cards" where legal actions have "card"' in said
    said = _illegal({"type": "play", "card": "as"})
    assert '{"type": "play", "card": "AS"}' in said and "letter case differs" in said


def test_an_unrelated_action_still_gets_the_nearest_one_and_what_differs():
    said = _illegal({"type": "play", "card": "QH"})
    assert said.startswith("the nearest legal action is {\"type\": \"play\", \"card\":")
    assert 'at action.card: "QH" where the legal action has' in said
    # No parseable evidence, no legal actions: no guess.
    assert hint("illegal_action", "", "not json", SLOTS) is None
    assert hint("illegal_action", "", json.dumps({"action": 1}), None) is None


def test_no_ready_and_no_answer_ask_whether_stdout_is_flushed_with_each_languages_idiom():
    said = hint("startup_failure", "no ready within 1000 ms", "no reply to hello")
    assert "is stdout flushed after each line?" in said
    for lang, idiom in FLUSH_IDIOMS:  # unknown language: all four
        assert f"{lang}: {idiom}" in said
    assert "flush=True" in said and "fflush(stdout)" in said and "$| = 1" in said
    assert "process.stdout.write" in said
    perl = hint("timeout", "no action within the move time", "no answer in 2100 ms", language="perl")
    assert "is stdout flushed" in perl and "$| = 1" in perl and "flush=True" not in perl
    assert "fflush" in flush_hint("C")
    # A bot that died at start, or logged to stdout at start, is another mistake.
    assert "exited before its `ready`" in hint(
        "startup_failure", "handshake failed: the bot closed its output or exited", "exit code 1")
    assert hint("startup_failure", "handshake failed: not valid JSON: …", "loading") == LOG_TO_STDERR
    # A bot that stopped reading is another mistake.
    assert "stopped reading" in hint("timeout", "did not read its request within the move time")


def test_a_line_that_is_not_json_says_stdout_is_for_the_protocol():
    assert hint("bad_message", "not valid JSON: …", "thinking…") == LOG_TO_STDERR
    assert hint("bad_message", "expected action, got ready", '{"type": "ready"}') is None
    assert hint("crash", "exited", "exit code 3") is None


def test_stderr_warnings_are_counted_per_line_and_the_runners_notes_are_not_the_bots():
    log = ("starting\n"
           "Use of uninitialized value $x in addition (+) at bot.pl line 313.\n" * 3
           + "Traceback (most recent call last):\n  ValueError: bad\nDeprecationWarning: old\n"
           + "arena: ignored an answer to request 3 (error)\n")
    assert stderr_warnings(log) == [
        ("Use of uninitialized value $x in addition (+) at bot.pl line 313.", 3),
        ("Traceback (most recent call last):", 1), ("ValueError: bad", 1),
        ("DeprecationWarning: old", 1)]
    assert stderr_warnings("all good\nmove 3\n") == []


def test_stderr_size_counts_what_a_bounded_log_dropped():
    assert stderr_size("abc\n") == 4
    assert stderr_size("head\n[… 1000 bytes dropped …]\ntail\n") == len("head\n\ntail\n") + 1000


# -- the games' declarations of what changes what a bot is sent ----------------------------------


@pytest.mark.parametrize("game", game_names())
def test_every_declared_protocol_option_is_an_option_with_other_values(game):
    game_type = get_game(game).game_type
    sets = protocol_option_sets(game)
    assert sets[0] == {}
    for name in game_type.protocol_options:
        assert name in game_type.options_model.model_fields
        assert any(name in s for s in sets), name


def test_open_rows_teams_and_partnerships_are_checked():
    checked = combinations([])
    assert ("crossfire", 2, {"open_rows": True}) in checked
    assert ("battlefield_cribbage", 4, {"team_mode": True}) in checked
    assert ("xeri", 4, {}) in checked  # Xeri's partnerships are its 4-seat game
    seats = {(g, n) for g, n, _ in checked}
    assert seats == {(g, n) for g in game_names() for n in get_game(g).game_type.seat_counts}


def test_a_ladders_validation_checks_its_own_table_only():
    # a ladder validates a new version at its format's seat count and options, not every set
    assert combinations(["xeri"], "xeri", {"rounds": 1}, seats=2) == [("xeri", 2, {"rounds": 1})]
    assert combinations([], "crosswalk", seats=3) == [("crosswalk", 3, {})]
    assert ("battlefield_cribbage", 4, {"team_mode": True}) in combinations([], seats=4)

"""check_vouched: a check whose only problems are the random opponents' is played again (a house
bot that could not start says nothing of the bot); one with a problem of the bot's is not."""

from __future__ import annotations

import pytest

from arena import checker
from arena.checker import CheckReport, Combo, Problem, check_vouched
from arena.players.base import BotSpec


def report(*reasons: str) -> CheckReport:
    """A report of one combination with a problem of each reason (none: clean)."""
    problems = [Problem("xeri", 4, r, r, "", "", "g1") for r in reasons]
    return CheckReport("b", combos=[Combo("xeri", 4, 2, 2 - len(problems), 10, 0.1)], problems=problems)


@pytest.mark.parametrize(("reports", "calls", "clean"), [
    ([report()], 1, True),
    ([report("opponent"), report()], 2, True),
    ([report("opponent", "opponent"), report("opponent"), report()], 3, True),
    ([report("opponent")] * 5, 3, False),  # at most VOUCH_ATTEMPTS, then the report as it is
    ([report("crash"), report()], 1, False),  # the bot's own fault is not retried
    ([report("opponent", "illegal_action"), report()], 1, False),
])
def test_only_the_opponents_failures_are_played_again(monkeypatch, reports, calls, clean):
    played = []

    def fake_check(spec, claimed, **settings):
        played.append(settings)
        return reports[len(played) - 1]

    monkeypatch.setattr(checker, "check_bot", fake_check)
    got = check_vouched(BotSpec("b", command=("true",)), ["xeri"], seed=7, deals=1)
    assert len(played) == calls and got.attempts == calls and got.clean is clean
    assert all(s == {"seed": 7, "deals": 1} for s in played)  # the same check each time
    assert checker.VOUCH_ATTEMPTS == 3

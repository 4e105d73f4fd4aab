"""How a game ended: normally, or by one of a closed set of bot failures."""

from __future__ import annotations

from enum import Enum


class Termination(str, Enum):
    """Why a game ended; every value but NORMAL is a forfeit by the culprit seat."""

    NORMAL = "normal"
    STARTUP_FAILURE = "startup_failure"  # did not start, or no `ready` within startup_ms
    TIMEOUT = "timeout"  # no action within the move time
    CRASH = "crash"  # process exited, closed stdout, or (in-process) raised
    BAD_MESSAGE = "bad_message"  # not JSON, wrong type, missing fields, over the size limit
    ILLEGAL_ACTION = "illegal_action"  # an action not among the legal actions
    RESOURCE_LIMIT = "resource_limit"  # over a memory, CPU, process, file or line-length limit
    FAILURE_BUDGET = "failure_budget"  # too many failures in this match: not started again
    RESIGNED = "resigned"  # a person playing a seat (`arena play`) quit the game

    def __str__(self) -> str:
        return self.value

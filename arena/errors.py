"""The exception tree: every error Arena raises on purpose derives from ArenaError."""

from __future__ import annotations


class ArenaError(Exception):
    """Base of every error Arena raises deliberately."""


class ConfigError(ArenaError):
    """A tournament config, manifest, CLI argument or game option is invalid."""


class UnknownGameError(ConfigError):
    """A game name that is not registered."""


class GameOptionsError(ConfigError):
    """Game options that fail validation."""


class IllegalActionError(ArenaError):
    """An action that is not among the legal actions of the seat that sent it."""

    def __init__(self, message: str, seat: int | None = None, action: object = None):
        super().__init__(message)
        self.seat = seat
        self.action = action


class StoreError(ArenaError):
    """The database is missing, of another schema, or holds conflicting records."""


class BotError(ArenaError):
    """A bot failed; `reason` is one of arena.failures.FailureReason, `evidence` says what it did."""

    reason: str = "crash"

    def __init__(self, message: str, evidence: str = ""):
        super().__init__(message)
        self.evidence = evidence


class BotStartupError(BotError):
    """The bot did not start or did not answer `hello` with `ready` in time."""

    reason = "startup_failure"


class BotTimeout(BotError):
    """The bot did not answer within its time."""

    reason = "timeout"


class BotCrashed(BotError):
    """The bot's process exited or closed its stdout."""

    reason = "crash"


class BadMessage(BotError):
    """The bot sent a line that is not a valid protocol message."""

    reason = "bad_message"


class BotIllegalAction(BotError):
    """The bot answered with an action that is not legal."""

    reason = "illegal_action"


class BotFailureBudget(BotError):
    """The bot failed too often in this match and forfeits its remaining games unstarted."""

    reason = "failure_budget"

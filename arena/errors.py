"""The exception tree: every error Arena raises on purpose derives from ArenaError."""

from __future__ import annotations

from arena.failures import Termination


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


class RegistryError(ConfigError):
    """A bot folder the registry will not snapshot: a link, a device, a FIFO, too large or too many files."""


class UploadError(ArenaError):
    """A submitted bot archive refused before anything was written: one line naming the problem."""


class DuplicateRun(ConfigError):
    """`arena run CONFIG` where a tournament of the same config is recorded: --resume or --new."""


class NotFound(ArenaError):
    """What a read asked for (a tournament, ladder, bot or game page) does not exist."""


class BadRequest(ArenaError):
    """A read's parameters are malformed (an id that is not a number, a repeated key)."""


class StoreError(ArenaError):
    """The database is missing, of another schema, or holds conflicting records."""


class BotError(ArenaError):
    """A bot failed; `reason` is a forfeit Termination value, `evidence` says what it did."""

    reason: str = Termination.CRASH.value

    def __init__(self, message: str, evidence: str = ""):
        super().__init__(message)
        self.evidence = evidence


class BotStartupError(BotError):
    """The bot did not start or did not answer `hello` with `ready` in time."""

    reason = Termination.STARTUP_FAILURE.value


class SnapshotChanged(BotStartupError):
    """A registry bot's snapshot no longer holds the content recorded when it was added."""

    def __repr__(self) -> str:
        # A player that wraps a start failure quotes repr(exc): the message alone reads best.
        return str(self)


class BotTimeout(BotError):
    """The bot did not answer within its time."""

    reason = Termination.TIMEOUT.value


class BotInputStalled(BotTimeout):
    """The bot did not take a message off its stdin in time (it stopped reading): a timeout.

    Its evidence says how much of which message the pipe took, and how long the runner waited.
    """


class BotCrashed(BotError):
    """The bot's process exited or closed its stdout."""

    reason = Termination.CRASH.value


class BadMessage(BotError):
    """The bot sent a line that is not a valid protocol message."""

    reason = Termination.BAD_MESSAGE.value


class BotIllegalAction(BotError):
    """The bot answered with an action that is not legal."""

    reason = Termination.ILLEGAL_ACTION.value


class BotResourceLimit(BotError):
    """The bot exceeded one of its resource limits (memory, CPU, processes, files, line length)."""

    reason = Termination.RESOURCE_LIMIT.value


class BotFailureBudget(BotError):
    """The bot failed too often in this match and forfeits its remaining games unstarted."""

    reason = Termination.FAILURE_BUDGET.value


class Resigned(BotError):
    """A person playing a seat (`arena play`) quit: the game is that seat's forfeit."""

    reason = Termination.RESIGNED.value


class HostFault(ArenaError):
    """The host cannot run a bot: its files or its runtime are missing on this node, or its
    snapshot cannot be fetched. A runner error, replayed elsewhere; never the bot's forfeit."""


class LeaseError(ArenaError):
    """Another driver holds the tournament (or a dead one left a lease to take over)."""


class MatchErrorLimit(ArenaError):
    """A match failed by runner errors (not a bot's fault) on every allowed attempt."""


class Cancelled(ArenaError):
    """The tournament was cancelled (`arena tournament cancel`) while this driver ran it."""


class ServerError(ArenaError):
    """What a competition server did to a client's request (`arena submit`): refused it,
    answered nonsense, or gave no answer.

    `status` is the HTTP status (None: no answer). A 4xx other than 429 means the request itself
    must change (the token, the archive, the address): bad input; the rest may pass later.
    """

    def __init__(self, message: str, status: int | None = None, transient: bool = False):
        super().__init__(message)
        self.status = status
        self.transient = transient  # no answer, or a 5xx: asking again later may succeed

    @property
    def bad_input(self) -> bool:
        """True when the request must change before it can succeed (a 4xx other than 429)."""
        return self.status is not None and 400 <= self.status < 500 and self.status != 429


class FollowTimeout(ServerError):
    """The check did not end within the time the client waits for it."""

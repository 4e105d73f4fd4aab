"""Store: the one entry to an Arena database, composed of one class of methods per concern."""

from __future__ import annotations

from arena.store.authors import AuthorRows
from arena.store.bots import BotRows
from arena.store.database import StoreBase
from arena.store.ladders import LadderRows
from arena.store.leases import LeaseRows
from arena.store.matches import MatchRows
from arena.store.ratings import RatingRows
from arena.store.registry_rows import RegistryRows
from arena.store.sessions import SessionRows
from arena.store.tournaments import TournamentRows


class Store(BotRows, RegistryRows, TournamentRows, MatchRows, RatingRows, LadderRows, LeaseRows,
            AuthorRows, SessionRows, StoreBase):
    """The Arena database. Only the driver process writes to it."""

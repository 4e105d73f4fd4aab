"""The Arena database: the schema and its migrations, the one writer the drivers use, and the
read models that reports, the CLI and the web render.

No module outside this package holds SQL (tests/unit/test_no_sql_outside_store.py).
"""

from arena.store.bots import BOT_FIELDS, BotRecord, program_identity
from arena.store.database import now, refuse_directory, stored_json
from arena.store.leases import LEASE_STALE_S, Lease, lease_alive, process_start
from arena.store.matches import MatchRecord
from arena.store.schema import MOVES_TABLE, SCHEMA_VERSION
from arena.store.store import Store
from arena.store.tournaments import ENTRANT_NAME

__all__ = [
    "BOT_FIELDS", "ENTRANT_NAME", "LEASE_STALE_S", "MOVES_TABLE", "SCHEMA_VERSION", "BotRecord",
    "Lease", "MatchRecord", "Store", "lease_alive", "now", "process_start", "program_identity",
    "refuse_directory", "stored_json",
]

"""Accepting a submission: limits, the archive unpacked (arena/uploads.py), the version registered
(content-addressed, as `arena bot add` does, but "pending" until its check is clean) and the
submissions row committed — all before the server answers 201.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.errors import ArenaError
from arena.server.authors import Author
from arena.store import Store

if TYPE_CHECKING:
    from starlette.requests import Request

# Uploads register one at a time: two uploads of one content must not race for its snapshot
# folder or its (name, version) row. The ladder writes from its own process, through SQLite's
# BEGIN IMMEDIATE and busy timeout, as every writer does.
_REGISTERING = threading.Lock()


class Forbidden(ArenaError):
    """The token is valid but may not do this (403)."""


class TooLarge(ArenaError):
    """The request body is over its size limit (413)."""


async def read_body(request: Request, limit: int, what: str = "the archive") -> bytes:
    """The request body; TooLarge (413) as soon as it is over `limit` bytes (never read further)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise TooLarge(f"{what} is over the limit of {limit:,} bytes "
                       f"(Content-Length {int(declared):,})")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise TooLarge(f"{what} is over the limit of {limit:,} bytes")
    return bytes(body)


class LimitReached(ArenaError):
    """A per-author limit is reached (429); the message names the limit."""


@dataclass(frozen=True)
class AuthorLimits:
    """Per-author limits (an organiser's token has none)."""

    per_hour: int = 10  # submissions in any hour
    active_versions: int = 5  # registered versions active or waiting for their check
    storage_bytes: int = 256 * 1024 * 1024  # unpacked bytes of every distinct content submitted


@contextmanager
def open_store(db_path: Path) -> Iterator[Store]:
    """A Store of this thread's own (SQLite connections are not shared across threads), closed after."""
    store = Store(db_path)
    try:
        yield store
    finally:
        store.db.conn.close()


def upload_limits() -> Any:
    """The default archive limits of arena/uploads.py (imported when the server first needs it)."""
    from arena.uploads import UploadLimits

    return UploadLimits()


def check_limits(store: Store, author: Author, limits: AuthorLimits, new_bytes: int = 0) -> None:
    """LimitReached when one more submission (of `new_bytes` unpacked) would pass a limit."""
    if author.organiser:
        return
    since = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat(timespec="milliseconds")
    usage = store.author_usage(author.id, since)
    if usage["recent"] >= limits.per_hour:
        raise LimitReached(f"limit reached: {limits.per_hour} submissions per hour "
                           f"(try again later)")
    if usage["live_versions"] >= limits.active_versions:
        raise LimitReached(f"limit reached: {limits.active_versions} active versions (ask the "
                           f"organiser to retire one)")
    if usage["stored_bytes"] + new_bytes > limits.storage_bytes:
        raise LimitReached(f"limit reached: {limits.storage_bytes:,} bytes of storage "
                           f"({usage['stored_bytes']:,} used, this bot is {new_bytes:,})")


def accept_submission(db_path: Path, author: Author, data: bytes, limits: AuthorLimits,
                      archive_limits: Any = None) -> dict:
    """Validate, unpack and register the archive `data` for `author` and record its submission
    (status "received"); the submissions row as a dict. UploadError/ConfigError (400),
    Forbidden (403), LimitReached (429); nothing is stored when any is raised."""
    from arena.registry import Registry
    from arena.uploads import unpack_submission

    archive_limits = archive_limits if archive_limits is not None else upload_limits()
    with open_store(db_path) as store:
        check_limits(store, author, limits)
        with tempfile.TemporaryDirectory(prefix="arena-upload-") as tmp:
            dest = Path(tmp) / "bot"
            dest.mkdir()
            unpacked = unpack_submission(data, dest, archive_limits)
            name = str(unpacked.manifest.get("name", ""))
            with _REGISTERING:
                owners = store.bot_authors(name)
                if not author.organiser and owners - {author.id}:
                    raise Forbidden(f"bot {name!r} belongs to another author")
                check_limits(store, author, limits, unpacked.unpacked_bytes)
                try:
                    added = Registry(store).add(unpacked.root, author_id=author.id,
                                                status="pending")
                except ArenaError as exc:  # its paths are the server's temporary folder
                    raise type(exc)(str(exc).replace(f"{unpacked.root}/", "")
                                    .replace(str(unpacked.root), "the archive")) from None
                submission_id = store.add_submission({
                    "author_id": author.id, "bot_name": added.name, "version": added.version,
                    "content_hash": added.content_hash, "archive_bytes": len(data),
                    "unpacked_bytes": unpacked.unpacked_bytes})
        return store.submission(submission_id)

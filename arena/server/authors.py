"""Authors and their API tokens: add, revoke, rotate, list, and the token check of every request.

A token is `arena_` + 32 random url-safe bytes (`secrets`), shown once; only its sha256 hex digest
is stored. A request's token is hashed, its row looked up by that digest, and the digests compared
with `hmac.compare_digest`. Tokens are never logged and never put in a URL.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from arena.errors import ConfigError
from arena.store import Store
from arena.store.authors import LAST_USED_EVERY_S

TOKEN_PREFIX = "arena_"
ROLES = ("author", "organiser")
# An author's name shows on pages and in terminals: printable, short, no path or markup characters.
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
TOKEN_MAX_CHARS = 200  # a real token is 49 characters: anything far longer is not hashed


@dataclass(frozen=True)
class Author:
    """The author a request's token belongs to."""

    id: int
    name: str
    role: str

    @property
    def organiser(self) -> bool:
        """True for an organiser's token: it may act on every author's submissions."""
        return self.role == "organiser"


def new_token() -> str:
    """A fresh API token."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The sha256 hex digest a token is stored and looked up by."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _named(store: Store, name: str) -> dict:
    row = store.author_named(name)
    if row is None:
        raise ConfigError(f"no author named {name!r}")
    return row


def add_author(store: Store, name: str, email: str | None = None,
               role: str = "author") -> str:
    """Add an author with a new token; returns the token (shown once, stored only hashed)."""
    if not NAME_RE.fullmatch(name):
        raise ConfigError(f"author name {name!r}: use 1-64 letters, digits, '_', '.' or '-', "
                          f"starting with a letter or digit")
    if role not in ROLES:
        raise ConfigError(f"role {role!r}: choose {' or '.join(ROLES)}")
    if email is not None and (len(email) > 254 or not re.fullmatch(r"[^@\s]+@[^@\s]+", email)):
        raise ConfigError(f"email {email!r} is not an address")
    if store.author_named(name) is not None:
        raise ConfigError(f"an author named {name!r} exists already (rotate its token with "
                          f"`arena author rotate {name}`)")
    token = new_token()
    store.add_author(name, email, role, hash_token(token))
    return token


def revoke_author(store: Store, name: str) -> int:
    """Revoke every live token of the author `name`; returns how many were live."""
    return store.revoke_tokens(_named(store, name)["id"])


def rotate_token(store: Store, name: str) -> str:
    """Revoke the author's tokens and return a new one (shown once)."""
    author = _named(store, name)
    token = new_token()
    store.rotate_token(author["id"], hash_token(token))
    return token


def list_authors(store: Store) -> list[dict]:
    """Every author: name, email, role, live tokens, submissions, last token use."""
    return store.authors()


def authenticate(store: Store, token: str | None) -> Author | None:
    """The author holding this live token, or None (no token, unknown, revoked, disabled)."""
    if not token or len(token) > TOKEN_MAX_CHARS:
        return None
    digest = hash_token(token)
    row = store.token_holder(digest)
    if row is None or not hmac.compare_digest(row["token_hash"], digest):
        return None
    when = datetime.now(timezone.utc)
    before = (when - timedelta(seconds=LAST_USED_EVERY_S)).isoformat(timespec="milliseconds")
    if row["last_used_at"] is None or row["last_used_at"] < before:
        store.touch_token(row["token_id"], when.isoformat(timespec="milliseconds"), before)
    return Author(row["author_id"], row["name"], row["role"])

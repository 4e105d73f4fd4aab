"""Helpers for the competition server's tests: bot archives, the API's Authorization header,
signing in through the form, and a database whose logged game has a bot submitted by an author."""

from __future__ import annotations

import io
import re
import tarfile
from pathlib import Path

from arena.server.authors import add_author
from arena.store import Store
from tests.support.botfolders import make_bot
from tests.support.game_logs import record_logged_game


def bot_archive(tmp: Path, name: str = "rb", version: str = "1", extra: bytes = b"") -> bytes:
    """A .tar.gz of a registry bot folder (the shipped random bot); `extra`: one more file's bytes
    (so two archives of one name differ)."""
    folder = make_bot(tmp / f"src-{name}-{version}-{len(extra)}", name, version)
    if extra:
        (folder / "extra.bin").write_bytes(extra)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(folder, arcname=name)
    return buf.getvalue()


def auth(token: str) -> dict:
    """The Authorization header of a token."""
    return {"Authorization": f"Bearer {token}"}


def csrf_of(page: str) -> str:
    """The CSRF token a page's form carries."""
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def form_sign_in(client, token: str, prefix: str = "", **post):
    """Sign in through the form with a TestClient or an httpx.Client (`prefix`: the root path);
    the POST's response (a 303 to /me when it took)."""
    form = client.get(f"{prefix}/signin")
    assert form.status_code == 200
    return client.post(f"{prefix}/signin", data={"token": token, "csrf": csrf_of(form.text)}, **post)


def logged_game_with_authors(db: Path, *others: str, organisers: tuple[str, ...] = ()) -> dict[str, str]:
    """Record game g (tests/support/game_logs.py: a, the organiser's, against b, which crashes with
    its stderr recorded) into `db`, with b submitted by alice; the API token of alice, of each of
    `others` (authors) and of each of `organisers`, by name."""
    record_logged_game(db)
    store = Store(db)
    tokens = {"alice": add_author(store, "alice")}
    tokens.update({name: add_author(store, name) for name in others})
    tokens.update({name: add_author(store, name, role="organiser") for name in organisers})
    with store.transaction():  # as if alice had submitted b (a submitted version has a manifest)
        store.db.conn.execute("update bots set author_id = ?, manifest = '{}' where name = 'b'",
                              [store.author_named("alice")["id"]])
    store.db.conn.close()
    return tokens

"""Bots rows: one per program version, found by identity, `name@version` never reused."""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

import orjson

from arena.store.database import dump_json, now, stored_json

# The keys of a config's bot row that record_bot takes (rows carry more, e.g. manifest_ref).
BOT_FIELDS = ("name", "version", "command", "workdir", "language", "description", "games",
              "content_hash")


@dataclass(frozen=True)
class BotRecord:
    """A program's bots row: its id, name and version, the version asked for, and — when that
    name@version belonged to another program — how the two differ (else "")."""

    id: int
    name: str
    version: str
    asked: str
    differs: str = ""

    @property
    def ref(self) -> str:
        """`name@version` as recorded (the name alone for an empty version)."""
        return f"{self.name}@{self.version}" if self.version else self.name

    @property
    def asked_ref(self) -> str:
        """`name@version` as the config asked for it."""
        return f"{self.name}@{self.asked}" if self.asked else self.name


def program_identity(content_hash: str | None, command: list, workdir: str) -> tuple:
    """What makes two bots rows one program: (hash, command) when the content is known, else
    (command, working directory); a known hash never equals an unknown one."""
    if content_hash:
        return ("hash", content_hash, list(command))
    return ("path", list(command), workdir)


def _difference(old: tuple | None, content_hash: str | None, command: list, workdir: str) -> str:
    """How a program differs from the recorded (id, command, workdir, hash), in a few words."""
    if old is None:
        return "another program"
    _, cmd, wd, digest = old
    parts = []
    if (digest or None) != (content_hash or None):
        parts.append(f"content {(content_hash or 'unknown')[:8]}, recorded "
                     f"{(digest or 'unknown')[:8]}")
    if list(cmd) != list(command):
        parts.append(f"command {shlex.join(map(str, command))!r}, recorded "
                     f"{shlex.join(map(str, cmd))!r}")
    if not content_hash and wd != workdir:
        parts.append(f"folder {workdir}, recorded {wd}")
    return "; ".join(parts) or "another program"


def _free_version(version: str, taken: dict, content_hash: str | None, command: list,
                  workdir: str) -> str:
    """`version+<8 hex>` not yet taken: the content hash's head, else a digest of the identity."""
    ident = orjson.dumps(program_identity(content_hash, command, workdir)).decode()
    heads = [content_hash[:8]] if content_hash else []
    heads.append(hashlib.sha256(ident.encode()).hexdigest()[:8])
    for head in heads:
        if f"{version}+{head}" not in taken:
            return f"{version}+{head}"
    n = 2
    while f"{version}+{heads[-1]}-{n}" in taken:
        n += 1
    return f"{version}+{heads[-1]}-{n}"


class BotRows:
    """Store methods for bots rows."""

    def add_bot(self, name: str, version: str = "", command: Iterable[str] = (), workdir: str = "",
                language: str = "", description: str = "", games: Iterable[str] = (),
                content_hash: str | None = None) -> int:
        """The id of this program's bot row (see record_bot), registering it if new."""
        return self.record_bot(name, version, command, workdir, language, description, games,
                               content_hash).id

    def record_bot(self, name: str, version: str = "", command: Iterable[str] = (),
                   workdir: str = "", language: str = "", description: str = "",
                   games: Iterable[str] = (), content_hash: str | None = None) -> BotRecord:
        """The bots row of one program version, found by identity or registered; see BotRecord.

        A program's identity is (content_hash, command) when its content hash is known, else
        (command, workdir). `name@version` held by another program is never reused: this one is
        recorded as `name@version+<8 hex>` (the registry's convention), so the two programs' games
        never merge.
        """
        command = list(command)
        wanted = program_identity(content_hash, command, workdir)
        rows = self.db.execute(
            "select id, version, command, workdir, content_hash from bots where name = ? "
            "order by id", [name]).fetchall()
        # This version and its `+` variants (LIKE would fold case: filtered here instead).
        taken = {v: (bot_id, stored_json(cmd, f"bots.command of bot {bot_id}"), wd, digest)
                 for bot_id, v, cmd, wd, digest in rows
                 if v == version or v.startswith(version + "+")}
        for v, (bot_id, cmd, wd, digest) in taken.items():
            if program_identity(digest, cmd, wd) == wanted:
                # Found again: under a `+` version when the name@version was another's already.
                differs = "" if v == version else _difference(taken.get(version), content_hash,
                                                              command, workdir)
                return BotRecord(bot_id, name, v, version, differs)
        chosen, differs = version, ""
        if version in taken:
            differs = _difference(taken[version], content_hash, command, workdir)
            chosen = _free_version(version, taken, content_hash, command, workdir)
        with self.transaction():
            bot_id = self._insert("bots", [{
                "name": name, "version": chosen, "command": dump_json(command),
                "workdir": workdir, "language": language, "description": description,
                "games": dump_json(list(games)), "added_at": now(), "content_hash": content_hash,
            }])
        return BotRecord(bot_id, name, chosen, version, differs)


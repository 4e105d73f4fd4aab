"""The bot registry: submitted bot versions, each a content-addressed snapshot beside the database.

`arena bot add PATH` validates the manifest, copies the bot's folder to `<db>.bots/<sha256>/` and
records the version in the `bots` table (name, version, content hash, command, language, author,
games). A tournament that names `bot = "name@version"` runs the snapshot, never the author's
folder, so a submitted version cannot change under a tournament. Retiring a version keeps its
games and ratings.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.config import Manifest, load_manifest
from arena.errors import ConfigError, StoreError
from arena.games import get_game
from arena.players.base import BotSpec

# Never part of a bot's content: version control, caches the bot's own runs leave behind.
IGNORED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".mypy_cache"})
IGNORED_SUFFIXES = (".pyc", ".pyo")
BAD_NAME = re.compile(r"[@\s\x00-\x1f\x7f-\x9f]")
MANIFEST_NAMES = ("bot.toml", "arena.toml", "manifest.toml")
MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024  # a bot folder larger than this is refused, not copied
STDERR_TAIL = 600  # characters of stderr shown per failure in `show`
# Registry bots never write bytecode into their (read-only by intent) snapshot.
BOT_ENV = (("PYTHONDONTWRITEBYTECODE", "1"),)


def registry_dir(db: str | Path) -> Path:
    """Where the snapshots of the database `db` live: `<db>.bots/` beside it."""
    db = Path(db)
    return db.with_name(db.name + ".bots")


def parse_ref(ref: str) -> tuple[str, str | None]:
    """`name` or `name@version` -> (name, version or None)."""
    name, sep, version = ref.partition("@")
    if not name or (sep and not version):
        raise ConfigError(f"bad bot reference {ref!r}: expected NAME or NAME@VERSION")
    return name, version if sep else None


def find_manifest(path: str | Path) -> Path:
    """The manifest of a bot: the file itself, or the one manifest in a folder."""
    path = Path(path)
    if path.is_file():
        return path.resolve()
    if not path.is_dir():
        raise ConfigError(f"no such file or folder: {path}")
    for name in MANIFEST_NAMES:
        if (path / name).is_file():
            return (path / name).resolve()
    tomls = sorted(path.glob("*.toml"))
    if len(tomls) == 1:
        return tomls[0].resolve()
    if not tomls:
        raise ConfigError(f"{path}: no bot manifest (bot.toml) in this folder")
    raise ConfigError(f"{path}: several manifests ({', '.join(t.name for t in tomls)}); "
                      f"give the manifest file itself")


def bot_files(folder: Path) -> list[Path]:
    """The files that make a bot's content, relative to its folder, in a fixed order."""
    files = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
        for name in names:
            if not name.endswith(IGNORED_SUFFIXES):
                files.append((Path(root) / name).relative_to(folder))
    return sorted(files, key=lambda p: p.as_posix())


def content_hash(folder: str | Path) -> str:
    """SHA-256 of a bot folder: every file's relative path, executable bit and bytes, in order."""
    folder = Path(folder)
    digest = hashlib.sha256()
    total = 0
    for rel in bot_files(folder):
        full = folder / rel
        data = full.read_bytes()
        total += len(data)
        if total > MAX_SNAPSHOT_BYTES:
            raise ConfigError(f"{folder}: more than {MAX_SNAPSHOT_BYTES >> 20} MiB of files; "
                              f"a bot folder should hold only the bot")
        # Length-prefixed fields: no two different folders can produce the same byte stream.
        path = rel.as_posix().encode()
        mode = b"x" if os.access(full, os.X_OK) else b"-"
        digest.update(b"%d:%s%s%d:" % (len(path), path, mode, len(data)))
        digest.update(data)
    return digest.hexdigest()


@dataclass
class AddResult:
    """What `add` did: `added`, `unchanged`, `new_version`, `claimed` or `reactivated`."""

    name: str
    version: str
    content_hash: str
    outcome: str
    message: str


@dataclass
class BotVersion:
    """One registered version of a bot, as stored."""

    id: int
    name: str
    version: str
    content_hash: str
    status: str
    command: list[str]
    workdir: str
    language: str
    author: str
    description: str
    games: list[str]
    added_at: str
    manifest: str | None = None  # relative to the snapshot
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        """`name@version`."""
        return f"{self.name}@{self.version}"


class Registry:
    """The registered bot versions of one database and their snapshots."""

    def __init__(self, db: Any, root: str | Path | None = None):
        from arena.store import Store

        self._store = db if isinstance(db, Store) else None
        self.db_path = None if self._store is not None else Path(db)
        if root is None:
            where = self._store.path if self._store is not None else self.db_path
            if where is None:
                raise ConfigError("an in-memory database needs an explicit registry folder")
            root = registry_dir(where)
        self.root = Path(root)

    @property
    def store(self):
        """The store, opened on first use (a registry handle alone never creates a database)."""
        if self._store is None:
            from arena.store import Store

            if not self.db_path.exists():
                raise ConfigError(f"no registry: no database at {self.db_path} (add bots with "
                                  f"`arena bot add PATH --db {self.db_path}`)")
            self._store = Store.open_existing(self.db_path)
        return self._store

    # -- adding ---------------------------------------------------------------------------------
    def add(self, path: str | Path) -> AddResult:
        """Validate a bot's manifest, snapshot its folder and record the version (no-op if known)."""
        mpath = find_manifest(path)
        manifest = load_manifest(mpath)
        # `name@version` is how configs and commands name a version: neither part may be ambiguous.
        if not manifest.name or BAD_NAME.search(manifest.name):
            raise ConfigError(f"{mpath}: name {manifest.name!r} may not be empty or hold '@', "
                              f"spaces or control characters")
        if BAD_NAME.search(manifest.version.replace("@", "")):
            raise ConfigError(f"{mpath}: version {manifest.version!r} may not hold spaces or "
                              f"control characters")
        for game in manifest.games:
            try:
                get_game(game)
            except ConfigError as exc:
                raise ConfigError(f"{mpath}: games: {exc}") from None
        folder = mpath.parent
        workdir = (folder / manifest.workdir).resolve()
        if not workdir.is_relative_to(folder):
            raise ConfigError(f"{mpath}: workdir {manifest.workdir!r} is outside the bot's folder "
                              f"({folder}); the snapshot holds only that folder")
        if not workdir.is_dir():
            raise ConfigError(f"{mpath}: working directory {str(workdir)!r} does not exist")
        digest = content_hash(folder)
        store = self._open_for_writing()
        conn = store.db.conn
        same = conn.execute("select version, status from bots where name = ? and content_hash = ?",
                            [manifest.name, digest]).fetchone()
        if same:
            version, status = same
            if status == "retired":
                with store.transaction():
                    conn.execute("update bots set status = 'active' where name = ? and version = ?",
                                 [manifest.name, version])
                return AddResult(manifest.name, version, digest, "reactivated",
                                 f"{manifest.name}@{version} was retired; it is active again "
                                 f"(same content {digest[:8]})")
            return AddResult(manifest.name, version, digest, "unchanged",
                             f"{manifest.name}@{version} already holds this content "
                             f"({digest[:8]}); nothing to do")
        try:
            snapshot = self._snapshot(folder, digest)
        except OSError as exc:  # a read-only registry folder, an unreadable bot file
            where = f"{exc.filename}: " if exc.filename else ""
            raise StoreError(f"cannot snapshot {folder} into {self.root}: {where}"
                             f"{exc.strerror or exc}") from None
        version = manifest.version or digest[:8]
        row = conn.execute("select id, content_hash from bots where name = ? and version = ?",
                           [manifest.name, version]).fetchone()
        outcome, message = "added", f"added {manifest.name}@{version} ({digest[:8]})"
        if row and row[1] is None:
            # Known from a tournament run straight from its manifest: its games stay with it.
            outcome = "claimed"
            message = (f"added {manifest.name}@{version} ({digest[:8]}); its earlier tournament "
                       f"games under that name and version stay with it")
        elif row:
            given = version
            version = f"{given}+{digest[:8]}"
            outcome = "new_version"
            message = (f"{manifest.name}@{given} already holds other content; this changed folder "
                       f"is recorded as {manifest.name}@{version} (raise `version` in "
                       f"{mpath.name} to choose the number yourself)")
        values = {
            "name": manifest.name, "version": version, "content_hash": digest, "status": "active",
            "command": json.dumps(manifest.command),
            "workdir": str((snapshot / workdir.relative_to(folder)).resolve()),
            "language": manifest.language, "author": manifest.author,
            "description": manifest.description, "games": json.dumps(manifest.games),
            "manifest": mpath.relative_to(folder).as_posix(),
        }
        from arena.store import now

        with store.transaction():
            if outcome == "claimed":
                conn.execute("update bots set " + ", ".join(f"[{k}] = ?" for k in values)
                             + " where id = ?", [*values.values(), row[0]])
            else:
                store._insert("bots", [{**values, "added_at": now()}])
        return AddResult(manifest.name, version, digest, outcome, message)

    def _open_for_writing(self):
        if self._store is None:
            from arena.store import Store

            self._store = Store(self.db_path)  # `bot add` is how a registry starts
        return self._store

    def _snapshot(self, folder: Path, digest: str) -> Path:
        """Copy the folder to root/<digest> once; a copy interrupted half-way is never used."""
        target = self.root / digest
        if target.is_dir():
            return target
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{digest[:8]}-", dir=self.root))
        try:
            for rel in bot_files(folder):
                dest = tmp / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(folder / rel, dest)
                # Read-only files: a bot (or a slip of its author) cannot edit a submitted version.
                mode = dest.stat().st_mode
                dest.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
            if content_hash(tmp) != digest:
                raise ConfigError(f"{folder}: its files changed while they were being copied; "
                                  f"add it again")
            os.replace(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return target

    # -- reading --------------------------------------------------------------------------------
    def versions(self, name: str | None = None) -> list[BotVersion]:
        """Registered versions (of one bot, or of all), oldest first."""
        where, args = "content_hash is not null", []
        if name is not None:
            where, args = where + " and name = ?", [name]
        return [self._version(r) for r in self.store.db.query(
            f"select * from bots where {where} order by name, id", args)]

    def lookup(self, ref: str, active_only: bool = False) -> BotVersion:
        """The version `name@version`, or the newest active version of `name`."""
        name, version = parse_ref(ref)
        versions = self.versions(name)
        if not versions:
            raise ConfigError(f"no bot named {name!r} in the registry")
        if version is None:
            active = [v for v in versions if v.status == "active"]
            if not active:
                raise ConfigError(f"every version of {name!r} is retired "
                                  f"(name one: {', '.join(v.ref for v in versions)})")
            return active[-1]
        for v in versions:
            if v.version == version:
                if active_only and v.status != "active":
                    raise ConfigError(f"{v.ref} is retired")
                return v
        raise ConfigError(f"{name!r} has no version {version!r} "
                          f"(versions: {', '.join(v.version for v in versions)})")

    def spec(self, version: BotVersion, name: str | None = None, args: list[str] = (),
             sandbox: str | None = None) -> BotSpec:
        """The BotSpec that starts a registered version from its snapshot (its manifest's limits)."""
        snapshot = self.root / version.content_hash
        if not snapshot.is_dir() or not Path(version.workdir).is_dir():
            raise ConfigError(f"{version.ref}: its snapshot {snapshot} is missing")
        spec = BotSpec(name=name or version.name, command=(*version.command, *args),
                       workdir=version.workdir, version=version.version, env=BOT_ENV)
        manifest = None
        if version.manifest and (snapshot / version.manifest).is_file():
            manifest = load_manifest(snapshot / version.manifest)
        return with_policy(spec, manifest, sandbox)

    def resolve(self, ref: str, name: str | None = None,
                args: list[str] = ()) -> tuple[BotSpec, dict]:
        """A config's `bot = ref` entry: its BotSpec and its bots row (for Store.add_bot)."""
        v = self.lookup(ref, active_only=True)
        spec = self.spec(v, name, args)
        return spec, {"name": spec.name, "version": v.version, "command": list(spec.command),
                      "workdir": v.workdir, "language": v.language, "description": v.description,
                      "games": list(v.games)}

    def show(self, ref: str) -> dict:
        """A bot's versions with, per version, games, tournaments, latest ratings, recent failures."""
        name, version = parse_ref(ref)
        versions = self.versions(name)
        if not versions:
            raise ConfigError(f"no bot named {name!r} in the registry")
        if version is not None:
            versions = [self.lookup(ref)]
        q = self.store.db.query
        out = []
        for v in versions:
            tournaments = [r["tournament_id"] for r in q(
                "select tournament_id from tournament_bots where bot_id = ? "
                "order by tournament_id desc", [v.id])]
            games = next(q("select count(*) n from game_seats where bot_id = ?", [v.id]))["n"]
            ratings = []
            if tournaments:
                # The ratings table is keyed by the bot's name within a tournament.
                ratings = list(q(
                    "select r.tournament_id, t.name tournament, r.stage, r.method, r.rating, "
                    "r.lo, r.hi, r.games from ratings r join tournaments t on t.id = r.tournament_id "
                    "where r.bot_id = ? and r.tournament_id = ? order by r.stage, r.method",
                    [v.id, tournaments[0]]))
            failures = list(q(
                "select g.id game_id, g.tournament_id, g.termination, g.detail, g.evidence, "
                "g.recorded_at, l.stderr from games g "
                "join game_seats s on s.game_id = g.id and s.seat = g.culprit_seat "
                "left join bot_logs l on l.match_id = g.match_id and l.bot = s.bot "
                "where s.bot_id = ? and g.termination != 'normal' "
                "order by g.recorded_at desc, g.ordinal desc limit 5", [v.id]))
            for f in failures:
                f["stderr_tail"] = (f.pop("stderr") or "")[-STDERR_TAIL:]
            out.append({**v.__dict__, "ref": v.ref, "tournaments": len(tournaments),
                        "games_played": games, "ratings": ratings, "failures": failures,
                        **self._ladder_record(v.id)})
        return {"name": name, "versions": out}

    def _ladder_record(self, bot_id: int) -> dict:
        """A version's ladders (entry, why rejected), recent ladder games and rating trajectory."""
        q = self.store.db.query
        ladders = list(q(
            "select t.id ladder_id, t.name ladder, e.status, e.reason, e.joined_tick, "
            "e.retired_tick, (select count(*) from game_seats s join games g on g.id = s.game_id "
            "where g.tournament_id = t.id and s.bot_id = e.bot_id) games "
            "from ladder_entries e join tournaments t on t.id = e.tournament_id "
            "where e.bot_id = ? order by t.id", [bot_id]))
        recent = list(q(
            "select g.id game_id, g.tournament_id ladder_id, g.game, s.rank, g.num_seats seats, "
            "g.termination, g.recorded_at from game_seats s join games g on g.id = s.game_id "
            "join tournaments t on t.id = g.tournament_id "
            "where s.bot_id = ? and t.format = 'ladder' order by g.recorded_at desc, g.ordinal desc "
            "limit 10", [bot_id]))
        trajectory = list(q(
            "select scope_id, method, tables, games, rating, lo, hi, computed_at "
            "from rating_snapshots where bot_id = ? and scope_kind = 'ladder' "
            "order by computed_at, tables", [bot_id]))
        return {"ladders": ladders, "ladder_games": recent, "ladder_ratings": trajectory}

    def remove(self, ref: str) -> list[str]:
        """Retire a version (or every version of a bot); its history and ratings stay."""
        name, version = parse_ref(ref)
        targets = [self.lookup(ref)] if version else self.versions(name)
        if not targets:
            raise ConfigError(f"no bot named {name!r} in the registry")
        store = self.store
        with store.transaction():
            for v in targets:
                store.db.conn.execute("update bots set status = 'retired' where id = ?", [v.id])
        return [v.ref for v in targets if v.status != "retired"]

    @staticmethod
    def _version(row: dict) -> BotVersion:
        known = BotVersion.__dataclass_fields__
        return BotVersion(
            **{k: row[k] for k in known if k in row and k not in ("command", "games", "extra")},
            command=json.loads(row["command"] or "[]"), games=json.loads(row["games"] or "[]"),
            extra={k: row[k] for k in row if k not in known},
        )


def with_policy(spec: BotSpec, manifest: Manifest | None, sandbox: str | None = None) -> BotSpec:
    """The spec with its manifest's resource limits and a sandbox, where this Arena has them."""
    fields = BotSpec.__dataclass_fields__
    changes: dict[str, Any] = {}
    if "limits" in fields and getattr(manifest, "limits", None) is not None:
        from arena.players.limits import resolve_limits

        changes["limits"] = resolve_limits(manifest.limits)
    if sandbox is not None:
        if "sandbox" not in fields:
            if sandbox not in ("auto", "none"):
                raise ConfigError(f"sandbox {sandbox!r}: this Arena has no sandbox yet")
        else:
            changes["sandbox"] = sandbox
    return replace(spec, **changes) if changes else spec


def manifest_spec(path: str | Path, sandbox: str | None = None) -> tuple[BotSpec, Manifest]:
    """A bot straight from its folder or manifest (no registry): its BotSpec and manifest."""
    mpath = find_manifest(path)
    manifest = load_manifest(mpath)
    workdir = (mpath.parent / manifest.workdir).resolve()
    if not workdir.is_dir():
        raise ConfigError(f"{mpath}: working directory {str(workdir)!r} does not exist")
    spec = BotSpec(name=manifest.name, command=tuple(manifest.command), workdir=str(workdir),
                   version=manifest.version)
    return with_policy(spec, manifest, sandbox), manifest

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
import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.config import MANIFEST_MAX_BYTES, Manifest, load_manifest, shown
from arena.errors import ConfigError, RegistryError, SnapshotChanged, StoreError
from arena.games import get_game
from arena.players.base import BotSpec
from arena.refs import parse_ref

# Never part of a bot's content: version control, caches the bot's own runs leave behind.
IGNORED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".mypy_cache"})
IGNORED_SUFFIXES = (".pyc", ".pyo")
MANIFEST_NAMES = ("bot.toml", "arena.toml", "manifest.toml")
# A bot folder larger than this is refused, not copied. Sized for a bot with a model file of a
# few hundred MB: on a cluster the snapshot is packed in the driver's memory and sent to each node
# once (bench/snapshot_bench.py measures the cost per node).
MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024
MAX_FILE_BYTES = MAX_SNAPSHOT_BYTES  # one file may be the whole bot (a model, a table)
MAX_ENTRIES = 10_000  # files and folders of a bot folder
MAX_DEPTH = 32  # folders within folders
READ_CHUNK = 1 << 20
STDERR_TAIL = 600  # characters of stderr shown per failure in `show`
# Registry bots never write bytecode into their snapshot; the other two say which version runs
# (and let a match check the snapshot before it starts the bot).
BOT_ENV = (("PYTHONDONTWRITEBYTECODE", "1"),)
REF_ENV, SNAPSHOT_ENV = "ARENA_BOT_REF", "ARENA_SNAPSHOT_SHA256"
# A snapshot's stat tuple is trusted to stand for its content only once its newest change is this
# much older than the look: a change within the file system's timestamp granularity of the look
# could leave size, mtime and ctime as they were.
RACY_S = 2.0
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO swapped in after the scan opens at once (and is then refused), never blocks.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def registry_dir(db: str | Path) -> Path:
    """Where the snapshots of the database `db` live: `<db>.bots/` beside it."""
    db = Path(db)
    return db.with_name(db.name + ".bots")


def find_manifest(path: str | Path, follow: bool = True) -> Path:
    """The manifest of a bot: the file itself, or the one manifest in a folder.

    With `follow=False` only the folder is resolved, never the manifest's own name: a manifest
    that is a link stays one (and a snapshot refuses it) instead of moving the bot's folder.
    """
    path = Path(path)

    def absolute(p: Path) -> Path:
        return p.resolve() if follow else p.parent.resolve() / p.name

    if path.is_file():
        return absolute(path)
    if not path.is_dir():
        raise ConfigError(f"no such file or folder: {path}")
    for name in MANIFEST_NAMES:
        if (path / name).is_file():
            return absolute(path / name)
    tomls = sorted(path.glob("*.toml"))
    if len(tomls) == 1:
        return absolute(tomls[0])
    if not tomls:
        raise ConfigError(f"{path}: no bot manifest (bot.toml) in this folder")
    raise ConfigError(f"{path}: several manifests ({', '.join(t.name for t in tomls)}); "
                      f"give the manifest file itself")


@dataclass(frozen=True)
class FolderEntry:
    """A regular file or a folder of a bot folder, as lstat saw it before anything was read."""

    rel: str  # the path relative to the bot's folder, with "/"
    is_dir: bool
    size: int
    executable: bool
    dev: int
    ino: int


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return f"not a regular file (mode {stat.filemode(mode)})"


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.1f} MiB ({n:,} bytes)"


def _limit(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n:,} bytes"


def scan_folder(folder: str | Path, ignore: bool = True,
                skip: frozenset[str] = frozenset()) -> list[FolderEntry]:
    """A bot folder's files and folders from lstat alone: nothing followed, nothing read.

    RegistryError (one line, the path relative to the folder) for a symbolic link (even one that
    points inside), a FIFO, a socket, a device, a file or a folder over the limits. `ignore`
    skips version control and bytecode caches (never part of a bot's content); `skip`, these
    paths relative to the folder (a database and its snapshots kept in a bot's working folder).
    """
    folder = Path(folder)
    entries: list[FolderEntry] = []
    total = 0

    def refuse(rel: str, what: str) -> RegistryError:
        return RegistryError(f"bot folder {folder}: {shown(rel)} {what}")

    def visit(dir_fd: int, prefix: str, depth: int) -> None:
        nonlocal total
        for name in sorted(os.listdir(dir_fd)):
            rel = prefix + name
            if rel in skip:
                continue
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if ignore and (name in IGNORED_DIRS if stat.S_ISDIR(st.st_mode)
                           else name.endswith(IGNORED_SUFFIXES)):
                continue
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:
                raise refuse(rel, "has a name that is not UTF-8; rename it") from None
            if len(entries) >= MAX_ENTRIES:
                raise RegistryError(f"bot folder {folder}: more than {MAX_ENTRIES:,} files and "
                                    f"folders (at {shown(rel)}); a bot folder should hold only "
                                    f"the bot")
            if stat.S_ISDIR(st.st_mode):
                if depth >= MAX_DEPTH:
                    raise refuse(rel, f"is nested more than {MAX_DEPTH} folders deep")
                entries.append(FolderEntry(rel, True, 0, False, st.st_dev, st.st_ino))
                fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
                try:
                    visit(fd, rel + "/", depth + 1)
                finally:
                    os.close(fd)
            elif stat.S_ISREG(st.st_mode):
                if st.st_size > MAX_FILE_BYTES:
                    raise refuse(rel, f"is {_mib(st.st_size)}, over the {_limit(MAX_FILE_BYTES)} "
                                      f"a file of a bot may hold")
                total += st.st_size
                if total > MAX_SNAPSHOT_BYTES:
                    raise RegistryError(f"bot folder {folder}: more than "
                                        f"{_limit(MAX_SNAPSHOT_BYTES)} of files (at {shown(rel)}); "
                                        f"a bot folder should hold only the bot")
                entries.append(FolderEntry(rel, False, st.st_size, bool(st.st_mode & 0o111),
                                           st.st_dev, st.st_ino))
            else:
                what = _kind(st.st_mode)
                if stat.S_ISLNK(st.st_mode):
                    try:
                        what += f" (to {shown(os.readlink(name, dir_fd=dir_fd))})"
                    except OSError:
                        pass
                raise refuse(rel, f"is {what}; a bot folder may hold only regular files and "
                                  f"folders")

    try:
        top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise RegistryError(f"bot folder {folder}: {exc.strerror or exc}") from None
    try:
        visit(top, "", 0)
    except OSError as exc:  # a folder that vanished or cannot be listed mid-scan
        where = f"{shown(exc.filename)}: " if isinstance(exc.filename, str) else ""
        raise RegistryError(f"bot folder {folder}: {where}{exc.strerror or exc}") from None
    finally:
        os.close(top)
    entries.sort(key=lambda e: e.rel)
    return entries


def bot_files(folder: Path) -> list[Path]:
    """The files that make a bot's content, relative to its folder, in a fixed order."""
    return [Path(e.rel) for e in scan_folder(folder) if not e.is_dir]


def _open_beneath(top: int, rel: str, final_flags: int = _FILE_FLAGS) -> int:
    """Open `rel` under the folder `top` without following a link at any step."""
    parts = rel.split("/")
    fd = top
    try:
        for part in parts[:-1]:
            nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            if fd != top:
                os.close(fd)
            fd = nxt
        return os.open(parts[-1], final_flags, dir_fd=fd)
    finally:
        if fd != top:
            os.close(fd)


def read_entries(folder: str | Path, entries: list[FolderEntry],
                 sink: Callable[[FolderEntry, bytes], None] | None = None) -> str:
    """SHA-256 of the scanned files, each read as what the scan saw; `sink` gets every chunk.

    Each file is opened with O_NOFOLLOW (every folder on its way too) and O_NONBLOCK, checked by
    fstat to be the same regular file of the size the scan saw, and read to that size plus one
    byte: whatever was swapped in or grew since the scan is refused, never read whole.
    """
    folder = Path(folder)
    digest = hashlib.sha256()

    def changed(rel: str, what: str) -> RegistryError:
        return RegistryError(f"bot folder {folder}: {shown(rel)} {what} while it was read; "
                             f"add it again")

    top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for e in entries:
            if e.is_dir:
                continue
            try:
                fd = _open_beneath(top, e.rel)
            except OSError as exc:
                raise changed(e.rel, f"could not be opened ({exc.strerror or exc})") from None
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (e.dev, e.ino):
                    raise changed(e.rel, f"was replaced (now {_kind(st.st_mode)})"
                                  if not stat.S_ISREG(st.st_mode) else "was replaced")
                if st.st_size != e.size:
                    raise changed(e.rel, f"changed size ({e.size:,} -> {st.st_size:,} bytes)")
                # Length-prefixed fields: no two different folders give the same byte stream.
                path = e.rel.encode("utf-8")
                mode = b"x" if e.executable else b"-"
                digest.update(b"%d:%s%s%d:" % (len(path), path, mode, e.size))
                left = e.size + 1
                while left > 0:
                    chunk = os.read(fd, min(READ_CHUNK, left))
                    if not chunk:
                        break
                    left -= len(chunk)
                    if left <= 0:
                        raise changed(e.rel, "grew")
                    digest.update(chunk)
                    if sink is not None:
                        sink(e, chunk)
                if left != 1:
                    raise changed(e.rel, f"shrank ({e.size:,} -> {e.size + 1 - left:,} bytes)")
            finally:
                os.close(fd)
    finally:
        os.close(top)
    return digest.hexdigest()


def content_hash(folder: str | Path, ignore: bool = True,
                 skip: frozenset[str] = frozenset()) -> str:
    """SHA-256 of a bot folder: every file's relative path, executable bit and bytes, in order.

    Read as a snapshot is taken (see scan_folder and read_entries): RegistryError for a link, a
    device, a FIFO or a folder over the limits. `ignore=False` counts caches and version control
    too: a snapshot holds none, so one found there is a change.
    """
    return read_entries(folder, scan_folder(folder, ignore, skip))


# A snapshot's content hash per (folder, stat tuple of everything in it): checked before every
# match, a large snapshot is read again only when a stat of one of its files or folders changed.
_HASHES: dict[str, tuple[tuple, str]] = {}


def _signature(folder: Path) -> tuple:
    """(path, dev, inode, size, mtime, ctime, mode) of a folder and everything in it, by lstat."""
    out = []

    def visit(path: str, rel: str, depth: int) -> None:
        with os.scandir(path) as it:
            for e in it:
                st = e.stat(follow_symlinks=False)
                out.append((rel + e.name, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                            st.st_ctime_ns, st.st_mode))
                # Too many or too deep: the hash refuses the folder, no need to look further.
                if len(out) > MAX_ENTRIES:
                    return
                if stat.S_ISDIR(st.st_mode) and depth < MAX_DEPTH:
                    visit(e.path, rel + e.name + "/", depth + 1)

    st = os.lstat(folder)
    out.append(("", st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode))
    if stat.S_ISDIR(st.st_mode):
        visit(str(folder), "", 0)
    return tuple(sorted(out))


def snapshot_hash(folder: str | Path) -> str:
    """The content hash of a snapshot as it is now, rehashed only when a stat of it changed.

    A user can set mtime but never ctime: an unchanged (inode, size, mtime, ctime, mode) of every
    file and folder means unchanged content. RegistryError when the snapshot holds something a
    snapshot never does (a link, a FIFO, too many files).
    """
    folder = Path(folder)
    key = str(folder)
    looked = time.time_ns()
    sig = _signature(folder)
    cached = _HASHES.get(key)
    if cached is not None and cached[0] == sig:
        return cached[1]
    digest = content_hash(folder, ignore=False)
    if max(entry[5] for entry in sig) < looked - RACY_S * 1e9:
        _HASHES[key] = (sig, digest)
    else:
        _HASHES.pop(key, None)
    return digest


def verify_snapshot(folder: str | Path, digest: str, ref: str) -> None:
    """SnapshotChanged (bot@version, the recorded and the found hash) unless `folder` holds `digest`."""
    try:
        found = snapshot_hash(folder)
    except RegistryError as exc:
        found = f"none: {str(exc).removeprefix(f'bot folder {folder}: ')}"
    except OSError as exc:
        found = f"none: {exc.strerror or exc}"
    if found != digest:
        message = (f"snapshot of {ref} changed since it was added: recorded {digest}, found "
                   f"{found}; refused")
        raise SnapshotChanged(message, f"recorded {digest}, found {found}")


@dataclass(frozen=True)
class RefusedStart:
    """A bot factory that fails to start: a registry bot whose snapshot changed (picklable)."""

    message: str
    evidence: str

    def __call__(self) -> Any:
        """Raise the refusal as the bot's start failure."""
        raise SnapshotChanged(self.message, self.evidence)


def snapshot_of(spec: BotSpec) -> tuple[str, Path] | None:
    """(hash, folder) of the snapshot a subprocess bot runs from: the folder named by its hash
    that holds its working folder; None for a bot without one (or not inside it)."""
    if spec.in_process:
        return None
    digest = dict(spec.env).get(SNAPSHOT_ENV)
    if not digest:
        return None
    folder = Path(spec.workdir)
    while folder.name != digest and folder != folder.parent:
        folder = folder.parent
    return (digest, folder) if folder.name == digest else None


def guard(spec: BotSpec) -> BotSpec:
    """A registry bot's spec as it is, or — its snapshot changed — one whose start fails, saying how.

    Called before every match: the failure is that bot's `startup_failure` forfeit with the
    hashes as evidence; the other bots and the tournament play on.
    """
    env = dict(spec.env)
    digest = env.get(SNAPSHOT_ENV)
    if not digest or spec.factory is not None:
        return spec
    ref = env.get(REF_ENV) or f"{spec.name}@{spec.version}"
    found = snapshot_of(spec)
    try:
        if found is None:  # never hash whatever folder the walk up ended in
            raise SnapshotChanged(f"snapshot of {ref}: its working folder {spec.workdir} is not "
                                  f"inside a snapshot {digest}; refused", f"recorded {digest}")
        verify_snapshot(found[1], digest, ref)
    except SnapshotChanged as exc:
        return replace(spec, command=(), factory=RefusedStart(str(exc), exc.evidence))
    return spec


def guard_match(match: Any) -> Any:
    """A MatchSpec with guard() applied to each of its bots (the same object when none changed)."""
    bots = tuple(guard(b) for b in match.bots)
    if all(a is b for a, b in zip(bots, match.bots)):
        return match
    return replace(match, bots=bots)


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
    def add(self, path: str | Path, author_id: int | None = None,
            status: str = "active") -> AddResult:
        """Validate a bot's manifest, snapshot its folder and record the version (no-op if known).

        The folder is scanned with lstat first: a link, a FIFO, a socket, a device, a file or a
        folder over the limits is refused (RegistryError) before anything is read or written.
        `author_id`: the server's author who submitted it; `status`: "pending" for a version that
        no ladder may pick up before its check is clean (arena/server/checks.py).
        """
        mpath = find_manifest(path, follow=False)
        folder = mpath.parent
        entries = scan_folder(folder)
        rel_manifest = mpath.relative_to(folder).as_posix()
        entry = next((e for e in entries if e.rel == rel_manifest and not e.is_dir), None)
        if entry is None:
            raise RegistryError(f"bot folder {folder}: its manifest {shown(rel_manifest)} is not "
                                f"a regular file of the folder")
        if entry.size > MANIFEST_MAX_BYTES:
            raise ConfigError(f"{mpath}: over {MANIFEST_MAX_BYTES // 1024} KiB "
                              f"({entry.size:,} bytes); a manifest is a short TOML file")
        text = bytearray()
        read_entries(folder, [entry], lambda e, chunk: text.extend(chunk))
        manifest = load_manifest(mpath, bytes(text))  # names and fields bounded by the schema
        for game in manifest.games:
            try:
                get_game(game)
            except ConfigError as exc:
                raise ConfigError(f"{mpath}: games: {exc}") from None
        workdir = (folder / manifest.workdir).resolve()
        if not workdir.is_relative_to(folder):
            raise ConfigError(f"{mpath}: workdir {manifest.workdir!r} is outside the bot's folder "
                              f"({folder}); the snapshot holds only that folder")
        if not workdir.is_dir():
            raise ConfigError(f"{mpath}: working directory {str(workdir)!r} does not exist")
        self._open_for_writing()  # a database that cannot be opened is said before any copy
        try:
            tmp, digest, copied = copy_snapshot(self.root, folder, entries, rel_manifest)
        except OSError as exc:  # a read-only registry folder, a full disk
            where = f"{exc.filename}: " if exc.filename else ""
            raise StoreError(f"cannot snapshot {folder} into {self.root}: {where}"
                             f"{exc.strerror or exc}") from None
        try:
            if copied != bytes(text):
                raise RegistryError(f"bot folder {folder}: {shown(rel_manifest)} changed while "
                                    f"it was read; add it again")
            return self._record(mpath, manifest, folder, workdir, tmp, digest, author_id, status)
        finally:
            if tmp.exists():
                remove_tree(tmp)

    def _record(self, mpath: Path, manifest: Manifest, folder: Path, workdir: Path, tmp: Path,
                digest: str, author_id: int | None = None, status: str = "active") -> AddResult:
        """Record the copied snapshot `tmp` (moved to root/<digest>) as a version, or find it known."""
        store = self._open_for_writing()
        same = store.registered_with_content(manifest.name, digest)
        if same:
            version = same[0]
            if same[1] == "retired" or (status != "active" and same[1] != "active"):
                store.reactivate_bot(manifest.name, version, status)
                return AddResult(manifest.name, version, digest, "reactivated",
                                 f"{manifest.name}@{version} was {same[1]}; it is {status} again "
                                 f"(same content {digest[:8]})")
            return AddResult(manifest.name, version, digest, "unchanged",
                             f"{manifest.name}@{version} already holds this content "
                             f"({digest[:8]}); nothing to do")
        snapshot = install_snapshot(self.root, tmp, digest)
        version = manifest.version or digest[:8]

        def recorded(v: str):
            """(id, claimable) of the row name@v: claimable when a tournament recorded it from
            this folder (same content and command) or before content was hashed."""
            found = store.bot_identity(manifest.name, v)
            if found is None:
                return None
            same = found[1] is None or (found[1] == digest
                                        and json.loads(found[3] or "[]") == manifest.command)
            return found[0], found[2] is None and same

        row = recorded(version)
        outcome, message = "added", f"added {manifest.name}@{version} ({digest[:8]})"
        if row and not row[1]:
            given = version
            version = f"{given}+{digest[:8]}"
            outcome = "new_version"
            message = (f"{manifest.name}@{given} already holds other content; this changed folder "
                       f"is recorded as {manifest.name}@{version} (raise `version` in "
                       f"{mpath.name} to choose the number yourself)")
            row = recorded(version)
            if row and not row[1]:
                raise RegistryError(f"{manifest.name}@{version} is recorded already for another "
                                    f"program; raise `version` in {mpath.name}")
        if row:
            # Known from a tournament run straight from its folder: its games stay with it.
            outcome = "claimed"
            message = (f"added {manifest.name}@{version} ({digest[:8]}); its earlier tournament "
                       f"games under that name and version stay with it")
        values = {
            "name": manifest.name, "version": version, "content_hash": digest, "status": status,
            "command": json.dumps(manifest.command),
            "workdir": str((snapshot / workdir.relative_to(folder)).resolve()),
            "language": manifest.language, "author": manifest.author,
            "description": manifest.description, "games": json.dumps(manifest.games),
            "manifest": mpath.relative_to(folder).as_posix(),
        }
        if author_id is not None:
            values["author_id"] = author_id
        store.register_bot(values, claim=row[0] if outcome == "claimed" else None)
        return AddResult(manifest.name, version, digest, outcome, message)

    def _open_for_writing(self):
        if self._store is None:
            from arena.store import Store

            self._store = Store(self.db_path)  # `bot add` is how a registry starts
        return self._store

    # -- reading --------------------------------------------------------------------------------
    def versions(self, name: str | None = None) -> list[BotVersion]:
        """Registered versions (of one bot, or of all), oldest first."""
        # A registered version has a snapshot and its manifest in it; a tournament's own bots
        # (manifest and command bots) may have a content hash too, but are not the registry's.
        return [self._version(r) for r in self.store.registered_bots(name)]

    def lookup(self, ref: str, active_only: bool = False) -> BotVersion:
        """The version `name@version`, or the newest active version of `name`."""
        name, version = parse_ref(ref)
        versions = self.versions(name)
        if not versions:
            raise ConfigError(f"no bot named {name!r} in the registry")
        if version is None:
            active = [v for v in versions if v.status == "active"]
            if not active:
                shown_status = "retired" if all(v.status == "retired" for v in versions) else \
                    "retired, rejected or awaiting its check"
                raise ConfigError(f"every version of {name!r} is {shown_status} "
                                  f"(name one: {', '.join(v.ref for v in versions)})")
            return active[-1]
        for v in versions:
            if v.version == version:
                if active_only and v.status != "active":
                    raise ConfigError(f"{v.ref} is {v.status}")
                return v
        raise ConfigError(f"{name!r} has no version {version!r} "
                          f"(versions: {', '.join(v.version for v in versions)})")

    def spec(self, version: BotVersion, name: str | None = None, args: list[str] = (),
             sandbox: str | None = None) -> BotSpec:
        """The BotSpec that starts a registered version from its snapshot (its manifest's limits).

        A snapshot that no longer holds its recorded content gives a spec whose start fails with
        both hashes (see guard), so the tournament records that bot's forfeit and plays on.
        """
        snapshot = self.root / version.content_hash
        if not snapshot.is_dir() or not Path(version.workdir).is_dir():
            raise ConfigError(f"{version.ref}: its snapshot {snapshot} is missing")
        env = (*BOT_ENV, (REF_ENV, version.ref), (SNAPSHOT_ENV, version.content_hash))
        spec = BotSpec(name=name or version.name, command=(*version.command, *args),
                       workdir=version.workdir, version=version.version, env=env)
        checked = guard(spec)
        if checked is not spec:  # its manifest is not read: the file may be anything now
            return with_policy(checked, None, sandbox)
        manifest = None
        if version.manifest and (snapshot / version.manifest).is_file():
            manifest = load_manifest(snapshot / version.manifest)
        return with_policy(spec, manifest, sandbox)

    def resolve(self, ref: str, name: str | None = None,
                args: list[str] = ()) -> tuple[BotSpec, dict]:
        """A config's `bot = ref` entry: its BotSpec and its bots row (for Store.add_bot)."""
        v = self.lookup(ref, active_only=True)
        spec = self.spec(v, name, args)
        # The row from the record, not the spec: a refused spec (snapshot changed) has no command.
        # Its name is the registry's whatever the entry is called in the tournament: the games
        # are that version's (`arena bot show`, h2h and leaderboards count them by its id).
        return spec, {"name": v.name, "version": v.version, "command": [*v.command, *args],
                      "workdir": v.workdir, "language": v.language, "description": v.description,
                      "games": list(v.games), "content_hash": v.content_hash,
                      "registry_ref": v.ref, "manifest_ref": self.manifest_ref(v)}

    def manifest_ref(self, v: BotVersion) -> tuple[str, str]:
        """(name, version) the snapshot's manifest gives: what the bot's `ready` should say."""
        path = self.root / v.content_hash / (v.manifest or "")
        if v.manifest and path.is_file():
            try:
                m = load_manifest(path)
                return m.name, m.version
            except ConfigError:  # a changed snapshot is refused at its start, with its hashes
                pass
        return v.name, v.version

    def show(self, ref: str) -> dict:
        """A bot's versions with, per version, games, tournaments, latest ratings, recent failures."""
        name, version = parse_ref(ref)
        versions = self.versions(name)
        if not versions:
            raise ConfigError(f"no bot named {name!r} in the registry")
        if version is not None:
            versions = [self.lookup(ref)]
        out = []
        for v in versions:
            history = self.store.bot_history(v.id)
            for f in history["failures"]:
                f["stderr_tail"] = (f.pop("stderr") or "")[-STDERR_TAIL:]
            out.append({**v.__dict__, "ref": v.ref, "tournaments": len(history["tournaments"]),
                        "games_played": history["games_played"], "ratings": history["ratings"],
                        "failures": history["failures"], **self.store.bot_ladder_record(v.id)})
        return {"name": name, "versions": out}

    def remove(self, ref: str) -> list[str]:
        """Retire a version (or every version of a bot); its history and ratings stay."""
        name, version = parse_ref(ref)
        targets = [self.lookup(ref)] if version else self.versions(name)
        if not targets:
            raise ConfigError(f"no bot named {name!r} in the registry")
        self.store.retire_bots([v.id for v in targets])
        return [v.ref for v in targets if v.status != "retired"]

    @staticmethod
    def _version(row: dict) -> BotVersion:
        known = BotVersion.__dataclass_fields__
        return BotVersion(
            **{k: row[k] for k in known if k in row and k not in ("command", "games", "extra")},
            command=json.loads(row["command"] or "[]"), games=json.loads(row["games"] or "[]"),
            extra={k: row[k] for k in row if k not in known},
        )


def copy_snapshot(root: Path, folder: Path, entries: list[FolderEntry],
                  rel_manifest: str | None = None) -> tuple[Path, str, bytes]:
    """Copy the scanned files to a new temporary folder in `root`: (it, their hash, the manifest).

    Files end 0444 (0555 if executable) and folders 0555: a bot running as another user
    cannot change its snapshot. Nothing is left behind when the copy fails.
    """
    made_root = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".add-", dir=root))
    manifest = bytearray()
    out: dict[str, int] = {}

    def sink(e: FolderEntry, chunk: bytes) -> None:
        view = memoryview(chunk)
        while view:
            view = view[os.write(out[e.rel], view):]
        if e.rel == rel_manifest:
            manifest.extend(chunk)

    try:
        for e in entries:  # sorted: a folder comes before what it holds
            if e.is_dir:
                (tmp / e.rel).mkdir(mode=0o700)
        files = [e for e in entries if not e.is_dir]
        for e in files:
            fd = os.open(tmp / e.rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
            out[e.rel] = fd
        try:
            digest = read_entries(folder, files, sink)
            for e in files:
                os.fchmod(out[e.rel], 0o555 if e.executable else 0o444)
        finally:
            for fd in out.values():
                os.close(fd)
        for e in reversed(entries):  # deepest first: a read-only folder takes no new entry
            if e.is_dir:
                os.chmod(tmp / e.rel, 0o555)
        os.chmod(tmp, 0o555)
    except BaseException:
        remove_tree(tmp)
        if made_root:
            try:
                root.rmdir()
            except OSError:
                pass
        raise
    return tmp, digest, bytes(manifest)


def install_snapshot(root: Path, tmp: Path, digest: str) -> Path:
    """Move a copied snapshot to root/<digest>; an existing one is kept if it still holds it."""
    target = root / digest
    try:
        os.rename(tmp, target)
        return target
    except OSError:
        if not target.is_dir():
            raise
    try:
        verify_snapshot(target, digest, digest[:8])
    except SnapshotChanged as exc:
        raise StoreError(f"the registry's snapshot folder {target} no longer holds what its "
                         f"name says ({exc.evidence}); move it aside and add the bot again") from None
    return target


def remove_tree(path: Path) -> None:
    """Remove a folder this process wrote, read-only folders included."""
    for root, dirs, _ in os.walk(path):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o700)
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass
    shutil.rmtree(path, ignore_errors=True)


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

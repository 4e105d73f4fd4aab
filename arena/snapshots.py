"""Bots travel as content-addressed snapshots: taken when a run is planned, materialised per node.

Every subprocess bot of a tournament runs from a snapshot of its folder — a manifest bot's folder,
a `command` bot's `workdir` — copied into the registry's store beside the database,
`<db>.bots/<sha256>/`, exactly as `arena bot add` does for registry bots. The hash is recorded per
entry (bots.content_hash), and the bot's paths point into the snapshot, so a run (and its resume)
plays what was planned even if the author's folder changes.

A Ray worker on a node that cannot see that folder (the nodes of a cluster share no files) gets
the snapshot once per node: the driver puts it (a tar) in Ray's object store, the worker unpacks it
into a node-local cache keyed by the hash, checks it against the hash, and rewrites the bot's
paths to it. Later matches on the node use the cached copy; a node that sees the driver's own
snapshot (one machine) copies nothing.
"""

from __future__ import annotations

import fcntl
import io
import os
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from arena.errors import HostFault, RegistryError, SnapshotChanged
from arena.players.base import BotSpec
from arena.registry import (
    REF_ENV,
    SNAPSHOT_ENV,
    content_hash,
    copy_snapshot,
    install_snapshot,
    registry_dir,
    remove_tree,
    scan_folder,
    snapshot_of,
    verify_snapshot,
)

CACHE_ENV = "ARENA_SNAPSHOT_CACHE"  # where a node keeps the snapshots it was sent
DB_SUFFIXES = ("", "-wal", "-shm", "-journal")


def take(folder: Path, root: Path, skip: frozenset[str] = frozenset()) -> tuple[str, Path]:
    """Snapshot `folder` into root/<hash> (nothing copied when that snapshot is there): (hash, it)."""
    digest = content_hash(folder, skip=skip)
    existing = root / digest
    if existing.is_dir():
        try:
            verify_snapshot(existing, digest, digest[:8])
            return digest, existing
        except SnapshotChanged:
            pass  # install_snapshot says so in one line
    entries = scan_folder(folder, skip=skip)
    tmp, digest, _ = copy_snapshot(root, folder, entries)
    try:
        return digest, install_snapshot(root, tmp, digest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def snapshot_bots(specs: list[BotSpec], rows: list[dict],
                  db: str | Path) -> tuple[list[BotSpec], list[dict]]:
    """Every subprocess bot of a run moved onto a snapshot of its folder beside the database `db`.

    A bot's folder is its manifest's folder (`BotSpec.source`) or else its working folder; the
    database and its snapshots, when they lie inside it, are left out. Paths the command names
    inside the folder are rewritten to the snapshot. Each row gets the snapshot's `content_hash`.
    RegistryError (one line) for a folder a snapshot cannot hold.
    """
    db = Path(db).resolve()
    root = registry_dir(db)
    out_specs, out_rows = [], []
    for spec, row in zip(specs, rows):
        found = snapshot_of(spec)
        if spec.in_process or found is not None:  # in-process, or a registry bot's own snapshot
            out_specs.append(spec)
            out_rows.append({**row, "content_hash": found[0] if found else row.get("content_hash")})
            continue
        folder = Path(spec.source or spec.workdir).resolve()
        workdir = Path(spec.workdir).resolve()
        if not workdir.is_relative_to(folder):
            raise RegistryError(f"bot {spec.name!r}: its working folder {workdir} is outside its "
                                f"folder {folder}; a snapshot holds only that folder")
        skip = frozenset(p.relative_to(folder).as_posix() for p in (
            *(db.with_name(db.name + s) for s in DB_SUFFIXES), root) if p.is_relative_to(folder))
        try:
            digest, snap = take(folder, root, skip)
        except RegistryError as exc:
            raise RegistryError(f"bot {spec.name!r}: {exc}") from None
        except OSError as exc:
            raise RegistryError(f"bot {spec.name!r}: cannot snapshot {folder} into {root}: "
                                f"{exc.strerror or exc}") from None
        command = tuple(_inside(arg, folder, snap) for arg in spec.command)
        env = (*spec.env, (REF_ENV, f"{spec.name}@{spec.version}"), (SNAPSHOT_ENV, digest))
        moved = replace(spec, command=command, env=env, source="",
                        workdir=str(snap / workdir.relative_to(folder)))
        out_specs.append(moved)
        out_rows.append({**row, "command": list(command), "workdir": moved.workdir,
                         "content_hash": digest})
    return out_specs, out_rows


def _inside(arg: str, folder: Path, snap: Path) -> str:
    """`arg` rewritten to the snapshot when it is an absolute path inside the bot's folder."""
    if not os.path.isabs(arg):
        return arg
    path = Path(os.path.normpath(arg))
    return str(snap / path.relative_to(folder)) if path.is_relative_to(folder) else arg


# -- shipping ---------------------------------------------------------------------------------------

def pack(folder: Path) -> bytes:
    """A snapshot folder as an uncompressed tar: its folders and regular files, in sorted order."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in scan_folder(folder, ignore=False):
            path = folder / entry.rel
            info = tarfile.TarInfo(entry.rel)
            info.mtime = 0
            if entry.is_dir:
                info.type, info.mode = tarfile.DIRTYPE, 0o555
                tar.addfile(info)
            else:
                info.size, info.mode = entry.size, 0o555 if entry.executable else 0o444
                with open(path, "rb") as fh:
                    tar.addfile(info, fh)
    return buffer.getvalue()


def unpack(data: bytes, root: Path, digest: str) -> Path:
    """A packed snapshot written to root/<digest> and checked against `digest` (HostFault if not).

    Only folders and regular files with plain relative names are taken; anything else means the
    data is not a snapshot Arena packed.
    """
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".fetch-", dir=root))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            members = tar.getmembers()
            for member in members:
                name = member.name
                parts = name.split("/")
                if (name.startswith("/") or any(p in ("", ".", "..") for p in parts)
                        or not (member.isdir() or member.isfile())):
                    what = ("a folder or file" if member.isdir() or member.isfile()
                            else "a link or device")
                    raise HostFault(f"snapshot {digest[:8]}: the data sent holds {name!r} "
                                    f"({what}); refused")
                target = tmp / name
                if member.isdir():
                    target.mkdir(mode=0o700)
                    continue
                source = tar.extractfile(member)
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                             | os.O_CLOEXEC, 0o600)
                with os.fdopen(fd, "wb") as out:
                    shutil.copyfileobj(source, out, 1 << 20)
                os.chmod(target, 0o555 if member.mode & 0o111 else 0o444)
            for member in reversed(members):
                if member.isdir():
                    os.chmod(tmp / member.name, 0o555)
            os.chmod(tmp, 0o555)
        try:
            found = content_hash(tmp, ignore=False)
        except RegistryError as exc:
            found = f"none ({exc})"
        if found != digest:
            raise HostFault(f"snapshot {digest[:8]} arrived with other content ({found[:16]}); "
                            f"refused")
        return install_snapshot(root, tmp, digest)
    except tarfile.TarError as exc:
        raise HostFault(f"snapshot {digest[:8]}: the data sent is not a snapshot ({exc})") from None
    finally:
        if tmp.exists():
            remove_tree(tmp)


def cache_root() -> Path:
    """This node's snapshot cache: $ARENA_SNAPSHOT_CACHE, else /var/tmp/arena-snapshots-<uid>.

    HostFault when it is not this user's own folder closed to others' writes (in a world-writable
    /var/tmp another user could have made it first, to swap a bot's files).
    """
    root = Path(os.environ.get(CACHE_ENV) or
                Path("/var/tmp" if os.path.isdir("/var/tmp") else tempfile.gettempdir())
                / f"arena-snapshots-{os.geteuid()}")
    try:
        root.mkdir(mode=0o755, parents=True, exist_ok=True)
        info = os.lstat(root)
    except OSError as exc:
        raise HostFault(f"snapshot cache {root}: {exc.strerror or exc}") from None
    if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid()
            or info.st_mode & 0o022):
        raise HostFault(f"snapshot cache {root} is not a folder of uid {os.geteuid()} closed to "
                        f"others' writes (owner uid {info.st_uid}, mode "
                        f"{stat.filemode(info.st_mode)}); remove it or set {CACHE_ENV}")
    return root


def materialise(spec: BotSpec, fetch: Callable[[str], bytes] | None) -> BotSpec:
    """The spec as this node can run it: its snapshot as planned when this node sees it, else the
    node's cached copy, fetched (`fetch(hash)`) and checked the first time. HostFault otherwise."""
    found = snapshot_of(spec)
    if found is None:
        return spec
    digest, planned = found
    ref = dict(spec.env).get(REF_ENV) or spec.name
    if planned.is_dir():
        try:
            verify_snapshot(planned, digest, ref)
            return spec
        except SnapshotChanged:
            pass  # a folder of that path here is not the driver's: use the cache
    root = cache_root()
    cached = root / digest
    if not _holds(cached, digest, ref):
        if fetch is None:
            raise HostFault(f"bot {ref}: its snapshot {digest[:8]} is not on this node "
                            f"({planned} is missing) and was not sent")
        with open(root / f".lock-{digest}", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one fetch per node, whatever runs alongside
            if not _holds(cached, digest, ref):
                try:
                    data = fetch(digest)
                except HostFault:
                    raise
                except Exception as exc:  # Ray's own errors: the object store, a lost driver
                    raise HostFault(f"bot {ref}: cannot fetch its snapshot {digest[:8]}: "
                                    f"{type(exc).__name__}: {exc}") from None
                unpack(data, root, digest)
    return relocate(spec, planned, cached)


def _holds(folder: Path, digest: str, ref: str) -> bool:
    if not folder.is_dir():
        return False
    try:
        verify_snapshot(folder, digest, ref)
        return True
    except SnapshotChanged:
        remove_tree(folder)  # a cache entry that lost its content is fetched again
        return False


def relocate(spec: BotSpec, old: Path, new: Path) -> BotSpec:
    """The spec with every path inside the snapshot folder `old` moved to `new`."""
    def move(value: str) -> str:
        path = Path(value)
        return str(new / path.relative_to(old)) if path.is_relative_to(old) else value

    return replace(spec, workdir=move(spec.workdir), command=tuple(
        move(arg) if os.path.isabs(arg) else arg for arg in spec.command))


def materialise_match(match, fetch: Callable[[str], bytes] | None):
    """A MatchSpec with materialise() applied to each bot (the same object when nothing moved)."""
    bots = tuple(materialise(b, fetch) for b in match.bots)
    if all(a is b for a, b in zip(bots, match.bots)):
        return match
    return replace(match, bots=bots)

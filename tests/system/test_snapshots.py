"""Bots as content-addressed snapshots: taken at planning, shipped and cached per node, verified."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from arena.cards import derive_seed
from arena.config import load_config
from arena.errors import HostFault, RegistryError
from arena.match import GamePlan, MatchSpec, run_match
from arena.players.base import random_bot
from arena.protocol import TimeControl
from arena.registry import SNAPSHOT_ENV, content_hash, registry_dir
from arena.snapshots import (
    cache_root,
    materialise,
    materialise_match,
    pack,
    snapshot_bots,
    snapshot_of,
    unpack,
)
from arena.store import Store
from arena.tournament import run_config
from tests.support.listeners import StopAfter
from tests.support.paths import ROOT

BOTS = ROOT / "bots"


def bot_folder(root: Path, name: str = "mybot") -> Path:
    """A manifest bot folder (the random bot) of its own."""
    folder = root / name
    folder.mkdir()
    for script in ("random_bot.py", "arenabot.py"):
        shutil.copy(BOTS / script, folder / script)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\ncommand = ["python3", "random_bot.py"]\n')
    return folder


def config_with(tmp_path: Path, entries: str) -> Path:
    """A config of `entries` and, last, the repo's random bot."""
    path = tmp_path / "t.toml"
    path.write_text(f'name = "t"\ngame = "xeri"\nseed = 1\nsandbox = "none"\n'
                    f'[options]\nrounds = 1\n{entries}\n[[bots]]\nmanifest = "{BOTS}/random.toml"\n'
                    f'name = "other"\n')
    return path


def test_every_subprocess_bot_moves_onto_a_snapshot_beside_the_database(tmp_path):
    folder = bot_folder(tmp_path)
    config = config_with(tmp_path, f'''
[[bots]]
manifest = "{folder}/bot.toml"
[[bots]]
name = "cmd"
command = ["python", "{folder}/random_bot.py", "7"]
workdir = "{folder}"
''')
    db = tmp_path / "a.db"
    _, specs, rows = load_config(config)
    moved, rows = snapshot_bots(specs, rows, db)
    digest = content_hash(folder)
    snap = registry_dir(db) / digest
    assert [snapshot_of(s) for s in moved[:2]] == [(digest, snap), (digest, snap)]
    assert [r["content_hash"] for r in rows[:2]] == [digest, digest]
    assert moved[0].workdir == str(snap) and moved[0].command == ("python3", "random_bot.py")
    # An absolute path inside the bot's folder now points into the snapshot.
    assert moved[1].command == ("python", str(snap / "random_bot.py"), "7")
    assert oct(os.stat(snap / "random_bot.py").st_mode & 0o777) == "0o444"
    # The author's folder changes: the snapshot taken stays, the next plan takes a new one.
    (folder / "random_bot.py").write_text("# changed\n")
    assert content_hash(snap, ignore=False) == digest
    again, rows2 = snapshot_bots(*load_config(config)[1:], db)
    assert rows2[0]["content_hash"] != digest and snapshot_of(again[0])[1].is_dir()


def test_a_database_kept_in_the_bots_folder_is_left_out_of_its_snapshot(tmp_path):
    folder = bot_folder(tmp_path)
    db = folder / "arena.db"
    db.write_bytes(b"not part of the bot")
    (folder / "arena.db-wal").write_bytes(b"nor this")
    _, specs, rows = load_config(config_with(tmp_path, f'[[bots]]\nmanifest = "{folder}/bot.toml"\n'))
    moved, rows = snapshot_bots(specs, rows, db)
    snap = snapshot_of(moved[0])[1]
    assert sorted(p.name for p in snap.iterdir()) == ["arenabot.py", "bot.toml", "random_bot.py"]
    # Taken again with the registry folder now inside the bot's folder: the same snapshot.
    assert snapshot_bots(specs, rows, db)[1][0]["content_hash"] == rows[0]["content_hash"]


def test_a_folder_a_snapshot_cannot_hold_is_refused_in_one_line(tmp_path):
    folder = bot_folder(tmp_path)
    (folder / "link").symlink_to("/etc/passwd")
    _, specs, rows = load_config(config_with(tmp_path, f'[[bots]]\nmanifest = "{folder}/bot.toml"\n'))
    with pytest.raises(RegistryError, match=r"^bot 'mybot': bot folder .*'link' is a symbolic link"):
        snapshot_bots(specs, rows, tmp_path / "a.db")


def test_pack_and_unpack_give_back_the_same_content(tmp_path):
    folder = bot_folder(tmp_path)
    (folder / "sub").mkdir()
    (folder / "sub" / "run").write_text("#!/bin/sh\n")
    (folder / "sub" / "run").chmod(0o755)
    digest = content_hash(folder)
    copy = unpack(pack(folder), tmp_path / "cache", digest)
    assert copy == tmp_path / "cache" / digest
    assert content_hash(copy, ignore=False) == digest
    assert os.access(copy / "sub" / "run", os.X_OK)


def _tar(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data else None)
    return buffer.getvalue()


def test_unpack_refuses_other_content_links_and_escapes(tmp_path):
    folder = bot_folder(tmp_path)
    digest = content_hash(folder)
    with pytest.raises(HostFault, match="arrived with other content"):
        unpack(pack(folder), tmp_path / "cache", "0" * 64)
    link = tarfile.TarInfo("evil")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
    escape = tarfile.TarInfo("../outside")
    escape.size = 1
    for bad in ([(link, b"")], [(escape, b"x")]):
        with pytest.raises(HostFault, match="refused"):
            unpack(_tar(bad), tmp_path / "cache", digest)
    assert not (tmp_path / "outside").exists()
    assert [p.name for p in (tmp_path / "cache").iterdir()] == []  # nothing half-written


def spec_with(bot, match_id: str = "m1") -> MatchSpec:
    plans = tuple(GamePlan(f"{match_id}-{r}", r, 0, r, derive_seed("snap", r), seating)
                  for r, seating in enumerate([(0, 1), (1, 0)]))
    return MatchSpec(match_id, "xeri", {"rounds": 1}, (bot, random_bot("r", 2)), plans,
                     TimeControl(startup_ms=20_000, move_ms=5_000))


def test_a_node_that_cannot_see_the_snapshot_fetches_it_once_and_plays_from_its_cache(
        tmp_path, monkeypatch):
    cache = tmp_path / "node-cache"
    monkeypatch.setenv("ARENA_SNAPSHOT_CACHE", str(cache))
    folder = bot_folder(tmp_path)
    _, specs, rows = load_config(config_with(tmp_path, f'[[bots]]\nmanifest = "{folder}/bot.toml"\n'))
    (spec, _), _ = snapshot_bots(specs, rows, tmp_path / "a.db")
    digest, planned = snapshot_of(spec)
    packed = pack(planned)
    assert materialise(spec, None) is spec  # this machine sees it: nothing copied
    shutil.rmtree(tmp_path / "elsewhere", ignore_errors=True)
    planned.rename(tmp_path / "elsewhere")  # now the node does not see the driver's folder
    fetched = []

    def fetch(wanted: str) -> bytes:
        fetched.append(wanted)
        return packed

    match = materialise_match(spec_with(spec), fetch)
    local = match.bots[0]
    assert fetched == [digest] and local.workdir == str(cache / digest)
    assert dict(local.env)[SNAPSHOT_ENV] == digest
    result = run_match(match)
    assert [g.termination for g in result.games] == ["normal", "normal"]
    assert materialise(spec, fetch).workdir == local.workdir and fetched == [digest]  # cached
    with pytest.raises(HostFault, match="is not on this node"):
        materialise(spec.__class__(**{**spec.__dict__, "env": ((SNAPSHOT_ENV, "f" * 64),),
                                      "workdir": str(tmp_path / ("f" * 64))}), None)


def test_a_cache_folder_others_could_write_is_refused(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)
    monkeypatch.setenv("ARENA_SNAPSHOT_CACHE", str(cache))
    with pytest.raises(HostFault, match="closed to others' writes"):
        cache_root()
    cache.chmod(0o755)
    assert cache_root() == cache


def test_a_resume_plays_the_snapshot_recorded_although_the_folder_changed(tmp_path):
    folder = bot_folder(tmp_path)
    config = config_with(tmp_path, f'[[bots]]\nmanifest = "{folder}/bot.toml"\n'
                                   f'[[bots]]\nmanifest = "{BOTS}/random.toml"\nname = "third"\n'
                                   f'args = ["5"]\n')
    db = tmp_path / "a.db"
    with pytest.raises(KeyboardInterrupt):
        run_config(config, db, executor="serial", pin=False, listener=StopAfter(1))
    recorded = content_hash(folder)
    (folder / "random_bot.py").write_text("import sys\nsys.exit(3)\n")  # broken meanwhile
    told = StopAfter(0)
    outcome = run_config(config, db, executor="serial", pin=False, resume=True, listener=told)
    assert outcome.matches_skipped == 1 and outcome.matches_played == 2
    assert [n for n in told.notices if "changed since" in n] == [
        f"bot 'mybot' changed since tournament {outcome.tournament_id} began (now "
        f"{content_hash(folder)[:8]}): the resume plays its recorded snapshot {recorded[:8]}"]
    store = Store.open_readonly(db)
    forfeits = store.db.execute("select culprit_bot, termination, detail from games "
                                "where culprit_bot is not null").fetchall()
    assert forfeits == []

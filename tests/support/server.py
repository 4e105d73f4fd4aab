"""Helpers for the competition server's tests: bot archives, a stand-in for arena/uploads.py (used
until that module is merged, in these tests only), authors with tokens and the API's client."""

from __future__ import annotations

import io
import sys
import tarfile
import tomllib
import types
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ConfigError
from tests.support.botfolders import make_bot


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


@dataclass
class StandInLimits:
    """The contract's UploadLimits (the fields the server reads)."""

    archive_bytes: int = 10 * 1024 * 1024
    unpacked_bytes: int = 64 * 1024 * 1024


@dataclass
class StandInBot:
    """The contract's UnpackedBot."""

    root: Path
    manifest: dict
    files: int
    unpacked_bytes: int


def _unpack(data: bytes, dest: Path, limits: StandInLimits) -> StandInBot:
    """Unpack a trusted test .tar.gz (the real module validates hostile ones)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            tar.extractall(dest, filter="data")
    except tarfile.TarError as exc:
        raise ConfigError(f"not an archive: {exc}") from None
    tops = list(dest.iterdir())
    root = tops[0] if len(tops) == 1 and tops[0].is_dir() else dest
    files = [p for p in root.rglob("*") if p.is_file()]
    return StandInBot(root, tomllib.loads((root / "bot.toml").read_text()), len(files),
                      sum(p.stat().st_size for p in files))


def stand_in_uploads(monkeypatch=None) -> None:
    """Make `arena.uploads` the stand-in above unless the real module is importable (through
    `monkeypatch`, or for the rest of the process when None: a server subprocess's launcher)."""
    try:
        import arena.uploads  # noqa: F401
        return
    except ImportError:
        pass
    module = types.ModuleType("arena.uploads")
    module.UploadLimits, module.UnpackedBot = StandInLimits, StandInBot
    module.unpack_submission = _unpack
    if monkeypatch is None:
        sys.modules["arena.uploads"] = module
    else:
        monkeypatch.setitem(sys.modules, "arena.uploads", module)


# `python -c LAUNCHER arena-args…`: the `arena` command with the stand-in when the real module
# is missing (the tests' checkout on sys.path).
LAUNCHER = ("import sys; from tests.support.server import stand_in_uploads; stand_in_uploads(); "
            "from arena.cli import main; sys.argv[0] = 'arena'; main()")


def auth(token: str) -> dict:
    """The Authorization header of a token."""
    return {"Authorization": f"Bearer {token}"}

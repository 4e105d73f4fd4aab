"""Helpers for the competition server's tests: bot archives and the API's Authorization header."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

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


def auth(token: str) -> dict:
    """The Authorization header of a token."""
    return {"Authorization": f"Bearer {token}"}

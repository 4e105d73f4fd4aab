"""Folders the tests use: the repository root, its bots, and the misbehaving test bots."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
FAKES = ROOT / "tests" / "fakebots"

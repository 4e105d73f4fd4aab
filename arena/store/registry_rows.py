"""The bot registry's rows: registered versions, their status, and each version's record."""

from __future__ import annotations


class RegistryRows:
    """Store methods for the bot registry (arena/registry.py)."""

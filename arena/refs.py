"""Bot references as the commands take them: `NAME` or `NAME@VERSION`.

Its own module because both the registry (a driver's dependency) and the rating reports (the read
side) parse them, and the read side must not import the registry.
"""

from __future__ import annotations

from arena.errors import ConfigError


def parse_ref(ref: str) -> tuple[str, str | None]:
    """`name` or `name@version` -> (name, version or None)."""
    name, sep, version = ref.partition("@")
    if not name or (sep and not version):
        raise ConfigError(f"bad bot reference {ref!r}: expected NAME or NAME@VERSION")
    return name, version if sep else None

"""`arena serve`: a read-only web interface (HTML pages and a JSON API) over an Arena database."""

from __future__ import annotations

from arena.web.app import create_app

__all__ = ["create_app"]

"""The `arena` command line: each command parses, calls one library function, maps errors.

One module per command group (spaCy's `cli/`); `_app` holds the app, the consoles and the error
mapping they share.
"""

from __future__ import annotations

from arena.cli import (  # noqa: F401  (they register commands)
    author,
    bot,
    games,
    ladder,
    play,
    ratings,
    run,
    serve,
    server,
    submit,
    tournament,
)
from arena.cli._app import app


def main() -> None:
    """Entry point of the `arena` console script."""
    app()

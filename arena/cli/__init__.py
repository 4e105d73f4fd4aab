"""The `arena` command line: each command parses, calls one library function, maps errors.

One module per command group (spaCy's `cli/`); `_app` holds the app, the consoles and the error
mapping they share.
"""

from __future__ import annotations

import logging
import os
import sys

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
    try:
        app()
    except SystemExit as exc:
        if "ray" in sys.modules:
            _exit_past_ray(exc.code)
        raise


def _exit_past_ray(code: object) -> None:
    """Exit with `code` now, skipping the interpreter's finalization, once Ray has been used.

    Ray's C++ core worker can crash (SIGSEGV) while the interpreter finalizes, after a run that
    finished and recorded everything: the run's exit status would then say it failed. Whatever
    was to be written is written by then (the store commits as it goes), so only buffered output
    and Ray's own disconnect are left to do first.
    """
    ray = sys.modules["ray"]
    try:
        if ray.is_initialized():
            ray.shutdown()
    except Exception:
        pass
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)  # what sys.exit("message") would have printed
        status = 1
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)

"""Folders marked live by a lock: made, then held with a shared flock until their owner is done.

A bot's cgroups (arena/players/cgroups.py) and its temp folder (arena/players/launch.py) are
swept when a runner dies and leaves them: a sweep takes only a folder it can lock exclusively,
whatever process, PID namespace or host made it. Between a folder's making and its lock a sweep
may take it all the same; `make_held` then makes it again.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Callable

ATTEMPTS = 3


def make_held(make: Callable[[], str], what: str) -> tuple[str, int]:
    """Make a folder with `make` (which returns its path) and hold a shared flock on it: the
    path and the locked descriptor (closing it ends the hold)."""
    for _ in range(ATTEMPTS):
        path = make()
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            continue  # swept between its making and the open
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                return path, fd
        except FileNotFoundError:
            pass
        os.close(fd)  # swept between the open and the flock: the lock holds a removed folder
    raise OSError(errno.EAGAIN, f"{what} keeps being removed while created")

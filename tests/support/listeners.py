"""Tournament listeners for tests: `StopAfter(n)` interrupts a run after n matches, as Ctrl-C does."""

from __future__ import annotations

from arena.session import Listener


class StopAfter(Listener):
    """Interrupts the run (as Ctrl-C does) after `n` matches."""

    def __init__(self, n: int):
        self.n, self.seen, self.notices = n, 0, []

    def match_done(self, result):
        self.seen += 1
        if self.seen == self.n:
            raise KeyboardInterrupt

    def notice(self, message):
        self.notices.append(message)

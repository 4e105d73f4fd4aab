"""A bot's stderr in one game, line by line, each line with the ply it came in; bounded.

The runner gives each seated bot a GameLog per game and sets its `ply` before each request (the
ply the bot's answer will be recorded at); the player feeds it what the bot writes to stderr. The
first LOG_HEAD bytes of lines and the last LOG_TAIL are kept; the lines between are dropped and
counted (lines and bytes), so a chatty bot costs a bounded amount per game whatever it writes.
"""

from __future__ import annotations

from collections import deque

LOG_HEAD = 64 * 1024  # bytes of a game's first stderr lines kept, per bot
LOG_TAIL = 16 * 1024  # bytes of its last lines kept
LOG_LINE = 4 * 1024  # a longer line (or output with no line end) is kept in pieces of this size


class GameLog:
    """One bot's stderr lines of one game: `(line_no, ply, text)`, head and tail kept."""

    __slots__ = ("ply", "head", "head_bytes", "head_open", "tail", "tail_bytes", "lines", "bytes",
                 "dropped_lines", "dropped_bytes", "partial", "head_limit", "tail_limit")

    def __init__(self, head: int = LOG_HEAD, tail: int = LOG_TAIL):
        self.ply = 0  # the ply a line read now is recorded at
        self.head: list[tuple[int, int, str]] = []
        self.head_bytes = 0
        self.head_open = True  # lines still go to the head (none has overflowed it yet)
        # (line_no, ply, raw bytes, size): decoded only if kept to the end (most are dropped)
        self.tail: deque[tuple[int, int, bytes, int]] = deque()
        self.tail_bytes = 0
        self.lines = 0  # every line seen, kept or not
        self.bytes = 0
        self.dropped_lines = 0
        self.dropped_bytes = 0
        self.partial = bytearray()  # the start of a line whose end has not come yet
        self.head_limit, self.tail_limit = head, tail

    def feed(self, chunk: bytes) -> None:
        """Take bytes the bot wrote to stderr: each whole line is kept at the current ply."""
        if self.partial:
            chunk = bytes(self.partial) + chunk
            self.partial.clear()
        lines = chunk.split(b"\n")
        rest = lines.pop()
        for raw in lines:
            self._piecewise(raw, 1)
        while len(rest) > LOG_LINE:  # a flood with no line end is still bounded and counted
            self._line(rest[:LOG_LINE], 0)
            rest = rest[LOG_LINE:]
        self.partial += rest

    def note(self, text: str) -> None:
        """A line of the runner's own (e.g. a stale answer ignored), on a line of its own."""
        self.finish()
        self._line(text.encode(), 1)

    def finish(self) -> None:
        """Keep an unended last line as it is."""
        if self.partial:
            rest, self.partial = bytes(self.partial), bytearray()
            self._line(rest, 0)

    def rows(self) -> list[tuple[int, int, str]]:
        """The kept lines, `(line_no, ply, text)`, in the order they came (numbers count dropped
        lines too, so a gap shows where lines were dropped)."""
        return self.head + [(number, ply, _text(raw)) for number, ply, raw, _ in self.tail]

    def _piecewise(self, raw: bytes, newline: int) -> None:
        while len(raw) > LOG_LINE:
            self._line(raw[:LOG_LINE], 0)
            raw = raw[LOG_LINE:]
        self._line(raw, newline)

    def _line(self, raw: bytes, newline: int) -> None:
        size = len(raw) + newline  # bytes as the bot wrote them: kept + dropped = all it wrote
        number = self.lines
        self.lines += 1
        self.bytes += size
        if self.head_open:
            if self.head_bytes + size <= self.head_limit:
                self.head.append((number, self.ply, _text(raw)))
                self.head_bytes += size
                return
            self.head_open = False
        self.tail.append((number, self.ply, raw, size))
        self.tail_bytes += size
        while self.tail_bytes > self.tail_limit:
            dropped = self.tail.popleft()
            self.tail_bytes -= dropped[3]
            self.dropped_lines += 1
            self.dropped_bytes += dropped[3]


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").rstrip("\r")

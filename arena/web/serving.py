"""How `arena serve` and `arena server` run uvicorn: connection limits and timeouts, so that a
client that opens connections and never finishes its requests cannot hold the server.

uvicorn (h11) times out only an idle keep-alive connection *after* a response: a connection that
sends nothing, or half a request line, stays open for ever. `HeadTimeoutProtocol` closes any
connection whose request head (request line and headers) has not fully arrived within
`HEADER_TIMEOUT_S` of its first byte (or of the connection), however slowly it trickles in.
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT_S = 10.0  # from a connection (or a request's first byte) to the end of its headers
KEEP_ALIVE_S = 5  # an idle connection between requests
MAX_HEAD_BYTES = 16 * 1024  # h11's limit on a request head not yet complete (431/400 past it)
MAX_CONNECTIONS = 1024  # connections plus requests in flight; past it uvicorn answers 503


class HeadTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request head."""

    header_timeout = HEADER_TIMEOUT_S
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the clock at once: a connection that sends nothing is closed too."""
        super().connection_made(transport)
        self._arm_head_timer()

    def data_received(self, data: bytes) -> None:
        """Feed h11; the clock runs until a whole request head has arrived."""
        if self._head_timer is None and self.conn.their_state is h11.IDLE:
            self._arm_head_timer()  # the first byte of the next request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._cancel_head_timer()

    def on_response_complete(self) -> None:
        """Between requests the keep-alive timeout (uvicorn's own) takes over."""
        self._cancel_head_timer()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock of a closed connection."""
        self._cancel_head_timer()
        super().connection_lost(exc)

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def uvicorn_options() -> dict:
    """The keyword arguments `uvicorn.run` gets from both commands: protocol, limits, timeouts."""
    return {"http": HeadTimeoutProtocol, "timeout_keep_alive": KEEP_ALIVE_S,
            "h11_max_incomplete_event_size": MAX_HEAD_BYTES, "limit_concurrency": MAX_CONNECTIONS}

"""How `arena serve` and `arena server` run uvicorn: connection limits and timeouts, so that a
client that opens connections and never finishes its requests cannot hold the server.

uvicorn (h11) times out only an idle keep-alive connection *after* a response: a connection that
sends nothing, half a request line, or a request's headers and then half its body, stays open for
ever. `HeadTimeoutProtocol` closes any connection whose request head (request line and headers)
has not fully arrived within `HEADER_TIMEOUT_S` of its first byte (or of the connection), however
slowly it trickles in; and one whose request body falls behind `BODY_TIMEOUT_S` plus one second per
`BODY_MIN_RATE` bytes received (Apache's mod_reqtimeout rule: a body may be slow, but it must keep
coming), answering 408 first when the application has not answered yet. A request answered before
its body was read (a 413 over the size limit) ends its connection: the rest is never read.
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT_S = 10.0  # from a connection (or a request's first byte) to the end of its headers
BODY_TIMEOUT_S = 20.0  # from the end of the headers to the end of the body, plus the rate's credit
BODY_MIN_RATE = 4096  # bytes per second a body must average (a 10 MiB upload: 20 s + 43 min)
KEEP_ALIVE_S = 5  # an idle connection between requests
MAX_HEAD_BYTES = 16 * 1024  # h11's limit on a request head not yet complete (431/400 past it)
MAX_CONNECTIONS = 1024  # connections plus requests in flight; past it uvicorn answers 503
BODY_TIMED_OUT = "the request body did not arrive in time (it stopped or came too slowly)"


class HeadTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request head and each request body."""

    header_timeout = HEADER_TIMEOUT_S
    body_timeout = BODY_TIMEOUT_S
    body_min_rate = BODY_MIN_RATE
    _head_timer: asyncio.TimerHandle | None = None
    _body_timer: asyncio.TimerHandle | None = None
    _body_started = 0.0
    _body_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the clock at once: a connection that sends nothing is closed too."""
        super().connection_made(transport)
        self._arm_head_timer()

    def data_received(self, data: bytes) -> None:
        """Feed h11; the head's clock runs until a whole request head has arrived, then the
        body's until the whole body has."""
        if self._head_timer is None and self.conn.their_state is h11.IDLE:
            self._arm_head_timer()  # the first byte of the next request on a kept-alive connection
        receiving_body = self._body_timer is not None
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._cancel_head_timer()
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            if receiving_body:
                self._body_bytes += len(data)  # the head's bytes of the first chunk are a bonus
            else:
                self._arm_body_timer()
        else:
            self._cancel_body_timer()

    def on_response_complete(self) -> None:
        """Between requests the keep-alive timeout (uvicorn's own) takes over; a request answered
        before its whole body came (a 413) ends the connection, so the rest is never read."""
        self._cancel_head_timer()
        if self.conn.their_state is h11.SEND_BODY:
            self._cancel_body_timer()
            self.transport.close()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clocks of a closed connection."""
        self._cancel_head_timer()
        self._cancel_body_timer()
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

    def _arm_body_timer(self) -> None:
        self._cancel_body_timer()
        self._body_started = self.loop.time()
        self._body_bytes = 0
        self._body_timer = self.loop.call_at(self._body_deadline(), self._body_check)

    def _cancel_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_deadline(self) -> float:
        return self._body_started + self.body_timeout + self._body_bytes / self.body_min_rate

    def _body_check(self) -> None:
        # One timer per body, moved on when it fires rather than at every chunk.
        self._body_timer = None
        if self.conn.their_state is not h11.SEND_BODY or self.transport.is_closing():
            return
        if self.flow is not None and self.flow.read_paused:
            # The application is not reading (uvicorn paused the socket): not the client's delay.
            self._body_started, self._body_bytes = self.loop.time(), 0
        deadline = self._body_deadline()
        if deadline > self.loop.time():
            self._body_timer = self.loop.call_at(deadline, self._body_check)
            return
        self._body_timed_out()

    def _body_timed_out(self) -> None:
        """Answer 408 (if the application has not begun an answer) and close the connection; the
        application's pending read sees the client gone."""
        cycle = self.cycle
        if cycle is not None and not cycle.response_started and self.conn.our_state is h11.SEND_RESPONSE:
            api = "/api/" in cycle.scope.get("path", "")
            body = (b'{"error": "' + BODY_TIMED_OUT.encode() + b'"}' if api
                    else BODY_TIMED_OUT.encode() + b"\n")
            kind = b"application/json" if api else b"text/plain; charset=utf-8"
            try:
                self.transport.write(self.conn.send(h11.Response(
                    status_code=408, reason=b"Request Timeout",
                    headers=[(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                             (b"connection", b"close")])))
                self.transport.write(self.conn.send(h11.Data(data=body)))
                self.transport.write(self.conn.send(h11.EndOfMessage()))
            except h11.LocalProtocolError:
                pass
        if cycle is not None:
            cycle.disconnected = True  # the application's answer, if any, goes nowhere
            cycle.message_event.set()
        self.transport.close()


def uvicorn_options() -> dict:
    """The keyword arguments `uvicorn.run` gets from both commands: protocol, limits, timeouts."""
    return {"http": HeadTimeoutProtocol, "timeout_keep_alive": KEEP_ALIVE_S,
            "h11_max_incomplete_event_size": MAX_HEAD_BYTES, "limit_concurrency": MAX_CONNECTIONS}

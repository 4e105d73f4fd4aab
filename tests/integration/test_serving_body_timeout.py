"""The body deadline of arena.web.serving.HeadTimeoutProtocol, on a real uvicorn in a thread with a
short timeout: a body may come slowly as long as it keeps its minimum rate (a slow uploader is
served), one that stops or trickles under it is answered 408 and closed, and one the application
answers early (413) ends its connection instead of being drained."""

from __future__ import annotations

import socket
import threading
import time

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from arena.web.serving import HeadTimeoutProtocol, uvicorn_options
from tests.support.live_server import raw_exchange

TIMEOUT_S = 1.0
MIN_RATE = 200  # bytes per second


class QuickProtocol(HeadTimeoutProtocol):
    """The protocol with a short body deadline, so that a test need not wait 20 s."""

    body_timeout = TIMEOUT_S
    body_min_rate = MIN_RATE


async def echo_size(request: Request) -> JSONResponse:
    """The number of body bytes received; 413 past 100,000 without reading further."""
    if int(request.headers.get("content-length", "0")) > 100_000:
        return JSONResponse({"error": "too large"}, 413)
    return JSONResponse({"bytes": len(await request.body())})


@pytest.fixture(scope="module")
def port():
    """A uvicorn over the echo app with QuickProtocol, in a thread; its port."""
    app = Starlette(routes=[Route("/echo", echo_size, methods=["POST"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    options = {**uvicorn_options(), "http": QuickProtocol}
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", **options))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield sock.getsockname()[1]
    server.should_exit = True
    thread.join(10)
    sock.close()


def head(length: int) -> bytes:
    """A POST /echo request head announcing `length` body bytes."""
    return f"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode()


def test_a_slow_body_at_its_minimum_rate_is_served(port):
    # 3,000 bytes over ~3 s, three times the first deadline, at ~1,000 bytes/s: five times the rate.
    parts = [b"x" * 250] * 12
    answer, closed = raw_exchange(port, head(3000), parts, pause=0.25, read_for=5)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert b'{"bytes":3000}' in answer


def test_a_body_that_stops_is_408_and_closed(port):
    answer, closed = raw_exchange(port, head(600), [b"x" * 100], read_for=TIMEOUT_S + 10)
    assert closed and answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"did not arrive in time" in answer


def test_a_body_trickled_under_the_rate_is_cut(port):
    # 1 byte every 0.25 s (4 bytes/s, under 200): the deadline moves 5 ms a byte, not 250.
    answer, closed = raw_exchange(port, head(600), [b"x"] * 40, pause=0.25, read_for=TIMEOUT_S + 10)
    assert closed
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:200]


def test_a_body_answered_early_is_not_drained(port):
    answer, closed = raw_exchange(port, head(10_000_000), [b"x" * 100], read_for=TIMEOUT_S / 2)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert closed, "the connection stayed open to drain a body already refused"

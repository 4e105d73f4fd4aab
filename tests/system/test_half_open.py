"""Half-open HTTP connections against a real `arena serve` and `arena server` on 127.0.0.1: a
client that sends half a request line (or nothing) is disconnected within the documented header
timeout (arena.web.serving.HEADER_TIMEOUT_S), while the server goes on answering others."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from arena.store import Store
from arena.web.serving import HEADER_TIMEOUT_S
from tests.support.tournaments import play_tournament


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(params=["serve", "server"])
def base(request, tmp_path):
    """A real server over a small database, as a subprocess; its base URL."""
    db = tmp_path / "arena.db"
    play_tournament(tmp_path, Store(db))
    port = _free_port()
    log = open(tmp_path / "server.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "arena", request.param, "--db", str(db),
                             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT,
                            cwd=tmp_path)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            if proc.poll() is not None:
                pytest.fail(f"arena {request.param} exited: {Path(log.name).read_text()[-2000:]}")
            try:
                urllib.request.urlopen(url + "/api/leaderboards", timeout=2).read()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("the server did not start")
        yield port, url
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def _closed_within(sock: socket.socket, limit: float) -> float | None:
    """Seconds until the peer closed `sock` (EOF or reset), None if still open after `limit`."""
    start = time.monotonic()
    sock.settimeout(0.2)
    while time.monotonic() - start < limit:
        try:
            if sock.recv(4096) == b"":
                return time.monotonic() - start
        except TimeoutError:
            continue
        except ConnectionResetError:
            return time.monotonic() - start
    return None


@pytest.mark.parametrize("sent", [b"GET /api/leaderb", b"", b"GET / HTTP/1.1\r\nHost: x\r\n"])
def test_a_half_sent_request_is_closed_within_the_header_timeout(base, sent):
    port, url = base
    half = socket.create_connection(("127.0.0.1", port))
    try:
        half.sendall(sent)
        # Meanwhile the server answers everyone else.
        for _ in range(3):
            with urllib.request.urlopen(url + "/api/leaderboards", timeout=5) as answer:
                assert answer.status == 200
        waited = _closed_within(half, HEADER_TIMEOUT_S + 5)
        assert waited is not None, "the half-open connection was never closed"
    finally:
        half.close()
    with urllib.request.urlopen(url + "/api/leaderboards", timeout=5) as answer:
        assert answer.status == 200


def test_a_request_head_trickled_byte_by_byte_is_closed_too(base):
    port, _ = base
    slow = socket.create_connection(("127.0.0.1", port))
    slow.settimeout(0.2)
    start = time.monotonic()
    try:
        line = b"GET /api/leaderboards HTTP/1.1\r\nX-Pad: " + b"a" * 200
        closed = False
        for byte in line:  # one byte every 0.1 s: 20+ s in all, past the deadline
            try:
                slow.sendall(bytes([byte]))
                if slow.recv(1) == b"":
                    closed = True
                    break
            except TimeoutError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.1)
            if time.monotonic() - start > HEADER_TIMEOUT_S + 5:
                break
        assert closed, "a trickled request head kept its connection past the header timeout"
    finally:
        slow.close()

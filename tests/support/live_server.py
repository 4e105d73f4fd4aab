"""`arena server` as a real subprocess on 127.0.0.1 for the security tests: start it, call it (raw
HTTP through urllib, or a socket for what urllib will not send), wait for a check, stop it.

    server = LiveServer.start(db, tmp_path, "--checkers", "1")
    status, headers, body = server.call("POST", "/api/submissions", token, archive)
    server.stop()

`prefix` runs the server under another command first (e.g. `unshare --pid --fork ...`).
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT
from tests.support.server import csrf_of

CHECK_WAIT_S = 240  # a check of a small bot on a loaded 2-core machine (a wait, not a limit)


def free_port() -> int:
    """A TCP port of 127.0.0.1 free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LiveServer:
    """A running `arena server` subprocess."""

    proc: subprocess.Popen
    port: int
    log: Path

    @property
    def base(self) -> str:
        """The server's base URL."""
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def start(cls, db: Path, cwd: Path, *extra: str, prefix: tuple[str, ...] = (),
              port: int | None = None) -> LiveServer:
        """Start `arena server --db DB` on `port` (a free one when None); returns once it
        answers HTTP."""
        port = port or free_port()
        log = cwd / f"server-{port}.log"
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                [*prefix, sys.executable, "-m", "arena", "server", "--db", str(db), "--port",
                 str(port), *extra], stdout=out, stderr=subprocess.STDOUT, cwd=cwd,
                start_new_session=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        server = cls(proc, port, log)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"arena server exited: {log.read_text()[-2000:]}")
            try:
                urllib.request.urlopen(server.base + "/api/leaderboards", timeout=2).read()
                return server
            except OSError:
                time.sleep(0.1)
        server.stop()
        raise RuntimeError("arena server did not start answering")

    def stop(self, sig: int = signal.SIGINT) -> None:
        """Stop the server (its whole process group), SIGKILL if it will not go."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def call(self, method: str, path: str, token: str | None = None, data: bytes | None = None,
             headers: dict | None = None, timeout: float = 60) -> tuple[int, dict, bytes]:
        """One request: (status, headers with lower-case names, body)."""
        sent = {"Content-Type": "application/gzip"} if data is not None else {}
        if token:
            sent["Authorization"] = f"Bearer {token}"
        sent.update(headers or {})
        request = urllib.request.Request(self.base + path, data=data, headers=sent, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
        except urllib.error.HTTPError as exc:
            return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()

    def api(self, method: str, path: str, token: str | None = None, data: bytes | None = None,
            **kw) -> tuple[int, dict]:
        """A JSON API call: (status, the decoded JSON answer)."""
        status, _, body = self.call(method, path, token, data, **kw)
        return status, json.loads(body)

    def wait_checked(self, token: str, sid: int) -> dict:
        """The submission once its check has ended (clean or failed)."""
        deadline = time.monotonic() + CHECK_WAIT_S
        body: dict = {}
        while time.monotonic() < deadline:
            status, body = self.api("GET", f"/api/submissions/{sid}", token)
            assert status == 200, body
            if body["status"] in ("clean", "failed"):
                return body
            time.sleep(0.25)
        raise AssertionError(f"submission {sid} still {body.get('status')} after "
                             f"{CHECK_WAIT_S} s; server log: {self.log.read_text()[-2000:]}")


def raw_exchange(port: int, head: bytes, body_parts: list[bytes] = (), pause: float = 0.0,
                 read_for: float = 30.0) -> tuple[bytes, bool]:
    """Send a raw request head and body parts (`pause` s apart) on one connection, then read
    until the server closes it or `read_for` s pass: (what came back, whether it closed).
    A send the server refuses (it closed first) ends the sending."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        try:
            for part in body_parts:
                if pause:
                    time.sleep(pause)
                sock.sendall(part)
        except (BrokenPipeError, ConnectionResetError):
            pass
        got = bytearray()
        sock.settimeout(0.5)
        deadline = time.monotonic() + read_for
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except ConnectionResetError:
                return bytes(got), True
            if not chunk:
                return bytes(got), True
            got += chunk
        return bytes(got), False


def table_counts(db: Path) -> dict[str, int]:
    """Rows of every table of `db`: what a refused request must leave as it was."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute(
            "select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")]
        return {t: conn.execute(f'select count(*) from "{t}"').fetchone()[0] for t in tables}
    finally:
        conn.close()


def files_under(folder: Path) -> set[str]:
    """Every path under `folder` (relative), but the server's own log files and SQLite's
    journal files, which come and go with any read."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*")
            if not p.name.startswith("server-") and not p.name.endswith(("-wal", "-shm", "-journal"))}


def sign_in(server: LiveServer, token: str) -> tuple[urllib.request.OpenerDirector,
                                                     http.cookiejar.CookieJar, str]:
    """Sign `token`'s author in through the form: the opener, its cookie jar (the session) and
    the page it lands on (/me)."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    form = opener.open(server.base + "/signin", timeout=30).read().decode()
    data = urllib.parse.urlencode({"token": token, "csrf": csrf_of(form)}).encode()
    me = opener.open(urllib.request.Request(server.base + "/signin", data=data), timeout=30)
    assert me.url.endswith("/me"), me.url
    return opener, jar, me.read().decode()


def signed_in(server: LiveServer, token: str) -> urllib.request.OpenerDirector:
    """An opener holding a session cookie of `token`'s author (signed in through the form)."""
    return sign_in(server, token)[0]

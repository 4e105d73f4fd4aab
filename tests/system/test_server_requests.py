"""Hostile requests against a real `arena server` subprocess on 127.0.0.1: archives whose member
names or bot names hold `/`, NUL, control characters, HTML or are very long (refused in one line,
400, nothing written: every table's rows and every file beside the database as they were); a body
over the limit on every write route (413 before anything past the limit is read, the connection
then closed rather than drained, nothing written); a body that stops or trickles after its
headers (408 and closed within arena.web.serving's body timeout, while others are served)."""

from __future__ import annotations

import io
import json
import re
import tarfile
import threading
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

import pytest

from arena.server.app import REGISTRATION_BYTES
from arena.server.authors import add_author
from arena.server.pages import FORM_BYTES, FORM_OVERHEAD
from arena.store import Store
from arena.uploads import UploadLimits
from arena.web.serving import BODY_MIN_RATE, BODY_TIMEOUT_S
from tests.support.live_server import (
    LiveServer,
    files_under,
    raw_exchange,
    sign_in,
    signed_in,
    table_counts,
)
from tests.support.paths import BOTS
from tests.support.server import csrf_of

pytestmark = pytest.mark.slow
ARCHIVE_LIMIT = UploadLimits().archive_bytes  # what `arena server` runs with


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """(server, tokens, db, its folder): a server with self-registration on, one upload accepted."""
    tmp = tmp_path_factory.mktemp("requests")
    db = tmp / "arena.db"
    store = Store(db)
    tokens = {"alice": add_author(store, "alice"), "root": add_author(store, "root", role="organiser")}
    store.db.conn.close()
    server = LiveServer.start(db, tmp, "--checkers", "1", "--registration", "--per-hour", "1000")
    try:
        status, body = server.api("POST", "/api/submissions", tokens["alice"],
                                  tar_archive(bot_files()))
        assert status == 201, body  # a database and snapshot folder that hold something
        yield server, tokens, db, tmp
    finally:
        server.stop()


def bot_files(name: str = "rb") -> dict[str, bytes]:
    """A registry bot's files: the shipped random bot under bot.toml."""
    return {"bot.toml": f'name = "{name}"\nversion = "1"\ncommand = ["python3", "random_bot.py"]\n'
                        f'games = ["xeri"]\n'.encode(),
            "random_bot.py": (BOTS / "random_bot.py").read_bytes(),
            "arenabot.py": (BOTS / "arenabot.py").read_bytes()}


def tar_archive(files: dict[str, bytes]) -> bytes:
    """A .tar.gz (PAX: any name) of `files` as given."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zip_with_nul() -> bytes:
    """A zip whose extra member's stored name holds a NUL (zipfile itself would cut it there)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in {**bot_files(), "evilXname.py": b"x"}.items():
            zf.writestr(name, data)
    return buf.getvalue().replace(b"evilXname.py", b"evil\0name.py")


def manifest_named(name: str) -> bytes:
    """A bot archive whose manifest names the bot `name` (a TOML string: any character)."""
    files = bot_files()
    files["bot.toml"] = files["bot.toml"].replace(b'name = "rb"', f"name = {json.dumps(name)}".encode())
    return tar_archive(files)


HOSTILE_MEMBERS = {
    "absolute path": "/etc/evil.py",
    "dot-dot": "lib/../../evil.py",
    "empty component": "lib//evil.py",
    "backslash": "lib\\..\\evil.py",
    "slash look-alike": "lib\u2215evil.py",
    "escape sequence": "evil\x1b[31mred.py",
    "carriage return": "evil\rname.py",
    "right-to-left override": "evil\u202eyp.exe",
    "script tag": "<script>alert(1)</script>.py",
    "attribute break-out": 'x"><img src=x onerror=alert(1)>.py',
    "long component": "e" * 300 + ".py",
    "long path": "/".join(["d" * 200] * 6) + "/evil.py",
}
HOSTILE_BOT_NAMES = {
    "slash": "a/b", "NUL": "a\0b", "bell": "a\x07b", "newline": "a\nb",
    "script tag": "<script>alert(1)</script>", "long": "n" * 500,
}


def archives() -> list:
    """Every hostile archive, with its pytest id."""
    cases = [pytest.param(tar_archive({**bot_files(), name: b"print('pwned')\n"}), id=f"member {why}")
             for why, name in HOSTILE_MEMBERS.items()]
    cases.append(pytest.param(zip_with_nul(), id="member NUL (zip)"))
    cases += [pytest.param(manifest_named(name), id=f"bot name {why}")
              for why, name in HOSTILE_BOT_NAMES.items()]
    return cases


@pytest.mark.parametrize("archive", archives())
def test_a_hostile_name_is_refused_in_one_line_and_nothing_is_written(site, archive):
    server, tokens, db, folder = site
    tables, files = table_counts(db), files_under(folder)
    status, headers, body = server.call("POST", "/api/submissions", tokens["alice"], archive)
    assert status == 400, body[:500]
    assert headers["content-type"].startswith("application/json")
    message = json.loads(body)["error"]
    assert message.isascii() and message.isprintable() and len(message) < 400, message
    assert "archive member" in message or "bot name" in message, message  # it names the value
    assert table_counts(db) == tables
    assert files_under(folder) == files


# -- bodies over the limit ---------------------------------------------------------------------
def session_cookie_and_csrf(server: LiveServer, token: str) -> tuple[str, str]:
    """A signed-in session's Cookie header and its CSRF token (signed in through the form)."""
    _, jar, page = sign_in(server, token)
    return "; ".join(f"{c.name}={c.value}" for c in jar), csrf_of(page)


def write_routes(server: LiveServer, tokens: dict) -> list[tuple[str, str, int]]:
    """(path, extra head lines, body limit) of every route that reads a body."""
    cookie, _ = session_cookie_and_csrf(server, tokens["alice"])
    signin_cookie = urllib.request.urlopen(server.base + "/signin", timeout=30).headers["set-cookie"]
    own = f"Origin: {server.base}\r\n"
    return [
        ("/api/submissions", f"Authorization: Bearer {tokens['alice']}\r\n"
                             "Content-Type: application/gzip\r\n", ARCHIVE_LIMIT),
        ("/api/authors", "Content-Type: application/json\r\n", REGISTRATION_BYTES),
        ("/signin", f"{own}Cookie: {signin_cookie.split(';')[0]}\r\n"
                    "Content-Type: application/x-www-form-urlencoded\r\n", FORM_BYTES),
        ("/signout", f"{own}Cookie: {cookie}\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\n", FORM_BYTES),
        ("/me/upload", f"{own}Cookie: {cookie}\r\n"
                       "Content-Type: multipart/form-data; boundary=b\r\n",
         ARCHIVE_LIMIT + FORM_OVERHEAD),
    ]


def status_of(answer: bytes) -> int | None:
    """The status code of a raw HTTP answer."""
    match = re.match(rb"HTTP/1\.1 (\d{3}) ", answer)
    return int(match.group(1)) if match else None


def test_a_body_over_the_limit_is_413_on_every_write_route_and_never_read_on(site):
    server, tokens, db, folder = site
    routes = write_routes(server, tokens)  # signs in first: a session row of its own
    tables, files = table_counts(db), files_under(folder)
    for path, lines, limit in routes:
        # Declared too large: answered before a byte of the body is sent, and the connection
        # closed rather than kept to drain the body it announced.
        head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n{lines}"
                f"Content-Length: {limit + 1024 * 1024}\r\n\r\n").encode()
        # Read for less than the body timeout: a close after it would be that timeout's, not this.
        answer, closed = raw_exchange(server.port, head, read_for=BODY_TIMEOUT_S / 2)
        assert status_of(answer) == 413, (path, answer[:300])
        assert closed, f"{path}: the connection stayed open for the rest of the declared body"
        # Streamed without a length: refused once past the limit, with the body never finished.
        head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n{lines}"
                f"Transfer-Encoding: chunked\r\n\r\n").encode()
        piece = 64 * 1024
        parts = [b"%x\r\n%s\r\n" % (piece, b"x" * piece)] * (limit // piece + 2)
        answer, closed = raw_exchange(server.port, head, parts, read_for=BODY_TIMEOUT_S / 2)
        assert status_of(answer) in (413, None), (path, answer[:300])  # None: a reset ate it
        assert closed, f"{path}: the server kept reading past the limit"
    assert table_counts(db) == tables
    assert files_under(folder) == files
    assert server.call("GET", "/api/leaderboards")[0] == 200


# -- bodies that stop or trickle --------------------------------------------------------------
def test_a_body_that_stops_or_trickles_times_out_with_408(site):
    server, tokens, db, folder = site
    tables, files = table_counts(db), files_under(folder)
    head = (f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tokens['alice']}"
            f"\r\nContent-Type: application/gzip\r\nContent-Length: 100000\r\n\r\n").encode()
    waited = BODY_TIMEOUT_S + 20  # a wait for the close, not a measure
    trickle_bytes = int(BODY_TIMEOUT_S * 2 * 4)  # 4 bytes a second: far under BODY_MIN_RATE
    assert trickle_bytes / (BODY_TIMEOUT_S * 2) < BODY_MIN_RATE
    results = {}

    def stop():
        """Headers and 1,000 of the 100,000 bytes announced, then nothing."""
        results["stop"] = raw_exchange(server.port, head, [b"\x1f\x8b" + b"x" * 998], read_for=waited)

    def trickle():
        """Headers, then a byte every 0.25 s."""
        results["trickle"] = raw_exchange(server.port, head, [b"x"] * trickle_bytes, pause=0.25,
                                          read_for=waited)
    threads = [threading.Thread(target=stop), threading.Thread(target=trickle)]
    for thread in threads:
        thread.start()
    # Meanwhile the server answers everyone else.
    for _ in range(5):
        assert server.call("GET", "/api/leaderboards")[0] == 200
    for thread in threads:
        thread.join()
    answer, closed = results["stop"]
    assert closed and status_of(answer) == 408, answer[:300]
    body = answer.split(b"\r\n\r\n", 1)[1]
    assert "did not arrive in time" in json.loads(body)["error"]
    answer, closed = results["trickle"]
    assert closed, "a trickled body kept its connection past the body timeout"
    assert status_of(answer) in (408, None), answer[:300]  # None: its next byte met a reset
    assert table_counts(db) == tables
    assert files_under(folder) == files
    assert "Traceback" not in Path(server.log).read_text(errors="replace")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kw):
        return None  # a 303 is the answer to look at, not a page to follow


def unfollowed(server: LiveServer, method: str, path: str, data: bytes | None = None,
               headers: dict | None = None) -> tuple[int, dict, bytes]:
    """One request whose redirect is not followed: (status, headers lower-cased, body)."""
    opener = urllib.request.build_opener(_NoRedirect)
    request = urllib.request.Request(server.base + path, data=data, headers=headers or {},
                                     method=method)
    try:
        with opener.open(request, timeout=60) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def test_a_token_never_reaches_the_log_a_page_or_an_answer(site):
    server, tokens, db, _ = site
    token = tokens["alice"]
    wrong = "arena_" + "w" * 43
    answers = [server.call("GET", f"/api/me?token={token}"),  # a token in a URL is no token
               server.call("GET", "/api/me", wrong), server.call("GET", "/api/me", token),
               server.call("GET", "/api/submissions", token),
               unfollowed(server, "GET", f"/me?token={token}")]
    assert [a[0] for a in answers] == [401, 401, 200, 200, 303]
    opener = signed_in(server, token)
    me = opener.open(server.base + "/me", timeout=30).read()
    assert b"alice" in me  # signed in: the author's own page
    for _, headers, body in [*answers, (200, {}, me)]:
        assert token.encode() not in body and all(token not in v for v in headers.values())
    log = server.log.read_text(errors="replace")
    assert token not in log and wrong not in log


def test_the_private_pages_refuse_the_anonymous_and_change_nothing(site):
    server, _, db, folder = site
    before, files = table_counts(db), files_under(folder)
    status, headers, _ = unfollowed(server, "GET", "/me")
    assert status == 303 and headers["location"].endswith("/signin")
    form = {"Content-Type": "multipart/form-data; boundary=b", "Origin": server.base}
    body = (b'--b\r\nContent-Disposition: form-data; name="archive"; filename="a.tar.gz"\r\n'
            b"Content-Type: application/gzip\r\n\r\n" + tar_archive(bot_files("anon")) + b"\r\n--b--\r\n")
    status, _, page = unfollowed(server, "POST", "/me/upload", body, form)
    assert status == 403 and b"not signed in" in page
    status, _, _ = unfollowed(server, "POST", "/signout", b"csrf=x",
                              {"Content-Type": "application/x-www-form-urlencoded",
                               "Origin": server.base})
    assert status in (303, 403)
    assert table_counts(db) == before and files_under(folder) == files

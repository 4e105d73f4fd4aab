"""XSS through every author-controlled string, end to end: bots uploaded through the real API of an
`arena server` subprocess on 127.0.0.1 carry hostile HTML in their version, description, author,
language, command, a file name and every stderr line they print (in their check and in ladder
games, where one also answers actions made of hostile HTML: its failures' evidence). A real
`arena ladder` plays them. Then every page — public, the author's /me, bot, game, replay, error,
check report — is fetched anonymously, as the author and as the organiser: no payload comes back
unescaped in HTML (no script, no attribute break-out, no `javascript:` URL), the escaped payload
is there (so the pages were really tried), and every JSON answer is application/json, nosniff.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
import urllib.parse
import urllib.request
from html.parser import HTMLParser

import pytest
from markupsafe import escape

from arena.server.authors import add_author
from arena.store import Store
from tests.support.botfolders import make_bot
from tests.support.config import ladder_toml
from tests.support.live_server import LiveServer, signed_in
from tests.support.paths import FAKES, ROOT

pytestmark = pytest.mark.slow

PAYLOAD = '<script>alert(1)</script>"><img src=x onerror=alert(2)>javascript:alert(3)'
VERSION = '"><script>alert(4)</script>'  # a version is printable ASCII without spaces: this is one
LANGUAGE = "<script>alert(5)</script>"
SCRIPT_TAG = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.I | re.S)
ALLOWED_SCRIPT = re.compile(r'\s+(type="application/json" id="[\w-]+"|src="/static/[\w/.-]+"'
                            r'( defer)?)\s*', re.I)
# The attributes Arena's templates use: an attribute outside them is a payload's break-out.
ALLOWED_ATTRIBUTES = frozenset({
    "accept", "action", "autocomplete", "charset", "class", "colspan", "content", "defer",
    "enctype", "height", "hidden", "href", "id", "lang", "max", "method", "min", "name",
    "open", "preserveaspectratio", "rel", "required", "role", "scope", "size", "src", "title", "type",
    "value", "version", "viewbox", "width", "x", "y",
    # the author page's server-drawn trajectory chart (me.html): SVG geometry, numbers only
    "x1", "x2", "y1", "y2", "text-anchor", "points", "d", "cx", "cy", "r"})
LADDER = ladder_toml(name="xss-ladder", seed=7, in_flight=1,
                     time={"move_ms": 2000, "startup_ms": 20000})


def hostile_archive(name: str, version: str, mode: str) -> bytes:
    """A .tar.gz of the two-faced bot in `mode` whose every manifest string is hostile, with a
    file whose (allowed) name is a javascript: URL."""
    manifest = (f"name = {json.dumps(name)}\nversion = {json.dumps(version)}\n"
                f"command = [\"python3\", \"two_faced_bot.py\", \"{mode}\", {json.dumps(PAYLOAD)}]\n"
                f"games = [\"xeri\"]\nlanguage = {json.dumps(LANGUAGE)}\n"
                f"description = {json.dumps(PAYLOAD + ' javascript:alert(6)')}\n"
                f"author = {json.dumps(PAYLOAD)}\n")
    files = {"bot.toml": manifest.encode(),
             "two_faced_bot.py": (FAKES / "two_faced_bot.py").read_bytes(),
             "javascript:alert(7).txt": b"a file name an author chose\n"}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(f"{name}/{path}")
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, as a browser's tokenizer sees them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        """Keep the tag."""
        self.tags.append((tag, attrs))

    handle_startendtag = handle_starttag


def unescaped(page: str) -> list[str]:
    """What in an HTML page shows a payload got through unescaped (empty: nothing)."""
    found = []
    for attrs, body in SCRIPT_TAG.findall(page):
        if not ALLOWED_SCRIPT.fullmatch(attrs):
            found.append(f"a script tag <script{attrs}>")
        elif "json" in attrs:
            try:
                json.loads(body)  # a payload that broke out of the JSON would break the JSON
            except ValueError as exc:
                found.append(f"a JSON block that does not parse: {exc}")
    parser = Tags()
    parser.feed(page)
    for tag, attrs in parser.tags:
        if tag == "img":
            found.append(f"an img tag {attrs}")
        for name, value in attrs:
            if name.startswith("on"):
                found.append(f"an event handler {name}= on <{tag}>")
            if value and value.strip().lower().startswith("javascript:"):
                found.append(f"a javascript: URL in <{tag} {name}>")
            if name not in ALLOWED_ATTRIBUTES and not name.startswith(("data-", "aria-")):
                found.append(f"an attribute {name!r} on <{tag}> (a break-out?)")
    return found


def escaped_payload_in(page: str) -> bool:
    """Whether a payload is on the page, escaped (the page really showed an author's string)."""
    return "&lt;script&gt;alert(" in page


def fetch(opener, url: str) -> tuple[int, str, str, str]:
    """(status, content type, nosniff header, text) of a GET through `opener`."""
    try:
        answer = opener.open(url, timeout=60)
    except urllib.error.HTTPError as exc:
        answer = exc
    with answer:
        return (answer.status, answer.headers.get("content-type", ""),
                answer.headers.get("x-content-type-options", ""), answer.read().decode())


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """(server, tokens, submission ids, game ids): alice's hostile bots uploaded and checked, a
    ladder of them against an organiser's random bot played, the server still up."""
    tmp = tmp_path_factory.mktemp("xss")
    db = tmp / "arena.db"
    store = Store(db)
    tokens = {"alice": add_author(store, "alice"), "root": add_author(store, "root", role="organiser")}
    store.db.conn.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # with an xdist worker's own bot uids
    folder = make_bot(tmp / "r1", "r1", "1")
    added = subprocess.run([sys.executable, "-m", "arena", "bot", "add", str(folder), "--db", str(db)],
                           capture_output=True, text=True, env=env)
    assert added.returncode == 0, added.stdout + added.stderr
    server = LiveServer.start(db, tmp, "--checkers", "2")
    try:
        ids = {}
        for name, version, mode in (("xss", VERSION, "xss"), ("xssfail", "1", "checkfail")):
            status, body = server.api("POST", "/api/submissions", tokens["alice"],
                                      hostile_archive(name, version, mode))
            assert status == 201, body
            ids[name] = body["id"]
        checked = {name: server.wait_checked(tokens["alice"], sid) for name, sid in ids.items()}
        assert checked["xss"]["status"] == "clean", checked["xss"]["reason"]
        assert checked["xssfail"]["status"] == "failed"
        config = tmp / "ladder.toml"
        config.write_text(LADDER)
        ladder = subprocess.run(
            [sys.executable, "-m", "arena", "ladder", "start", str(config), "--db", str(db),
             "--executor", "serial", "--games", "3", "-q"], capture_output=True, text=True,
            cwd=tmp, timeout=600, env=env)
        assert ladder.returncode == 0, ladder.stdout[-2000:] + ladder.stderr[-2000:]
        conn = Store.open_readonly(db).db.conn
        games = [r[0] for r in conn.execute("select id from games order by ordinal")]
        culprits = {r[0] for r in conn.execute("select culprit_bot from games")}
        conn.close()
        assert games and any(c and c.startswith("xss@") for c in culprits), culprits
        yield server, tokens, ids, games
    finally:
        server.stop()


def test_no_page_shows_an_authors_string_unescaped(played):
    server, tokens, ids, games = played
    quoted = urllib.parse.quote
    pages = ["/", "/leaderboards", "/leaderboard/xeri", "/ladders", "/ladders/1", "/tournaments",
             "/tournaments/1", "/bots", "/bots/xss", f"/bots/xss?version={quoted(VERSION)}",
             "/bots/xssfail", "/signin", "/me",
             *(f"/games/{g}" for g in games),
             f"/bots/{quoted(PAYLOAD, safe='')}",  # an error page quoting the path
             f"/games/{quoted(PAYLOAD, safe='')}", f"/leaderboard/{quoted(PAYLOAD, safe='')}"]
    viewers = {"anonymous": urllib.request.build_opener(),
               "alice": signed_in(server, tokens["alice"]),
               "root": signed_in(server, tokens["root"])}
    shown_escaped = set()
    for who, opener in viewers.items():
        for page in pages:
            status, kind, nosniff, text = fetch(opener, server.base + page)
            assert status in (200, 404), (who, page, status, text[:300])
            assert kind.startswith("text/html"), (who, page, kind)
            assert nosniff == "nosniff", (who, page)
            assert unescaped(text) == [], (who, page, unescaped(text))
            if escaped_payload_in(text):
                shown_escaped.add(page)
    # The payloads reached the pages that show them (escaped): the sweep tried something.
    for page in ("/bots/xss", "/bots/xssfail", "/me", f"/games/{games[0]}"):
        assert page in shown_escaped, (page, sorted(shown_escaped))


def test_every_api_answer_with_an_authors_string_is_json_not_html(played):
    server, tokens, ids, games = played
    quoted = urllib.parse.quote
    paths = ["/api/leaderboards", "/api/leaderboard/xeri", "/api/ladders/1", "/api/tournaments/1",
             "/api/bots", "/api/bots/xss", "/api/bots/xssfail",
             *(f"/api/games/{g}" for g in games), *(f"/api/games/{g}/replay" for g in games),
             f"/api/bots/{quoted(PAYLOAD, safe='')}"]
    carried = 0
    for token in (None, tokens["alice"], tokens["root"]):
        for path in [*paths, "/api/submissions", *(f"/api/submissions/{i}" for i in ids.values())]:
            if path.startswith("/api/submissions") and token is None:
                continue
            status, headers, body = server.call("GET", path, token)
            assert status in (200, 404), (path, status)
            assert headers["content-type"].startswith("application/json"), (path, headers)
            assert headers.get("x-content-type-options") == "nosniff", path
            json.loads(body)
            carried += "<script>alert(" in body.decode()
    assert carried  # the hostile strings are there, as JSON strings, never as a page


def test_the_check_reports_carry_the_payload_only_as_data(played):
    server, tokens, ids, _ = played
    status, failed = server.api("GET", f"/api/submissions/{ids['xssfail']}", tokens["alice"])
    assert status == 200 and failed["status"] == "failed"
    assert PAYLOAD in failed["report"]["stderr_tail"]  # the author reads the bot's own stderr
    page = fetch(signed_in(server, tokens["alice"]), server.base + "/me")[3]
    assert f'id="report-{ids["xssfail"]}"' in page
    assert str(escape(PAYLOAD)) in page  # the stderr tail, shown as text


def test_the_server_logged_no_traceback_for_any_of_it(played):
    server = played[0]
    assert "Traceback" not in server.log.read_text(errors="replace")
